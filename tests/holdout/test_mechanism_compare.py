"""`compare` of holdout runs a reusable-holdout mechanism answered (issue 36): the released
view shows the two released numbers, which one the mechanism ranks higher and that no paired
interval is given; it never reads the sealed exact scores. Temporary projects, own key dirs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalsuite._core.layout import Layout
from evalsuite.holdout import read_ledger
from evalsuite.service import released_comparison
from evalsuite.store import Store
from tests.helpers import Project, json_out
from tests.run.conftest import make_probe_project
from tests.run.processes import store_of

HOLDOUT = ("run", "probe@1.0.0", "--split", "holdout", "--model", "fakeagent/x")
QUIET = ("--limit", "2", "--no-progress", "--json")


def _two_ladder_runs(tmp_path: Path) -> tuple[Project, str, str]:
    project = make_probe_project(tmp_path, n_per_stratum=4)
    ids = []
    for _ in range(2):
        run = project.invoke(*HOLDOUT, *QUIET, "--mechanism", "ladder", "--ladder-step", "0.25")
        assert run.exit_code == 0, run.stderr
        ids.append(json_out(run)["run_id"])
    return project, ids[0], ids[1]


def _released(project: Project) -> dict[str, float]:
    entries = read_ledger(project.root / "holdout" / "probe" / "ACCESS.jsonl")
    return {
        e.run_id: e.mechanism["answer"]["released"]
        for e in entries
        if e.kind == "answer" and e.mechanism
    }


def test_compare_shows_the_released_values_and_no_interval(tmp_path: Path) -> None:
    project, first, second = _two_ladder_runs(tmp_path)
    released = _released(project)
    result = project.invoke("compare", first, second, "--json")
    assert result.exit_code == 0, result.stderr
    view = json_out(result)
    assert view["view"] == "released" and view["interval"] is None
    assert (view["baseline"], view["candidate"]) == (first, second)
    assert view["released"]["baseline"]["released"] == released[first]
    assert view["released"]["candidate"]["released"] == released[second]
    assert view["same_scope"] is True
    expected = (
        "tied"
        if released[first] == released[second]
        else ("candidate_higher" if released[second] > released[first] else "baseline_higher")
    )
    assert view["ranking"] == expected
    assert not {"diff", "ci", "p_value", "mean"} & set(view)  # nothing exact, no interval
    assert any("No paired interval" in c for c in view["caveats"])

    text = project.invoke("compare", first, second)
    assert text.exit_code == 0, text.stderr
    assert "(released)" in text.stdout and "No paired interval" in text.stdout
    gated = project.invoke("compare", first, second, "--gate", "noninferior", "--margin", "0.1")
    assert gated.exit_code == 2 and "paired interval" in gated.stderr


def test_the_released_view_never_reads_attempts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, first, second = _two_ladder_runs(tmp_path)
    store = store_of(project)

    def sealed(*_: object, **__: object) -> None:
        raise AssertionError("the released view read a sealed run's attempts")

    for name in ("attempts", "attempt_columns", "cache_columns"):
        monkeypatch.setattr(Store, name, sealed)
    view = released_comparison(Layout(project.root), store, first, second)
    assert view is not None and view.to_dict()["interval"] is None


def test_a_sealed_run_against_an_unanswered_run_is_refused_until_revealed(
    tmp_path: Path,
) -> None:
    project, first, _ = _two_ladder_runs(tmp_path)
    plain = project.invoke(*HOLDOUT, *QUIET)
    assert plain.exit_code == 0, plain.stderr
    exact_run = json_out(plain)["run_id"]
    refused = project.invoke("compare", exact_run, first, "--json")
    assert refused.exit_code == 7
    assert "no released number" in refused.stderr and f"holdout reveal {first}" in refused.stderr
    reveal = project.invoke("holdout", "reveal", first, "--reason", "paired check")
    assert reveal.exit_code == 0, reveal.stderr
    paired = project.invoke("compare", exact_run, first, "--json", "--allow-partial")
    assert paired.exit_code == 0, paired.stderr
    assert "diff" in json.loads(paired.stdout) and "view" not in json.loads(paired.stdout)
