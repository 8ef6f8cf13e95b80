"""Keeping the holdout apart: the access ledger (its head anchored outside) and the budget.

The curriculum guard is its own stage, `evalsuite.guard` (docs/guard.md); its names are no
longer re-exported here.

Usage::

    with open_ledger(layout.ledger_file("support")) as ledger:   # locked, chain verified
        family = resolve_family(ledger.entries, "acme/sft-step-200", None)
        status = budget_status(ledger.entries, suite="support", version="1.0.0", budget=3)
        check_budget(status, family, override_reason=None)          # exit 7 past the budget
        ledger.append({...})                                         # the access, chained
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalsuite.holdout._anchor import anchor_file
    from evalsuite.holdout._answers import (
        MechanismState,
        answer_problems,
        answer_record,
        mechanism_scope,
        mechanism_state,
    )
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
        record_export,
        verify_ledger,
        who,
    )
    from evalsuite.holdout._mechanism import (
        MECHANISMS,
        LadderAnswer,
        LadderParams,
        MechanismName,
        ThresholdoutAnswer,
        ThresholdoutParams,
        ladder_answer,
        replay_ladder,
        replay_thresholdout,
        thresholdout_answer,
    )
    from evalsuite.holdout._tracking import ledger_history_problems, ledger_tracking_warning
else:
    from evalsuite._core.lazy import lazy_exports

    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "._anchor": ("anchor_file",),
            "._answers": (
                "MechanismState",
                "answer_problems",
                "answer_record",
                "mechanism_scope",
                "mechanism_state",
            ),
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
                "record_export",
                "verify_ledger",
                "who",
            ),
            "._mechanism": (
                "MECHANISMS",
                "LadderAnswer",
                "LadderParams",
                "MechanismName",
                "ThresholdoutAnswer",
                "ThresholdoutParams",
                "ladder_answer",
                "replay_ladder",
                "replay_thresholdout",
                "thresholdout_answer",
            ),
            "._tracking": ("ledger_history_problems", "ledger_tracking_warning"),
        },
    )

__all__ = [
    "MECHANISMS",
    "BudgetStatus",
    "LadderAnswer",
    "LadderParams",
    "LedgerEntry",
    "LedgerReport",
    "LedgerTransaction",
    "MechanismName",
    "MechanismState",
    "StoredRun",
    "ThresholdoutAnswer",
    "ThresholdoutParams",
    "anchor_file",
    "answer_problems",
    "answer_record",
    "append_entry",
    "budget_status",
    "check_budget",
    "family_mapping",
    "ladder_answer",
    "ledger_hash_check",
    "ledger_history_problems",
    "ledger_store_problems",
    "ledger_tracking_warning",
    "mechanism_scope",
    "mechanism_state",
    "model_family",
    "open_ledger",
    "read_ledger",
    "record_decryption",
    "record_export",
    "replay_ladder",
    "replay_thresholdout",
    "resolve_family",
    "store_hash_check",
    "thresholdout_answer",
    "verify_ledger",
    "voided_accesses",
    "who",
]
