"""`evalsuite audit`: leak audit and canary memorisation probe of a frozen suite."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import click
from rich.text import Text

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
from evalsuite.errors import ContaminationError, IntegrityError, UsageError
from evalsuite.manifest import load_manifest, parse_ref

__all__ = ["audit_cmd"]


@click.command("audit")
@click.argument("ref")
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

    Exit 3 when an item's target shows in its input, files or tool-readable state; exit 4
    when the model reproduces the canary.
    """
    from evalsuite.audit import audit_leaks
    from evalsuite.audit import canary_probe as probe

    suite, version = parse_ref(ref)
    if canary_probe and model is None:
        raise UsageError("--canary-probe needs --model")
    do_leaks = leaks or not canary_probe
    payload: dict[str, object] = {}
    failure: Exception | None = None
    if do_leaks:
        report = audit_leaks(
            ctx.layout, suite, version, keys=ctx.keys(key_file), holdout=not skip_holdout
        )
        payload["leaks"] = report.to_dict()
        if not report.ok:
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
        payload["canary_probe"] = result.to_dict()
        if result.memorised and failure is None:
            failure = ContaminationError(
                f"{model} reproduced the canary of {suite}: the suite (or an export of it) was "
                "in its training data"
            )
    if as_json:
        emit_json(payload)
    else:
        _print(payload)
    if failure is not None:
        exit_after_output(failure)  # type: ignore[arg-type]  # both are EvalsuiteErrors


def _print(payload: dict[str, object]) -> None:
    leaks = payload.get("leaks")
    if isinstance(leaks, dict):
        state = (
            Text("no leaks", style="bold green") if leaks["ok"] else Text("LEAKS", style="bold red")
        )
        console.print(
            Text.assemble(
                f"{leaks['suite']}@{leaks['version']}: ", state, f"  (checked {leaks['checked']})"
            )
        )
        for finding in leaks["findings"]:
            console.print(
                Text(
                    f"  ✗ {finding['split']} item {finding['item_id']}: "
                    f"{finding['how']} appears in {finding['surface']}",
                    style="red",
                )
            )
        if leaks["skipped"]:
            console.print(f"  {len(leaks['skipped'])} item(s) not auditable (target too short)")
    probe = payload.get("canary_probe")
    if isinstance(probe, dict):
        verdict = "MEMORISED" if probe["memorised"] else "not reproduced"
        console.print(
            f"canary probe of {probe['model']}: {verdict} (best {probe['best_match']} "
            f"of {probe['hidden_chars']} hidden characters over {probe['tries']} tries)"
        )
