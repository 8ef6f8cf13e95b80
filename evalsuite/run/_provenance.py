"""Provenance recorded with every run: versions, git revision, host, user, command line."""

from __future__ import annotations

import functools
import getpass
import platform
import socket
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

__all__ = ["collect_provenance", "package_versions"]

_PACKAGES = (
    "evalsuite",
    "inspect-ai",
    "numpy",
    "scipy",
    "pandas",
    "statsmodels",
    "datasets",
    "pydantic",
    "sqlalchemy",
)


def package_versions() -> dict[str, str]:
    """Installed versions of evalsuite and the packages that can move a number.

    Read once per process (each read searches the installed distributions' metadata): the
    code a process has imported does not change when a package is upgraded under it, so the
    first reading is also the right one for every later run of the process.
    """
    return dict(_versions_once())


@functools.cache
def _versions_once() -> tuple[tuple[str, str], ...]:
    out: dict[str, str] = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return tuple(out.items())


def _git(root: Path, *args: str) -> str | None:
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def collect_provenance(root: Path) -> dict[str, Any]:
    """Everything needed to say later what produced a run."""
    revision = _git(root, "rev-parse", "HEAD")
    dirty = _git(root, "status", "--porcelain", "--untracked-files=no")
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return {
        "packages": package_versions(),
        "git_revision": revision,
        "git_dirty": bool(dirty) if dirty is not None else None,
        "host": socket.gethostname(),
        "user": user,
        "platform": platform.platform(),
        "argv": list(sys.argv),
    }
