"""The service layer: read the store, run the analyses, build one view model per result.

Usage::

    payload = compare_payload(store, baseline, candidate, AnalysisOptions(), layout=layout)
    view = comparison_view(payload)  # rendered by the CLI, Markdown and HTML alike
    view.to_dict()                   # the ``compare --json`` payload, with the headline

See docs/design/result-model.md.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalsuite.service._adaptive import (
        adaptive_file,
        adaptive_summary,
        fixed_interval_note,
        level_text,
    )
    from evalsuite.service._audit import audit_fields
    from evalsuite.service._completeness import Completeness, run_completeness
    from evalsuite.service._format import (
        fmt,
        fmt_bytes,
        fmt_ci,
        fmt_counts,
        fmt_pct,
        fmt_signed,
        fmt_time,
    )
    from evalsuite.service._gates import import_local_gates, record_gate, recorded_gate
    from evalsuite.service._governance import (
        GovernanceCheck,
        check_governance,
        store_label,
        stored_runs,
    )
    from evalsuite.service._holdout import HoldoutStatus, holdout_status, holdout_status_view
    from evalsuite.service._items import (
        ITEMS_CSV_COLUMNS,
        MIN_REPORT_MODELS,
        ItemsResult,
        item_sections,
        items,
        items_csv,
        items_view,
    )
    from evalsuite.service._payloads import (
        COMPARE_COLUMNS,
        AnalysisOptions,
        check_comparable,
        compare_payload,
        run_facts,
        score_payload,
    )
    from evalsuite.service._runs import RUNS_SHOWN, RunListing, RunsResult, list_runs, runs_view
    from evalsuite.service._stage_views import audit_view, guard_view, validity_view
    from evalsuite.service._store import store_info, store_info_view
    from evalsuite.service._suites import SuiteSummary, SuiteVersion, list_suites, suites_view
    from evalsuite.service._verify import (
        ActionSpaceCheck,
        AuditCheck,
        VerifiedSuite,
        VerifyResult,
        verify,
        verify_audit,
        verify_view,
    )
    from evalsuite.service._views import (
        Column,
        ResultView,
        TableView,
        comparison_view,
        is_unfinished,
        run_label,
        score_view,
    )
else:
    from evalsuite._core.lazy import lazy_exports

    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "._adaptive": (
                "adaptive_file",
                "adaptive_summary",
                "fixed_interval_note",
                "level_text",
            ),
            "._audit": ("audit_fields",),
            "._completeness": (
                "Completeness",
                "run_completeness",
            ),
            "._gates": (
                "import_local_gates",
                "record_gate",
                "recorded_gate",
            ),
            "._governance": (
                "GovernanceCheck",
                "check_governance",
                "store_label",
                "stored_runs",
            ),
            "._holdout": ("HoldoutStatus", "holdout_status", "holdout_status_view"),
            "._runs": ("RUNS_SHOWN", "RunListing", "RunsResult", "list_runs", "runs_view"),
            "._store": ("store_info", "store_info_view"),
            "._suites": ("SuiteSummary", "SuiteVersion", "list_suites", "suites_view"),
            "._verify": (
                "ActionSpaceCheck",
                "AuditCheck",
                "VerifiedSuite",
                "VerifyResult",
                "verify",
                "verify_audit",
                "verify_view",
            ),
            "._items": (
                "ITEMS_CSV_COLUMNS",
                "MIN_REPORT_MODELS",
                "ItemsResult",
                "item_sections",
                "items",
                "items_csv",
                "items_view",
            ),
            "._payloads": (
                "COMPARE_COLUMNS",
                "AnalysisOptions",
                "check_comparable",
                "compare_payload",
                "run_facts",
                "score_payload",
            ),
            "._stage_views": (
                "audit_view",
                "guard_view",
                "validity_view",
            ),
            "._views": (
                "Column",
                "ResultView",
                "TableView",
                "comparison_view",
                "is_unfinished",
                "run_label",
                "score_view",
            ),
            "._format": (
                "fmt_bytes",
                "fmt_time",
                "fmt_counts",
                "fmt_signed",
                "fmt",
                "fmt_ci",
                "fmt_pct",
            ),
        },
    )

__all__ = [
    "COMPARE_COLUMNS",
    "ITEMS_CSV_COLUMNS",
    "MIN_REPORT_MODELS",
    "RUNS_SHOWN",
    "ActionSpaceCheck",
    "AnalysisOptions",
    "AuditCheck",
    "Column",
    "Completeness",
    "GovernanceCheck",
    "HoldoutStatus",
    "ItemsResult",
    "ResultView",
    "RunListing",
    "RunsResult",
    "SuiteSummary",
    "SuiteVersion",
    "TableView",
    "VerifiedSuite",
    "VerifyResult",
    "adaptive_file",
    "adaptive_summary",
    "audit_fields",
    "audit_view",
    "check_comparable",
    "check_governance",
    "compare_payload",
    "comparison_view",
    "fixed_interval_note",
    "fmt",
    "fmt_bytes",
    "fmt_ci",
    "fmt_counts",
    "fmt_pct",
    "fmt_signed",
    "fmt_time",
    "guard_view",
    "holdout_status",
    "holdout_status_view",
    "import_local_gates",
    "is_unfinished",
    "item_sections",
    "items",
    "items_csv",
    "items_view",
    "level_text",
    "list_runs",
    "list_suites",
    "record_gate",
    "recorded_gate",
    "run_completeness",
    "run_facts",
    "run_label",
    "runs_view",
    "score_payload",
    "score_view",
    "store_info",
    "store_info_view",
    "store_label",
    "stored_runs",
    "suites_view",
    "validity_view",
    "verify",
    "verify_audit",
    "verify_view",
]
