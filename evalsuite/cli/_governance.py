"""Holdout governance checks shared by `verify` and `holdout status`.

Both commands check the ledger's hash chain, the ledger against the results store in both
directions, and the manifest hash against every place it was recorded (changelog and git
history via `verify`; the ledger's accesses and the store's runs here). The store checked
is the one this command uses (``$EVALSUITE_STORE`` or ``.evalsuite/results.sqlite``), and
every message names it. Design: docs/design/holdout-governance.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from evalsuite.cli._common import Context
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


def stored_runs(ctx: Context) -> tuple[list[StoredRun], str]:
    """Every run of the store this command uses, and how to name that store in messages.

    A default store that does not exist yet holds no runs and is not created.
    """
    from evalsuite.store import RunReader, default_store_url

    url = ctx.store_url or default_store_url(ctx.layout.state)
    label = store_label(url)
    if ctx.store_url is None and not (ctx.layout.state / "results.sqlite").exists():
        return [], f"{label} (does not exist: no runs stored)"
    return list(RunReader(url).run_keys()), label


@dataclass(slots=True)
class GovernanceCheck:
    """What the ledger and store checks of one suite (version) found."""

    ledger: Path
    store: str
    entries: list[LedgerEntry] | None = None
    """The ledger's entries (None when a line is unreadable)."""
    problems: list[str] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)
    """``ledger`` and ``store``: does each agree with the manifest hash."""
    warnings: list[str] = field(default_factory=list)
    """Not failures: the ledger is not tracked by git, or has entries not committed."""


def check_governance(
    ctx: Context,
    suite: str,
    version: str | None,
    manifest_hash: str | None,
    runs: list[StoredRun],
    store: str,
) -> GovernanceCheck:
    """Ledger chain, ledger ⇄ store both ways, and the manifest hash in ledger and store."""
    path = ctx.layout.ledger_file(suite)
    shown = (
        str(path.relative_to(ctx.layout.root))
        if path.is_relative_to(ctx.layout.root)
        else str(path)
    )
    check = GovernanceCheck(ledger=path, store=store)
    anchor = anchor_file(ctx.key_dir, ctx.layout.root, suite)
    check.problems.extend(verify_ledger(path, anchor=anchor).problems)
    if path.is_file():  # git is asked only about a ledger that exists (verify starts fast)
        check.problems.extend(ledger_history_problems(path, shown))
        warning = ledger_tracking_warning(path, shown)
        if warning is not None:
            check.warnings.append(warning)
    try:
        check.entries = read_ledger(path)
    except LedgerError:
        return check  # unreadable lines are already reported; nothing to compare
    check.problems.extend(
        ledger_store_problems(check.entries, runs, suite=suite, ledger=shown, store=store)
    )
    if version is None or manifest_hash is None:
        return check
    state, problem = ledger_hash_check(
        check.entries, suite=suite, version=version, manifest_hash=manifest_hash
    )
    check.sources["ledger"] = state
    if problem:
        check.problems.append(problem)
    state, problem = store_hash_check(
        runs, suite=suite, version=version, manifest_hash=manifest_hash, store=store
    )
    check.sources["store"] = state
    if problem:
        check.problems.append(problem)
    return check
