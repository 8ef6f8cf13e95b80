"""Stage 3: the results store (runs, attempts, deployment outcomes).

Usage::

    store = Store(default_store_url(layout.state))
    frame = store.attempts(run_id)     # columns: docs/design/attempts.md
"""

from evalsuite.store._fingerprint import ATTEMPT_SCHEMA, attempt_table
from evalsuite.store._health import (
    ErrorGroup,
    Health,
    HealthCounts,
    error_groups,
    error_kind,
    run_health,
)
from evalsuite.store._outcomes_io import (
    OUTCOME_COLUMNS,
    make_outcome,
    outcome_fingerprint,
    read_outcomes_file,
)
from evalsuite.store._schema import SCHEMA_VERSION
from evalsuite.store._store import (
    ATTEMPT_COLUMNS,
    AttemptRecord,
    IngestStored,
    OutcomeRecord,
    RunRecord,
    ShardState,
    Store,
    StoreInfo,
    default_store_url,
)

__all__ = [
    "ATTEMPT_COLUMNS",
    "ATTEMPT_SCHEMA",
    "OUTCOME_COLUMNS",
    "SCHEMA_VERSION",
    "AttemptRecord",
    "ErrorGroup",
    "Health",
    "HealthCounts",
    "IngestStored",
    "OutcomeRecord",
    "RunRecord",
    "ShardState",
    "Store",
    "StoreInfo",
    "attempt_table",
    "default_store_url",
    "error_groups",
    "error_kind",
    "make_outcome",
    "outcome_fingerprint",
    "read_outcomes_file",
    "run_health",
]
