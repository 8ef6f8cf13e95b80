"""The holdout access ledger: one hash-chained line per holdout access.

``holdout/<suite>/ACCESS.jsonl`` holds one JSON object per line::

    {"seq": 3, "run_id": ..., "suite": ..., "version": ..., "manifest_hash": ...,
     "model": ..., "model_family": ..., "user": ..., "host": ..., "at": ...,
     "purpose": ..., "override_reason": ..., "resumed": false,
     "prev": <hash of entry 2>, "hash": <sha256 of this entry without "hash">}

Editing any field breaks that entry's hash; deleting or reordering entries breaks the
chain (``prev`` and ``seq``). Deleting the newest entries leaves a valid shorter chain, so
`verify_ledger` also checks that every holdout run in the results store has its entry.
Appends take an inter-process lock and rewrite the file atomically, so two runs starting at
once both get their entry and a crash never leaves half a line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from filelock import FileLock

from evalsuite._core.atomic import atomic_write_text
from evalsuite._core.hashing import canonical_json, sha256_bytes
from evalsuite.errors import LedgerError

__all__ = [
    "GENESIS",
    "LedgerEntry",
    "LedgerReport",
    "append_entry",
    "model_family",
    "read_ledger",
    "verify_ledger",
]

GENESIS = "genesis"
_CHECKPOINT_SUFFIX = re.compile(
    r"(@[^/@]+|[-_.:]?(?:step|ckpt|checkpoint|iter|epoch|rev)[-_]?\d+"
    r"|-\d{4}-\d{2}-\d{2}|-\d{8})$",
    re.IGNORECASE,
)


def model_family(model: str) -> str:
    """The family a model belongs to for the holdout budget: checkpoint suffixes removed.

    Trailing checkpoint markers (``-step-1200``, ``-ckpt3``, ``_iter500``), revisions
    (``@rev2``) and dates (``-2024-08-06``, ``-20240806``) are stripped, so that checkpoints
    of one training run share a budget; nothing else is guessed. Pass an explicit family
    (``--model-family``) where this is wrong.

    Examples:
        >>> model_family("hf/acme-sft-step-1200")
        'hf/acme-sft'
        >>> model_family("openai/gpt-4o-2024-08-06")
        'openai/gpt-4o'
        >>> model_family("evalsuite/improved")
        'evalsuite/improved'
    """
    family = model
    while True:
        stripped = _CHECKPOINT_SUFFIX.sub("", family)
        if stripped == family or not stripped or stripped.endswith("/"):
            return family
        family = stripped


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """One holdout access."""

    seq: int
    run_id: str
    suite: str
    version: str
    manifest_hash: str
    model: str
    model_family: str
    user: str
    host: str
    at: str
    purpose: str | None
    override_reason: str | None
    resumed: bool
    prev: str
    hash: str

    def body(self) -> dict[str, Any]:
        """Every field but `hash` (what the hash covers)."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "hash"}


def _entry_hash(body: dict[str, Any]) -> str:
    return sha256_bytes(canonical_json(body).encode("utf-8"))


def _parse(path: Path) -> tuple[list[LedgerEntry], list[str]]:
    entries: list[LedgerEntry] = []
    problems: list[str] = []
    if not path.exists():
        return entries, problems
    text = path.read_text(encoding="utf-8")
    if text and not text.endswith("\n"):
        problems.append(f"{path}: the last line is incomplete (torn write or edit)")
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            problems.append(f"{path}:{number}: empty line")
            continue
        try:
            raw = json.loads(line)
            entries.append(LedgerEntry(**raw))
        except (json.JSONDecodeError, TypeError):
            problems.append(f"{path}:{number}: not a ledger entry (edited or damaged)")
    return entries, problems


def read_ledger(path: Path) -> list[LedgerEntry]:
    """All entries, oldest first.

    Raises:
        LedgerError: a line is not a well-formed entry.
    """
    entries, problems = _parse(path)
    if problems:
        raise LedgerError("; ".join(problems))
    return entries


@dataclass(slots=True)
class LedgerReport:
    """What `verify_ledger` found."""

    path: Path
    entries: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the chain is intact and no stored holdout run lacks its entry."""
        return not self.problems


def verify_ledger(path: Path, *, holdout_runs: Iterable[str] = ()) -> LedgerReport:
    """Check the hash chain, and that every run id in `holdout_runs` has an entry."""
    report = LedgerReport(path=path)
    entries, problems = _parse(path)
    report.entries = len(entries)
    report.problems.extend(problems)
    prev = GENESIS
    for position, entry in enumerate(entries, start=1):
        where = f"{path}: entry {position} (run {entry.run_id})"
        if entry.seq != position:
            report.problems.append(
                f"{where} has seq {entry.seq}, expected {position}: an entry was deleted or moved"
            )
        if entry.prev != prev:
            report.problems.append(
                f"{where} does not chain to the entry before it: an entry "
                "was deleted, inserted or edited"
            )
        if _entry_hash(entry.body()) != entry.hash:
            report.problems.append(f"{where} was edited after it was written")
        prev = entry.hash
    logged = {e.run_id for e in entries}
    missing = sorted(set(holdout_runs) - logged)
    if missing:
        report.problems.append(
            f"{path}: holdout run(s) {missing} are in the results store but not in the ledger: "
            "entries were deleted"
        )
    return report


def append_entry(path: Path, fields: dict[str, Any]) -> LedgerEntry:
    """Append an access entry (under a lock; the file is rewritten atomically).

    Raises:
        LedgerError: the existing ledger does not verify (never append to a broken chain).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock"):
        report = verify_ledger(path)
        if not report.ok:
            raise LedgerError(
                "the holdout access ledger is damaged, refusing to append: "
                + "; ".join(report.problems)
                + ". Restore it from version control."
            )
        entries = read_ledger(path)
        body = dict(fields)
        body["seq"] = len(entries) + 1
        body["prev"] = entries[-1].hash if entries else GENESIS
        entry = LedgerEntry(**body, hash="")
        entry = LedgerEntry(**entry.body(), hash=_entry_hash(entry.body()))
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        atomic_write_text(
            path, text + json.dumps(entry.body() | {"hash": entry.hash}, sort_keys=True) + "\n"
        )
        return entry
