"""Cross-checks of the holdout ledger, the results store and the manifest hash.

The ledger and the store record the same holdout runs from two sides: a run appends its
access to the ledger, then stores its row. Each can be edited or truncated on its own, so
`verify` and `holdout status` compare them both ways: a holdout run in the store without an
access in the ledger means ledger entries were deleted; an access in the ledger whose run is
not in the store means the run was deleted from the store (or lives in another store:
the message names the store that was checked). Both also record the manifest hash the run
used, which must equal the manifest's hash today.

This layer cannot import the store, so runs are passed in as plain records (`StoredRun`:
`evalsuite.store.RunRecord` fits). Design: docs/design/holdout-governance.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from evalsuite.holdout._budget import voided_accesses
from evalsuite.holdout._ledger import LedgerEntry

__all__ = ["StoredRun", "ledger_hash_check", "ledger_store_problems", "store_hash_check"]


class StoredRun(Protocol):
    """What the cross-checks read of a stored run."""

    @property
    def run_id(self) -> str: ...

    @property
    def suite(self) -> str | None: ...

    @property
    def version(self) -> str | None: ...

    @property
    def split(self) -> str | None: ...

    @property
    def source(self) -> str: ...

    @property
    def manifest_hash(self) -> str | None: ...


def _holdout_runs(runs: Iterable[StoredRun], suite: str) -> dict[str, StoredRun]:
    return {
        r.run_id: r
        for r in runs
        if r.suite == suite and r.split == "holdout" and r.source == "evalsuite"
    }


def _listed(ids: Iterable[str], limit: int = 8) -> str:
    ordered = sorted(ids)
    return ", ".join(ordered[:limit]) + (
        f" and {len(ordered) - limit} more" if len(ordered) > limit else ""
    )


def ledger_store_problems(
    entries: list[LedgerEntry],
    runs: Iterable[StoredRun],
    *,
    suite: str,
    ledger: str,
    store: str,
) -> list[str]:
    """Holdout runs of `suite` that are in only one of the ledger and the store.

    Args:
        entries: The ledger's entries (chain already verified).
        runs: Every run of the store.
        suite: The suite whose ledger `entries` is.
        ledger: The ledger's path, for messages.
        store: The store's location, for messages.
    """
    voided = voided_accesses(entries)
    granted = {e.run_id for e in entries if e.kind == "access" and e.seq not in voided}
    released = {e.run_id for e in entries if e.kind == "access" and e.seq in voided} - granted
    stored = _holdout_runs(runs, suite)
    problems = []
    not_logged = set(stored) - granted - released
    if not_logged:
        problems.append(
            f"holdout run(s) {_listed(not_logged)} are in the results store {store} but not in "
            f"the ledger {ledger} (no access entry): ledger entries were deleted (restore the "
            "ledger from version control)"
        )
    revived = set(stored) & released
    if revived:
        problems.append(
            f"holdout run(s) {_listed(revived)} are in the results store {store}, but their "
            f"access in the ledger {ledger} was voided (a voided run never started): the store "
            "or the ledger was edited"
        )
    not_stored = granted - set(stored)
    if not_stored:
        problems.append(
            f"holdout run(s) {_listed(not_stored)} are in the ledger {ledger} but not in the "
            f"results store {store}: they were deleted from the store, or they were stored in "
            "another store (point EVALSUITE_STORE at it). Their looks still count."
        )
    return problems


def ledger_hash_check(
    entries: list[LedgerEntry], *, suite: str, version: str, manifest_hash: str
) -> tuple[str, str | None]:
    """Does every access of `suite@version` in the ledger record `manifest_hash`?

    Returns:
        (state, problem): state is ``agrees (N accesses)``, ``none`` or ``DISAGREES``.
    """
    used = [e for e in entries if e.kind == "access" and e.suite == suite and e.version == version]
    if not used:
        return "none", None
    other = sorted({e.manifest_hash for e in used if e.manifest_hash != manifest_hash})
    if not other:
        return f"agrees ({len(used)} access(es))", None
    runs = sorted({e.run_id for e in used if e.manifest_hash != manifest_hash})
    return "DISAGREES", (
        f"the holdout ledger records {suite}@{version} as {', '.join(other)} (run(s) "
        f"{_listed(runs)}), but the manifest now hashes to {manifest_hash}: the manifest was "
        "edited after those runs (its own hash recomputed); restore it from version control"
    )


def store_hash_check(
    runs: Iterable[StoredRun], *, suite: str, version: str, manifest_hash: str, store: str
) -> tuple[str, str | None]:
    """Does every run of `suite@version` in the store record `manifest_hash`?

    Returns:
        (state, problem): state is ``agrees (N runs)``, ``none`` or ``DISAGREES``.
    """
    used = [
        r for r in runs if r.suite == suite and r.version == version and r.source == "evalsuite"
    ]
    if not used:
        return "none", None
    differing = [r for r in used if r.manifest_hash != manifest_hash]
    if not differing:
        return f"agrees ({len(used)} run(s))", None
    other = sorted({str(r.manifest_hash) for r in differing})
    return "DISAGREES", (
        f"the results store {store} holds run(s) {_listed(r.run_id for r in differing)} of "
        f"{suite}@{version} on manifest {', '.join(other)}, but the manifest now hashes to "
        f"{manifest_hash}: the manifest was edited after those runs (its own hash "
        "recomputed); restore it from version control"
    )
