"""The holdout access ledger: one hash-chained line per holdout access.

``holdout/<suite>/ACCESS.jsonl`` holds one JSON object per line::

    {"seq": 3, "run_id": ..., "suite": ..., "version": ..., "manifest_hash": ...,
     "model": ..., "model_family": ..., "user": ..., "host": ..., "at": ...,
     "purpose": ..., "override_reason": ..., "resumed": false,
     "prev": <hash of entry 2>, "hash": <sha256 of this entry without "hash">}

Besides accesses, three kinds of events are chained the same way (``"kind"``, with a
``"reason"``): ``void`` releases the access just before it of the same run (the run failed
before any holdout item reached the model), ``family`` records that a model belongs to
another family from now on (`evalsuite holdout family`), and ``decrypt`` records that a tool
other than a run decrypted the holdout (`evalsuite audit --leaks`; no budget spent). A run
made under a reusable-holdout mechanism adds an ``answer`` (the mechanism's released answer
and state, docs/design/reusable-holdout.md), and ``reveal`` records that its sealed exact
score was shown, with a reason.

Editing any field breaks that entry's hash; deleting or reordering entries breaks the
chain (``prev`` and ``seq``). Deleting the newest entries leaves a valid shorter chain, so
`verify` and `holdout status` also check the ledger against the results store, both ways
(`evalsuite.holdout.ledger_store_problems`). A run checks its budget and appends its entry
in one step under the ledger's inter-process lock (`open_ledger`), and the file is
rewritten atomically, so runs starting at once cannot overspend and a crash never leaves
half a line. Design: docs/design/holdout-governance.md.
"""

from __future__ import annotations

import getpass
import json
import re
import socket
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from evalsuite._core.atomic import atomic_write_text
from evalsuite._core.hashing import canonical_json, sha256_bytes
from evalsuite.errors import LedgerError
from evalsuite.holdout._anchor import anchor_problems, write_anchor

