"""Interchange with the eval ecosystem: Every Eval Ever records, lm-eval samples, HELM runs.

Readers turn another tool's files into attempts of the results-table contract, stored through
the run stage's checked, one-transaction ingest (`ingest_foreign`); `export_runs` writes
stored runs as Every Eval Ever records (validated by the `every-eval-ever` package) or as
results tables (docs/interchange.md).
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalsuite.interchange._eee_package import EEE_INSTALL
    from evalsuite.interchange._eee_read import read_eee
    from evalsuite.interchange._eee_scores import eee_aggregate_rows, eee_scores
    from evalsuite.interchange._export import (
        TABLE_COLUMNS,
        ExportedRun,
        ExportRequest,
        export_runs,
    )
    from evalsuite.interchange._foreign import ForeignRows, ingest_foreign
    from evalsuite.interchange._helm import read_helm
    from evalsuite.interchange._lm_eval import read_lm_eval
else:
    from evalsuite._core.lazy import lazy_exports

    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "._eee_package": ("EEE_INSTALL",),
            "._eee_read": ("read_eee",),
            "._eee_scores": ("eee_aggregate_rows", "eee_scores"),
            "._export": ("TABLE_COLUMNS", "ExportRequest", "ExportedRun", "export_runs"),
            "._foreign": ("ForeignRows", "ingest_foreign"),
            "._helm": ("read_helm",),
            "._lm_eval": ("read_lm_eval",),
        },
    )

__all__ = [
    "EEE_INSTALL",
    "TABLE_COLUMNS",
    "ExportRequest",
    "ExportedRun",
    "ForeignRows",
    "eee_aggregate_rows",
    "eee_scores",
    "export_runs",
    "ingest_foreign",
    "read_eee",
    "read_helm",
    "read_lm_eval",
]
