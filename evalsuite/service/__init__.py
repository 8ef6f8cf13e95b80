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
    from evalsuite.service._adaptive_result import (
        AdaptiveResult,
        AdaptiveRound,
        AdaptiveVersus,
        adaptive_result,
        adaptive_view,
    )
    from evalsuite.service._audit import audit_fields
    from evalsuite.service._audit_report import AuditResult
    from evalsuite.service._completeness import Completeness, run_completeness
    from evalsuite.service._format import fmt, fmt_ci, fmt_counts, fmt_pct, fmt_signed
    from evalsuite.service._gates import import_local_gates, record_gate, recorded_gate
    from evalsuite.service._guard_report import guard_report
    from evalsuite.service._payloads import (
        COMPARE_COLUMNS,
        AnalysisOptions,
        check_comparable,
        compare_payload,
        run_facts,
        score_payload,
    )
    from evalsuite.service._run_adaptive import (
        AdaptiveRunResult,
        AdaptiveTarget,
        RoundRunner,
        RoundStep,
        item_weights,
        run_adaptive,
        versus_results,
    )
    from evalsuite.service._stage_views import audit_view, guard_view, validity_view
    from evalsuite.service._triage_view import triage_view
    from evalsuite.service._validity_report import (
        ValidityPoint,
        ValidityResult,
        ValidityRuns,
        ValidityTimePoint,
        latest_outcomes,
        read_scores_file,
        suite_scores,
        validity_report,
        validity_results,
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
            "._adaptive_result": (
                "AdaptiveResult",
                "AdaptiveRound",
                "AdaptiveVersus",
                "adaptive_result",
                "adaptive_view",
            ),
            "._run_adaptive": (
                "AdaptiveRunResult",
                "AdaptiveTarget",
                "RoundRunner",
                "RoundStep",
                "item_weights",
                "run_adaptive",
                "versus_results",
            ),
            "._audit": ("audit_fields",),
            "._audit_report": ("AuditResult",),
            "._completeness": (
                "Completeness",
                "run_completeness",
            ),
            "._gates": (
                "import_local_gates",
                "record_gate",
                "recorded_gate",
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
            "._validity_report": (
                "ValidityPoint",
                "ValidityResult",
                "ValidityRuns",
                "ValidityTimePoint",
                "latest_outcomes",
                "read_scores_file",
                "suite_scores",
                "validity_report",
                "validity_results",
            ),
            "._guard_report": ("guard_report",),
            "._triage_view": ("triage_view",),
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
    "AdaptiveResult",
    "AdaptiveRound",
    "AdaptiveRunResult",
    "AdaptiveTarget",
    "AdaptiveVersus",
    "AnalysisOptions",
    "AuditResult",
    "Column",
    "Completeness",
    "ResultView",
    "RoundRunner",
    "RoundStep",
    "TableView",
    "ValidityPoint",
    "ValidityResult",
    "ValidityRuns",
    "ValidityTimePoint",
    "adaptive_file",
    "adaptive_result",
    "adaptive_summary",
    "adaptive_view",
    "audit_fields",
    "audit_view",
    "check_comparable",
    "compare_payload",
    "comparison_view",
    "fixed_interval_note",
    "fmt",
    "fmt_ci",
    "fmt_counts",
    "fmt_pct",
    "fmt_signed",
    "guard_report",
    "guard_view",
    "import_local_gates",
    "is_unfinished",
    "item_weights",
    "latest_outcomes",
    "level_text",
    "read_scores_file",
    "record_gate",
    "recorded_gate",
    "run_adaptive",
    "run_completeness",
    "run_facts",
    "run_label",
    "score_payload",
    "score_view",
    "suite_scores",
    "triage_view",
    "validity_report",
    "validity_results",
    "validity_view",
    "versus_results",
]
