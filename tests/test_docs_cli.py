"""docs/cli.md documents every command of the `evalsuite` group, and no command it lacks."""

import re
from pathlib import Path

from evalsuite.cli import COMMANDS

ROOT = Path(__file__).resolve().parents[1]


def test_every_command_has_a_section_in_docs_cli() -> None:
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^### ([a-z-]+)$", text, flags=re.MULTILINE))
    commands = set(COMMANDS)
    assert commands - documented == set(), "commands missing from docs/cli.md"
    assert documented - commands == set(), "docs/cli.md documents commands that do not exist"


def test_every_exit_code_of_the_error_tree_is_documented() -> None:
    import evalsuite.errors as errors

    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    codes = {
        cls.exit_code
        for cls in vars(errors).values()
        if isinstance(cls, type) and issubclass(cls, errors.EvalsuiteError)
    }
    table = set(int(c) for c in re.findall(r"^\| (\d+) \|", text, flags=re.MULTILINE))
    assert codes <= table


def test_the_adaptive_flags_of_run_are_documented() -> None:
    from evalsuite.cli._run_cmds import run_cmd

    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    section = text.split("### run\n", 1)[1].split("\n### ", 1)[0]
    flags = {
        opt
        for param in run_cmd.params
        for opt in param.opts
        if opt
        in {
            "--adaptive",
            "--target-halfwidth",
            "--versus",
            "--margin",
            "--max-epochs",
            "--max-calls",
        }
    }
    assert len(flags) == 6, "run lost an adaptive flag"
    missing = sorted(f for f in flags if f not in section)
    assert missing == [], f"docs/cli.md, ### run, does not name {missing}"
