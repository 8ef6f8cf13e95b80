"""`evalsuite items SUITE@X.Y.Z`: item analysis and saturation watch over the stored runs."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import click

from evalsuite._core.atomic import atomic_write_text
from evalsuite.cli._common import (
    Context,
    console,
    emit_json,
    handle_errors,
    json_option,
    level_option,
    pass_context,
)
from evalsuite.cli._paths import PathParam
from evalsuite.cli._run_cmds import open_store
from evalsuite.errors import UsageError
from evalsuite.service import fmt

__all__ = ["CSV_COLUMNS", "items_cmd"]

CSV_COLUMNS = (
    "item_id", "stratum", "models", "planned", "solve_rate", "solve_ci_lo", "solve_ci_hi",
    "harness_errors", "harness_error_rate", "limits", "limit_rate", "item_rest_r",
    "item_rest_ci_lo", "item_rest_ci_hi", "irt_a", "irt_a_se", "irt_b", "flip_models",
    "multi_epoch_models", "flip_expected", "epoch_variance", "noise_variance", "flaky_q",
    "harness_error_q", "seed_flip_models", "stratum_watched", "flags", "flag_reasons",
)  # fmt: skip
"""Columns of ``items --csv`` (one row per item; lists joined by ``;``, reasons as JSON)."""


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def csv_text(items: list[dict[str, Any]]) -> str:
    """The ``--csv`` file's text."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for i in items:
        row = dict(i)
        row["solve_ci_lo"], row["solve_ci_hi"] = i["solve_ci"]
        row["item_rest_ci_lo"], row["item_rest_ci_hi"] = i["item_rest_ci"]
        row["seed_flip_models"] = ";".join(i["seed_flip_models"])
        row["flags"] = ";".join(i["flags"])
        row["flag_reasons"] = json.dumps(i["flag_reasons"], sort_keys=True) if i["flags"] else ""
        writer.writerow([_cell(row[c]) for c in CSV_COLUMNS])
    return out.getvalue()


def _print(payload: dict[str, Any]) -> None:
    ref = f"{payload['suite']}@{payload['version']}"
    console.print(
        f"{ref}: {payload['n_items']} items, {len(payload['models'])} model(s), "
        f"{len(payload['runs'])} run(s)"
        + (
            f" ({len(payload['left_out'])} run(s) left out, see the notes)"
            if payload["left_out"]
            else ""
        )
    )
    for m in payload["models"]:
        ability = (
            f", ability {fmt(m['ability'], 2)} ± {fmt(m['ability_sd'], 2)}"
            if m["ability"] is not None
            else ""
        )
        det = " (deterministic)" if m["deterministic"] else ""
        console.print(
            f"  {m['model']}{det}: mean {fmt(m['mean'])} over {m['items']} items{ability}"
        )
    irt = payload["irt"]
    if irt["fitted"]:
        state = "converged" if irt["converged"] else "NOT converged"
        console.print(
            f"2PL IRT: {state} in {irt['iterations']} iterations ({irt['quadrature']}); "
            f"abilities vs raw scores: "
            + ", ".join(f"{k} {v:.3f}" for k, v in irt["ability_vs_raw_score"].items())
        )
    else:
        console.print(f"2PL IRT: not fitted: {irt['reason']}")
    console.print("saturation watch:")
    for s in payload["strata"]:
        noise = fmt(s["noise_floor"], 4) if s["noise_floor"] is not None else "unknown"
        verdict = "WATCH: " + "; ".join(s["reasons"]) if s["watch"] else "ok"
        test = s["separation"]
        equal = f", equal-scores test p {test['p_value']:.3g}" if test is not None else ""
        console.print(
            f"  {s['stratum']}: best {s['best_model']} {fmt(s['best_score'])}, spread "
            f"{fmt(s['spread'], 4)}, noise floor {noise}{equal}: {verdict}"
        )
    counts = payload["flag_counts"]
    console.print("flags: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    flagged = [i for i in payload["items"] if i["flags"]]
    for i in flagged:
        console.print(
            f"  {i['item_id']} ({i['stratum']}, solve rate {fmt(i['solve_rate'])}): "
            + "; ".join(f"{f}: {i['flag_reasons'][f]}" for f in i["flags"])
        )
    leak = payload["leak_audit"]
    if leak.get("status") == "stored":
        console.print(f"leak audit: {leak['findings']} finding(s) in {leak['file']}")
    for note in payload["notes"]:
        console.print(f"note: {note}")


@click.command("items")
@click.argument("ref")
@click.option("--csv", "csv_file", type=PathParam(dir_okay=False, path_type=Path), default=None,
              help="Also write one row per item to FILE (CSV).")  # fmt: skip
@click.option(
    "--saturation",
    type=click.FloatRange(0.0, 1.0, min_open=True),
    default=0.9,
    show_default=True,
    help="Best-model stratum score above which the stratum is called saturated.",
)
@click.option(
    "--deterministic",
    multiple=True,
    metavar="MODEL",
    help="A model deterministic at a given seed (repeatable; the reference agents "
    "evalsuite/... always are): its flips at one seed make the item a harness suspect.",
)
@click.option(
    "--allow-invalid",
    is_flag=True,
    help="Also read invalid runs (too many harness errors; left out by default, as in "
    "compare): their scored attempts count and their harness errors show in each item's rate. "
    "Runs not complete (running, interrupted) are never read.",
)
@level_option
@json_option
@pass_context
@handle_errors
def items_cmd(
    ctx: Context,
    ref: str,
    csv_file: Path | None,
    saturation: float,
    deterministic: tuple[str, ...],
    allow_invalid: bool,
    level: float,
    as_json: bool,
) -> None:
    """Item analysis of REF (SUITE@X.Y.Z) over its complete, valid stored runs, with flags.

    Per item: solve rate with an interval, item-rest correlation, 2PL IRT (8 or more models),
    flakiness, harness-error and limit rates; flags dead, flaky, harness-suspect,
    negatively-discriminating, leaky. Per stratum: the saturation watch.
    """
    from evalsuite.items import item_analysis
    from evalsuite.manifest import parse_ref

    suite, version = parse_ref(ref)
    if version is None:
        raise UsageError(
            f"name the version: `evalsuite items {suite}@X.Y.Z` (`evalsuite suites` lists the "
            "frozen versions)"
        )
    analysis = item_analysis(
        open_store(ctx, create=False),
        ctx.layout,
        suite,
        version,
        level=level,
        threshold=saturation,
        deterministic=deterministic,
        allow_invalid=allow_invalid,
    )
    payload = analysis.to_dict()
    if csv_file is not None:
        atomic_write_text(csv_file, csv_text(payload["items"]))
        payload["csv"] = str(csv_file)
    if as_json:
        emit_json(payload)
    else:
        _print(payload)
        if csv_file is not None:
            console.print(f"wrote {csv_file}")
