"""`evalsuite validity add|import|report`: deployment results and predictive validity."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import click
from rich.table import Table
from rich.text import Text

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
from evalsuite.cli._run_cmds import open_store
from evalsuite.errors import UsageError
from evalsuite.manifest import parse_ref
from evalsuite.store import make_outcome, outcome_fingerprint, read_outcomes_file

__all__ = ["validity_group"]


@click.group("validity")
def validity_group() -> None:
    """Deployment results of model versions, and how well eval scores predicted them."""


def _fmt(value: Any, digits: int = 3) -> str:
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        return "n/a"
    return f"{value:.{digits}f}"


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
    help="Sample size (for a rate, the SE is derived from it).",
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
@click.argument("path", type=click.Path(path_type=Path))
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


def _print_report(payload: dict[str, Any]) -> None:
    console.print(
        Text(
            f"predictive validity for {payload['metric']} ({payload['source']}"
            + (f", {payload['split']} split" if payload.get("split") else "")
            + f"; {payload['n_models']} models with a deployment result)",
            style="bold",
        )
    )
    table = Table(
        "predictor",
        "n",
        "Spearman",
        "CI",
        "Kendall",
        "Pearson",
        "CI",
        "disattenuated",
        "Deming slope",
        "LOO error",
    )
    for p in payload["predictors"]:
        table.add_row(
            p["name"],
            str(p["n"]),
            _fmt(p["spearman"]),
            f"[{_fmt(p['spearman_ci'][0])}, {_fmt(p['spearman_ci'][1])}]",
            _fmt(p["kendall"]),
            _fmt(p["pearson"]),
            f"[{_fmt(p['pearson_ci'][0])}, {_fmt(p['pearson_ci'][1])}]",
            _fmt(p["disattenuated"]),
            _fmt(p["deming_slope"]),
            _fmt(p["loo_error"]),
        )
    console.print(table)
    for p in payload["predictors"]:
        for flag in p.get("flags") or []:
            console.print(f"  {p['name']}: {flag}")
    for statement in payload.get("statements", []):
        console.print(statement)
    for c in payload.get("comparisons", []):
        console.print(f"compare: {c['statement']}")
    for note in payload.get("notes", []):
        console.print(f"note: {note}")


@validity_group.command("report")
@click.option("--suite", "ref", default=None, help="SUITE@X.Y.Z whose stored runs give scores.")
@click.option("--metric", required=True, help="Deployment result (metric) to predict.")
@click.option(
    "--scores",
    "scores_file",
    type=click.Path(path_type=Path),
    default=None,
    help="CSV of model, benchmark, score (optional se): results from elsewhere.",
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
@pass_context
@handle_errors
def report_cmd(
    ctx: Context,
    ref: str | None,
    metric: str,
    scores_file: Path | None,
    split: str | None,
    allow_partial: bool,
    level: float,
    seed: int,
    as_json: bool,
) -> None:
    """How well the suite (and each stratum), or each benchmark in --scores, predicted METRIC."""
    from evalsuite.report import AnalysisOptions, validity_section

    suite = version = None
    if ref is not None:
        suite, version = parse_ref(ref)
        if version is None:
            raise UsageError(f"give the suite version, e.g. {suite}@1.0.0")
    payload = validity_section(
        open_store(ctx),
        metric=metric,
        options=AnalysisOptions(level=level, seed=seed),
        suite=suite,
        version=version,
        scores_file=scores_file,
        split=split,
        layout=ctx.layout,
        allow_partial=allow_partial,
    )
    if as_json:
        emit_json(payload)
    else:
        _print_report(payload)
