"""`evalsuite items SUITE@X.Y.Z`: item analysis and saturation watch over the stored runs."""

from __future__ import annotations

from pathlib import Path

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
from evalsuite.cli._views import print_view, wide_option
from evalsuite.errors import UsageError
from evalsuite.service import ITEMS_CSV_COLUMNS as CSV_COLUMNS

__all__ = ["CSV_COLUMNS", "items_cmd"]


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
@wide_option
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
    wide: bool,
    as_json: bool,
) -> None:
    """Item analysis of REF (SUITE@X.Y.Z) over its complete, valid stored runs, with flags.

    Per item: solve rate with an interval, item-rest correlation, 2PL IRT (8 or more models),
    flakiness, harness-error and limit rates; flags dead, flaky, harness-suspect,
    negatively-discriminating, leaky. Per stratum: the saturation watch.
    """
    from dataclasses import replace

    from evalsuite.manifest import parse_ref
    from evalsuite.service import items, items_csv, items_view

    suite, version = parse_ref(ref)
    if version is None:
        raise UsageError(
            f"name the version: `evalsuite items {suite}@X.Y.Z` (`evalsuite suites` lists the "
            "frozen versions)"
        )
    result = items(
        open_store(ctx, create=False),
        ctx.layout,
        suite,
        version,
        level=level,
        saturation=saturation,
        deterministic=deterministic,
        allow_invalid=allow_invalid,
    )
    if csv_file is not None:
        atomic_write_text(csv_file, items_csv(result))
        result = replace(result, csv_file=csv_file)
    view = items_view(result)
    if as_json:
        emit_json(view.to_dict())
    else:
        print_view(console, view, wide=wide)
