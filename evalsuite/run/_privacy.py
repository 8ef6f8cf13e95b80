"""Keep holdout plaintext off the disk while inspect runs (docs/inspect.md, point 13).

By default inspect writes sample content in three places besides the log: the realtime
sample buffer, the trace log and temporary files of the ``.eval`` format. For a holdout run
the runner asks for ``log_format="json"``, ``log_realtime=False`` and a ``memory://`` log
directory, and this context manager adds the rest: trace level CRITICAL (also on a log
handler that an earlier run in this process already created), no control server, and
private data, cache and temporary directories that are deleted afterwards.

A process killed with SIGKILL cannot delete its private directory (inspect leaves an empty
trace file in it). Each private directory is therefore named after its process id and holds
a lock file that its process keeps locked; every run starts by deleting the private
directories of processes that are gone (`clean_stale_private_dirs`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout

__all__ = ["INSPECT_QUIET_ENV", "PRIVATE_PREFIX", "clean_stale_private_dirs", "private_inspect_env"]

PRIVATE_PREFIX = "evalsuite-private-"
_OWNER_LOCK = "owner.lock"
_GRACE_S = 60.0
"""A directory this young whose process is alive may still be taking its lock."""

INSPECT_QUIET_ENV = {
    "INSPECT_TRACE_LEVEL": "CRITICAL",
    "INSPECT_EVAL_CTL_SERVER": "false",
    "INSPECT_PY_LOGGER_FILE": "",
}


def _existing_trace_handler() -> object | None:
    try:
        from inspect_ai._util import logger as inspect_logger
    except ImportError:  # pragma: no cover - inspect layout changed; the marker test catches it
        return None
    holder = getattr(inspect_logger, "_logHandler", None)
    return holder.get("handler") if isinstance(holder, dict) else None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a process of another user
        return True
    return True


def _is_stale(path: Path) -> bool:
    """True when the process that made `path` is gone (its lock is free or its pid dead)."""
    pid_part = path.name[len(PRIVATE_PREFIX) :].split("-", 1)[0]
    if not pid_part.isdigit():
        return False  # not a directory of this scheme: leave it alone
    pid = int(pid_part)
    if pid == os.getpid():
        return False
    if not _pid_alive(pid):
        return True
    lock_path = path / _OWNER_LOCK
    if not lock_path.exists() or time.time() - path.stat().st_mtime < _GRACE_S:
        return False
    lock = FileLock(str(lock_path))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return False  # its process holds it: a run in progress
    lock.release()
    return True  # the pid was reused by another process; the owner is gone


def clean_stale_private_dirs(base: Path | None = None) -> list[Path]:
    """Delete private directories (of this user) left by processes that are gone.

    Args:
        base: Where private directories are made; the system temporary directory by default.

    Returns:
        The directories deleted.
    """
    root = Path(base or tempfile.gettempdir())
    removed: list[Path] = []
    try:
        candidates = list(root.glob(f"{PRIVATE_PREFIX}*"))
    except OSError:
        return removed
    for path in candidates:
        try:
            if not path.is_dir() or path.is_symlink() or path.stat().st_uid != os.getuid():
                continue
            if _is_stale(path):
                shutil.rmtree(path)
                removed.append(path)
        except OSError:
            continue  # vanished or not ours to delete: the next start tries again
    return removed


@contextlib.contextmanager
def private_inspect_env(*, holdout: bool) -> Iterator[Path | None]:
    """Environment for one inspect `eval()` call.

    Args:
        holdout: Also redirect data, cache and temporary directories into a private
            directory that is removed on exit, and silence an existing trace handler.
            Private directories left by killed processes are deleted first.

    Yields:
        The private directory (holdout) or None.
    """
    saved = {
        k: os.environ.get(k)
        for k in [*INSPECT_QUIET_ENV, "XDG_DATA_HOME", "XDG_CACHE_HOME", "TMPDIR"]
    }
    saved_tempdir = tempfile.tempdir
    handler = _existing_trace_handler()
    saved_level = getattr(handler, "trace_logger_level", None)
    private: Path | None = None
    owner: FileLock | None = None
    clean_stale_private_dirs()
    try:
        for key, value in INSPECT_QUIET_ENV.items():
            if value:
                os.environ[key] = value
            else:
                os.environ.pop(key, None)
        if holdout:
            private = Path(tempfile.mkdtemp(prefix=f"{PRIVATE_PREFIX}{os.getpid()}-"))
            os.chmod(private, 0o700)
            owner = FileLock(str(private / _OWNER_LOCK))
            owner.acquire()
            for sub, var in (
                ("data", "XDG_DATA_HOME"),
                ("cache", "XDG_CACHE_HOME"),
                ("tmp", "TMPDIR"),
            ):
                (private / sub).mkdir()
                os.environ[var] = str(private / sub)
            tempfile.tempdir = str(private / "tmp")
            if handler is not None and saved_level is not None:
                handler.trace_logger_level = logging.CRITICAL  # type: ignore[attr-defined]  # inspect's LogHandler
        yield private
    finally:
        for key, old in saved.items():
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old
        tempfile.tempdir = saved_tempdir
        if handler is not None and saved_level is not None:
            handler.trace_logger_level = saved_level  # type: ignore[attr-defined]  # restore
        if owner is not None:
            owner.release()
        if private is not None:
            shutil.rmtree(private, ignore_errors=True)
