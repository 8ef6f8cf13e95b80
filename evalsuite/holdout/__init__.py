"""Keeping the holdout apart: access ledger and budget, curriculum guard, canaries.

Usage::

    entries = read_ledger(layout.ledger_file("support"))
    status = budget_status(entries, suite="support", version="1.0.0", budget=3)
    check_budget(status, model_family("acme/sft-step-200"), override_reason=None)
"""

from evalsuite.holdout._budget import BudgetStatus, budget_status, check_budget
from evalsuite.holdout._ledger import (
    LedgerEntry,
    LedgerReport,
    append_entry,
    model_family,
    read_ledger,
    verify_ledger,
)

__all__ = [
    "BudgetStatus",
    "LedgerEntry",
    "LedgerReport",
    "append_entry",
    "budget_status",
    "check_budget",
    "model_family",
    "read_ledger",
    "verify_ledger",
]
