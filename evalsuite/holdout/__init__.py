"""Keeping the holdout apart: access ledger and budget, curriculum guard, canaries.

Usage::

    with open_ledger(layout.ledger_file("support")) as ledger:   # locked, chain verified
        family = resolve_family(ledger.entries, "acme/sft-step-200", None)
        status = budget_status(ledger.entries, suite="support", version="1.0.0", budget=3)
        check_budget(status, family, override_reason=None)          # exit 7 past the budget
        ledger.append({...})                                         # the access, chained

    index = load_index(layout)                                      # docs/guard.md
    report = guard([Path("curriculum/")], index, options=GuardOptions())
    hits = screen_documents(documents, index)                       # one shard, any engine
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalsuite.guard import (  # the guard stage's names, importable from here too
        DEFAULT_THRESHOLD,
        FingerprintIndex,
        GuardOptions,
        GuardReport,
        Hit,
        guard,
        load_index,
        screen_documents,
    )
    from evalsuite.holdout._anchor import anchor_file
    from evalsuite.holdout._budget import (
        BudgetStatus,
        budget_status,
        check_budget,
        family_mapping,
        resolve_family,
        voided_accesses,
    )
    from evalsuite.holdout._governance import (
        StoredRun,
        ledger_hash_check,
        ledger_store_problems,
        store_hash_check,
    )
    from evalsuite.holdout._ledger import (
        LedgerEntry,
        LedgerReport,
        LedgerTransaction,
        append_entry,
        model_family,
        open_ledger,
        read_ledger,
        record_decryption,
        verify_ledger,
        who,
    )
    from evalsuite.holdout._tracking import ledger_history_problems, ledger_tracking_warning
else:
    from evalsuite._core.lazy import lazy_exports

    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "._anchor": ("anchor_file",),
            "._budget": (
                "BudgetStatus",
                "budget_status",
                "check_budget",
                "family_mapping",
                "resolve_family",
                "voided_accesses",
            ),
            "._governance": (
                "StoredRun",
                "ledger_hash_check",
                "ledger_store_problems",
                "store_hash_check",
            ),
            "._ledger": (
                "LedgerEntry",
                "LedgerReport",
                "LedgerTransaction",
                "append_entry",
                "model_family",
                "open_ledger",
                "read_ledger",
                "record_decryption",
                "verify_ledger",
                "who",
            ),
            "._tracking": ("ledger_history_problems", "ledger_tracking_warning"),
            # the guard stage (evalsuite.guard), where these names moved; kept here
            "evalsuite.guard": (
                "DEFAULT_THRESHOLD",
                "FingerprintIndex",
                "GuardOptions",
                "GuardReport",
                "Hit",
                "guard",
                "load_index",
                "screen_documents",
            ),
        },
    )

__all__ = [
    "DEFAULT_THRESHOLD",
    "BudgetStatus",
    "FingerprintIndex",
    "GuardOptions",
    "GuardReport",
    "Hit",
    "LedgerEntry",
    "LedgerReport",
    "LedgerTransaction",
    "StoredRun",
    "anchor_file",
    "append_entry",
    "budget_status",
    "check_budget",
    "family_mapping",
    "guard",
    "ledger_hash_check",
    "ledger_history_problems",
    "ledger_store_problems",
    "ledger_tracking_warning",
    "load_index",
    "model_family",
    "open_ledger",
    "read_ledger",
    "record_decryption",
    "resolve_family",
    "screen_documents",
    "store_hash_check",
    "verify_ledger",
    "voided_accesses",
    "who",
]