__all__ = [
    "GENESIS",
    "KINDS",
    "EntryKind",
    "LedgerEntry",
    "LedgerReport",
    "LedgerTransaction",
    "append_entry",
    "model_family",
    "open_ledger",
    "read_ledger",
    "record_decryption",
    "record_export",
    "verify_ledger",
    "who",
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


EntryKind = Literal["access", "void", "family", "decrypt", "answer", "reveal", "export"]
KINDS: tuple[EntryKind, ...] = (
    "access",
    "void",
    "family",
    "decrypt",
    "answer",
    "reveal",
    "export",
)


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """One ledger event: a holdout access, a voided access, or a model family mapping.

    ``kind`` and ``reason`` were added after the first ledgers were written: they are left
    out of the hashed body at their defaults, so older entries keep their hashes.
    """

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
    kind: EntryKind = "access"
    """``access``: a run opened the holdout (``resumed``: it continued an earlier access);
    ``void``: the access just before it of the same run was released, because the run
    failed before any holdout item reached the model; ``family``: `model` belongs to
    `model_family` from now on (an audited re-mapping, with a `reason`); ``decrypt``: a tool
    other than a run decrypted the holdout (the leak audit; `reason` says which), recorded
    before the vault is opened, spending no budget; ``answer``: a reusable-holdout mechanism
    (Thresholdout, the Ladder) answered for run `run_id`, in `mechanism`
    (docs/design/reusable-holdout.md); ``reveal``: the exact holdout score of run `run_id`,
    sealed behind a mechanism's answer, was shown to `user`, with a `reason` (the score itself
    is never written here); ``export``: a holdout run's per-item results were written out
    (`evalsuite export --include-holdout-samples`; ids and scores, never item text), spending
    no budget."""
    reason: str | None = None
    """Why a ``void`` or ``family`` event was recorded."""
    stopping_rule: dict[str, Any] | None = None
    """An adaptive run's stopping rule, target and budget, fixed before it starts
    (docs/design/adaptive.md); left out of the hashed body when absent, so ledgers written
    before it existed verify unchanged."""

    mechanism: dict[str, Any] | None = None
    """An ``answer`` entry's mechanism: its name, parameters, generator, answer index, inputs
    (never the exact holdout score) and answer (`evalsuite.holdout._answers`); left out of the
    hashed body when absent."""

    def body(self) -> dict[str, Any]:
        """Every field but `hash` (what the hash covers)."""
        body = {
            k: getattr(self, k)
            for k in self.__dataclass_fields__
            if k not in ("hash", "kind", "reason", "stopping_rule", "mechanism")
        }
        if self.kind != "access":
            body["kind"] = self.kind
        if self.reason is not None:
            body["reason"] = self.reason
        if self.stopping_rule is not None:
            body["stopping_rule"] = self.stopping_rule
        if self.mechanism is not None:
            body["mechanism"] = self.mechanism
        return body


def _entry_hash(body: dict[str, Any]) -> str:
    return sha256_bytes(canonical_json(body).encode("utf-8"))


def _parse(path: Path) -> tuple[list[LedgerEntry], list[str]]:
    entries: list[LedgerEntry] = []
    problems: list[str] = []
    if not path.exists():
        return entries, problems
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return entries, [f"{path}: cannot be read ({type(exc).__name__}): damaged"]
    if text and not text.endswith("\n"):
        problems.append(f"{path}: the last line is incomplete (torn write or edit)")
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            problems.append(f"{path}:{number}: empty line")
            continue
        try:
            raw = json.loads(line)
            entry = LedgerEntry(**raw)
        except (json.JSONDecodeError, TypeError):
            problems.append(f"{path}:{number}: not a ledger entry (edited or damaged)")
            continue
        if entry.kind not in KINDS:
            problems.append(f"{path}:{number}: unknown entry kind {entry.kind!r} (edited)")
            continue
        entries.append(entry)
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


def _chain_problems(path: Path, entries: list[LedgerEntry]) -> list[str]:
    problems: list[str] = []
    prev = GENESIS
    open_access: dict[str, int] = {}
    for position, entry in enumerate(entries, start=1):
        where = f"{path}: entry {position} (run {entry.run_id or '-'})"
        if entry.seq != position:
            problems.append(
                f"{where} has seq {entry.seq}, expected {position}: an entry was deleted or moved"
            )
        if entry.prev != prev:
            problems.append(
                f"{where} does not chain to the entry before it: an entry "
                "was deleted, inserted or edited"
            )
        if _entry_hash(entry.body()) != entry.hash:
            problems.append(f"{where} was edited after it was written")
        if entry.kind == "access":
            open_access[entry.run_id] = position
        elif entry.kind == "void" and open_access.pop(entry.run_id, None) is None:
            problems.append(f"{where} voids an access of run {entry.run_id} that is not there")
        elif entry.kind in ("answer", "reveal") and entry.run_id not in open_access:
            problems.append(
                f"{where} is an {entry.kind} for run {entry.run_id}, which has no access before it"
            )
        prev = entry.hash
    return problems


def verify_ledger(
    path: Path, *, holdout_runs: Iterable[str] = (), anchor: Path | None = None
) -> LedgerReport:
    """Check the hash chain, and that every run id in `holdout_runs` has an access entry.

    With `anchor` (`evalsuite.holdout.anchor_file`): the ledger must still hold the head
    recorded there at the last append on this machine (newest entries deleted otherwise).
    The other direction (every access in the ledger has its run in the store) needs the
    store: `evalsuite.holdout.ledger_store_problems`.
    """
    report = LedgerReport(path=path)
    entries, problems = _parse(path)
    report.entries = len(entries)
    report.problems.extend(problems)
    report.problems.extend(_chain_problems(path, entries))
    if not problems:
        report.problems.extend(anchor_problems(path, entries, anchor))
    logged = {e.run_id for e in entries if e.kind == "access"}
    missing = sorted(set(holdout_runs) - logged)
    if missing:
        report.problems.append(
            f"{path}: holdout run(s) {missing} are in the results store but not in the ledger: "
            "entries were deleted"
        )
    return report


def _damaged(report: LedgerReport) -> LedgerError:
    return LedgerError(
        f"the holdout access ledger {report.path} is damaged, refusing to append to it: "
        + "; ".join(report.problems)
        + ". Nothing was run or recorded. Restore the ledger from version control "
        "(`git checkout -- <ledger>`) and run again."
    )


class LedgerTransaction:
    """The verified entries of a ledger, held under its lock: check, then append, atomically.

    Obtained from `open_ledger`; every `append` rewrites the file atomically and extends the
    chain, so a caller can read the entries, decide (budget, family), and append its entry
    with no other process in between.
    """

    def __init__(self, path: Path, entries: list[LedgerEntry], anchor: Path | None = None) -> None:
        self.path = path
        self.entries = entries
        self.anchor = anchor

    def append(self, fields: dict[str, Any]) -> LedgerEntry:
        """Append one entry (``kind`` and ``reason`` optional) and return it, chained."""
        body = dict(fields)
        body["seq"] = len(self.entries) + 1
        body["prev"] = self.entries[-1].hash if self.entries else GENESIS
        entry = LedgerEntry(**body, hash="")
        entry = replace(entry, hash=_entry_hash(entry.body()))
        text = self.path.read_text(encoding="utf-8") if self.path.exists() else ""
        line = json.dumps(entry.body() | {"hash": entry.hash}, sort_keys=True)
        atomic_write_text(self.path, text + line + "\n")
        self.entries.append(entry)
        if self.anchor is not None:
            write_anchor(self.anchor, entry, ledger=self.path, first=self.entries[0].hash)
        return entry


@contextmanager
def open_ledger(path: Path, *, anchor: Path | None = None) -> Iterator[LedgerTransaction]:
    """Lock the ledger at `path`, verify its chain, and yield it for checks and appends.

    Args:
        path: The ledger.
        anchor: Where this machine records the ledger's head (`evalsuite.holdout.anchor_file`,
            in the key directory): the ledger must still hold the head recorded there, and
            every append records the new one. None: no head is checked or recorded.

    Raises:
        LedgerError: the ledger is damaged (never append to a broken chain), has lost the
            recorded head, or the head cannot be recorded; nothing is written.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    from filelock import FileLock  # here: `verify` and `suites` start without it

    with FileLock(str(path) + ".lock"):
        report = verify_ledger(path, anchor=anchor)
        if not report.ok:
            raise _damaged(report)
        if anchor is not None:
            try:
                anchor.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise LedgerError(
                    f"cannot record the holdout ledger's head in {anchor.parent} "
                    f"({type(exc).__name__}): it lives in the key directory, outside the "
                    "project. Set EVALSUITE_KEY_DIR to a directory you can write. Nothing was "
                    "run or recorded."
                ) from None
        yield LedgerTransaction(path, read_ledger(path), anchor)


def append_entry(path: Path, fields: dict[str, Any], *, anchor: Path | None = None) -> LedgerEntry:
    """Append an entry (under a lock; the file is rewritten atomically).

    Raises:
        LedgerError: the existing ledger does not verify (never append to a broken chain).
    """
    with open_ledger(path, anchor=anchor) as ledger:
        return ledger.append(fields)


def record_decryption(
    path: Path,
    *,
    suite: str,
    version: str,
    manifest_hash: str,
    reason: str,
    at: str,
    anchor: Path | None = None,
) -> LedgerEntry:
    """Append a ``decrypt`` entry: the holdout of ``suite@version`` is about to be decrypted.

    Called before the vault is opened; it spends no budget (it is no model's look) but leaves
    a chained record of who decrypted what, when and why.

    Raises:
        LedgerError: the ledger is damaged (nothing is appended, nothing decrypted).
    """
    user, host = who()
    return append_entry(
        path,
        {
            "run_id": "",
            "suite": suite,
            "version": version,
            "manifest_hash": manifest_hash,
            "model": "",
            "model_family": "",
            "user": user,
            "host": host,
            "at": at,
            "purpose": None,
            "override_reason": None,
            "resumed": False,
            "kind": "decrypt",
            "reason": reason,
        },
        anchor=anchor,
    )


def record_export(  # noqa: PLR0913 (the entry's fields, one each)
    path: Path,
    *,
    run_id: str,
    suite: str,
    version: str,
    manifest_hash: str,
    model: str,
    reason: str,
    at: str,
    anchor: Path | None = None,
) -> LedgerEntry:
    """Append an ``export`` entry: a holdout run's per-item results are about to be written.

    Called before the files are written; it spends no budget (the model's look was the run's
    own access) but leaves a chained record of who exported which run's items, when and how.

    Raises:
        LedgerError: the ledger is damaged (nothing is appended, nothing exported).
    """
    user, host = who()
    return append_entry(
        path,
        {
            "run_id": run_id,
            "suite": suite,
            "version": version,
            "manifest_hash": manifest_hash,
            "model": model,
            "model_family": "",
            "user": user,
            "host": host,
            "at": at,
            "purpose": None,
            "override_reason": None,
            "resumed": False,
            "kind": "export",
            "reason": reason,
        },
        anchor=anchor,
    )


def who() -> tuple[str, str]:
    """(user, host) for a ledger entry."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return user, socket.gethostname() or "unknown"
