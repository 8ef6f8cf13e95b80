"""`evalsuite audit`: grader audit, leak audit and canary memorisation probe of a frozen suite."""

from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass
from pathlib import Path

import click

from evalsuite._core.jsonout import JsonObject
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
from evalsuite.errors import ContaminationError, GraderAuditError, IntegrityError, UsageError
from evalsuite.manifest import load_manifest, parse_ref
from evalsuite.service import AuditResult, audit_view

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
    key_file: Path | None,
    as_json: bool,
) -> None:
    """Audit REF (SUITE[@X.Y.Z]); with no option, the leak audit.

    --graders: exit 3 when any check of any family fails, naming family, check, stratum and
    items; a complete dev audit is stored with the version (manifests/<suite>/<version>
    .audit.json). --leaks: exit 3 when an item's target shows in its input, files or
    tool-readable state. --canary-probe: exit 4 when the model reproduces the canary.
    """
    from evalsuite.audit import audit_leaks, store_leak_audit
    from evalsuite.audit import canary_probe as probe

    suite, version = parse_ref(ref)
    if canary_probe and model is None:
        raise UsageError("--canary-probe needs --model")
    if policies_file is not None and not graders:
        raise UsageError("--policies goes with --graders (the team's red-team policies)")
    do_leaks = leaks or not (canary_probe or graders)
    found: dict[str, JsonObject] = {}
    failure: Exception | None = None
    if graders:
        options = _GraderOptions(split, purpose, per_stratum, seed, key_file, policies_file)
        found["graders"], failure = _graders(ctx, suite, version, options)
    if do_leaks:
        report = audit_leaks(
            ctx.layout, suite, version, keys=ctx.keys(key_file), holdout=not skip_holdout
        )
        found["leaks"] = report.to_dict()
        # kept with the version: `evalsuite items` flags the leaky items from it
        store_leak_audit(ctx.layout, report, holdout=not skip_holdout)
        if not report.ok and failure is None:
            failure = IntegrityError(
                f"{len(report.findings)} item(s) of {suite}@{report.version} show their target "
                "to the agent; fix or retire them in a new version"
            )
    if canary_probe and model is not None:
        manifest = load_manifest(ctx.layout, suite, version)
        with contextlib.redirect_stdout(sys.stderr):
            result = probe(
                suite,
                manifest.canary,
                model,
                model_args=parse_model_args(model_arg),
                tries=tries,
                seed=seed,
            )
        found["canary_probe"] = result.to_dict()
        if result.memorised and failure is None:
            failure = ContaminationError(
                f"{model} reproduced the canary of {suite}: the suite (or an export of it) was "
                "in its training data"
            )
    view = audit_view(AuditResult(**found))
    if as_json:
        emit_json(view.to_dict())
    else:
        print_view(console, view)
    if failure is not None:
        exit_after_output(failure)  # type: ignore[arg-type]  # both are EvalsuiteErrors


@dataclass(frozen=True, slots=True)
class _GraderOptions:
    split: str
    purpose: str | None
    per_stratum: int | None
    seed: int
    key_file: Path | None
    policies: Path | None = None


def _graders(
    ctx: Context, suite: str, version: str | None, options: _GraderOptions
) -> tuple[JsonObject, Exception | None]:
    from evalsuite.audit import AuditOptions, audit_graders, load_team_policies, store_audit
    from evalsuite.cli._run_cmds import open_store

    holdout = options.split == "holdout"
    if holdout and not options.purpose:
        raise UsageError("a holdout audit is a budgeted look: give --purpose (the ledger)")
    team = load_team_policies(options.policies) if options.policies is not None else ()
    manifest = load_manifest(ctx.layout, suite, version)
    with contextlib.redirect_stdout(sys.stderr):
        audit = audit_graders(
            ctx.layout,
            manifest.suite,
            manifest.version,
            keys=ctx.keys(options.key_file),
            store=open_store(ctx) if holdout else None,
            options=AuditOptions(
                split="holdout" if holdout else "dev",
                per_stratum=options.per_stratum,
                seed=options.seed,
                purpose=options.purpose,
                team=team,
            ),
        )
    result: JsonObject = audit.to_dict() | {"content_hash": audit.content_hash()}
    failure: Exception | None = None
    try:
        # a team's own policies are not part of the version's record: printed, never stored
        stored = store_audit(ctx.layout, manifest, audit) if not team else None
        result["stored"] = str(stored.relative_to(ctx.layout.root)) if stored else None
    except GraderAuditError as exc:
        failure, result["stored"] = exc, None
    if not audit.ok:
        failure = GraderAuditError(
            f"the grader audit of {manifest.ref} failed: "
            + " ".join(f"{line}." for line in audit.failures())
        )
    return result, failure
