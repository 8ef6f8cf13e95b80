"""Stage 2: run a model against a frozen manifest through inspect-ai.

This is the only stage (with task code and the reference agents) that imports `inspect_ai`.
"""

from evalsuite.run._action import action_space_problems, check_action_space
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
from evalsuite.run._hooks import SampleSink, active_sink
from evalsuite.run._ingest import (
    CsvOptions,
    IngestedRun,
    IngestReport,
    SkippedRun,
    ingest_csv,
    ingest_inspect,
    ingest_table,
)
from evalsuite.run._ingest_csv import CSV_COLUMNS, CSV_EXAMPLE
from evalsuite.run._options import REFUSED_GENERATE, check_generate_config
from evalsuite.run._outcomes import LIMIT_OUTCOME, SCORE_REASON_OUTCOME, classify_sample
from evalsuite.run._runner import (
    PlannedAttempt,
    RunInterrupted,
    RunResult,
    load_task_function,
    plan_attempts,
    run_suite,
)
from evalsuite.run._samples import item_to_sample, standalone_samples
from evalsuite.run._scores import ScoreRule, pick_scores, to_unit
from evalsuite.run._shards import Shard
from evalsuite.run._spec import RunSpec
from evalsuite.run._task_samples import sample_records, suite_task_records
from evalsuite.run._tasks import build_task, no_dataset_reads

__all__ = [
    "CSV_COLUMNS",
    "CSV_EXAMPLE",
    "EPISODE_KEY",
    "GUARDED_KEY",
    "LIMIT_OUTCOME",
    "REFUSED_GENERATE",
    "SCORE_REASON_OUTCOME",
    "TOOL_LIMIT_KEY",
    "CsvOptions",
    "EpisodeSpec",
    "EpisodeState",
    "HarnessFault",
    "IngestReport",
    "IngestedRun",
    "PlannedAttempt",
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
    "build_task",
    "check_action_space",
    "check_generate_config",
    "classify_sample",
    "episode_seed",
    "episode_setup",
    "episode_spec",
    "guarded_call",
    "ingest_csv",
    "ingest_inspect",
    "ingest_table",
    "item_to_sample",
    "load_task_function",
    "no_dataset_reads",
    "pick_scores",
    "plan_attempts",
    "run_suite",
    "sample_records",
    "standalone_samples",
    "suite_task_records",
    "to_unit",
]
