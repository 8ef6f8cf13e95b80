"""Keeping the holdout apart: access ledger and budget, curriculum guard, canaries.

Usage::

    entries = read_ledger(layout.ledger_file("support"))
    status = budget_status(entries, suite="support", version="1.0.0", budget=3)
    check_budget(status, model_family("acme/sft-step-200"), override_reason=None)

    index = load_index(layout)                                      # docs/guard.md
    report = guard([Path("curriculum/")], index, options=GuardOptions())
    hits = screen_documents(documents, index)                       # one shard, any engine
"""

from evalsuite.holdout._budget import BudgetStatus, budget_status, check_budget
from evalsuite.holdout._guard import GuardOptions, GuardReport, guard
from evalsuite.holdout._index import FingerprintIndex, load_index
from evalsuite.holdout._ledger import (
    LedgerEntry,
    LedgerReport,
    append_entry,
    model_family,
    read_ledger,
    verify_ledger,
)
from evalsuite.holdout._screen import DEFAULT_THRESHOLD, Hit, screen_documents

__all__ = [
    "DEFAULT_THRESHOLD",
    "BudgetStatus",
    "FingerprintIndex",
    "GuardOptions",
    "GuardReport",
    "Hit",
    "LedgerEntry",
    "LedgerReport",
    "append_entry",
    "budget_status",
    "check_budget",
    "guard",
    "load_index",
    "model_family",
    "read_ledger",
    "screen_documents",
    "verify_ledger",
]
