"""Every `evalsuite ...` command line the product tells a user to type is one the CLI takes.

Error messages, help texts and docstrings quote command lines in backticks ("run
`evalsuite store upgrade`"); a hint naming a command, subcommand or option that does not
exist, or putting a second positional argument where the command takes one, sends the user
from one error to another. The hints are read from the source (string pieces split over
lines are joined first), placeholders (SUITE@X.Y.Z, {run_id}, ...) stand for one argument.
"""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from evalsuite.cli import cli

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "evalsuite"
_JOIN = re.compile(r"\"\s*\n\s*[rbf]*\"")
"""The end of one string piece and the start of the next, on the following line."""
_HINT = re.compile(r"`evalsuite(?: [^`\n]*)?`")


def hints() -> list[tuple[str, str]]:
    """(file, hint) for every backticked `evalsuite ...` in the package's source and docs."""
    found = []
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for path in [*sorted(PACKAGE.rglob("*.py")), *docs]:
        text = path.read_text(encoding="utf-8")
        text = _JOIN.sub("", text) if path.suffix == ".py" else text
        for match in _HINT.finditer(text):
            found.append((str(path.relative_to(ROOT)), match.group(0).strip("`")))
    return sorted(set(found))


def _options(command: click.Command) -> dict[str, click.Parameter]:
    help_option = command.get_help_option(click.Context(command))
    params = [*command.params, *([help_option] if help_option else [])]
    return {name: p for p in params for name in (*p.opts, *p.secondary_opts)}


def _takes_value(param: click.Parameter, word: str) -> bool:
    return "=" not in word and not getattr(param, "is_flag", False)


def _resolve(words: list[str]) -> list[tuple[click.Command, list[str]]]:
    """The command(s) a hint names (``a|b`` names each) and the words after its path."""
    command: click.Command = cli
    index = 0
    while index < len(words):
        word = words[index]
        if not isinstance(command, click.Group):
            return [(command, words[index:])]
        if word.startswith("-"):  # an option of the group, before the command
            options = _options(command)
            name = word.split("=", 1)[0]
            assert name in options, f"{command.name} has no option {name}"
            index += 2 if _takes_value(options[name], word) else 1
            continue
        if word.isupper():  # COMMAND: any command
            return []
        context = click.Context(command)
        found = {name: command.get_command(context, name) for name in word.split("|")}
        unknown = [name for name, sub in found.items() if sub is None]
        assert not unknown, f"no command {' '.join(['evalsuite', *words[:index], unknown[0]])}"
        subs = [sub for sub in found.values() if sub is not None]
        if len(subs) > 1:
            return [(sub, words[index + 1 :]) for sub in subs]
        command = subs[0]
        index += 1
    return [(command, [])]


def check(hint: str) -> None:
    # a <placeholder of words> is one word; [optional] parts and "a | b" choices are checked
    # as if all were given (the positional count of optional ones is not)
    words = re.sub(r"<[^>]*>", "X", hint).split()[1:]
    optional = sum(1 for w in words if w.startswith("[") and not w.startswith("[-"))
    words = [w.strip("[]") for w in words if w.strip("[]") not in ("|", "")]
    words = words[: words.index(">")] if ">" in words else words  # a shell redirect
    for command, rest in _resolve(words):
        options = _options(command)
        accepts = sum(
            p.nargs if p.nargs > 0 else 99 for p in command.params if isinstance(p, click.Argument)
        )
        positional = 0
        skip = False
        for word in rest:
            if skip:
                skip = False
            elif word.startswith("-"):
                name = word.split("=", 1)[0]
                assert name in options, f"{command.name} has no option {name}"
                param = options[name]
                skip = _takes_value(param, word)
            elif word not in ("...", "…"):
                positional += 1
        assert positional - optional <= accepts, (
            f"{command.name} takes {accepts} positional argument(s), the hint gives {positional}"
        )


def test_the_hints_are_found() -> None:
    found = {hint for _, hint in hints()}
    # pieces split over lines are joined, so these multi-line hints are seen whole
    assert "evalsuite audit SUITE@X.Y.Z --graders" in found
    assert len(found) > 50


@pytest.mark.parametrize(("where", "hint"), hints())
def test_every_hinted_command_line_is_accepted(where: str, hint: str) -> None:
    check(hint)


@pytest.mark.parametrize(
    "bad",
    [
        "evalsuite run MODEL support@2.0.0",  # two positionals: run takes SUITE@V only
        "evalsuite store upgrde",
        "evalsuite score RUN --k 5",
        "evalsuite validity add|import|nosuch",
    ],
)
def test_a_wrong_hint_is_caught(bad: str) -> None:
    with pytest.raises(AssertionError):
        check(bad)
