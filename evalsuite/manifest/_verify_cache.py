"""`verify`'s record of suite versions found intact, keyed by the content of every input.

Re-checking a suite version reads and validates every item source, re-hashes every dev and
holdout item and decrypts the vault: with the imports it needs (pydantic and the item
models, cryptography) most of `evalsuite verify`'s second of CPU. The check is a pure
function of the bytes it reads and of the code that reads them. So when a suite version was
found intact, `verify` records a digest of all of that in ``.evalsuite/verified.json``; a
later `verify` whose digest is recorded knows the answer without parsing, hashing items or
decrypting anything. Design and trust model: docs/design/startup.md ("`verify` of an
unchanged suite").

The digest covers, by **content** (every byte is read and hashed each time; no file's
size, modification time or inode stands in for its content):

- every file under ``tasks/`` (names and bytes; ``__pycache__`` left out): the suite file,
  every item source and every file an item reads, the task code;
- every file under ``manifests/<suite>/``: the manifest, later versions (which decide what
  is superseded), fingerprints, frozen dev items, audit records, the changelog;
- the files the manifest records (vault, fingerprints, frozen dev items), wherever they are;
- the vault key's id (a hash of the key; the key file is read, nothing decrypted), unless
  the holdout is skipped;
- evalsuite's own source (every ``.py`` file of the package), the installed distributions
  with their versions (the ``*.dist-info`` names beside pydantic) and the Python version;
- the suite, version, manifest hash and whether the holdout was skipped.

A project where any of that cannot be read plainly is not recorded: a symbolic link under
``tasks/`` (what it points to may change outside the tree), an item source outside
``tasks/``, a key that cannot be read. Only a check that found nothing wrong is recorded, and
only when its inputs hashed the same before and after it ran, so any drift is found by the
full check every time it is there.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalsuite._core.atomic import atomic_write_text
from evalsuite._core.hashing import canonical_json
from evalsuite._core.layout import Layout
from evalsuite.errors import EvalsuiteError

if TYPE_CHECKING:
    from evalsuite.manifest._vault import KeySpec

__all__ = ["CACHE_FILE", "VerifyCache"]

CACHE_FILE = "verified.json"
"""In the project's state directory (``.evalsuite/``)."""
_FORMAT = "evalsuite-verified/1"
_PACKAGE = Path(__file__).resolve().parents[1]
_KEEP = 1000
"""Entries kept at most (the file is started afresh when it grows past this)."""
_ENTRY_FIELDS = ("dev_checked", "holdout_checked", "candidates", "superseded")


class _NotCacheable(Exception):
    """Something the check reads cannot be pinned down by content: run the full check."""


def _tree(digest: Any, label: str, top: Path, *, suffix: str = "") -> None:
    """Feed every file under `top` (relative names and bytes, sorted) into `digest`.

    Raises:
        _NotCacheable: a symbolic link under `top`.
    """
    if not top.is_dir():
        digest.update(f"{label}\x1fabsent\x1e".encode())
        return
    for folder, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        base = Path(folder)
        for name in dirs:
            if (base / name).is_symlink():
                raise _NotCacheable(f"{base / name} is a symbolic link")
        for name in sorted(files):
            path = base / name
            if not name.endswith(suffix):
                continue
            if path.is_symlink():
                raise _NotCacheable(f"{path} is a symbolic link")
            data = path.read_bytes()
            digest.update(f"{label}/{path.relative_to(top).as_posix()}\x1f{len(data)}\x1f".encode())
            digest.update(data)


def _installed() -> list[str]:
    """The ``*.dist-info`` names beside pydantic (every distribution with its version)."""
    spec = importlib.util.find_spec("pydantic")
    if spec is None or spec.origin is None:
        return []
    site = Path(spec.origin).parents[1]
    return sorted(p.name for p in site.iterdir() if p.name.endswith(".dist-info"))


