"""`evalsuite verify`: re-hash frozen items, check the ledger, the audit and the action space.

It prints with click alone (styles on a terminal, plain text otherwise) and reads manifests
through their strict summaries, so that checking suite versions whose content a previous
full check found intact imports neither rich, pydantic nor cryptography (start-up,
docs/design/startup.md). Only what changed is checked in full.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from evalsuite._core.display import printable
from evalsuite.cli._common import (
    Context,
    emit_json,
    exit_after_output,
    handle_errors,
    json_option,
    key_file_option,
    pass_context,
)
from evalsuite.errors import EvalsuiteError, IntegrityError, UsageError
from evalsuite.manifest import frozen_versions, list_suite_names

if TYPE_CHECKING:
    from evalsuite.manifest import VerifyReport

__all__ = ["verify_audit", "verify_cmd"]


def _line(text: str, **style: Any) -> None:
    text = printable(text, keep_lines=True)  # item ids and paths are data (terminal-output.md)
    click.echo(click.style(text, **style) if style else text)


def verify_audit(
    ctx: Context,
    report: VerifyReport,
    *,
    use_cache: bool = True,
    environment: list[bytes] | None = None,
) -> dict[str, Any] | None:
    """The audit status and action-space check of a verified version (problems added).

    `environment` holds the action-space digest's shared part once computed (one per
    command: the files under tasks/ are hashed once, not once per suite).
    """
    from evalsuite.manifest import audit_status, load_manifest, load_manifest_summary
    from evalsuite.run import (
        agreements_recorded,
        environment_digest,
        verified_action_space_problems,
    )

    if report.version is None:
        return None
    try:
        summary = load_manifest_summary(ctx.layout, report.suite, report.version)
    except EvalsuiteError:
        return None  # verify already says why
    status = audit_status(ctx.layout, summary)
    report.problems.extend(status.problems)
    families = summary.record()["families"]
    recorded = [f["name"] for f in families if f.get("tools") is not None]
    unloadable: list[str] = []
    drift: list[str] = []
    shared = environment if environment is not None else []
    if use_cache and recorded and not shared:
        shared.append(environment_digest(ctx.layout))
    if not (
        use_cache
        and agreements_recorded(
            ctx.layout, summary.suite, families, environment=shared[0] if shared else None
        )
    ):
        manifest = load_manifest(ctx.layout, report.suite, report.version)
        unloadable, drift = verified_action_space_problems(
            ctx.layout, manifest, use_cache=use_cache
        )
    report.problems.extend(unloadable + drift)
    return status.to_dict() | {
        "action_space": "DRIFTED" if drift else ("agrees" if recorded else "not recorded"),
    }


def _print_audit_line(audit: Mapping[str, Any] | None) -> None:
    if audit is None:
        return
    style: dict[str, Any] = {"fg": "green"} if audit["status"] == "passed" else {"fg": "red"}
    if audit["status"] in ("unaudited", "skipped"):
        style = {"fg": "yellow"}
    elif audit["status"] != "passed":
        style["bold"] = True
    click.echo(
        "  grader audit: "
        + click.style(audit["status"], **style)
        + f" ({audit['detail']}); action space {audit['action_space']}"
    )


def _print_report(report: VerifyReport) -> None:
    ref = f"{report.suite}@{report.version or '?'}"
    status = (
        click.style("OK", fg="green", bold=True)
        if report.ok
        else click.style("FAILED", fg="red", bold=True)
    )
    click.echo(f"{status}  {ref}  {report.manifest_hash or ''}")
    holdout = "skipped" if report.holdout_skipped else f"{report.holdout_checked} holdout"
    checked = f"  checked {report.dev_checked} dev, {holdout} item(s)"
    if report.recorded:
        checked += " (content unchanged since a full check found it intact; --no-cache re-reads)"
    _line(checked)
    if report.hash_sources:
        _line(
            "  manifest hash vs " + ", ".join(f"{k}: {v}" for k, v in report.hash_sources.items())
        )
    if report.store:
        _line(f"  ledger checked against the results store {report.store}")
    for problem in report.problems:
        _line(f"  ✗ {problem}", fg="red")
    for error in report.errors:
        _line(f"  ✗ {error}", fg="red")
    for item in report.items:
        _line(f"  ✗ {item.kind} {item.split} item {item.item_id}: {item.detail}", fg="red")
    for warning in report.warnings:
        _line(f"  ! {warning}", fg="yellow")
    if report.superseded:
        _line(f"  superseded by a later version: {', '.join(report.superseded)}")
    if report.candidates:
        _line(
            f"  {len(report.candidates)} new candidate(s) in tasks/ not in any manifest yet: "
            + ", ".join(report.candidates[:10])
            + (" ..." if len(report.candidates) > 10 else "")
        )


@click.command("verify")
@click.argument("ref", required=False)
@click.option("--skip-holdout", is_flag=True, help="Do not open the vault (no key needed).")
@click.option(
    "--no-cache",
    is_flag=True,
    help="Check everything in full (re-read every item, decrypt the vault, load every "
    "family's tools), ignoring the record of earlier checks of unchanged content.",
)
@key_file_option
@json_option
@pass_context
@handle_errors
def verify_cmd(
    ctx: Context,
    ref: str | None,
    skip_holdout: bool,
    no_cache: bool,
    key_file: Path | None,
    as_json: bool,
) -> None:
    """Re-hash frozen items: exit 0 when all match, 3 naming every drifted or missing item.

    An item source that cannot be read (unreadable, not UTF-8, malformed) is reported and
    the other suites are still checked; it alone exits 2. A deleted item source exits 3,
    naming the dev items it held.

    REF is SUITE or SUITE@X.Y.Z; without it, the latest version of every frozen suite.
    Also checks the holdout access ledger (hash chain; against the results store both
    ways) and the manifest hash against its changelog line, git history, ledger and store.

    A version whose content (every file under tasks/ and manifests/SUITE/, the vault, the
    key, evalsuite's code and the installed packages, byte for byte) is exactly what an
    earlier full check found intact is not re-read (recorded in .evalsuite/verified.json);
    --no-cache checks everything in full.
    """
    from evalsuite.cli._governance import check_governance, stored_runs
    from evalsuite.manifest import VerifyCache, parse_ref, verify

    targets: list[tuple[str, str | None]]
    if ref is None:
        targets = [
            (n, None) for n in list_suite_names(ctx.layout) if frozen_versions(ctx.layout, n)
        ]
    else:
        targets = [parse_ref(ref)]
    cache = None if no_cache else VerifyCache(ctx.layout)
    reports = [
        verify(
            ctx.layout,
            name,
            version,
            keys=ctx.keys(key_file),
            skip_holdout=skip_holdout,
            cache=cache,
        )
        for name, version in targets
    ]
    runs, store = stored_runs(ctx) if reports else ([], "")
    for report in reports:
        check = check_governance(
            ctx, report.suite, report.version, report.manifest_hash, runs, store
        )
        report.problems.extend(check.problems)
        report.warnings.extend(check.warnings)
        report.hash_sources.update(check.sources)
        report.store = store
    environment: list[bytes] = []
    audits = [
        verify_audit(ctx, report, use_cache=not no_cache, environment=environment)
        for report in reports
    ]
    ok = all(r.ok for r in reports)
    if as_json:
        suites = [r.to_dict() | {"audit": a} for r, a in zip(reports, audits, strict=True)]
        emit_json({"ok": ok, "suites": suites})
    else:
        for report, audit in zip(reports, audits, strict=True):
            _print_report(report)
            _print_audit_line(audit)
        if not reports:
            click.echo("no frozen suites to verify")
    if not ok:
        failed = ", ".join(f"{r.suite}@{r.version}" for r in reports if not r.ok)
        if any(r.integrity_failed for r in reports):
            exit_after_output(IntegrityError(f"verification failed for {failed}"))
        exit_after_output(
            UsageError(f"could not verify {failed}: an item source cannot be read (see above)")
        )
