"""`check_comparable` and the payloads built on it (evalsuite/service/_payloads.py).

A run still being written (a sharded run whose other shards have not finished, an unsharded
run in progress in another process) or interrupted holds only the attempts that happened to
finish first. Comparing it pairs a subset of the items chosen by timing, so `compare` and the
report refuse it (exit 2) unless `--allow-partial` asks for it, and every view says the run is
not complete instead of calling it invalid (docs/design/sharded-runs.md, "When the run is
complete"; docs/design/partial-runs.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalsuite._core.layout import Layout
from evalsuite.cli import cli
from evalsuite.errors import UsageError
from evalsuite.report import build_report, render_html, render_markdown
from evalsuite.service import (
    AnalysisOptions,
    compare,
    comparison_view,
    score,
    score_view,
)
from evalsuite.service._payloads import check_comparable
from evalsuite.store import RunRecord, Store
from tests.service.test_views import _store


def _record(run_id: str, status: str) -> RunRecord:
    return RunRecord(
        run_id=run_id,
        model=f"model-{run_id}",
        epochs=1,
        planned=10,
        status=status,  # type: ignore[arg-type]
        source="csv",
        started_at="2026-12-01T00:00:00+00:00",
        valid=True if status == "complete" else None,
    )


@pytest.mark.parametrize("status", ["running", "interrupted"])
def test_a_run_that_is_not_complete_is_refused_without_allow_partial(status: str) -> None:
    base, cand = _record("a", "complete"), _record("b", status)
    with pytest.raises(UsageError, match=r"run b .*not complete.*--allow-partial") as caught:
        check_comparable(base, cand, allow_invalid=False)
    assert ("interrupted" in str(caught.value)) == (status == "interrupted")
    # the same with the runs the other way round
    with pytest.raises(UsageError, match="run b"):
        check_comparable(cand, base, allow_invalid=True)
    notes = check_comparable(base, cand, allow_invalid=False, allow_partial=True)
    assert any("--allow-partial" in n and "run b" in n for n in notes)


def test_complete_runs_are_compared_as_before() -> None:
    notes = check_comparable(
        _record("a", "complete"), _record("b", "complete"), allow_invalid=False
    )
    assert not any("not complete" in n for n in notes)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".evalsuite").mkdir()
    return tmp_path


def _running(project: Path) -> Store:
    """`run-a` complete, `run-b` still running (as a sharded run's row is until every shard
    finished: status running, its health not judged)."""
    store = _store(project, weights=None)
    store.update_run("run-a", valid=True, error_rate=0.05)
    store.update_run("run-b", status="running", valid=None, error_rate=None)
    return store


def test_compare_refuses_a_running_run_with_exit_2_and_json(project: Path) -> None:
    _running(project)
    runner = CliRunner()
    result = runner.invoke(cli, ["--root", str(project), "compare", "run-a", "run-b", "--json"])
    assert result.exit_code == 2, result.output
    payload = json.loads(result.stdout)
    assert payload["exit_code"] == 2
    assert "run run-b is still running" in payload["message"]
    allowed = runner.invoke(
        cli, ["--root", str(project), "compare", "run-a", "run-b", "--allow-partial", "--json"]
    )
    assert allowed.exit_code == 0, allowed.output
    marked = json.loads(allowed.stdout)
    assert any("run run-b is still running" in n for n in marked["notes"])
    assert "NOT COMPLETE" in marked["headline"] and "INVALID" not in marked["headline"]


def test_the_report_does_not_compare_a_running_run(project: Path) -> None:
    store = _running(project)
    report = build_report(
        store, Layout(project), ["run-a", "run-b"], AnalysisOptions(), validity=[]
    )
    (comparison,) = report.payload["comparisons"]
    assert "still running" in comparison["skipped"]
    # not complete, never "invalid": its health is not judged until it finishes
    assert report.payload["invalid_runs"] == []
    assert report.payload["unfinished_runs"] == ["run-b"]
    markdown = render_markdown(report, {})
    assert "RUN(S) NOT COMPLETE: run-b" in markdown and "INVALID" not in markdown
    assert "## Run run-b · cand-model · **NOT COMPLETE**" in markdown
    # the run's section is its score view: the alert says it is not complete
    assert "RUN NOT COMPLETE: cand-model (run run-b) is still running" in markdown
    html = render_html(report)
    assert 'id="unfinished-banner"' in html and "INVALID" not in html
    assert "NOT COMPLETE (running)" in html and "not judged (running)" in html
    partial = build_report(
        store,
        Layout(project),
        ["run-a", "run-b"],
        AnalysisOptions(),
        validity=[],
        allow_partial=True,
    )
    assert "skipped" not in partial.payload["comparisons"][0]


def test_score_of_a_running_run_says_so_instead_of_invalid(project: Path) -> None:
    store = _running(project)
    view = score_view(score(store, "run-b", AnalysisOptions(), layout=Layout(project)))
    assert any(a.startswith("RUN NOT COMPLETE") for a in view.alerts)
    assert not any("too many harness errors" in a for a in view.alerts)
    result = CliRunner().invoke(cli, ["--root", str(project), "score", "run-b"])
    assert result.exit_code == 0, result.output
    assert "is still running and is not complete" in result.stderr
    assert "is INVALID" not in result.stderr


def test_compare_payload_with_allow_partial_marks_the_running_run(project: Path) -> None:
    store = _running(project)
    payload = compare(
        store, "run-a", "run-b", AnalysisOptions(), allow_invalid=False, allow_partial=True
    ).to_dict()
    assert payload["runs"]["candidate"]["status"] == "running"
    assert payload["invalid_runs"] == []


def test_score_json_epochs_are_the_planned_ones_and_the_usable_ones_beside(
    project: Path,
) -> None:
    # issue 28 item 10: a run planned at 4 epochs that stored only 2 per item (interrupted,
    # or planned attempts that never ran) said `epochs: 2`, the usable epochs, under the
    # contract's name for the planned ones
    from tests.analyse.test_scale_parity import attempts, stored

    store = Store(f"sqlite:///{project / '.evalsuite' / 'results.sqlite'}")
    frame = attempts(6, epochs=2)
    stored(store, frame, "run-a", 4 * 40)  # the record plans 4 epochs of 40 items
    assert store.get_run("run-a").epochs == 4
    result = score(store, "run-a", AnalysisOptions(seed=1))
    payload = result.to_dict()
    assert payload["epochs"] == 4
    usable = frame[frame["outcome"] != "harness_error"].groupby("item_id").size().max()
    assert payload["epochs_usable"] == usable == 2
    view = score_view(result)
    assert view.to_dict()["epochs"] == 4
    assert "4 epoch(s) planned, at most 2 usable per item" in view.title


def test_compare_says_when_its_intervals_are_bounded_to_minus_one_one(project: Path) -> None:
    # issue 28 item 10: three items a stratum, differences (-1, -1, +1) in each: the t
    # interval and the gate's lower bound leave [-1, 1]; they are bounded, and said so
    from tests.analyse.conftest import make_attempts
    from tests.analyse.test_scale_parity import stored

    store = Store(f"sqlite:///{project / '.evalsuite' / 'results.sqlite'}")
    strata = ["s0"] * 3 + ["s1"] * 3
    base = make_attempts([[1.0], [1.0], [0.0]] * 2, run_id="run-a", strata=strata)
    cand = make_attempts([[0.0], [0.0], [1.0]] * 2, run_id="run-b", strata=strata)
    for frame, run_id in ((base, "run-a"), (cand, "run-b")):
        stored(store, frame.assign(cluster=None, item_hash=None), run_id, 6)
        store.update_run(run_id, epochs=1, weights={"s0": 0.5, "s1": 0.5})
    result = compare(store, "run-a", "run-b", AnalysisOptions(seed=1), allow_invalid=True)
    view = comparison_view(result)
    payload = result.to_dict()
    assert payload["weighted"]["ci"][0] == -1.0 and payload["weighted"]["clipped"]
    assert any("deployment-weighted t interval" in c and "[-1, 1]" in c for c in view.caveats)
    assert payload["ci"][0] == -1.0
    assert any(c.startswith("the 95% t interval of the difference") for c in view.caveats)
