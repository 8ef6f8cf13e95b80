"""`evalsuite regrade`: a stored run re-scored by another judge (docs/design/judge-audit.md)."""

from __future__ import annotations

from pathlib import Path

import click

from evalsuite.cli._common import (
    Context,
    console,
    emit_json,
    handle_errors,
    json_option,
    pass_context,
)
from evalsuite.cli._run_cmds import open_store
from evalsuite.cli._views import print_view

__all__ = ["regrade_cmd"]


@click.command("regrade")
@click.argument("run_id")
@click.option(
    "--judge",
    "judge",
    required=True,
    help="The new judge, an inspect model name (provider/model).",
)
@click.option(
    "--log-dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Where the run's inspect logs are (default: .evalsuite/logs/RUN_ID).",
)
@json_option
@pass_context
@handle_errors
def regrade_cmd(ctx: Context, run_id: str, judge: str, log_dir: Path | None, as_json: bool) -> None:
    """Re-score RUN_ID's stored outputs with another judge and compare, paired by item.

    The candidate model is not called again: inspect's `score` re-grades the outputs in the
    run's logs with each judged family's scorer built with JUDGE. The re-scored run is stored
    on the same manifest, and compared with the original (baseline) per stratum.
    """
    from evalsuite.service import comparison_view, regrade

    result = regrade(ctx.layout, open_store(ctx, create=False), run_id, judge, log_dir=log_dir)
    if as_json:
        emit_json(result.to_dict())
        return
    was = ", ".join(f"{family}: {model}" for family, model in result.previous_judges.items())
    console.print(
        f"re-scored {result.original} with {result.judge} (was {was}) as {result.regraded}; "
        f"logs in {result.logs}"
    )
    print_view(console, comparison_view(result.comparison), wide=False)
