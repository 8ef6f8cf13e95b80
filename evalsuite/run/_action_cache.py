"""`verify`'s action-space check without importing inspect when nothing it depends on changed.

Checking a family's tools against the action space frozen with it (`_action`) means importing
inspect-ai and the family's task code: seconds of start-up for `evalsuite verify`, which
otherwise re-hashes files (docs/scale.md, "Start-up"). The check is a pure function of:
the family's task reference and arguments, the files under ``tasks/`` (the task files and
everything beside them they import or read), evalsuite's own family kit (which describes
tools), the installed packages (the names of the ``*.dist-info`` directories beside
inspect-ai: every distribution and its version) and the Python version. When a family's
tools agreed with the frozen ones, `verify` records a digest of all of that in
``.evalsuite/action-spaces.json``; the next `verify` with the same digest knows the answer
and imports nothing. Anything else (a changed source, another package version, a family whose
task is a module path or an inspect registry name, which may live outside ``tasks/``, a
missing or unreadable cache) runs the full check, and only an agreement is ever recorded, so
a drift is always reported by the full check. Design: docs/design/startup.md.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalsuite._core.atomic import atomic_write_text
from evalsuite._core.hashing import canonical_json
from evalsuite._core.layout import Layout
from evalsuite.errors import EvalsuiteError

if TYPE_CHECKING:
    from evalsuite.manifest import Manifest

__all__ = [
    "CACHE_FILE",
    "agreements_recorded",
    "environment_digest",
    "verified_action_space_problems",
]

CACHE_FILE = "action-spaces.json"
"""In the project's state directory (``.evalsuite/``)."""
_FORMAT = "evalsuite-action-spaces/1"
_KIT = Path(__file__).resolve().parents[1] / "kit"
_KEEP = 1000
"""Digests kept at most (older ones are dropped when the file grows past this)."""


def _sources(directory: Path, pattern: str) -> list[tuple[str, bytes]]:
    if not directory.is_dir():
        return []
    return [
        (path.relative_to(directory).as_posix(), path.read_bytes())
        for path in sorted(directory.rglob(pattern))
        if path.is_file() and "__pycache__" not in path.parts
    ]


def _installed() -> list[str]:
    """The ``*.dist-info`` names beside inspect-ai (every distribution with its version)."""
    spec = importlib.util.find_spec("inspect_ai")
    if spec is None or spec.origin is None:
        return []
    site = Path(spec.origin).parents[1]
    return sorted(p.name for p in site.iterdir() if p.name.endswith(".dist-info"))


def environment_digest(layout: Layout) -> bytes:
    """What every family's digest shares: files under tasks/, the kit, packages, Python.

    `verify` computes it once per command and passes it to `agreements_recorded` for each
    suite version.
    """
    digest = hashlib.sha256()
    for label, sources in (("tasks", _sources(layout.tasks, "*")), ("kit", _sources(_KIT, "*.py"))):
        for name, data in sources:
            digest.update(f"{label}/{name}\x1f{len(data)}\x1f".encode())
            digest.update(data)
    digest.update(canonical_json({"installed": _installed(), "python": sys.version}).encode())
    return digest.digest()


def _digest(environment: bytes, suite: str, family: object) -> str | None:
    """The digest of one family's check, or None when it is not cacheable."""
    task = getattr(family, "task", "")
    tools = getattr(family, "tools", None)
    if tools is None or ".py" not in task.partition("@")[0]:
        return None  # a module path or registry name may live outside tasks/
    identity = {
        "suite": suite,
        "family": getattr(family, "name", ""),
        "task": task,
        "task_args": getattr(family, "task_args", None),
        "tools": tools,
    }
    return hashlib.sha256(environment + canonical_json(identity).encode()).hexdigest()


def _read(path: Path) -> set[str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    if not isinstance(data, dict) or data.get("format") != _FORMAT:
        return set()
    agreed = data.get("agreed")
    return {d for d in agreed if isinstance(d, str)} if isinstance(agreed, list) else set()


class _Family:
    """A manifest family's fields the digest reads, from the manifest's JSON record."""

    def __init__(self, record: Mapping[str, Any]) -> None:
        self.name = record.get("name", "")
        self.task = record.get("task", "")
        self.task_args = record.get("task_args")
        self.tools = record.get("tools")


def agreements_recorded(
    layout: Layout,
    suite: str,
    families: Sequence[Mapping[str, Any]],
    *,
    environment: bytes | None = None,
) -> bool:
    """True when every family with recorded tools is recorded as agreeing: nothing to load.

    `families` are the manifest's family records as JSON (`ManifestSummary.record`), so that
    `verify` asks without the pydantic models; the digests are those of
    `verified_action_space_problems`. `environment`: `environment_digest(layout)`, when the
    caller has it already.
    """
    with_tools = [_Family(f) for f in families if f.get("tools") is not None]
    if not with_tools:
        return True
    agreed = _read(layout.state / CACHE_FILE)
    if not agreed:
        return False
    if environment is None:
        environment = environment_digest(layout)
    return all(_digest(environment, suite, f) in agreed for f in with_tools)


def verified_action_space_problems(
    layout: Layout, manifest: Manifest, *, use_cache: bool = True
) -> tuple[list[str], list[str]]:
    """`action_space_problems` of every family with recorded tools, through the cache.

    Families whose digest is recorded as agreeing are not loaded; the others are loaded and
    checked as `run` checks them, and those that agree are recorded.

    Args:
        layout: The project.
        manifest: The version whose families are checked.
        use_cache: False loads and checks every family (`verify --no-cache`), recording
            nothing.

    Returns:
        The families whose task cannot be loaded (one message each), and the drifts.
    """
    families = [f for f in manifest.families if f.tools is not None]
    if not families:
        return [], []
    environment = environment_digest(layout)
    path = layout.state / CACHE_FILE
    agreed = _read(path) if use_cache else set()
    digests = {f.name: _digest(environment, manifest.suite, f) for f in families}
    unchecked = [f for f in families if digests[f.name] is None or digests[f.name] not in agreed]
    if not unchecked:
        return [], []
    from evalsuite.run._action import action_space_problems
    from evalsuite.run._tasks import load_task_function  # not _runner: pandas, SQLAlchemy

    unloadable: list[str] = []
    problems: list[str] = []
    newly = set()
    for family in unchecked:
        try:
            function = load_task_function(layout, manifest.suite, family)
        except EvalsuiteError as exc:
            unloadable.append(f"the tools of family {family.name!r} cannot be checked: {exc}")
            continue
        drift = action_space_problems(manifest, {family.name: function})
        problems.extend(drift)
        digest = digests[family.name]
        if not drift and digest is not None:
            newly.add(digest)
    if newly and use_cache:
        _write(path, (agreed if len(agreed) < _KEEP else set()) | newly)
    return unloadable, problems


def _write(path: Path, agreed: set[str]) -> None:
    """Record agreeing digests; a cache that cannot be written only costs the next `verify`."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps({"format": _FORMAT, "agreed": sorted(agreed)}) + "\n")
    except OSError:
        pass
