"""Stage 3: the results store (runs, attempts, deployment outcomes).

Usage::

    store = Store(default_store_url(layout.state))
    frame = store.attempts(run_id)     # columns: docs/design/attempts.md
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalsuite.store._bulk import IngestSession, RunTally
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
    from evalsuite.store._reader import RunReader, ShardRow
    from evalsuite.store._records import (
        IngestStored,
        RunRecord,
        default_store_url,
        missing_store_message,
        sqlite_file,
    )
    from evalsuite.store._schema import TEXT_LIMITS
    from evalsuite.store._store import (
        ATTEMPT_COLUMNS,
        AttemptRecord,
        OutcomeRecord,
        ShardState,
        Store,
        StoreInfo,
    )
    from evalsuite.store._version import SCHEMA_VERSION
else:
    from evalsuite._core.lazy import lazy_exports

    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "._fingerprint": (
                "ATTEMPT_SCHEMA",
                "attempt_table",
            ),
            "._health": (
                "ErrorGroup",
                "Health",
                "HealthCounts",
                "error_groups",
                "error_kind",
                "run_health",
            ),
            "._outcomes_io": (
                "OUTCOME_COLUMNS",
                "make_outcome",
                "outcome_fingerprint",
                "read_outcomes_file",
            ),
            "._reader": ("RunReader", "ShardRow"),
            "._records": (
                "IngestStored",
                "RunRecord",
                "default_store_url",
                "missing_store_message",
                "sqlite_file",
            ),
            "._schema": ("TEXT_LIMITS",),
            "._store": (
                "ATTEMPT_COLUMNS",
                "AttemptRecord",
                "OutcomeRecord",
                "ShardState",
                "Store",
                "StoreInfo",
            ),
            "._version": ("SCHEMA_VERSION",),
            "._bulk": (
                "IngestSession",
                "RunTally",
            ),
        },
    )

__all__ = [
    "ATTEMPT_COLUMNS",
    "ATTEMPT_SCHEMA",
    "OUTCOME_COLUMNS",
    "SCHEMA_VERSION",
    "TEXT_LIMITS",
    "AttemptRecord",
    "ErrorGroup",
    "Health",
    "HealthCounts",
    "IngestSession",
    "IngestStored",
    "OutcomeRecord",
    "RunReader",
    "RunRecord",
    "RunTally",
    "ShardRow",
    "ShardState",
    "Store",
    "StoreInfo",
    "attempt_table",
    "default_store_url",
    "error_groups",
    "error_kind",
    "make_outcome",
    "missing_store_message",
    "outcome_fingerprint",
    "read_outcomes_file",
    "run_health",
    "sqlite_file",
]
