"""Issue 10 item 23: partial runs (`run --limit N`) are flagged everywhere and never used for
comparisons or validity without --allow-partial; one validity table never mixes splits."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import Project, json_out
from tests.run.conftest import make_probe_project
from tests.shared_build import build_once

ACCURACY = {"fakeagent/v0": 0.3, "fakeagent/v1": 0.5, "fakeagent/v2": 0.7}
"""Three models' full runs; v2's latest run is then a 5-item run that scores far above it."""


@dataclass
class Runs:
    project: Project
    full: dict[str, str]
    """model -> its full run"""
    partial: str
    """v2's 5-item run, after its full one"""

    @property
    def full_a(self) -> str:
        return self.full["fakeagent/v0"]

    @property
    def full_b(self) -> str:
        return self.full["fakeagent/v2"]


def _run(project: Project, model: str, accuracy: float, *args: str) -> str:
    result = project.invoke(
        "run",
        "probe@1.0.0",
        "--model",
        model,
        "-M",
        f"accuracy={accuracy}",
        "--no-progress",
        "--json",
        *args,
    )
    assert result.exit_code == 0, result.stderr
    return str(json_out(result)["run_id"])


def _build(root: Path) -> dict[str, object]:
    """10 dev items (one epoch each: nothing here needs repeated epochs)."""
    project = make_probe_project(root, n_per_stratum=10)
    full = {m: _run(project, m, a) for m, a in ACCURACY.items()}
    return {"full": full, "partial": _run(project, "fakeagent/v2", 1.0, "--limit", "5")}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    """The runs, made once per session (tests/shared_build.py): the tests only read the store
    and write reports to paths of their own; a test that adds to the store takes a copy."""
    root, built = build_once(tmp_path_factory, "partial-runs", _build)
    return Runs(Project(root=root / "project", key_dir=root / "keys"), **built)


def _copy(runs: Runs, tmp_path: Path) -> Project:
    """A copy of the shared project and its keys, for a test that adds to the store."""
    shutil.copytree(runs.project.root, tmp_path / "project")
    if runs.project.key_dir.exists():
        shutil.copytree(runs.project.key_dir, tmp_path / "keys")
    return Project(root=tmp_path / "project", key_dir=tmp_path / "keys")


def test_runs_and_score_flag_a_partial_run(runs: Runs) -> None:
    listed = {r["run_id"]: r for r in json_out(runs.project.invoke("runs", "--json"))}
    assert listed[runs.partial]["partial"] is True
    assert (listed[runs.partial]["n_items_run"], listed[runs.partial]["n_items_split"]) == (5, 10)
    assert listed[runs.partial]["item_limit"] == 5
    assert listed[runs.full_a]["partial"] is False
    assert listed[runs.full_a]["n_items_run"] == listed[runs.full_a]["n_items_split"] == 10
    table = runs.project.invoke("runs")
    assert "PARTIAL" in table.stdout
    payload = json_out(runs.project.invoke("score", runs.partial, "--json"))
    assert payload["partial"] is True
    assert (payload["n_items_run"], payload["n_items_split"]) == (5, 10)
    assert any("is PARTIAL" in note for note in payload["notes"])
    text = runs.project.invoke("score", runs.partial)
    assert text.exit_code == 0
    # the warnings lead the output (the suite's audit marker, then the partial run)
    head = text.stdout.lstrip().splitlines()[:3]
    assert any(line.startswith("PARTIAL RUN: 5 of 10 dev items") for line in head)
    assert json_out(runs.project.invoke("score", runs.full_a, "--json"))["partial"] is False


def test_compare_refuses_a_partial_run_without_the_flag(runs: Runs) -> None:
    refused = runs.project.invoke("compare", runs.full_a, runs.partial, "--json")
    assert refused.exit_code == 2
    assert f"run {runs.partial} is PARTIAL: 5 of 10 dev items" in refused.stderr
    assert "--allow-partial" in refused.stderr
    allowed = runs.project.invoke("compare", runs.full_a, runs.partial, "--allow-partial", "--json")
    assert allowed.exit_code == 0, allowed.stderr
    payload = json_out(allowed)
    assert payload["partial_runs"] == [runs.partial]
    assert payload["n_items"] == 5
    assert payload["runs"]["candidate"]["partial"] is True
    assert any("--allow-partial" in note for note in payload["notes"])
    complete = json_out(runs.project.invoke("compare", runs.full_a, runs.full_b, "--json"))
    assert complete["partial_runs"] == []


def test_report_flags_partial_runs_and_compares_them_only_when_asked(runs: Runs) -> None:
    out = runs.project.root / "reports" / "partial"
    result = runs.project.invoke("report", runs.full_a, runs.partial, "--out", str(out))
    assert result.exit_code == 0, result.stderr
    payload = json.loads((out / "report.json").read_text())
    assert payload["partial_runs"] == [runs.partial]
    assert [r["partial"] for r in payload["runs"]] == [False, True]
    assert "PARTIAL" in payload["comparisons"][0]["skipped"]
    html = (out / "index.html").read_text()
    assert 'id="partial-banner"' in html
    assert "**PARTIAL RUN(S)" in (out / "report.md").read_text()
    out2 = runs.project.root / "reports" / "partial-allowed"
    allowed = runs.project.invoke(
        "report", runs.full_a, runs.partial, "--allow-partial", "--out", str(out2)
    )
    assert allowed.exit_code == 0, allowed.stderr
    comparison = json.loads((out2 / "report.json").read_text())["comparisons"][0]
    assert "skipped" not in comparison
    assert comparison["partial_runs"] == [runs.partial]


def _outcomes(project: Project, tmp: Path, models: dict[str, float]) -> None:
    path = tmp / "outcomes.csv"
    path.write_text(
        "model,metric,value,n\n" + "".join(f"{m},succ,{v},400\n" for m, v in models.items())
    )
    assert project.invoke("validity", "import", str(path)).exit_code == 0


def test_validity_uses_no_partial_run_and_never_mixes_splits(runs: Runs, tmp_path: Path) -> None:
    project = _copy(runs, tmp_path)
    full, partial = runs.full, runs.partial
    # v2's latest run is a 5-item run that scores far above its full run
    _outcomes(project, tmp_path, {m: 0.2 + 0.7 * a for m, a in ACCURACY.items()})
    args = ("validity", "report", "--suite", "probe@1.0.0", "--metric", "succ", "--json")
    payload = json_out(project.invoke(*args))
    assert payload["runs_used"] == full
    assert payload["partial_runs_left_out"] == [partial]
    assert payload["split"] == "dev"
    with_partial = json_out(project.invoke(*args, "--allow-partial"))
    assert with_partial["runs_used"]["fakeagent/v2"] == partial
    assert with_partial["partial_runs"] == [partial]
    # a holdout run of one model: the table would mix splits, so it must be chosen
    holdout = project.invoke(
        "run",
        "probe@1.0.0",
        "--model",
        "fakeagent/v1",
        "--split",
        "holdout",
        "--no-progress",
        "--json",
    )
    assert holdout.exit_code == 0, holdout.stderr
    mixed = project.invoke(*args)
    assert mixed.exit_code == 2
    assert "more than one split" in mixed.stderr
    assert "--split dev or --split holdout" in mixed.stderr
    dev = json_out(project.invoke(*args, "--split", "dev"))
    assert dev["split"] == "dev" and dev["runs_used"] == full
    only_holdout = json_out(project.invoke(*args, "--split", "holdout"))
    assert set(only_holdout["runs_used"]) == {"fakeagent/v1"}
