"""`evalsuite validity add|import|report`: deployment results and predictive validity."""

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
from evalsuite.cli._views import print_view, wide_option
from evalsuite.errors import UsageError
from evalsuite.manifest import parse_ref
from evalsuite.service import validity_view
from evalsuite.store import make_outcome, outcome_fingerprint, read_outcomes_file

__all__ = ["validity_group"]


@click.group("validity")
def validity_group() -> None:
    """Deployment results of model versions, and how well eval scores predicted them."""


@validity_group.command("add")
@click.option("--model", required=True, help="Model version, as named in its runs.")
@click.option("--metric", required=True, help="Deployment result name, e.g. task_success.")
@click.option("--value", required=True, type=float, help="Observed value.")
@click.option("--se", type=click.FloatRange(min=0), default=None, help="Standard error.")
@click.option(
    "--n",
    "n",
    type=click.IntRange(min=1),
    default=None,
    help="Sample size of a rate (a value in [0, 1]): its SE is derived from it.",
)
@click.option("--observed-at", default=None, help="When it was observed (ISO date).")
@click.option("--source", default=None, help="Where it comes from (dashboard, A/B test...).")
@json_option
@pass_context
@handle_errors
def add_cmd(
    ctx: Context,
    model: str,
    metric: str,
    value: float,
    se: float | None,
    n: int | None,
    observed_at: str | None,
    source: str | None,
    as_json: bool,
) -> None:
    """Record one deployment result of a model version."""
    record = make_outcome(
        {
            "model": model,
            "metric": metric,
            "value": value,
            "se": se,
            "n": n,
            "observed_at": observed_at,
            "source": source,
        },
        "arguments",
    )
    added = open_store(ctx).add_outcomes([(record, outcome_fingerprint(record))])
    if as_json:
        emit_json({"added": added, "duplicates": 1 - added})
        return
    console.print(
        "recorded" if added else "already recorded (identical observation): nothing added"
    )


@validity_group.command("import")
@click.argument("path", type=PathParam(path_type=Path))
@json_option
@pass_context
@handle_errors
def import_cmd(ctx: Context, path: Path, as_json: bool) -> None:
    """Record the deployment results in PATH (CSV or JSONL).

    Columns: model, metric, value, and optional se, n, observed_at, source. Every row is
    checked before any is stored, and a re-import adds nothing twice.
    """
    records = read_outcomes_file(path)
    added = open_store(ctx).add_outcomes([(r, outcome_fingerprint(r)) for r in records])
    if as_json:
        emit_json({"rows": len(records), "added": added, "duplicates": len(records) - added})
        return
    console.print(f"{len(records)} row(s): {added} added, {len(records) - added} already recorded")


@validity_group.command("report")
@click.option("--suite", "ref", default=None, help="SUITE@X.Y.Z whose stored runs give scores.")
@click.option("--metric", required=True, help="Deployment result (metric) to predict.")
@click.option(
    "--scores",
    "scores_file",
    type=PathParam(path_type=Path),
    default=None,
    help="CSV of model, benchmark, score (optional se), or Every Eval Ever aggregate records "
    "(.json, or a directory of them): results from elsewhere.",
)
@click.option(
    "--aggregates",
    "use_aggregates",
    is_flag=True,
    help="Predictors from the aggregate results stored by `ingest --format eee` (records "
    "without samples): each benchmark a predictor.",
)
@click.option(
    "--split",
    type=click.Choice(["dev", "holdout"]),
    default=None,
    help="Only runs on this split (default: the one split with runs; runs on both: refused).",
)
@click.option(
    "--allow-partial",
    is_flag=True,
    help="Use partial runs (run --limit) too; they are flagged in the output.",
)
@level_option
@seed_option
@json_option
@wide_option
@pass_context
@handle_errors
def report_cmd(
    ctx: Context,
    ref: str | None,
    metric: str,
    scores_file: Path | None,
    use_aggregates: bool,
    split: str | None,
    allow_partial: bool,
    level: float,
    seed: int,
    as_json: bool,
    wide: bool,
) -> None:
    """How well the suite (and each stratum), or each benchmark in --scores, predicted METRIC."""
    from evalsuite.service import AnalysisOptions, validity_report

    suite = version = None
    if ref is not None:
        suite, version = parse_ref(ref)
        if version is None:
            raise UsageError(f"give the suite version, e.g. {suite}@1.0.0")
    result = validity_report(
        open_store(ctx, create=False),
        metric=metric,
        options=AnalysisOptions(level=level, seed=seed),
        suite=suite,
        version=version,
        scores_file=scores_file,
        aggregates=use_aggregates,
        split=split,
        layout=ctx.layout,
        allow_partial=allow_partial,
    )
    view = validity_view(result)
    if as_json:
        emit_json(view.to_dict())
    else:
        print_view(console, view, wide=wide)
