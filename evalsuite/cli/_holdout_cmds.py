"""`evalsuite holdout status`: use of a suite version's holdout against its budget."""

from __future__ import annotations

import click
from rich.table import Table
from rich.text import Text

from evalsuite.cli._common import (
    Context,
    console,
    emit_json,
    handle_errors,
    json_option,
    pass_context,
)
from evalsuite.holdout import budget_status, read_ledger
from evalsuite.manifest import load_manifest, parse_ref

__all__ = ["holdout_group"]


@click.group("holdout")
def holdout_group() -> None:
    """Holdout governance: access ledger and budget."""


@holdout_group.command("status")
@click.argument("ref")
@json_option
@pass_context
@handle_errors
def status_cmd(ctx: Context, ref: str, as_json: bool) -> None:
    """Show holdout runs of REF (SUITE@X.Y.Z) per model family against the budget."""
    suite, version = parse_ref(ref)
    manifest = load_manifest(ctx.layout, suite, version)
    if version is None:
        version = manifest.version
    entries = read_ledger(ctx.layout.ledger_file(suite))
    status = budget_status(entries, suite=suite, version=version, budget=manifest.holdout_budget)
    if as_json:
        emit_json(status.to_dict() | {"ledger_entries": len(entries)})
        return
    console.print(
        Text(
            f"{suite}@{version}: holdout budget {status.budget} run(s) per model family",
            style="bold",
        )
    )
    if not status.runs_by_family:
        console.print("  no holdout runs yet")
    table = Table("model family", "runs", "remaining", "run ids")
    for item in status.to_dict()["families"]:
        remaining = str(item["remaining"]) if item["remaining"] else Text("0 (spent)", style="red")
        table.add_row(
            item["model_family"], str(item["runs"]), remaining, ", ".join(item["run_ids"])
        )
    if status.runs_by_family:
        console.print(table)
    for override in status.overrides:
        console.print(
            f"  override by run {override['run_id']} ({override['model']}): {override['reason']}"
        )
