"""The service layer: read the store, run the analyses, build one view model per result.

Usage::

    result = compare(store, baseline, candidate, AnalysisOptions(), layout=layout)
    result.diff, result.interval          # a typed result (ComparisonResult; score: ScoreResult)
    view = comparison_view(result)   # rendered by the CLI, Markdown and HTML alike
    view.to_dict()                   # the ``compare --json`` payload, with the headline

See docs/design/result-model.md.

Use cases take a typed request and return a typed outcome; the command line parses argv into
the request and renders the outcome: `execute_run` (`RunRequest`, one dataclass per group of
`run`'s options; `plan_run` checks it without running), `ingest_results` (`IngestRequest`),
`freeze_suite` (`FreezeRequest`; a failing grader audit raises `FreezeRefused`).
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
    from evalsuite.service._compare import (
        CommonItems,
        ComparisonResult,
        compare,
        compare_payload,
    )
    from evalsuite.service._completeness import Completeness, run_completeness
    from evalsuite.service._format import (
        fmt,
        fmt_ci,
        fmt_counts,
        fmt_pct,
        fmt_signed,
        fmt_time,
    )
    from evalsuite.service._freeze import (
        FreezeOutcome,
        FreezeRefused,
        FreezeRequest,
        freeze_suite,
    )
    from evalsuite.service._gates import import_local_gates, record_gate, recorded_gate
    from evalsuite.service._ingest import (
        CSV_TARGETS,
        IngestOutcome,
        IngestRequest,
        column_mapping,
        ingest_results,
    )
    from evalsuite.service._payloads import (
        COMPARE_COLUMNS,
        AnalysisOptions,
        check_comparable,
        run_facts,
    )
    from evalsuite.service._project import Project, open_project
    from evalsuite.service._results import AuditInfo, RunFacts
    from evalsuite.service._run import (
        AdaptiveOptions,
        AdaptiveRunner,
        FaultOptions,
        GovernanceOptions,
        HarnessOptions,
        InspectOptions,
        ModelOptions,
        PlannedRun,
        RunOutcome,
        RunPlan,
        RunRequest,
        ShardOptions,
        execute_run,
        plan_run,
    )
    from evalsuite.service._score import ScoreResult, score, score_payload
    from evalsuite.service._scorecard import (
        Badge,
        Scorecard,
        ScorecardRow,
        ScorecardRun,
        scorecard,
    )
    from evalsuite.service._stage_views import audit_view, guard_view, validity_view
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
                "open_project",
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
            "._payloads": (
                "COMPARE_COLUMNS",
                "AnalysisOptions",
                "check_comparable",
                "run_facts",
            ),
            "._freeze": (
                "FreezeOutcome",
                "FreezeRefused",
                "FreezeRequest",
                "freeze_suite",
            ),
            "._ingest": (
                "CSV_TARGETS",
                "IngestOutcome",
                "IngestRequest",
                "column_mapping",
                "ingest_results",
            ),
            "._run": (
                "AdaptiveOptions",
                "AdaptiveRunner",
                "FaultOptions",
                "GovernanceOptions",
                "HarnessOptions",
                "InspectOptions",
                "ModelOptions",
                "PlannedRun",
                "RunOutcome",
                "RunPlan",
                "RunRequest",
                "ShardOptions",
                "execute_run",
                "plan_run",
            ),
            "._scorecard": (
                "Badge",
                "Scorecard",
                "ScorecardRow",
                "ScorecardRun",
                "scorecard",
            ),
            "._compare": ("CommonItems", "ComparisonResult", "compare", "compare_payload"),
            "._project": ("Project", "open_project"),
            "._results": ("AuditInfo", "RunFacts"),
            "._score": ("ScoreResult", "score", "score_payload"),
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
                "fmt_counts",
                "fmt_signed",
                "fmt",
                "fmt_ci",
                "fmt_pct",
                "fmt_time",
            ),
        },
    )

__all__ = [
    "COMPARE_COLUMNS",
    "CSV_TARGETS",
    "AdaptiveOptions",
    "AdaptiveRunner",
    "AnalysisOptions",
    "AuditInfo",
    "Badge",
    "Column",
    "CommonItems",
    "ComparisonResult",
    "Completeness",
    "FaultOptions",
    "FreezeOutcome",
    "FreezeRefused",
    "FreezeRequest",
    "GovernanceOptions",
    "HarnessOptions",
    "IngestOutcome",
    "IngestRequest",
    "InspectOptions",
    "ModelOptions",
    "PlannedRun",
    "Project",
    "ResultView",
    "RunFacts",
    "RunOutcome",
    "RunPlan",
    "RunRequest",
    "ScoreResult",
    "Scorecard",
    "ScorecardRow",
    "ScorecardRun",
    "ShardOptions",
    "TableView",
    "adaptive_file",
    "adaptive_summary",
    "audit_fields",
    "audit_view",
    "check_comparable",
    "column_mapping",
    "compare",
    "compare_payload",
    "comparison_view",
    "execute_run",
    "fixed_interval_note",
    "fmt",
    "fmt_ci",
    "fmt_counts",
    "fmt_pct",
    "fmt_signed",
    "fmt_time",
    "freeze_suite",
    "guard_view",
    "import_local_gates",
    "ingest_results",
    "is_unfinished",
    "level_text",
    "open_project",
    "plan_run",
    "record_gate",
    "recorded_gate",
    "run_completeness",
    "run_facts",
    "run_label",
    "score",
    "score_payload",
    "score_view",
    "scorecard",
    "validity_view",
]
