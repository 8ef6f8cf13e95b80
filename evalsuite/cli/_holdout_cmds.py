"""`evalsuite holdout status|family|reveal`: budget use, model families, sealed exact scores."""

from __future__ import annotations

from datetime import UTC, datetime

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
from evalsuite.errors import NotFoundError, UsageError
from evalsuite.holdout import anchor_file, family_mapping, open_ledger, who
from evalsuite.manifest import frozen_versions, parse_ref

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
    name, _ = parse_ref(suite)
    if not frozen_versions(ctx.layout, name):
        raise NotFoundError(f"suite {name!r} has no frozen version: no holdout to govern")
    if not reason.strip():
        raise UsageError("--reason must say why the model changes family (it is recorded)")
    if not family.strip():
        raise UsageError("FAMILY must not be empty")
    user, host = who()
    anchor = anchor_file(ctx.key_dir, ctx.layout.root, name)
    with open_ledger(ctx.layout.ledger_file(name), anchor=anchor) as ledger:
        before = family_mapping(ledger.entries).get(model)
        if before == family:
            raise UsageError(f"model {model!r} already belongs to family {family!r} on {name}")
        entry = ledger.append(
            {
                "run_id": "",
                "suite": name,
                "version": "",
                "manifest_hash": "",
                "model": model,
                "model_family": family,
                "user": user,
                "host": host,
                "at": datetime.now(UTC).isoformat(),
                "purpose": None,
                "override_reason": None,
                "resumed": False,
                "kind": "family",
                "reason": reason.strip(),
            }
        )
    payload = {
        "suite": name,
        "model": model,
        "model_family": family,
        "previous_family": before,
        "reason": entry.reason,
        "seq": entry.seq,
        "hash": entry.hash,
    }
    if as_json:
        emit_json(payload)
        return
    was = f"from {before!r} " if before else ""
    console.print(
        f"{model} moved {was}to family {family!r} on {name} (ledger entry {entry.seq}); "
        "its earlier holdout runs stay counted under the family they ran as"
    )


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
