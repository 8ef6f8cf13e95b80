"""Commands of the manifest stage: `suites`, `freeze` (`verify` is in `_verify_cmd`)."""

from __future__ import annotations

from pathlib import Path

import click
from rich.text import Text

from evalsuite.cli._common import (
    Context,
    console,
    emit_json,
    err_console,
    handle_errors,
    json_option,
    key_file_option,
    pass_context,
)
from evalsuite.cli._grader_views import print_freeze_audit, refused_freeze
from evalsuite.cli._paths import PathParam
from evalsuite.cli._views import print_view

# `freeze` imports its stage inside the command: `suites` does not need it (start-up,
# docs/scale.md). `verify` lives in `_verify_cmd`, which imports no rich (docs/design/startup.md).

__all__ = ["freeze_cmd", "suites_cmd"]


@click.command("suites")
@json_option
@pass_context
@handle_errors
def suites_cmd(ctx: Context, as_json: bool) -> None:
    """List suites in tasks/ with their frozen versions and item counts per split and stratum."""
    from evalsuite.service import list_suites, suites_view

    view = suites_view(list_suites(ctx.layout), tasks=str(ctx.layout.tasks))
    if as_json:
        emit_json(view.to_dict())
    else:
        print_view(console, view)


@click.command("freeze")
@click.argument("suite")
@click.option("--version", "version", required=True, help="New version, X.Y.Z.")
@click.option("--note", default=None, help="Why this version exists (manifest + changelog).")
@click.option("--retire", multiple=True, help="Item id to drop from this version (repeatable).")
@click.option(
    "--retire-flagged",
    "retire_flagged",
    type=PathParam(dir_okay=False, path_type=Path),
    default=None,
    help="`evalsuite items --json` output of the latest version: retire the items carrying "
    "any --flag (reasons recorded in manifest and changelog).",
)
@click.option(
    "--flag",
    "flag",
    default=None,
    help="With --retire-flagged: comma-separated flags to retire (dead, flaky, "
    "harness-suspect, negatively-discriminating, leaky).",
)
@click.option(
    "--skip-audit",
    is_flag=True,
    help="Freeze without the grader audit (needs --reason; recorded in manifest and changelog).",
)
@click.option("--reason", default=None, help="Why the grader audit is skipped.")
@key_file_option
@json_option
@pass_context
@handle_errors
def freeze_cmd(
    ctx: Context,
    suite: str,
    version: str,
    note: str | None,
    retire: tuple[str, ...],
    retire_flagged: Path | None,
    flag: str | None,
    skip_audit: bool,
    reason: str | None,
    key_file: Path | None,
    as_json: bool,
) -> None:
    """Freeze SUITE as a new version: manifest, holdout vault, fingerprints, changelog line.

    Freezing an existing version is refused (exit 3) unless the content is identical, in
    which case nothing is written. Every family's task reference (``task = "file.py@name"``)
    must name an existing file defining that task function (exit 2 before anything is
    written otherwise): a frozen manifest cannot be re-pointed later.

    The version's grader audit (`evalsuite audit --graders`, dev split) runs before anything
    is written; a failing audit refuses the freeze (exit 3) unless --skip-audit --reason
    is given, which the manifest and the changelog record. Each family's tools are hashed
    into the manifest (action space).
    """
    from evalsuite.manifest import parse_flags
    from evalsuite.service import FreezeRefused, FreezeRequest, freeze_suite

    request = FreezeRequest(
        suite=suite,
        version=version,
        note=note,
        retire=retire,
        retire_flagged=retire_flagged,
        flags=tuple(parse_flags(flag)) if flag is not None else None,
        skip_audit=skip_audit,
        reason=reason,
    )
    try:
        outcome = freeze_suite(
            request, layout=ctx.layout, keys=ctx.keys(key_file), notify=err_console.print
        )
    except FreezeRefused as refused:
        refused_freeze(refused.error, refused.audit, as_json)
    m = outcome.result.manifest
    result = outcome.result
    payload = outcome.to_dict()
    audit_payload = outcome.audit_dict()
    if as_json:
        emit_json(payload)
        return
    verb = {
        "frozen": "froze",
        "unchanged": "already frozen with identical content, nothing written:",
        "completed": "completed an interrupted freeze of",
    }[result.status]
    console.print(Text(f"{verb} {m.ref}  {m.manifest_hash}", style="bold"))
    console.print(
        f"  {payload['n_dev']} dev / {payload['n_holdout']} holdout items in "
        f"{len(m.strata())} strata; manifest {payload['manifest']}"
    )
    if m.parent:
        console.print(
            f"  parent {m.parent.version}: {len(m.diff.added)} added, {len(m.diff.removed)} "
            f"removed, {len(m.diff.changed)} changed ({result.bump} bump)"
        )
    if result.removed_from_sources:
        console.print(
            f"  moved {result.removed_from_sources} item(s) out of tasks/ (holdout into the vault)"
        )
    if result.still_retired:
        console.print(
            f"  left out {len(result.still_retired)} item(s) of tasks/ that an earlier version "
            "retired (they stay retired; give an item a new id to bring it back)"
        )
    if result.removed_files:
        console.print(
            f"  deleted {result.removed_files} file(s) from tasks/ that only holdout items "
            "read (their content is sealed in the vault)"
        )
    console.print(f"  vault key: {result.key_source}")
    if payload["n_holdout"]:
        ledger = ctx.layout.ledger_file(m.suite).relative_to(ctx.layout.root).as_posix()
        console.print(
            f"  access ledger: {ledger} (written by holdout runs): keep it tracked by git and "
            "commit it after every holdout run; `verify` warns while it is not"
        )
    print_freeze_audit(audit_payload)
