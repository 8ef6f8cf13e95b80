"""Commands of the analysis stage: `score` and `compare`."""

from __future__ import annotations

from dataclasses import replace

import click
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
    seed_option,
)
from evalsuite.cli._run_cmds import open_store
from evalsuite.cli._views import print_scorecard, print_view, wide_option
from evalsuite.errors import GateFailedError, UsageError
from evalsuite.service import (
    AnalysisOptions,
    ReleasedComparison,
    compare,
    comparison_view,
    fmt,
    record_gate,
    released_comparison,
    score,
    score_view,
    scorecard,
)

__all__ = ["compare_cmd", "score_cmd"]


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
@wide_option
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
    wide: bool,
) -> None:
    """Estimates with intervals, per stratum, pass@k, pass^k, reliability and health of RUN."""
    options = AnalysisOptions(level=level, alpha=alpha, seed=seed, model_corr=model_corr)
    result = score(open_store(ctx, create=False), run_id, options, layout=ctx.layout)
    run = result.run
    if run.unfinished:
        # first, and on stderr: seen even when the numbers go to a file or a pipe
        still = "was interrupted" if run.status == "interrupted" else "is still running"
        err_console.print(
            Text.assemble(
                ("warning", "bold red"),
                f": run {run.run_id} {still} and is not complete: the numbers that "
                "follow are of the attempts stored so far, and the attempts not yet run count "
                "as harness errors. Comparisons refuse it until it is complete (--allow-partial "
                "compares it anyway).",
            )
        )
    elif not run.valid:
        # first, and on stderr: seen even when the numbers go to a file or a pipe
        err_console.print(
            Text.assemble(
                ("warning", "bold red"),
                f": run {run.run_id} is INVALID: "
                f"{result.harness.error_rate:.1%} harness errors exceed its "
                f"{result.error_threshold:.0%} threshold. The numbers that follow are not "
                "a measurement of the model; comparisons refuse this run.",
            )
        )
    view = score_view(result)
    if as_json:
        emit_json(view.to_dict())
    else:
        print_view(console, view, wide=wide)


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
    # a difference of two scores lies in [-1, 1]: a margin of 1 or more passes every gate
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=None,
    help="Non-inferiority margin D (scores are in [0, 1]).",
)
@alpha_option
@click.option("--allow-invalid", is_flag=True, help="Compare invalid runs too (marked).")
@click.option(
    "--allow-partial",
    is_flag=True,
    help=(
        "Compare partial runs (run --limit) and runs not complete (running, interrupted) "
        "too, on their shared items (marked)."
    ),
)
@click.option(
    "--min-common-share",
    "min_common_share",
    type=click.FloatRange(min=0, max=1),
    default=0.8,
    show_default=True,
    help="Runs of two versions of one suite: compare on their common items only when at "
    "least this share of the larger run's items is common (else exit 2).",
)
@level_option
@seed_option
@json_option
@wide_option
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
    min_common_share: float,
    level: float,
    seed: int,
    as_json: bool,
    wide: bool,
) -> None:
    """Paired comparison of CANDIDATE against BASELINE on the items they share.

    Runs of two versions of one suite are compared on the items both versions hold
    unchanged, said so in every output, and refused (exit 2) below --min-common-share.
    """
    if (gate is None) != (margin is None):
        raise UsageError("--gate noninferior and --margin D go together")
    options = AnalysisOptions(level=level, alpha=alpha, seed=seed, margin=margin)
    store = open_store(ctx, create=False)
    # holdout runs a reusable-holdout mechanism answered: their released numbers, no interval
    released = released_comparison(ctx.layout, store, baseline, candidate)
    if released is not None:
        if gate is not None:
            raise UsageError(
                "--gate needs a paired interval, and the released view of sealed holdout runs "
                "gives none (docs/design/reusable-holdout.md): drop --gate, or reveal both "
                "runs' exact scores with `evalsuite holdout reveal RUN --reason TEXT` first"
            )
        if as_json:
            emit_json(released.to_dict())
        else:
            _print_released(released)
        return
    result = compare(
        store,
        baseline,
        candidate,
        options,
        allow_invalid=allow_invalid,
        allow_partial=allow_partial,
        layout=ctx.layout,
        min_common_share=min_common_share,
    )
    if gate is not None and margin is not None:
        # recorded with the comparison in the store: a report of these runs, from any
        # checkout sharing the store, shows the same gate
        record_gate(
            store,
            result.baseline,
            result.candidate,
            kind=gate,
            margin=margin,
            alpha=alpha,
        )
        result = replace(result, gate_source="asked in compare")
    view = comparison_view(result)
    if as_json:
        emit_json(view.to_dict())
    else:
        print_scorecard(console, scorecard([view.to_dict()]))  # the answer at a glance first
        print_view(console, view, wide=wide)
    outcome = result.gate
    if outcome is not None and not outcome.passed:
        exit_after_output(
            GateFailedError(
                f"non-inferiority gate failed: the one-sided {1 - alpha:.0%} lower bound of the "
                f"difference ({fmt(outcome.lower_bound)}) is not above "
                f"−{margin} ({outcome.status})"
            )
        )


def _print_released(view: ReleasedComparison) -> None:
    """The released view in the terminal: the two numbers, their meaning, no interval."""
    console.print(view.headline, markup=False)
    for role, side in (("baseline", view.baseline), ("candidate", view.candidate)):
        console.print(
            f"  {role} {side.run_id} ({side.model}, {side.mechanism} {side.scope}):", markup=False
        )
        console.print(f"    {side.meaning}", markup=False)
    for caveat in view.caveats:
        console.print(f"  note: {caveat}", markup=False)
