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
    from evalsuite.service._adaptive_result import (
        AdaptiveResult,
        AdaptiveRound,
        AdaptiveVersus,
        adaptive_result,
        adaptive_view,
    )
    from evalsuite.service._audit import (
        audit_fields,
    )
    from evalsuite.service._audit_report import (
        AuditOutcome,
        AuditRequest,
        AuditResult,
        CanaryProbeResult,
        GraderAuditResult,
        Leak,
        LeakAuditResult,
        audit_suite,
    )
    from evalsuite.service._compare import (
        CommonItems,
        ComparisonResult,
        compare,
        compare_payload,
    )
    from evalsuite.service._completeness import (
        Completeness,
        run_completeness,
    )
    from evalsuite.service._export import export_results
    from evalsuite.service._format import (
        fmt,
        fmt_bytes,
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
    from evalsuite.service._gates import (
        RecordedGate,
        import_local_gates,
        last_gate,
        record_gate,
        recorded_gate,
    )
    from evalsuite.service._governance import (
        GovernanceCheck,
        check_governance,
        store_label,
        stored_runs,
    )
    from evalsuite.service._guard_report import (
        guard_report,
    )
    from evalsuite.service._holdout import (
        HoldoutStatus,
        holdout_status,
        holdout_status_view,
    )
    from evalsuite.service._holdout_family import (
        FamilyChange,
        change_family,
    )
    from evalsuite.service._ingest import (
        CSV_TARGETS,
        IngestOutcome,
        IngestRequest,
        StoredAggregate,
        column_mapping,
        ingest_results,
    )
    from evalsuite.service._items import (
        ITEMS_CSV_COLUMNS,
        MIN_REPORT_MODELS,
        ItemsResult,
        item_sections,
        items,
        items_csv,
        items_view,
    )
    from evalsuite.service._judge_audit import (
        FamilyJudgeAudit,
        JudgeAuditResult,
        audit_judges,
        judge_audit_path,
        judge_audit_status,
    )
    from evalsuite.service._mechanism import (
        MechanismOptions,
        PreparedMechanism,
        Release,
        Reveal,
        mechanism_problems,
        mechanism_summaries,
        reveal_exact,
        reveal_records,
    )
    from evalsuite.service._payloads import (
        COMPARE_COLUMNS,
        AnalysisOptions,
        check_comparable,
        run_facts,
    )
    from evalsuite.service._project import (
        Project,
        open_project,
    )
    from evalsuite.service._ray_run import (
        RayRunOutcome,
        RayRunRequest,
        check_distributed_store,
        execute_ray_run,
    )
    from evalsuite.service._regrade import RegradeResult, regrade
    from evalsuite.service._released import (
        ReleasedComparison,
        released_comparison,
    )
    from evalsuite.service._results import (
        AuditInfo,
        RunFacts,
    )
    from evalsuite.service._review import review_lines, why_it_failed
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
    from evalsuite.service._run_adaptive import (
        AdaptiveRunResult,
        AdaptiveTarget,
        RoundRunner,
        RoundStep,
        item_weights,
        run_adaptive,
        versus_results,
    )
    from evalsuite.service._runs import (
        RUNS_SHOWN,
        RunListing,
        RunsResult,
        list_runs,
        runs_view,
    )
    from evalsuite.service._score import (
        ScoreResult,
        score,
        score_payload,
    )
    from evalsuite.service._scorecard import (
        Badge,
        Scorecard,
        ScorecardRow,
        ScorecardRun,
        scorecard,
    )
    from evalsuite.service._shard_progress import (
        ShardProgress,
        plan_item_ids,
        shard_progress,
        shards_line,
    )
    from evalsuite.service._stage_views import (
        audit_view,
        guard_view,
        validity_view,
    )
    from evalsuite.service._store import (
        StoreUpgrade,
        store_info,
        store_info_view,
        upgrade_store,
    )
    from evalsuite.service._suites import (
        SuiteSummary,
        SuiteVersion,
        list_suites,
        suites_view,
    )
    from evalsuite.service._triage_view import (
        triage_view,
    )
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
            "._adaptive_result": (
                "AdaptiveResult",
                "AdaptiveRound",
                "AdaptiveVersus",
                "adaptive_result",
                "adaptive_view",
            ),
            "._audit": ("audit_fields",),
            "._audit_report": (
                "AuditOutcome",
                "AuditRequest",
                "AuditResult",
                "CanaryProbeResult",
                "GraderAuditResult",
                "Leak",
                "LeakAuditResult",
                "audit_suite",
            ),
            "._compare": (
                "CommonItems",
                "ComparisonResult",
                "compare",
                "compare_payload",
            ),
            "._completeness": (
                "Completeness",
                "run_completeness",
            ),
            "._format": (
                "fmt",
                "fmt_bytes",
                "fmt_ci",
                "fmt_counts",
                "fmt_pct",
                "fmt_signed",
                "fmt_time",
            ),
            "._freeze": (
                "FreezeOutcome",
                "FreezeRefused",
                "FreezeRequest",
                "freeze_suite",
            ),
            "._gates": (
                "import_local_gates",
                "record_gate",
                "recorded_gate",
                "RecordedGate",
                "last_gate",
            ),
            "._governance": (
                "GovernanceCheck",
                "check_governance",
                "store_label",
                "stored_runs",
            ),
            "._guard_report": ("guard_report",),
            "._mechanism": (
                "MechanismOptions",
                "PreparedMechanism",
                "Release",
                "Reveal",
                "mechanism_problems",
                "mechanism_summaries",
                "reveal_exact",
                "reveal_records",
            ),
            "._released": (
                "ReleasedComparison",
                "released_comparison",
            ),
            "._holdout": (
                "HoldoutStatus",
                "holdout_status",
                "holdout_status_view",
            ),
            "._export": ("export_results",),
            "._judge_audit": (
                "FamilyJudgeAudit",
                "JudgeAuditResult",
                "audit_judges",
                "judge_audit_path",
                "judge_audit_status",
            ),
            "._regrade": ("RegradeResult", "regrade"),
            "._ingest": (
                "CSV_TARGETS",
                "IngestOutcome",
                "StoredAggregate",
                "IngestRequest",
                "column_mapping",
                "ingest_results",
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
                "run_facts",
            ),
            "._project": (
                "Project",
                "open_project",
            ),
            "._results": (
                "AuditInfo",
                "RunFacts",
            ),
            "._ray_run": (
                "RayRunOutcome",
                "RayRunRequest",
                "check_distributed_store",
                "execute_ray_run",
            ),
            "._shard_progress": (
                "ShardProgress",
                "plan_item_ids",
                "shard_progress",
                "shards_line",
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
            "._run_adaptive": (
                "AdaptiveRunResult",
                "AdaptiveTarget",
                "RoundRunner",
                "RoundStep",
                "item_weights",
                "run_adaptive",
                "versus_results",
            ),
            "._runs": (
                "RUNS_SHOWN",
                "RunListing",
                "RunsResult",
                "list_runs",
                "runs_view",
            ),
            "._score": (
                "ScoreResult",
                "score",
                "score_payload",
            ),
            "._scorecard": (
                "Badge",
                "Scorecard",
                "ScorecardRow",
                "ScorecardRun",
                "scorecard",
            ),
            "._stage_views": (
                "audit_view",
                "guard_view",
                "validity_view",
            ),
            "._holdout_family": (
                "FamilyChange",
                "change_family",
            ),
            "._store": (
                "StoreUpgrade",
                "store_info",
                "store_info_view",
                "upgrade_store",
            ),
            "._suites": (
                "SuiteSummary",
                "SuiteVersion",
                "list_suites",
                "suites_view",
            ),
            "._review": ("review_lines", "why_it_failed"),
            "._triage_view": ("triage_view",),
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
            "._verify": (
                "ActionSpaceCheck",
                "AuditCheck",
                "VerifiedSuite",
                "VerifyResult",
                "verify",
                "verify_audit",
                "verify_view",
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
        },
    )

__all__ = [
    "COMPARE_COLUMNS",
    "CSV_TARGETS",
    "ITEMS_CSV_COLUMNS",
    "MIN_REPORT_MODELS",
    "RUNS_SHOWN",
    "ActionSpaceCheck",
    "AdaptiveOptions",
    "AdaptiveResult",
    "AdaptiveRound",
    "AdaptiveRunResult",
    "AdaptiveRunner",
    "AdaptiveTarget",
    "AdaptiveVersus",
    "AnalysisOptions",
    "AuditCheck",
    "AuditInfo",
    "AuditOutcome",
    "AuditRequest",
    "AuditResult",
    "Badge",
    "CanaryProbeResult",
    "Column",
    "CommonItems",
    "ComparisonResult",
    "Completeness",
    "FamilyChange",
    "FamilyJudgeAudit",
    "FaultOptions",
    "FreezeOutcome",
    "FreezeRefused",
    "FreezeRequest",
    "GovernanceCheck",
    "GovernanceOptions",
    "GraderAuditResult",
    "HarnessOptions",
    "HoldoutStatus",
    "IngestOutcome",
    "IngestRequest",
    "InspectOptions",
    "ItemsResult",
    "JudgeAuditResult",
    "Leak",
    "LeakAuditResult",
    "MechanismOptions",
    "ModelOptions",
    "PlannedRun",
    "PreparedMechanism",
    "Project",
    "RayRunOutcome",
    "RayRunRequest",
    "RecordedGate",
    "RegradeResult",
    "Release",
    "ReleasedComparison",
    "ResultView",
    "Reveal",
    "RoundRunner",
    "RoundStep",
    "RunFacts",
    "RunListing",
    "RunOutcome",
    "RunPlan",
    "RunRequest",
    "RunsResult",
    "ScoreResult",
    "Scorecard",
    "ScorecardRow",
    "ScorecardRun",
    "ShardOptions",
    "ShardProgress",
    "StoreUpgrade",
    "StoredAggregate",
    "SuiteSummary",
    "SuiteVersion",
    "TableView",
    "ValidityPoint",
    "ValidityResult",
    "ValidityRuns",
    "ValidityTimePoint",
    "VerifiedSuite",
    "VerifyResult",
    "adaptive_file",
    "adaptive_result",
    "adaptive_summary",
    "adaptive_view",
    "audit_fields",
    "audit_judges",
    "audit_suite",
    "audit_view",
    "change_family",
    "check_comparable",
    "check_distributed_store",
    "check_governance",
    "column_mapping",
    "compare",
    "compare_payload",
    "comparison_view",
    "execute_ray_run",
    "execute_run",
    "export_results",
    "fixed_interval_note",
    "fmt",
    "fmt_bytes",
    "fmt_ci",
    "fmt_counts",
    "fmt_pct",
    "fmt_signed",
    "fmt_time",
    "freeze_suite",
    "guard_report",
    "guard_view",
    "holdout_status",
    "holdout_status_view",
    "import_local_gates",
    "ingest_results",
    "is_unfinished",
    "item_sections",
    "item_weights",
    "items",
    "items_csv",
    "items_view",
    "judge_audit_path",
    "judge_audit_status",
    "last_gate",
    "latest_outcomes",
    "level_text",
    "list_runs",
    "list_suites",
    "mechanism_problems",
    "mechanism_summaries",
    "open_project",
    "plan_item_ids",
    "plan_run",
    "read_scores_file",
    "record_gate",
    "recorded_gate",
    "regrade",
    "released_comparison",
    "reveal_exact",
    "reveal_records",
    "review_lines",
    "run_adaptive",
    "run_completeness",
    "run_facts",
    "run_label",
    "runs_view",
    "score",
    "score_payload",
    "score_view",
    "scorecard",
    "shard_progress",
    "shards_line",
    "store_info",
    "store_info_view",
    "store_label",
    "stored_runs",
    "suite_scores",
    "suites_view",
    "triage_view",
    "upgrade_store",
    "validity_report",
    "validity_results",
    "validity_view",
    "verify",
    "verify_audit",
    "verify_view",
    "versus_results",
    "why_it_failed",
]
