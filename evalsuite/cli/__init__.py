"""The `evalsuite` command line (thin: parse, call the stage, print)."""

from __future__ import annotations

from pathlib import Path

import click

from evalsuite import __version__
from evalsuite.cli._analyse_cmds import compare_cmd, score_cmd
from evalsuite.cli._audit_cmd import audit_cmd
from evalsuite.cli._common import make_context
from evalsuite.cli._guard_cmd import guard_cmd
from evalsuite.cli._holdout_cmds import holdout_group
from evalsuite.cli._manifest_cmds import freeze_cmd, suites_cmd, verify_cmd
from evalsuite.cli._report_cmd import report_cmd
from evalsuite.cli._run_cmds import ingest_cmd, run_cmd, runs_cmd
from evalsuite.cli._store_cmds import store_group
from evalsuite.cli._validity_cmds import validity_group

__all__ = ["cli", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="evalsuite")
@click.option(
    "--root",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="Project directory holding tasks/, manifests/, holdout/ and .evalsuite/.",
)
@click.pass_context
def cli(click_ctx: click.Context, root: Path) -> None:
    """Evaluate checkpoints against frozen, versioned holdout suites, with honest statistics.

    Exit codes: 0 ok, 1 unexpected error, 2 usage, 3 integrity failure, 4 contamination,
    5 invalid run, 6 gate failed, 7 holdout access refused.
    """
    click_ctx.obj = make_context(root)


for _command in (
    suites_cmd,
    freeze_cmd,
    verify_cmd,
    run_cmd,
    runs_cmd,
    ingest_cmd,
    score_cmd,
    compare_cmd,
    report_cmd,
    holdout_group,
    guard_cmd,
    audit_cmd,
    validity_group,
    store_group,
):
    cli.add_command(_command)


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="evalsuite")
