"""Stage 2: run a model against a frozen manifest through inspect-ai.

This is the only stage (with task code and the reference agents) that imports `inspect_ai`.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalsuite.run._action import action_space_problems, check_action_space
    from evalsuite.run._action_cache import (
        agreements_recorded,
        environment_digest,
        verified_action_space_problems,
    )
    from evalsuite.run._episode import (
        EPISODE_KEY,
        GUARDED_KEY,
        TOOL_LIMIT_KEY,
        EpisodeSpec,
        EpisodeState,
        HarnessFault,
        ToolTimeLimit,
        episode_seed,
        episode_setup,
        episode_spec,
        guarded_call,
    )
    from evalsuite.run._family_state import checked_initial_state, state_copy
    from evalsuite.run._hooks import SampleSink, active_sink
    from evalsuite.run._ingest import (
        CsvOptions,
        IngestedRun,
        IngestReport,
        IngestSource,
        SkippedRun,
        ingest_checked_table,
        ingest_csv,
        ingest_inspect,
        ingest_table,
    )
    from evalsuite.run._ingest_csv import CSV_COLUMNS, CSV_EXAMPLE, ResultsTable
    from evalsuite.run._log_files import find_inspect_logs, is_url
    from evalsuite.run._options import REFUSED_GENERATE, check_generate_config
    from evalsuite.run._outcomes import LIMIT_OUTCOME, SCORE_REASON_OUTCOME, classify_sample
    from evalsuite.run._rescore import rescore_log, task_name_of_log
    from evalsuite.run._run_id import new_run_id
    from evalsuite.run._runner import (
        PlannedAttempt,
        RunInterrupted,
        RunResult,
        dev_items,
        plan_attempts,
        run_suite,
        stored_run_result,
    )
    from evalsuite.run._samples import item_to_sample, standalone_samples
    from evalsuite.run._scores import (
        ScoreRule,
        check_family_scoring,
        check_task_scoring,
        pick_scores,
        to_unit,
    )
    from evalsuite.run._shards import KILL_SHARD_ENV, Shard, check_run_id
    from evalsuite.run._spec import MAX_EPOCHS, MAX_PLANNED_ATTEMPTS, STOP_WITHIN_S, RunSpec
    from evalsuite.run._task_samples import sample_records, suite_task_records
    from evalsuite.run._tasks import build_task, load_task_function, no_dataset_reads
else:
    from evalsuite._core.lazy import lazy_exports

    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "._action": (
                "action_space_problems",
                "check_action_space",
            ),
            "._episode": (
                "EPISODE_KEY",
                "GUARDED_KEY",
                "TOOL_LIMIT_KEY",
                "EpisodeSpec",
                "EpisodeState",
                "HarnessFault",
                "ToolTimeLimit",
                "episode_seed",
                "episode_setup",
                "episode_spec",
                "guarded_call",
            ),
            "._family_state": (
                "checked_initial_state",
                "state_copy",
            ),
            "._hooks": (
                "SampleSink",
                "active_sink",
            ),
            "._ingest": (
                "CsvOptions",
                "IngestSource",
                "IngestedRun",
                "IngestReport",
                "SkippedRun",
                "ingest_checked_table",
                "ingest_csv",
                "ingest_inspect",
                "ingest_table",
            ),
            "._ingest_csv": (
                "CSV_COLUMNS",
                "CSV_EXAMPLE",
                "ResultsTable",
            ),
            "._log_files": (
                "find_inspect_logs",
                "is_url",
            ),
            "._options": (
                "REFUSED_GENERATE",
                "check_generate_config",
            ),
            "._outcomes": (
                "LIMIT_OUTCOME",
                "SCORE_REASON_OUTCOME",
                "classify_sample",
            ),
            "._runner": (
                "PlannedAttempt",
                "RunInterrupted",
                "RunResult",
                "dev_items",
                "plan_attempts",
                "run_suite",
                "stored_run_result",
                "stored_run_result",
            ),
            "._rescore": (
                "rescore_log",
                "task_name_of_log",
            ),
            "._samples": (
                "item_to_sample",
                "standalone_samples",
            ),
            "._scores": (
                "ScoreRule",
                "check_family_scoring",
                "check_task_scoring",
                "pick_scores",
                "to_unit",
            ),
            "._run_id": ("new_run_id",),
            "._shards": ("KILL_SHARD_ENV", "Shard", "check_run_id"),
            "._spec": (
                "MAX_EPOCHS",
                "MAX_PLANNED_ATTEMPTS",
                "STOP_WITHIN_S",
                "RunSpec",
            ),
            "._task_samples": (
                "sample_records",
                "suite_task_records",
            ),
            "._tasks": (
                "build_task",
                "load_task_function",
                "no_dataset_reads",
            ),
            "._action_cache": (
                "agreements_recorded",
                "environment_digest",
                "verified_action_space_problems",
            ),
        },
    )

__all__ = [
    "CSV_COLUMNS",
    "CSV_EXAMPLE",
    "EPISODE_KEY",
    "GUARDED_KEY",
    "KILL_SHARD_ENV",
    "LIMIT_OUTCOME",
    "MAX_EPOCHS",
    "MAX_PLANNED_ATTEMPTS",
    "REFUSED_GENERATE",
    "SCORE_REASON_OUTCOME",
    "STOP_WITHIN_S",
    "TOOL_LIMIT_KEY",
    "CsvOptions",
    "EpisodeSpec",
    "EpisodeState",
    "HarnessFault",
    "IngestReport",
    "IngestSource",
    "IngestedRun",
    "PlannedAttempt",
    "ResultsTable",
    "RunInterrupted",
    "RunResult",
    "RunSpec",
    "SampleSink",
    "ScoreRule",
    "Shard",
    "SkippedRun",
    "ToolTimeLimit",
    "action_space_problems",
    "active_sink",
    "agreements_recorded",
    "build_task",
    "check_action_space",
    "check_family_scoring",
    "check_generate_config",
    "check_run_id",
    "check_task_scoring",
    "checked_initial_state",
    "classify_sample",
    "dev_items",
    "environment_digest",
    "episode_seed",
    "episode_setup",
    "episode_spec",
    "find_inspect_logs",
    "guarded_call",
    "ingest_checked_table",
    "ingest_csv",
    "ingest_inspect",
    "ingest_table",
    "is_url",
    "item_to_sample",
    "load_task_function",
    "new_run_id",
    "no_dataset_reads",
    "pick_scores",
    "plan_attempts",
    "rescore_log",
    "run_suite",
    "sample_records",
    "standalone_samples",
    "state_copy",
    "stored_run_result",
    "suite_task_records",
    "task_name_of_log",
    "to_unit",
    "verified_action_space_problems",
]
