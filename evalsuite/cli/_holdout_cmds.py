"""`evalsuite holdout status|family|reveal`: budget use, model families, sealed exact scores."""

from __future__ import annotations

import click

from evalsuite.cli._common import (
    Context,
    console,
    emit_json,
    handle_errors,
    json_option,
    pass_context,
)
from evalsuite.cli._views import print_view
from evalsuite.manifest import parse_ref

__all__ = ["holdout_group"]


@click.group("holdout")
def holdout_group() -> None:
    """Holdout governance: access ledger, budget and model families."""


@holdout_group.command("status")
@click.argument("ref")
@json_option
@pass_context
@handle_errors
def status_cmd(ctx: Context, ref: str, as_json: bool) -> None:
    """Show holdout runs of REF (SUITE@X.Y.Z) per model family against the budget.

    The counts are only shown when they can be trusted: the ledger's hash chain must hold,
    the ledger and the results store must hold the same holdout runs, and the manifest hash
    must agree with its changelog line, git history, ledger and store (exit 3 otherwise).
    """
    from evalsuite.service import holdout_status, holdout_status_view

    suite, version = parse_ref(ref)
    result = holdout_status(ctx.layout, ctx.key_dir, ctx.store_url, suite, version)
    view = holdout_status_view(result)
    if as_json:
        emit_json(view.to_dict())
    else:
        print_view(console, view)


@holdout_group.command("family")
@click.argument("suite")
@click.argument("model")
@click.argument("family")
@click.option("--reason", required=True, help="Why the model belongs to FAMILY (recorded).")
@json_option
@pass_context
@handle_errors
def family_cmd(
    ctx: Context, suite: str, model: str, family: str, reason: str, as_json: bool
) -> None:
    """Record that MODEL belongs to holdout budget FAMILY on SUITE from now on.

    A model's family is recorded at its first holdout run (the model name without
    checkpoint suffixes, or --model-family) and kept: running it under another family is
    refused (exit 7). This command is the audited way to change it: a hash-chained entry in
    the suite's access ledger, with your reason, shown by `holdout status`. Runs made
    before stay counted under the family they ran as.
    """
    from evalsuite.service import change_family

    change = change_family(ctx.layout, ctx.key_dir, suite, model, family, reason=reason)
    if as_json:
        emit_json(change.to_dict())
        return
    console.print(change.sentence)


@holdout_group.command("reveal")
@click.argument("run_id")
@click.option("--reason", required=True, help="Why the exact score is needed (recorded).")
@json_option
@pass_context
@handle_errors
def reveal_cmd(ctx: Context, run_id: str, reason: str, as_json: bool) -> None:
    """Show the exact holdout score of RUN_ID, sealed behind a mechanism's answer.

    A run made with `--mechanism thresholdout|ladder` shows the mechanism's answer; its exact
    holdout score stays in the results store. This is the recorded override: it appends a
    `reveal` entry (who, when, your reason; never the score) to the suite's access ledger,
    shown by `holdout status`, and then prints the score. Every reveal weakens the
    mechanism's guarantee (docs/design/reusable-holdout.md).
    """
    from evalsuite.cli._run_cmds import open_store
    from evalsuite.service import reveal_exact

    found = reveal_exact(ctx.layout, ctx.key_dir, open_store(ctx, create=False), run_id, reason)
    if as_json:
        emit_json(found.to_dict())
        return
    console.print(
        f"run {found.run_id}: exact holdout score {found.exact:.4f} (reveal recorded as ledger "
        f"entry {found.seq})"
    )
