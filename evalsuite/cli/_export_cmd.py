"""`evalsuite export`: stored runs as Every Eval Ever records, or as CSV / Parquet tables."""

from __future__ import annotations

from pathlib import Path

import click

from evalsuite.cli._common import (
    Context,
    console,
    emit_json,
    handle_errors,
    json_option,
    level_option,
    pass_context,
    seed_option,
)
from evalsuite.cli._paths import PathParam
from evalsuite.cli._run_cmds import open_store

__all__ = ["export_cmd"]

_EXPORT_HELP = """Write stored runs as Every Eval Ever records or as results tables.

--format eee writes, for each run, an Every Eval Ever aggregate record under
DIR/data/<suite>/<developer>/<model>/<uuid>.json: the run's mean with its item-clustered
interval, pass@k and pass^k in the uncertainty fields, and the suite's name, version and
manifest hash; beside it the per-attempt sidecar <uuid>_samples.jsonl (item ids, epochs,
scores, outcomes; never item text). Both are validated by the every-eval-ever package.
--format csv and --format parquet write DIR/<run id>.csv (or .parquet) in the columns
`evalsuite ingest` reads. Ingesting an export gives back the same scores, intervals and
item ids.

A holdout run exports its aggregate only (--format eee) unless --include-holdout-samples is
given; each such export is recorded in the suite's holdout ledger before it is written.
"""


@click.command("export", help=_EXPORT_HELP)
@click.argument("run_ids", nargs=-1, required=True, metavar="RUN...")
@click.option("--format", "fmt", type=click.Choice(["eee", "csv", "parquet"]), required=True)
@click.option(
    "--out",
    "out_dir",
    type=PathParam(file_okay=False, path_type=Path),
    required=True,
    help="Directory to write into (created if absent).",
)
@click.option(
    "--include-holdout-samples",
    is_flag=True,
    help="Export the per-item results of holdout runs too (ids and scores, never item "
    "text); recorded in the holdout ledger.",
)
@level_option
@seed_option
@json_option
@pass_context
@handle_errors
def export_cmd(
    ctx: Context,
    run_ids: tuple[str, ...],
    fmt: str,
    out_dir: Path,
    include_holdout_samples: bool,
    level: float,
    seed: int,
    as_json: bool,
) -> None:
    """Write stored runs as EEE records or tables (the help text is `_EXPORT_HELP`)."""
    from evalsuite.interchange import ExportRequest
    from evalsuite.service import export_results

    request = ExportRequest(
        run_ids=run_ids,
        format="eee" if fmt == "eee" else ("csv" if fmt == "csv" else "parquet"),
        out=out_dir,
        include_holdout_samples=include_holdout_samples,
        level=level,
        seed=seed,
    )
    exported = export_results(
        request, layout=ctx.layout, store=open_store(ctx, create=False), key_dir=ctx.key_dir
    )
    if as_json:
        emit_json({"runs": [r.to_dict() for r in exported], "out": str(out_dir)})
        return
    for r in exported:
        what = "with samples" if r.samples else "aggregate only (holdout)"
        ledgered = "; recorded in the holdout ledger" if r.ledgered else ""
        console.print(f"exported {r.run_id} ({r.model}, {what}){ledgered}:")
        for f in r.files:
            console.print(f"  {f}")
