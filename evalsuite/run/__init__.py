"""Stage 2: run a model against a frozen manifest through inspect-ai.

This is the only stage (with task code and the reference agents) that imports `inspect_ai`.
"""

from evalsuite.run._episode import (
    EPISODE_KEY,
    EpisodeSpec,
    EpisodeState,
    HarnessFault,
    episode_seed,
    episode_setup,
    episode_spec,
    guarded_call,
)
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
from evalsuite.run._shards import Shard
from evalsuite.run._spec import RunSpec

__all__ = [
    "CSV_COLUMNS",
    "CSV_EXAMPLE",
    "EPISODE_KEY",
    "LIMIT_OUTCOME",
    "SCORE_REASON_OUTCOME",
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
    "Shard",
    "SkippedRun",
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
    "plan_attempts",
    "run_suite",
    "standalone_samples",
]
