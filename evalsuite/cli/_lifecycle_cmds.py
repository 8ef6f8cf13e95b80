"""Commands that keep a suite alive over time: `diff` of two versions, `triage` of candidates.

Design: docs/design/triage-and-diff.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
from evalsuite.cli._paths import PathParam
from evalsuite.cli._views import print_view
from evalsuite.service import triage_view

__all__ = ["diff_cmd", "triage_cmd"]

_SHOWN = 20
"""Item ids listed per kind in the text output (--json lists them all)."""


def _ids(entries: list[dict[str, Any]]) -> str:
    ids = [str(e["item_id"]) for e in entries]
    more = f" ... (+{len(ids) - _SHOWN}; --json lists all)" if len(ids) > _SHOWN else ""
    return ", ".join(ids[:_SHOWN]) + more


def _print_diff(payload: dict[str, Any]) -> None:
    suite, a, b = payload["suite"], payload["a"], payload["b"]
    console.print(
        Text(
            f"{suite}@{a} -> {suite}@{b}: {payload['n_items']['a']} -> "
            f"{payload['n_items']['b']} items, {payload['n_common']} in common "
            "(same id and content hash)",
            style="bold",
        )
    )
    if payload["identical"]:
        console.print("  same items, strata, weights and families")
    for kind in ("added", "retired", "changed"):
        entries = payload[kind]
        if entries:
            console.print(f"  {kind} ({len(entries)}): {_ids(entries)}")
    _print_change_causes(payload)
    if payload["moved"]:
        console.print(
            f"  moved strata ({len(payload['moved'])}): "
            + ", ".join(f"{m['item_id']} {m['from']} -> {m['to']}" for m in payload["moved"])
        )
    if payload["split_changed"]:
        console.print(f"  changed split ({len(payload['split_changed'])})")
    if payload["weights"]:
        table = Table("stratum", f"weight {a}", f"weight {b}")
        for stratum, w in payload["weights"].items():
            table.add_row(
                Text(printable(stratum)),
                "-" if w["a"] is None else f"{w['a']:.3f}",
                "-" if w["b"] is None else f"{w['b']:.3f}",
            )
        console.print("  weight changes:")
        console.print(table)
    for name, v in payload["families"].items():
        console.print(f"  family {name}: version {v['a']} -> {v['b']}")
    audit = payload["audit"]
    line = f"  grader audit: {audit['a']['status']} -> {audit['b']['status']}"
    console.print(line + (" (changed)" if audit["changed"] else ""))
    if payload["notes"].get("b"):
        console.print(f"  note of {b}: {payload['notes']['b']}")


def _print_change_causes(payload: dict[str, Any]) -> None:
    """Why the changed items' hashes changed: their own content, or their family's version."""
    changed = payload["changed"]
    by_family = [c for c in changed if c.get("cause") == "family_version"]
    if not by_family:
        return
    families = ", ".join(f"{name} {v['a']} -> {v['b']}" for name, v in payload["families"].items())
    share = "all" if len(by_family) == len(changed) else f"{len(by_family)} of"
    console.print(
        f"    {share} {len(changed)} changed because their family's version changed "
        f"({families}): the family version is part of every item's content hash, so these "
        "hashes changed whether or not the items did (the manifests cannot tell); scores "
        "across the two versions are not comparable on them"
    )
    rest = len(changed) - len(by_family)
    if rest:
        console.print(f"    {rest} changed their own content (input, target, metadata or files)")


@click.command("diff")
@click.argument("ref_a", metavar="SUITE@A")
@click.argument("ref_b", metavar="SUITE@B")
@json_option
@pass_context
@handle_errors
def diff_cmd(ctx: Context, ref_a: str, ref_b: str, as_json: bool) -> None:
    """What changed from SUITE@A to SUITE@B: items added, retired, changed, moved, weights, audit.

    Reads the two manifests only (ids and content hashes, never an item's text). Exit 2 for
    an unknown version or two different suites, 3 when a manifest fails its hash check.
    """
    from evalsuite.manifest import diff_versions

    payload = diff_versions(ctx.layout, ref_a, ref_b).to_dict()
    if as_json:
        emit_json(payload)
        return
    _print_diff(payload)


@click.command("triage")
@click.argument("candidates", type=PathParam(path_type=Path))
@click.option("--suite", "suite", required=True, help="The suite the candidates are for.")
@click.option(
    "--runs",
    "runs",
    multiple=True,
    help="Stored run id whose attempts of candidate items count (repeatable).",
)
@click.option(
    "--agents",
    default="baseline,improved,hacker",
    show_default=True,
    help="Reference agents (evalsuite/<name>) to play the candidates, comma-separated; "
    "'none' plays none.",
)
@click.option(
    "--epochs",
    type=click.IntRange(min=1),
    default=2,
    show_default=True,
    help="Epochs per reference agent (their mean score per item is shown).",
)
@click.option(
    "--keep-only",
    "keep_only",
    type=PathParam(dir_okay=False, path_type=Path),
    default=None,
    help="Write the kept items (JSONL, as read) to this file, ready for `freeze`.",
)
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Seed of the reference agents' and the audit's episodes; recorded in the output.",
)
@json_option
@pass_context
@handle_errors
def triage_cmd(
    ctx: Context,
    candidates: Path,
    suite: str,
    runs: tuple[str, ...],
    agents: str,
    epochs: int,
    keep_only: Path | None,
    seed: int,
    as_json: bool,
) -> None:
    """Sort CANDIDATES (a file or directory of items) into keep / fix / drop, with reasons.

    Runs the grader audit on the candidates (oracle solves, null and trivial policies do
    not), the leak check, a fingerprint check against every item of the suite's latest
    version and the other candidates, the reference agents and, with --runs, stored runs.
    Exit 2 for unreadable candidates or bad options; nothing is written unless --keep-only.
    """
    from evalsuite.cli._run_cmds import open_store
    from evalsuite.errors import UsageError
    from evalsuite.triage import TriageOptions, triage

    names = [] if agents.strip() == "none" else [a.strip() for a in agents.split(",") if a.strip()]
    if not names and agents.strip() != "none":
        raise UsageError("--agents names at least one reference agent, or 'none'")
    store = open_store(ctx, create=False) if runs else None
    result = triage(
        ctx.layout,
        suite,
        candidates,
        options=TriageOptions(agents=tuple(names), epochs=epochs, seed=seed, runs=runs),
        store=store,
    )
    if keep_only is not None:
        result.write_kept(keep_only)
    view = triage_view(result, kept_file=str(keep_only) if keep_only is not None else None)
    if as_json:
        emit_json(view.to_dict())
        return
    print_view(console, view)
