"""`evalsuite report`: HTML + Markdown + JSON report of one or more runs."""

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

__all__ = ["report_cmd"]


@click.command("report")
@click.argument("run_ids", nargs=-1, required=True)
@click.option(
    "--out",
    "out_dir",
    type=PathParam(file_okay=False, path_type=Path),
    default=None,
    help="Output directory (default: reports/<first run id>).",
)
@level_option
@click.option("--alpha", type=click.FloatRange(0.001, 0.5), default=0.05, show_default=True)
@click.option(
    "--margin",
    # a difference of two scores lies in [-1, 1]: a margin of 1 or more passes every gate
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=None,
    help="Show a non-inferiority gate with this margin in every comparison.",
)
@click.option(
    "--model-corr",
    type=click.FloatRange(-1.0, 1.0),
    default=0.9,
    show_default=True,
    help="Assumed true-score correlation for each run's pilot MDE (as in `score`).",
)
@click.option(
    "--allow-partial",
    is_flag=True,
    help=(
        "Compare partial runs (run --limit) and runs not complete (running, interrupted) "
        "too; they are always flagged."
    ),
)
@seed_option
@json_option
@pass_context
@handle_errors
def report_cmd(
    ctx: Context,
    run_ids: tuple[str, ...],
    out_dir: Path | None,
    level: float,
    alpha: float,
    margin: float | None,
    model_corr: float,
    allow_partial: bool,
    seed: int,
    as_json: bool,
) -> None:
    """Write index.html, report.md and report.json for RUN_IDS.

    Each run is compared with the first named run of its suite (docs/cli.md, "report").
    """
    from evalsuite.report import AnalysisOptions, build_report, write_report

    store = open_store(ctx, create=False)
    options = AnalysisOptions(
        level=level, alpha=alpha, seed=seed, margin=margin, model_corr=model_corr
    )
    report = build_report(store, ctx.layout, list(run_ids), options, allow_partial=allow_partial)
    target = out_dir or ctx.layout.reports / report.payload["runs"][0]["run_id"]
    paths = write_report(report, target)
    if as_json:
        emit_json(report.payload | {"written": {k: str(v) for k, v in paths.items()}})
        return
    from evalsuite.cli._views import print_scorecard
    from evalsuite.service import scorecard

    print_scorecard(console, scorecard(report.payload["comparisons"]))
    for kind, path in paths.items():
        console.print(f"{kind:8s} {path}")
