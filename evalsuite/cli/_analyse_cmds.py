"""Commands of the analysis stage: `score` and `compare`."""

from __future__ import annotations

import math
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from evalsuite.cli._common import (
    Context,
    console,
    emit_json,
    err_console,
    exit_after_output,
    handle_errors,
    json_option,
    level_option,
    pass_context,
    print_top_errors,
    seed_option,
)
from evalsuite.cli._run_cmds import open_store
from evalsuite.errors import GateFailedError, UsageError
from evalsuite.report import AnalysisOptions, compare_payload, score_payload

__all__ = ["compare_cmd", "score_cmd"]


def _fmt(value: float | None, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    return f"{value:.{digits}f}"


def _ci(ci: Any) -> str:
    low, high = ci
    return f"[{_fmt(low)}, {_fmt(high)}]"


def _partial_banner(p: dict[str, Any]) -> None:
    if p.get("partial"):
        of = f" of {p['n_items_split']}" if p.get("n_items_split") is not None else ""
        limit = f" (--limit {p['item_limit']})" if p.get("item_limit") else ""
        split = f" {p['split']}" if p.get("split") else ""
        console.print(
            Text(
                f"PARTIAL RUN: {p['n_items_run']}{of}{split} items were run{limit}; "
                "the numbers below describe those items, not the suite",
                style="bold red",
            )
        )


def _print_score(p: dict[str, Any]) -> None:
    _partial_banner(p)
    if not p["valid"]:
        console.print(
            Text(
                f"INVALID RUN: {p['harness']['error_rate']:.1%} harness errors "
                f"exceed the {p['error_threshold']:.0%} threshold; numbers below "
                "are not a measurement of the model",
                style="bold red",
            )
        )
    ref = f"{p['suite']}@{p['version']} {p['split']}" if p["suite"] else "(ingested, no manifest)"
    console.print(
        Text(f"run {p['run_id']} · {ref} · {p['model']} · {p['epochs']} epoch(s)", style="bold")
    )
    h = p["harness"]
    console.print(
        f"harness: {h['planned']} planned, {h['scored']} scored, {h['limits']} limits, "
        f"{h['harness_errors']} harness errors ({h['error_rate']:.1%}), excluded from "
        "the score"
    )
    print_top_errors(h.get("top_errors") or [])
    table = Table("estimate", "mean", "se", f"{p['level']:.0%} CI", "items", "method")
    for name in ("overall", "weighted"):
        e = p[name]
        table.add_row(
            name, _fmt(e["mean"]), _fmt(e["se"]), _ci(e["ci"]), str(e["n_items"]), e["method"]
        )
    console.print(table)
    strata = Table("stratum", "weight", "mean", "se", f"{p['level']:.0%} CI", "items", "method")
    for s in p["strata"]:
        strata.add_row(
            s["stratum"],
            _fmt(s["weight"], 2),
            _fmt(s["mean"]),
            _fmt(s["se"]),
            _ci(s["ci"]),
            str(s["n_items"]),
            s["method"],
        )
    console.print(strata)
    if p.get("secondary"):
        secondary = Table("secondary metric", "mean", "se", f"{p['level']:.0%} CI", "items")
        for s in p["secondary"]:
            missing = f" ({s['n_missing']} without a value)" if s["n_missing"] else ""
            secondary.add_row(
                s["name"], _fmt(s["mean"]), _fmt(s["se"]), _ci(s["ci"]), f"{s['n_items']}{missing}"
            )
        console.print(secondary)
    if p["pass_at_k"]:
        ks = sorted(p["pass_at_k"], key=int)
        console.print("pass@k: " + "  ".join(f"k={k} {_fmt(p['pass_at_k'][k])}" for k in ks))
        console.print("pass^k: " + "  ".join(f"k={k} {_fmt(p['pass_hat_k'][k])}" for k in ks))
        n_k = p.get("pass_k_n_items", {})
        console.print("items:  " + "  ".join(f"k={k} {n_k.get(k, 'n/a')}" for k in ks))
    r = p["reliability"]
    console.print(
        f"reliability: flip rate {_fmt(r.get('flip_rate'))}, ICC(1) {_fmt(r.get('icc1'))}, "
        f"reliability of the {p['epochs']}-epoch mean {_fmt(r.get('icc1k'))}, run-to-run noise "
        f"floor {_fmt(r.get('noise_floor'))} (sd), suggested epochs "
        f"{r.get('k_recommended', 'n/a')}"
    )
    assumption = r.get("mde_assumption") or {}
    console.print(
        f"pilot MDE {_fmt(r.get('mde'))}: "
        + (assumption.get("description") or "undefined (" + (r.get("reason") or "n/a") + ")")
    )
    for note in p.get("notes", []):
        console.print(f"note: {note}")


alpha_option = click.option(
    "--alpha",
    type=click.FloatRange(0.001, 0.5),
    default=0.05,
    show_default=True,
    help="Two-sided significance level of comparisons and of every MDE.",
)
model_corr_option = click.option(
    "--model-corr",
    type=click.FloatRange(-1.0, 1.0),
    default=0.9,
    show_default=True,
    help="Assumed correlation of a second model's true item scores with this run's, for the "
    "pilot MDE of one run (compare uses the observed correlation).",
)


@click.command("score")
@click.argument("run_id")
@level_option
@alpha_option
@model_corr_option
@seed_option
@json_option
@pass_context
@handle_errors
def score_cmd(
    ctx: Context,
    run_id: str,
    level: float,
    alpha: float,
    model_corr: float,
    seed: int,
    as_json: bool,
) -> None:
    """Estimates with intervals, per stratum, pass@k, pass^k, reliability and health of RUN."""
    options = AnalysisOptions(level=level, alpha=alpha, seed=seed, model_corr=model_corr)
    payload = score_payload(open_store(ctx), run_id, options, layout=ctx.layout)
    if not payload["valid"]:
        # first, and on stderr: seen even when the numbers go to a file or a pipe
        err_console.print(
            Text.assemble(
                ("warning", "bold red"),
                f": run {payload['run_id']} is INVALID: "
                f"{payload['harness']['error_rate']:.1%} harness errors exceed its "
                f"{payload['error_threshold']:.0%} threshold. The numbers that follow are not "
                "a measurement of the model; comparisons refuse this run.",
            )
        )
    if as_json:
        emit_json(payload)
    else:
        _print_score(payload)


def _print_compare(p: dict[str, Any]) -> None:
    if p.get("partial_runs"):
        console.print(
            Text(
                f"PARTIAL RUN(S) {p['partial_runs']} compared with --allow-partial",
                style="bold red",
            )
        )
    if p["invalid_runs"]:
        console.print(
            Text(
                f"INVALID RUN(S) {p['invalid_runs']} compared with --allow-invalid",
                style="bold red",
            )
        )
    console.print(
        Text(
            f"{p['candidate']} − {p['baseline']}: diff {_fmt(p['diff'])} "
            f"(se {_fmt(p['se'])}, {p['level']:.0%} CI {_ci(p['ci'])}, "
            f"p {_fmt(p['p_value'], 4)}, {p['n_items']} items)",
            style="bold",
        )
    )
    console.print(f"verdict: {p['verdict']} — {p['sentence']}")
    if p.get("mde_assumption"):
        console.print(f"MDE {_fmt(p['mde'])}: {p['mde_assumption']['description']}")
    console.print(
        f"means: baseline {_fmt(p['baseline_mean'])}, candidate "
        f"{_fmt(p['candidate_mean'])}; MDE {_fmt(p['mde'])}; sign-flip p "
        f"{_fmt(p['p_value_permutation'], 4)}"
        + (
            f"; McNemar mid-p {_fmt(p['p_value_mcnemar_midp'], 4)}"
            if p.get("p_value_mcnemar_midp") is not None
            else ""
        )
    )
    if p["n_unpaired_baseline"] or p["n_unpaired_candidate"]:
        console.print(
            f"unpaired items: {p['n_unpaired_baseline']} baseline, "
            f"{p['n_unpaired_candidate']} candidate (dropped symmetrically)"
        )
    table = Table("stratum", "diff", "se", "CI", "p", "p (Holm)", "items")
    for s in p["strata"]:
        table.add_row(
            s["stratum"],
            _fmt(s["diff"]),
            _fmt(s["se"]),
            _ci(s["ci"]),
            _fmt(s["p_value"], 4),
            _fmt(s["p_holm"], 4),
            str(s["n_items"]),
        )
    console.print(table)
    gate = p.get("gate")
    if gate:
        console.print(
            f"gate {gate['kind']} (margin {gate['margin']}): {gate['status']} "
            f"(one-sided lower bound {_fmt(gate['lower_bound'])})"
        )
    for note in p["notes"]:
        console.print(f"note: {note}")


@click.command("compare")
@click.argument("baseline")
@click.argument("candidate")
@click.option(
    "--gate",
    type=click.Choice(["noninferior"]),
    default=None,
    help="Regression gate: exit 6 unless it passes.",
)
@click.option(
    "--margin",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Non-inferiority margin D (scores are in [0, 1]).",
)
@alpha_option
@click.option("--allow-invalid", is_flag=True, help="Compare invalid runs too (marked).")
@click.option(
    "--allow-partial",
    is_flag=True,
    help="Compare partial runs (run --limit) too, on their shared items (marked).",
)
@level_option
@seed_option
@json_option
@pass_context
@handle_errors
def compare_cmd(
    ctx: Context,
    baseline: str,
    candidate: str,
    gate: str | None,
    margin: float | None,
    alpha: float,
    allow_invalid: bool,
    allow_partial: bool,
    level: float,
    seed: int,
    as_json: bool,
) -> None:
    """Paired comparison of CANDIDATE against BASELINE on the items they share."""
    if (gate is None) != (margin is None):
        raise UsageError("--gate noninferior and --margin D go together")
    options = AnalysisOptions(level=level, alpha=alpha, seed=seed, margin=margin)
    payload = compare_payload(
        open_store(ctx),
        baseline,
        candidate,
        options,
        allow_invalid=allow_invalid,
        allow_partial=allow_partial,
        layout=ctx.layout,
    )
    if as_json:
        emit_json(payload)
    else:
        _print_compare(payload)
    if payload.get("gate") and not payload["gate"]["passed"]:
        exit_after_output(
            GateFailedError(
                f"non-inferiority gate failed: the one-sided {1 - alpha:.0%} lower bound of the "
                f"difference ({_fmt(payload['gate']['lower_bound'])}) is not above "
                f"−{margin} ({payload['gate']['status']})"
            )
        )
