"""A family's score declaration is frozen into its manifest record and hash (a change is a new
major version); suites that declare none keep the hash they had (docs/design/scorers.md)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import evalsuite.manifest._freeze as freeze_module
from evalsuite._core.layout import Layout
from evalsuite.audit import declared_action_spaces
from evalsuite.manifest import (
    FreezeAudit,
    KeySpec,
    freeze,
    load_suite,
    load_suite_items,
    read_manifest,
)
from evalsuite.manifest._candidates import load_latest
from tests.e2e.conftest import copy_project
from tests.helpers import REPO, json_out, make_project, suite_toml


@pytest.mark.parametrize(
    ("suite", "version"),
    [("arith", "1.0.0"), ("support", "1.0.0"), ("arith", "2.0.0"), ("support", "2.0.0")],
)
def test_shipped_manifests_keep_their_hash(suite: str, version: str) -> None:
    recorded = json.loads((REPO / "manifests" / suite / f"{version}.json").read_text())
    assert all("score" not in f and "score_bounds" not in f for f in recorded["families"])
    manifest = read_manifest(REPO / "manifests" / suite / f"{version}.json")  # checks the hash
    assert manifest.manifest_hash == recorded["manifest_hash"]
    assert manifest.model_dump(mode="json")["families"] == recorded["families"]


@pytest.mark.parametrize("suite", ["arith", "support"])
def test_refreezing_a_shipped_suite_hashes_the_same_family_records(
    suite: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The suite file describes the latest shipped version (family version 2 or later, its
    action space recorded); freezing it again hashes the very same family records."""
    latest = load_latest(Layout(REPO), suite)
    assert latest is not None and int(latest.version.split(".")[0]) >= 2
    recorded = json.loads((REPO / "manifests" / suite / f"{latest.version}.json").read_text())
    hashed: list[dict[str, Any]] = []
    real = freeze_module.compute_manifest_hash

    def spy(content: dict[str, Any]) -> str:
        hashed.append(content)
        return real(content)

    monkeypatch.setattr(freeze_module, "compute_manifest_hash", spy)
    project = copy_project(tmp_path / "project")
    layout = Layout(project.root)
    retired = {  # an older version's items, kept in the item file for its dev split
        e.item.id for e in load_suite_items(layout, load_suite(layout, suite))
    }
    tools = declared_action_spaces(layout, suite)
    result = freeze(
        layout,
        suite,
        latest.version,
        keys=KeySpec(key_dir=project.key_dir),
        retire=sorted(retired - {i.id for i in latest.items}),  # an older version's items
        now=datetime.now(UTC),
        audit=FreezeAudit(tools=tools, skip_reason="refreeze check"),
    )
    assert result.status == "unchanged"  # identical content: nothing rewritten
    assert hashed and hashed[0]["families"] == recorded["families"]


DICT_TASK = """
from inspect_ai import Task, task
from inspect_ai.scorer import Score, accuracy, scorer


@scorer(metrics={"utility": [accuracy()], "security": [accuracy()]})
def dual():
    async def score(state, target):
        return Score(value={"utility": 1, "security": 0})

    return score


@task
def fam(dataset=None):
    return Task(dataset=list(dataset or []), scorer=dual())
"""
"""The demo family's task with a dict-valued scorer (keys `utility` and `security`)."""


def test_declaration_is_recorded_hashed_and_needs_a_major_bump(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    first = project.invoke("freeze", "demo", "--version", "1.0.0", "--json")
    assert first.exit_code == 0, first.stderr
    # the task now returns a dict; freeze checks the declaration against its scorer's keys
    (project.root / "tasks" / "fam" / "task.py").write_text(DICT_TASK, encoding="utf-8")
    path = project.root / "tasks" / "demo.toml"
    path.write_text(
        path.read_text() + 'score = "utility"\nscore_bounds = [0, 10]\n', encoding="utf-8"
    )
    patch = project.invoke("freeze", "demo", "--version", "1.0.1")
    assert patch.exit_code == 2
    assert "needs a major bump (at least 2.0.0)" in patch.stderr
    major = project.invoke("freeze", "demo", "--version", "2.0.0", "--json")
    assert major.exit_code == 0, major.stderr
    assert json_out(major)["manifest_hash"] != json_out(first)["manifest_hash"]
    manifest = read_manifest(project.root / "manifests" / "demo" / "2.0.0.json")
    (family,) = manifest.families
    assert (family.score, family.score_bounds) == ("utility", (0.0, 10.0))
    raw = json.loads((project.root / "manifests" / "demo" / "2.0.0.json").read_text())
    assert raw["families"][0]["score"] == "utility"
    assert raw["families"][0]["score_bounds"] == [0.0, 10.0]
    # another choice of score is another major version again
    path.write_text(path.read_text().replace('"utility"', '"security"'), encoding="utf-8")
    again = project.invoke("freeze", "demo", "--version", "2.1.0")
    assert again.exit_code == 2
    assert "needs a major bump (at least 3.0.0)" in again.stderr


@pytest.mark.parametrize(
    ("declaration", "words"),
    [
        ("score_bounds = [10, 0]\n", "finite low < high"),
        ("score_bounds = [0]\n", "score_bounds"),
        ('score = "two words"\n', "without spaces"),
        ('score = "/utility"\n', "score must name a scorer"),
        ('scores = "utility"\n', "families.score"),
    ],
)
def test_bad_declarations_are_refused(tmp_path: Path, declaration: str, words: str) -> None:
    project = make_project(tmp_path, toml=suite_toml() + declaration)
    result = project.invoke("freeze", "demo", "--version", "1.0.0")
    assert result.exit_code == 2
    assert words in result.stderr
    assert not (project.root / "manifests" / "demo" / "1.0.0.json").exists()
