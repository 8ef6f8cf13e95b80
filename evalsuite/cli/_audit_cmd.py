"""`evalsuite audit`: grader audit, leak audit and canary memorisation probe of a frozen suite."""

from __future__ import annotations

import contextlib
from pathlib import Path

import click

from evalsuite.cli._common import (
    Context,
    console,
    emit_json,
    exit_after_output,
    handle_errors,
    json_option,
    key_file_option,
    pass_context,
)
from evalsuite.cli._run_cmds import parse_model_args
from evalsuite.cli._views import print_view
from evalsuite.errors import EvalsuiteError, GraderAuditError, UsageError
from evalsuite.manifest import parse_ref

__all__ = ["audit_cmd"]


@click.command("audit")
@click.argument("ref")
@click.option(
    "--graders",
    is_flag=True,
    help="Audit every family's environment and grader with its oracle, null, trivial and "
    "exploit policies, isolation, determinism, limits and action space.",
)
@click.option(
    "--split",
    type=click.Choice(["dev", "holdout"]),
    default="dev",
    show_default=True,
    help="--graders: the split to audit (holdout: one budgeted, ledgered look).",
)
@click.option("--purpose", default=None, help="--graders --split holdout: why (the ledger).")
@click.option(
    "--per-stratum",
    type=click.IntRange(min=1),
    default=None,
    help="--graders: audit only the first N items of each stratum (a quick, partial audit; "
    "its results are not stored).",
)
@click.option(
    "--policies",
    "policies_file",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="--graders: a Python file declaring the team's own red-team policies "
    "(evalsuite.kit.RedTeam), played like the generated ones on redacted episodes, floor 0 "
    "(an audit with them is printed, never stored).",
)
@click.option("--leaks", is_flag=True, help="Look for targets in what the agent can read.")
@click.option(
    "--canary-probe",
    is_flag=True,
    help="Ask --model to complete the suite's canary (memorisation probe).",
)
@click.option("--model", default=None, help="Model for --canary-probe.")
@click.option("-M", "model_arg", multiple=True, help="Model argument KEY=VALUE (repeatable).")
@click.option("--tries", type=click.IntRange(1, 100), default=5, show_default=True)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option(
    "--judge",
    "judge",
    is_flag=True,
    help="Audit the version's declared judges against human labels (--labels), with probes "
    "(docs/design/judge-audit.md).",
)
@click.option(
    "--labels",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="--judge: CSV of labelled attempts (item_id, human, judge; optional epoch, length, "
    "forward, backward).",
)
@click.option(
    "--probe-items",
    type=click.IntRange(min=0),
    default=10,
    show_default=True,
    help="--judge: dev items of each judged family the probes are scored on (0: no probes).",
)
@click.option("--skip-holdout", is_flag=True, help="Audit dev items only (no key needed).")
@key_file_option
@json_option
@pass_context
@handle_errors
def audit_cmd(
    ctx: Context,
    ref: str,
    graders: bool,
    split: str,
    purpose: str | None,
    per_stratum: int | None,
    policies_file: Path | None,
    leaks: bool,
    canary_probe: bool,
    model: str | None,
    model_arg: tuple[str, ...],
    tries: int,
    seed: int,
    skip_holdout: bool,
    judge: bool,
    labels: Path | None,
    probe_items: int,
    key_file: Path | None,
    as_json: bool,
) -> None:
    """Audit REF (SUITE[@X.Y.Z]); with no option, the leak audit.

    --graders: exit 3 when any check of any family fails, naming family, check, stratum and
    items; a complete dev audit is stored with the version (manifests/<suite>/<version>
    .audit.json). --leaks: exit 3 when an item's target shows in its input, files or
    tool-readable state. --canary-probe: exit 4 when the model reproduces the canary.
    --judge --labels FILE: exit 3 when a declared judge is not shown to reach its floors or
    fails a probe.
    """
    from evalsuite.cli._run_cmds import open_store
    from evalsuite.service import AuditRequest, audit_suite, audit_view

    if judge or labels is not None:
        if labels is None or not judge:
            raise UsageError("--judge and --labels FILE go together")
        if graders or leaks or canary_probe:
            raise UsageError("--judge runs alone: audit the graders, leaks or canary apart")
        _judge_audit(ctx, ref, labels, seed=seed, probe_items=probe_items, as_json=as_json)
        return

    suite, version = parse_ref(ref)
    request = AuditRequest(
        suite=suite,
        version=version,
        graders=graders,
        split=split,
        purpose=purpose,
        per_stratum=per_stratum,
        policies=policies_file,
        leaks=leaks,
        canary_probe=canary_probe,
        model=model,
        model_args=parse_model_args(model_arg) if canary_probe else {},
        tries=tries,
        seed=seed,
        skip_holdout=skip_holdout,
    )
    outcome = audit_suite(
        ctx.layout, request, keys=ctx.keys(key_file), store=lambda: open_store(ctx)
    )
    view = audit_view(outcome.result)
    if as_json:
        emit_json(view.to_dict())
    else:
        print_view(console, view)
    if outcome.failure is not None:
        exit_after_output(outcome.failure)


def _judge_audit(
    ctx: Context, ref: str, labels: Path, *, seed: int, probe_items: int, as_json: bool
) -> None:
    """``audit REF --judge --labels FILE`` (docs/design/judge-audit.md)."""
    from evalsuite.cli._run_cmds import open_store
    from evalsuite.service import audit_judges

    suite, version = parse_ref(ref)
    models: list[str] = []
    if version is not None:
        with contextlib.suppress(EvalsuiteError):  # no store yet: no judged models to name
            models = sorted(
                {
                    r.model
                    for r in open_store(ctx, create=False).list_runs(suite=suite)
                    if r.version == version
                }
            )
    result = audit_judges(
        ctx.layout, ref, labels, seed=seed, probe_items=probe_items, judged_models=models
    )
    if as_json:
        emit_json({"judge": result.to_dict()})
    else:
        for family in result.families:
            agreement = family.agreement
            verdict = "passed" if family.passed else "FAILED"
            console.print(
                f"{result.suite}@{result.version} {family.family}: judge {family.judge_model} "
                f"{verdict}: {agreement['statistic']} {float(str(agreement['value'])):.3f} "
                f"on {family.n_labels} labels (floor {family.floor})"
            )
            for reason in family.reasons:
                console.print(f"  - {reason}")
            if family.self_preference:
                console.print(
                    f"  self-preference risk: {', '.join(family.self_preference)} share the "
                    "judge's family"
                )
    if not result.ok:
        failing = "; ".join(
            f"{f.family}: {', '.join(f.reasons)}" for f in result.families if not f.passed
        )
        exit_after_output(GraderAuditError(f"judge audit of {ref} failed: {failing}"))
