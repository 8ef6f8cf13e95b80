"""The `evalsuite` command line (thin: parse, call the stage, print)."""

from __future__ import annotations

import importlib
from pathlib import Path

import click

from evalsuite.cli._paths import PathParam

__all__ = ["COMMANDS", "cli", "main"]

#: Every command: name -> (module, attribute, one-line help). A command's module (and what it
#: imports: pandas, scipy, SQLAlchemy, inspect-ai) is loaded only when that command runs, so
#: `evalsuite --help` starts at once (docs/scale.md). `tests/test_startup.py` checks that
#: every entry resolves to its command and what `--help` imports.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "suites": (
        "_manifest_cmds",
        "suites_cmd",
        "List suites in tasks/ with their frozen versions and item counts.",
    ),
    "freeze": (
        "_manifest_cmds",
        "freeze_cmd",
        "Freeze SUITE as a new version: manifest, holdout vault, fingerprints.",
    ),
    "verify": (
        "_verify_cmd",
        "verify_cmd",
        "Re-hash frozen items: exit 0 when all match, 3 naming every drift.",
    ),
    "run": ("_run_cmds", "run_cmd", "Run MODEL against REF (SUITE@X.Y.Z); prints the run id."),
    "runs": ("_run_cmds", "runs_cmd", "List stored runs, oldest first."),
    "ingest": (
        "_run_cmds",
        "ingest_cmd",
        "Store results produced elsewhere (inspect logs, CSV, EEE, lm-eval, HELM) as runs.",
    ),
    "export": (
        "_export_cmd",
        "export_cmd",
        "Write runs as Every Eval Ever records or CSV / Parquet results tables.",
    ),
    "score": (
        "_analyse_cmds",
        "score_cmd",
        "Estimates with intervals, per stratum, pass@k, pass^k, reliability.",
    ),
    "compare": ("_analyse_cmds", "compare_cmd", "Paired comparison of CANDIDATE against BASELINE."),
    "items": (
        "_items_cmd",
        "items_cmd",
        "Item analysis of a suite version: difficulty, discrimination, flags, saturation.",
    ),
    "report": (
        "_report_cmd",
        "report_cmd",
        "Write index.html, report.md and report.json for RUN_IDS.",
    ),
    "holdout": (
        "_holdout_cmds",
        "holdout_group",
        "Holdout governance: access ledger, budget and model families.",
    ),
    "guard": (
        "_guard_cmd",
        "guard_cmd",
        "Screen training curricula against the suites' fingerprints.",
    ),
    "fingerprints": (
        "_guard_cmd",
        "fingerprints_cmd",
        "Write or check current-format fingerprints of versions frozen in older formats.",
    ),
    "diff": (
        "_lifecycle_cmds",
        "diff_cmd",
        "What changed between two versions: items added, retired, changed, moved, weights.",
    ),
    "triage": (
        "_lifecycle_cmds",
        "triage_cmd",
        "Sort candidate items into keep / fix / drop before freezing, with reasons.",
    ),
    "audit": ("_audit_cmd", "audit_cmd", "Audit a suite version: leaks, canary probe, graders."),
    "regrade": (
        "_judge_cmds",
        "regrade_cmd",
        "Re-score a run's stored outputs with another judge and compare, paired by item.",
    ),
    "validity": (
        "_validity_cmds",
        "validity_group",
        "Deployment outcomes and predictive validity of eval scores.",
    ),
    "review": (
        "_review_cmd",
        "review_cmd",
        "Review transcripts: label failure modes, run scanners, count modes per run.",
    ),
    "store": (
        "_store_cmds",
        "store_group",
        "The results store: where it is, its schema version, and upgrades.",
    ),
}


_JSON_META = "evalsuite.json"
"""`click.Context.meta` key: the command line asked for ``--json``."""


def _asks_for_json(args: list[str]) -> bool:
    """``--json`` among the options (before a ``--`` that ends them)."""
    for arg in args:
        if arg == "--":
            return False
        if arg == "--json":
            return True
    return False


def _json_usage_error(exc: click.ClickException) -> None:
    """The ``--json`` error document of a command line click refused (docs/cli.md)."""
    from evalsuite.cli._common import emit_json

    emit_json({"error": "UsageError", "message": exc.format_message(), "exit_code": exc.exit_code})


class _LazyGroup(click.Group):
    """A group whose commands are imported when they are run, not when the group is built.

    A command line that click refuses (a bad value, an unknown option, a missing argument) exits
    2 with click's message on stderr; with ``--json`` it also prints the error document
    (``error``, ``message``, ``exit_code``) on stdout, as every other error does, so a caller
    parsing stdout always gets JSON.
    """

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: object,
    ) -> click.Context:
        asks_for_json = _asks_for_json(list(args))
        try:
            ctx = super().make_context(info_name, args, parent, **extra)
        except click.ClickException as exc:
            if asks_for_json:
                _json_usage_error(exc)
            raise
        ctx.meta[_JSON_META] = asks_for_json
        return ctx

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except click.ClickException as exc:
            if ctx.meta.get(_JSON_META):
                _json_usage_error(exc)
            raise

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module = importlib.import_module(f"evalsuite.cli.{entry[0]}")
        command = getattr(module, entry[1])
        if not isinstance(command, click.Command):
            raise TypeError(f"evalsuite.cli.{entry[0]}.{entry[1]} is not a click command")
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, entry[2]) for name, entry in COMMANDS.items()])


def _print_version(click_ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """``--version``: read from the package metadata only when asked (start-up, docs/scale.md)."""
    if not value or click_ctx.resilient_parsing:
        return
    from evalsuite import __version__

    click.echo(f"evalsuite, version {__version__}")
    click_ctx.exit()


@click.group(
    cls=_LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and exit.",
)
@click.option(
    "--root",
    type=PathParam(exists=True, file_okay=False, path_type=Path),
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
    from evalsuite.cli._common import make_context

    click_ctx.obj = make_context(root)


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="evalsuite")
