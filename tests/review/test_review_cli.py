"""`evalsuite review` and `evalsuite review label` on the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalsuite.cli import cli
from evalsuite.review import load_labels
from evalsuite.store import Store
from tests.review.conftest import make_run

TOY = """suite = "toy"
version = "1"

[[modes]]
name = "tool_fault"
kind = "harness"
scanner = "tool_errors"
definition = "A tool failed."

[[modes]]
name = "tool_loop"
kind = "model"
definition = "Same call again and again."
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Store]:
    (tmp_path / "tasks" / "taxonomies").mkdir(parents=True)
    (tmp_path / "tasks" / "taxonomies" / "toy.toml").write_text(TOY, encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'store.sqlite'}"
    monkeypatch.setenv("EVALSUITE_STORE", url)
    store = Store(url)
    make_run(store, "r1", {("i1", 1): ("scored", 0.0), ("i2", 1): ("harness_error", 0.0)})
    return tmp_path, store


def _invoke(root: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--root", str(root), *args])
    return result.exit_code, result.output


def test_label_from_the_command_line_then_summary(project: tuple[Path, Store]) -> None:
    root, store = project
    code, out = _invoke(
        root, "review", "label", "r1", "i1", "1", "--mode", "tool_loop", "--note", "x", "--json"
    )
    assert code == 0, out
    saved = json.loads(out)["label"]
    assert saved["modes"] == ["tool_loop"] and saved["note"] == "x"
    code, out = _invoke(root, "review", "label", "r1", "i2", "1", "--mode", "tool_fault")
    assert code == 0 and "labelled i2 epoch 1 of r1: tool_fault" in out
    assert {x.key: x.modes for x in load_labels(store, "r1")} == {
        ("i1", 1): ("tool_loop",),
        ("i2", 1): ("tool_fault",),
    }
    code, out = _invoke(root, "review", "r1", "--json")
    assert code == 0, out
    assert json.loads(out)["runs"][0]["modes"] == {"tool_fault": 1, "tool_loop": 1}


def test_an_unknown_mode_exits_2_and_names_the_modes(project: tuple[Path, Store]) -> None:
    root, store = project
    code, out = _invoke(root, "review", "label", "r1", "i1", "1", "--mode", "nope")
    assert code == 2 and "unknown failure mode 'nope'" in out and "tool_fault" in out
    assert load_labels(store, "r1") == []
    code, out = _invoke(root, "review", "label", "r1", "i1", "0", "--mode", "tool_loop")
    assert code == 2