def _item_sources_inside(layout: Layout, suite: str) -> None:
    """Every family's item source lies under ``tasks/`` (so `_tree` read it).

    Raises:
        _NotCacheable: the suite file cannot be read plainly, or a source lies outside.
    """
    try:
        raw = tomllib.loads(layout.suite_file(suite).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise _NotCacheable(f"suite file: {exc}") from None
    families = raw.get("families")
    if not isinstance(families, list):
        raise _NotCacheable("suite file without a list of families")
    tasks = Path(os.path.normpath(layout.tasks.absolute()))
    for family in families:
        items = family.get("items") if isinstance(family, dict) else None
        if items is None:
            continue
        if not isinstance(items, str):
            raise _NotCacheable("an item source that is not a path")
        if not Path(os.path.normpath(tasks / items)).is_relative_to(tasks):
            raise _NotCacheable(f"item source {items} lies outside tasks/")
        if not layout.contains(layout.tasks / items):  # a link out of the project
            raise _NotCacheable(f"item source {items} leads out of the project")


class VerifyCache:
    """The record of intact suite versions of one project, for the length of one command.

    The part of the digest every suite shares (``tasks/``, evalsuite's source, the installed
    distributions, Python) is computed once per command for looking up; recording always
    hashes everything afresh.
    """

    def __init__(self, layout: Layout) -> None:
        """Read nothing yet: the record file is read at the first lookup."""
        self._layout = layout
        self._path = layout.state / CACHE_FILE
        self._shared: bytes | None = None
        self._entries: dict[str, dict[str, Any]] | None = None

    def _environment(self, *, fresh: bool = False) -> bytes:
        if self._shared is not None and not fresh:
            return self._shared
        digest = hashlib.sha256()
        _tree(digest, "tasks", self._layout.tasks)
        _tree(digest, "evalsuite", _PACKAGE, suffix=".py")
        digest.update(canonical_json({"installed": _installed(), "python": sys.version}).encode())
        self._shared = digest.digest()
        return self._shared

    def digest(
        self,
        manifest: Mapping[str, Any],
        *,
        keys: KeySpec,
        skip_holdout: bool,
        fresh: bool = False,
    ) -> str | None:
        """The digest of one suite version's check, or None when it cannot be recorded.

        Args:
            manifest: The manifest's record (`ManifestSummary.record`): suite, version,
                hash, which key opens the vault, and the files it records.
            keys: Where vault keys live.
            skip_holdout: Whether the holdout is left out of the check.
            fresh: Hash the files shared by every suite again (recording does).
        """
        suite = manifest["suite"]
        recorded = ("vault", "fingerprints", "dev_items")
        records = [manifest[k]["path"] for k in recorded if manifest.get(k) is not None]
        layout = self._layout
        try:
            _item_sources_inside(layout, suite)
            digest = hashlib.sha256(self._environment(fresh=fresh))
            _tree(digest, "manifests", layout.manifest_dir(suite))
            for path in sorted(set(records)):
                file = layout.root / path
                data = file.read_bytes() if file.is_file() else b"\x00absent"
                digest.update(f"record/{path}\x1f{len(data)}\x1f".encode())
                digest.update(data)
            key_id = None
            if not skip_holdout:
                from evalsuite.manifest._vault import resolve_key

                canary = manifest["canary"]
                key = (
                    resolve_key(suite, "canary", canary, keys, create=False)
                    if manifest["key"] == "canary"
                    else resolve_key(suite, "random", canary, keys, create=False)
                )
                key_id = key.key_id
        except (_NotCacheable, OSError, EvalsuiteError):
            return None
        identity = {
            "format": _FORMAT,
            "suite": suite,
            "version": manifest["version"],
            "manifest_hash": manifest["manifest_hash"],
            "key_id": key_id,
            "skip_holdout": skip_holdout,
        }
        digest.update(canonical_json(identity).encode())
        return digest.hexdigest()

    def _read(self) -> dict[str, dict[str, Any]]:
        if self._entries is not None:
            return self._entries
        try:
            data = json.loads(self._path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = None
        entries = data.get("verified") if isinstance(data, dict) else None
        if not isinstance(data, dict) or data.get("format") != _FORMAT:
            entries = None
        self._entries = (
            {k: v for k, v in entries.items() if isinstance(v, dict) and _valid(v)}
            if isinstance(entries, dict)
            else {}
        )
        return self._entries

    def lookup(self, digest: str | None) -> dict[str, Any] | None:
        """What the recorded check found (counts, candidates, superseded), or None."""
        if digest is None:
            return None
        return self._read().get(digest)

    def record(self, digest: str, entry: Mapping[str, Any]) -> None:
        """Record an intact check; a record that cannot be written only costs the next one."""
        entries = dict(self._read()) if len(self._read()) < _KEEP else {}
        entries[digest] = {k: entry[k] for k in _ENTRY_FIELDS}
        self._entries = entries
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(
                self._path, json.dumps({"format": _FORMAT, "verified": entries}, indent=0) + "\n"
            )
        except OSError:
            pass


def _valid(entry: Mapping[str, Any]) -> bool:
    """A well-formed entry (an edited or foreign one is ignored: the full check runs)."""
    return (
        set(entry) == set(_ENTRY_FIELDS)
        and all(type(entry[k]) is int and entry[k] >= 0 for k in _ENTRY_FIELDS[:2])
        and all(
            type(entry[k]) is list and all(type(x) is str for x in entry[k])
            for k in _ENTRY_FIELDS[2:]
        )
    )
