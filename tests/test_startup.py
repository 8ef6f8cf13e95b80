"""The command line starts at once: `--help` imports no command module and nothing heavy."""

import json
import subprocess
import sys

import click

from evalsuite.cli import COMMANDS, cli

HEAVY = (
    "pandas",
    "numpy",
    "scipy",
    "statsmodels",
    "matplotlib",
    "sqlalchemy",
    "inspect_ai",
    "datasets",
    "pyarrow",
    "cryptography",
    "rich",
)

_PROBE = """
import json, sys
from evalsuite.cli import main
sys.argv = ["evalsuite", *json.loads(sys.argv[1])]
try:
    main()
except SystemExit:
    pass
print("\\n@@MODULES@@" + json.dumps(sorted(sys.modules)))
"""


def _modules_after(*argv: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(list(argv))],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return set(json.loads(out.split("@@MODULES@@", 1)[1]))


def _top(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def test_help_imports_no_command_module_and_nothing_heavy() -> None:
    modules = _modules_after("--help")
    assert {m for m in modules if m.startswith("evalsuite.cli.")} == set()
    assert _top(modules) & set(HEAVY) == set()


def test_a_commands_help_imports_only_that_commands_module() -> None:
    modules = _modules_after("runs", "--help")
    assert "evalsuite.cli._run_cmds" in modules
    assert "evalsuite.cli._analyse_cmds" not in modules
    assert "evalsuite.cli._report_cmd" not in modules


def test_every_entry_resolves_to_the_command_of_that_name() -> None:
    ctx = click.Context(cli)
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert isinstance(command, click.Command)
        assert command.name == name
    assert cli.get_command(ctx, "no-such-command") is None


def test_an_unknown_command_is_a_usage_error() -> None:
    result = subprocess.run(
        [sys.executable, "-c", "from evalsuite.cli import main; main()", "frobnicate"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert "No such command 'frobnicate'" in result.stderr
