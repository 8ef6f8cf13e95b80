"""The ledger's head, recorded outside the project: deleting its newest entries shows.

A hash chain cannot tell a ledger whose newest entries were deleted from a shorter one, and
deleting a holdout run's rows from the store at the same time keeps the ledger and the store
in agreement. Every append therefore also records the new head (its ``seq`` and ``hash``) in
the key directory (``$EVALSUITE_KEY_DIR/ledger-heads/<project>/<suite>.json``): outside the
project and outside the store, so the edit that truncates the ledger and the store does not
reach it. `verify`, `holdout status` and every append then require the ledger to still hold
the recorded head at its place. Threat model: docs/design/holdout-governance.md, section 11.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from evalsuite._core.atomic import atomic_write_text
from evalsuite.errors import UsageError

__all__ = ["ANCHOR_FORMAT", "LedgerHead", "anchor_file", "anchor_problems", "write_anchor"]

ANCHOR_FORMAT = "evalsuite-ledger-head/1"


class LedgerEntry(Protocol):
    """What the head reads of a ledger entry (`_ledger.LedgerEntry`, which imports this)."""

    @property
    def suite(self) -> str: ...

    @property
    def seq(self) -> int: ...

    @property
    def hash(self) -> str: ...

    @property
    def at(self) -> str: ...


@dataclass(frozen=True, slots=True)
class LedgerHead:
    """The newest entry a ledger had when this machine last appended to it."""

    seq: int
    hash: str
    at: str
    first: str | None = None
    """The hash of the ledger's first entry: which ledger this is, wherever its project is now
    (absent from heads recorded before it was added)."""
    ledger: str | None = None
    """The ledger's resolved path when the head was recorded."""


def anchor_file(key_dir: Path, project: Path, suite: str) -> Path:
    """Where the head of `suite`'s ledger in `project` is recorded, under `key_dir`.

    One directory per project (a digest of its resolved path), so that suites of the same
    name in two projects keep two heads.

    Raises:
        UsageError: `key_dir` lies inside the project (symlinks resolved).
    """
    root = project.resolve()
    if key_dir.resolve().is_relative_to(root):
        raise UsageError(
            f"the key directory {key_dir} (EVALSUITE_KEY_DIR) lies inside the project {root}: "
            "the holdout ledger's head is recorded there, where the edit that truncates the "
            "ledger would reach it too (and a random key would sit beside its vault). Set "
            "EVALSUITE_KEY_DIR to a private directory outside the project (default "
            "~/.config/evalsuite/keys)."
        )
    digest = hashlib.sha256(str(root).encode("utf-8")).hexdigest()[:16]
    return key_dir / "ledger-heads" / digest / f"{suite}.json"


def _read(anchor: Path) -> LedgerHead | str | None:
    """The recorded head, None when there is none, or why it cannot be read."""
    try:
        text = anchor.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot be read ({type(exc).__name__})"
    try:
        data = json.loads(text)
        if data.get("format") != ANCHOR_FORMAT:
            return "is not a ledger head record"
        first, ledger = data.get("first"), data.get("ledger")
        return LedgerHead(
            seq=int(data["seq"]),
            hash=str(data["hash"]),
            at=str(data["at"]),
            first=str(first) if first is not None else None,
            ledger=str(ledger) if ledger is not None else None,
        )
    except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError):
        return "is not a ledger head record (damaged or edited)"


def anchor_problems(ledger: Path, entries: Sequence[LedgerEntry], anchor: Path | None) -> list[str]:
    """Why `entries` (the ledger at `ledger`) contradict the head recorded at `anchor`."""
    if anchor is None:
        return []
    head = _read(anchor)
    if head is None:
        moved = _moved_head(anchor, entries)
        if moved is None:
            return []
        head, anchor = moved
        was = Path(head.ledger or "").parents[2]
        return [
            f"{problem} (the head was recorded for this ledger while its project was at {was}, "
            "which no longer exists: the project folder was moved, or deleted after this "
            "checkout was made)"
            for problem in anchor_problems(ledger, entries, anchor)
        ]
    if isinstance(head, str):
        return [
            f"the ledger head recorded outside the project, {anchor}, {head}; it is written at "
            "every append to the ledger. Restore it, or ask whoever keeps the key directory"
        ]
    if len(entries) < head.seq:
        return [
            f"{ledger} holds {len(entries)} entries, but this machine recorded entry {head.seq} "
            f"({head.hash[:19]}…, at {head.at}) in {anchor} when it was appended: the newest "
            "entries were deleted (with their runs' rows in the store, if the two agree). "
            "Restore the ledger (and the store) from version control or backup; if this "
            "checkout is only behind, update it from where the entries were appended"
        ]
    if entries[head.seq - 1].hash != head.hash:
        return [
            f"{ledger}: entry {head.seq} is not the one this machine appended "
            f"({head.hash[:19]}…, at {head.at}, recorded in {anchor}): entries were deleted and "
            "others written in their place. Restore the ledger from version control or backup"
        ]
    return []


def _moved_head(anchor: Path, entries: Sequence[LedgerEntry]) -> tuple[LedgerHead, Path] | None:
    """The head this machine recorded for the same ledger in a project folder that is gone.

    The head is filed under a digest of the project's path, so moving the project folder would
    otherwise leave its ledger with no head to check: a truncated ledger, its runs' rows
    deleted, then `mv project project2`, passed `verify`. A head recorded for a ledger with the
    same first entry, at a path that no longer exists, is this ledger's, moved. A head of the
    same ledger whose folder still exists is another checkout (a clone, a worktree), which may
    legitimately be ahead or have appended other entries: it is not compared.
    """
    if not entries:
        return None
    for other in sorted(anchor.parent.parent.glob(f"*/{anchor.name}")):
        head = _read(other)
        if (
            isinstance(head, LedgerHead)
            and head.first == entries[0].hash
            and head.ledger is not None
            and not Path(head.ledger).exists()
        ):
            return head, other
    return None


def write_anchor(anchor: Path, entry: LedgerEntry, *, ledger: Path, first: str) -> None:
    """Record `entry` as the head of the ledger at `ledger` (atomically, mode 0600).

    `first` is the hash of the ledger's first entry (`_moved_head`).
    """
    data = {
        "format": ANCHOR_FORMAT,
        "first": first,
        "ledger": str(ledger.resolve()),
        "suite": entry.suite,
        "seq": entry.seq,
        "hash": entry.hash,
        "at": entry.at,
    }
    atomic_write_text(anchor, json.dumps(data, indent=1, sort_keys=True) + "\n", mode=0o600)
