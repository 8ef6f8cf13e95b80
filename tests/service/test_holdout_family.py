"""`service.change_family`: the audited move of a model to another holdout budget family."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalsuite._core.layout import Layout
from evalsuite.errors import NotFoundError, UsageError
from evalsuite.holdout import read_ledger
from evalsuite.service import FamilyChange, change_family
from tests.helpers import json_out, make_project


@pytest.fixture
def frozen(tmp_path: Path) -> tuple[Layout, Path]:
    project = make_project(tmp_path)
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0
    return Layout(project.root), project.key_dir


def test_change_family_appends_a_ledger_entry_and_returns_it_typed(
    frozen: tuple[Layout, Path],
) -> None:
    layout, key_dir = frozen
    change = change_family(layout, key_dir, "demo", "m/x", "fam-a", reason="  new base  ")
    assert isinstance(change, FamilyChange)
    assert (change.suite, change.model, change.model_family) == ("demo", "m/x", "fam-a")
    assert change.previous_family is None and change.reason == "new base"
    entry = read_ledger(layout.ledger_file("demo"))[-1]
    assert (entry.kind, entry.seq, entry.hash) == ("family", change.seq, change.hash)
    assert change.sentence.startswith("m/x moved to family 'fam-a' on demo (ledger entry")
    again = change_family(layout, key_dir, "demo@1.0.0", "m/x", "fam-b", reason="retrained")
    assert again.previous_family == "fam-a" and again.seq == change.seq + 1
    assert "moved from 'fam-a' to family 'fam-b'" in again.sentence
    assert set(again.to_dict()) == {
        "suite", "model", "model_family", "previous_family", "reason", "seq", "hash",
    }  # fmt: skip


def test_change_family_refusals(frozen: tuple[Layout, Path]) -> None:
    layout, key_dir = frozen
    with pytest.raises(NotFoundError, match="no frozen version"):
        change_family(layout, key_dir, "nope", "m", "f", reason="r")
    with pytest.raises(UsageError, match="--reason"):
        change_family(layout, key_dir, "demo", "m", "f", reason=" ")
    with pytest.raises(UsageError, match="FAMILY must not be empty"):
        change_family(layout, key_dir, "demo", "m", " ", reason="r")
    change_family(layout, key_dir, "demo", "m", "f", reason="r")
    with pytest.raises(UsageError, match="already belongs"):
        change_family(layout, key_dir, "demo", "m", "f", reason="r")


def test_the_command_prints_the_result(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0
    out = project.invoke("holdout", "family", "demo", "m/x", "fam-a", "--reason", "why", "--json")
    assert out.exit_code == 0, out.stderr
    payload = json_out(out)
    assert payload["model_family"] == "fam-a" and payload["previous_family"] is None
    text = project.invoke("holdout", "family", "demo", "m/x", "fam-b", "--reason", "why")
    assert text.exit_code == 0
    assert "m/x moved from 'fam-a' to family 'fam-b' on demo (ledger entry" in text.stdout
