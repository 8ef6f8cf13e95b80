"""The `export` use case: stored runs as Every Eval Ever records or results tables.

`evalsuite export` parses its options into an `ExportRequest` and calls `export_results`;
the writing is `evalsuite.interchange.export_runs`'s. This use case adds the holdout ledger:
a holdout run's per-item results leave only with ``include_holdout_samples``, and each such
export is recorded in its suite's chained ledger (anchored outside the project) before a
file is written (docs/interchange.md, "Holdout runs").
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalsuite._core.layout import Layout
    from evalsuite.interchange import ExportedRun, ExportRequest
    from evalsuite.store import RunRecord, Store

__all__ = ["export_results"]


def export_results(
    request: ExportRequest, *, layout: Layout, store: Store, key_dir: Path | None
) -> list[ExportedRun]:
    """Write the runs of `request`; ledger each holdout run whose samples are exported.

    Args:
        request: The runs, the format, the folder, and whether holdout samples may leave.
        layout: The project (its holdout ledgers).
        store: The results store.
        key_dir: Where the ledgers' heads are anchored (``EVALSUITE_KEY_DIR``); needed only
            when a holdout run's samples are exported.

    Raises:
        UsageError: see `evalsuite.interchange.export_runs`; LedgerError: a damaged ledger
            (nothing of that run is written).
    """
    from evalsuite.errors import UsageError
    from evalsuite.holdout import anchor_file, record_export
    from evalsuite.interchange import export_runs

    def ledger(record: RunRecord) -> None:
        if key_dir is None:
            raise UsageError(
                f"exporting the samples of holdout run {record.run_id} is recorded in the "
                "holdout ledger, whose head is anchored in the key directory: give key_dir "
                "(the command uses EVALSUITE_KEY_DIR)"
            )
        suite = str(record.suite)
        record_export(
            layout.ledger_file(suite),
            run_id=record.run_id,
            suite=suite,
            version=str(record.version),
            manifest_hash=str(record.manifest_hash),
            model=record.model,
            reason=f"evalsuite export --format {request.format} --include-holdout-samples: "
            "item ids and scores, never item text",
            at=datetime.now(UTC).isoformat(),
            anchor=anchor_file(key_dir, layout.root, suite),
        )

    return export_runs(request, store=store, ledger=ledger)
