"""Holdout governance checks shared by `verify` and `holdout status` (a use case of service/).

Both commands check the ledger's hash chain, the ledger against the results store in both
directions, and the manifest hash against every place it was recorded (changelog and git
history via `verify`; the ledger's accesses and the store's runs here). The store checked
is the one this command uses (``$EVALSUITE_STORE`` or ``.evalsuite/results.sqlite``), and
every message names it. Design: docs/design/holdout-governance.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from evalsuite._core.layout import Layout
from evalsuite.errors import LedgerError
from evalsuite.holdout import (
    LedgerEntry,
    StoredRun,
    anchor_file,
    ledger_hash_check,
    ledger_history_problems,
    ledger_store_problems,
    ledger_tracking_warning,
    read_ledger,
    store_hash_check,
    verify_ledger,
)
from evalsuite.store import sqlite_file

__all__ = ["GovernanceCheck", "check_governance", "store_label", "stored_runs"]


def store_label(url: str) -> str:
    """The store's URL for messages, with any password hidden."""
    if sqlite_file(url) is not None:
        return url  # no password to hide, and no SQLAlchemy to import (`verify` starts fast)
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url


def stored_runs(layout: Layout, store_url: str | None) -> tuple[list[StoredRun], str]:
    """Every run of the store a command uses, and how to name that store in messages.

    `store_url`: ``$EVALSUITE_STORE``, or None for the project's default store. A default
    store that does not exist yet holds no runs and is not created.
    """
    from evalsuite.store import RunReader, default_store_url

    url = store_url or default_store_url(layout.state)
    label = store_label(url)
    if store_url is None and not (layout.state / "results.sqlite").exists():
        return [], f"{label} (does not exist: no runs stored)"
    return list(RunReader(url).run_keys()), label


@dataclass(frozen=True, slots=True)
class GovernanceCheck:
    """What the ledger and store checks of one suite (version) found."""

    ledger: Path
    store: str
    entries: tuple[LedgerEntry, ...] | None = None
    """The ledger's entries (None when a line is unreadable)."""
    problems: tuple[str, ...] = ()
    sources: dict[str, str] = field(default_factory=dict)
    """``ledger`` and ``store``: does each agree with the manifest hash."""
    warnings: tuple[str, ...] = ()
    """Not failures: the ledger is not tracked by git, or has entries not committed."""


def check_governance(  # noqa: PLR0913 - the suite, its records, then where the store is
    layout: Layout,
    key_dir: Path,
    suite: str,
    version: str | None,
    manifest_hash: str | None,
    runs: list[StoredRun],
    store: str,
    *,
    store_url: str | None = None,
) -> GovernanceCheck:
    """Ledger chain, ledger ⇄ store both ways, and the manifest hash in ledger and store.

    `key_dir` holds the ledger's anchor (the last entry this machine recorded). Every answer
    of a reusable-holdout mechanism is recomputed from the ledger and the exact scores in the
    store at `store_url` (None: the project's default store; docs/design/reusable-holdout.md).
    """
    path = layout.ledger_file(suite)
    shown = str(path.relative_to(layout.root)) if path.is_relative_to(layout.root) else str(path)
    problems: list[str] = []
    warnings: list[str] = []
    sources: dict[str, str] = {}

    def found(entries: list[LedgerEntry] | None = None) -> GovernanceCheck:
        return GovernanceCheck(
            ledger=path,
            store=store,
            entries=None if entries is None else tuple(entries),
            problems=tuple(problems),
            sources=sources,
            warnings=tuple(warnings),
        )

    anchor = anchor_file(key_dir, layout.root, suite)
    problems.extend(verify_ledger(path, anchor=anchor).problems)
    if path.is_file():  # git is asked only about a ledger that exists (verify starts fast)
        problems.extend(ledger_history_problems(path, shown))
        warning = ledger_tracking_warning(path, shown)
        if warning is not None:
            warnings.append(warning)
    try:
        entries = read_ledger(path)
    except LedgerError:
        return found()  # unreadable lines are already reported; nothing to compare
    problems.extend(ledger_store_problems(entries, runs, suite=suite, ledger=shown, store=store))
    if any(e.kind == "answer" for e in entries):
        from evalsuite.service._mechanism import mechanism_problems
        from evalsuite.store import default_store_url

        url = store_url or default_store_url(layout.state)
        problems.extend(mechanism_problems(entries, url, suite=suite, ledger=shown))
    if version is None or manifest_hash is None:
        return found(entries)
    state, problem = ledger_hash_check(
        entries, suite=suite, version=version, manifest_hash=manifest_hash
    )
    sources["ledger"] = state
    if problem:
        problems.append(problem)
    state, problem = store_hash_check(
        runs, suite=suite, version=version, manifest_hash=manifest_hash, store=store
    )
    sources["store"] = state
    if problem:
        problems.append(problem)
    return found(entries)
