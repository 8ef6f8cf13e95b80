"""`evalsuite holdout status|family`: holdout use against its budget; model family mapping."""

from __future__ import annotations

from datetime import UTC, datetime

import click
from rich.table import Table
from rich.text import Text

from evalsuite._core.display import printable
from evalsuite.cli._common import (
    Context,
    console,
    emit_json,
    handle_errors,
    json_option,
    pass_context,
)
from evalsuite.cli._governance import check_governance, stored_runs
from evalsuite.errors import IntegrityError, NotFoundError, UsageError
from evalsuite.holdout import anchor_file, budget_status, family_mapping, open_ledger, who
from evalsuite.manifest import frozen_versions, history_check, load_manifest, parse_ref

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
    suite, version = parse_ref(ref)
    manifest = load_manifest(ctx.layout, suite, version)
    version = manifest.version
    history = history_check(ctx.layout, suite, version, manifest.manifest_hash)
    runs, store = stored_runs(ctx)
    check = check_governance(ctx, suite, version, manifest.manifest_hash, runs, store)
    problems = history.problems + check.problems
    if problems or check.entries is None:
        raise IntegrityError(
            f"the holdout record of {suite}@{version} cannot be trusted, so no counts are "
            f"shown (checked the ledger {check.ledger} and the results store {store}): "
            + "; ".join(problems)
        )
    entries = check.entries
    status = budget_status(entries, suite=suite, version=version, budget=manifest.holdout_budget)
    if as_json:
        emit_json(
            status.to_dict()
            | {
                "ledger_entries": len(entries),
                "ledger": str(check.ledger),
                "store": store,
                "hash_sources": history.sources | check.sources,
            }
        )
        return
    console.print(
        Text(
            f"{suite}@{version}: holdout budget {status.budget} run(s) per model family",
            style="bold",
        )
    )
    console.print(
        f"  ledger {check.ledger} ({len(entries)} entries, chain intact) agrees with the "
        f"results store {store}"
    )
    if not status.runs_by_family:
        console.print("  no holdout runs yet")
    table = Table("model family", "runs", "remaining", "run ids")
    for item in status.to_dict()["families"]:
        remaining = str(item["remaining"]) if item["remaining"] else Text("0 (spent)", style="red")
        table.add_row(
            Text(printable(item["model_family"])),
            str(item["runs"]),
            remaining,
            Text(printable(", ".join(item["run_ids"]))),
        )
    if status.runs_by_family:
        console.print(table)
    for override in status.overrides:
        console.print(
            f"  override by run {override['run_id']} ({override['model']}): {override['reason']}"
        )
    for change in status.family_changes:
        console.print(
            f"  family change: {change['model']} -> {change['model_family']} by {change['user']} "
            f"at {change['at'][:19]}: {change['reason']}"
        )
    for voided in status.voided:
        console.print(
            f"  voided access of run {voided['run_id']} ({voided['model']}): the run failed "
            "before any holdout item reached the model"
        )


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
