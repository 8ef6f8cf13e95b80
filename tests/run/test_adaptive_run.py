"""`evalsuite run --adaptive` end to end (docs/design/adaptive.md).

Rounds run through inspect into one run; a holdout run takes one look, with its stopping
rule in the ledger; the flags' refusals.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evalsuite._core.layout import Layout
from evalsuite.holdout import read_ledger
from evalsuite.service import adaptive_file
from tests.helpers import Project, json_out
from tests.run.conftest import make_probe_project

BASE = ("run", "probe@1.0.0", "--model", "fakeagent/x", "-M", "accuracy=0.6", "--no-progress")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    return make_probe_project(tmp_path_factory.mktemp("adaptive"), n_per_stratum=6)


@pytest.fixture(scope="module")
def base_id(project: Project) -> str:
    """A stored 2-epoch run for the adaptive runs `--versus` it (they only read it)."""
    base = project.invoke(*BASE, "--epochs", "2", "--json")
    assert base.exit_code == 0, base.stderr
    run_id: str = json_out(base)["run_id"]
    return run_id


def test_adaptive_dev_run_plans_rounds_and_stops(project: Project) -> None:
    result = project.invoke(
        *BASE, "--adaptive", "--target-halfwidth", "0.3", "--max-epochs", "4", "--json"
    )
    assert result.exit_code == 0, result.stderr
    out = json_out(result)
    summary = out["adaptive"]
    assert summary["method"] == "stein_two_stage_equal_epochs+pilot_variance_satterthwaite_t"
    assert summary["estimand"] == "suite_items" and summary["interval"] == "few-stage"
    assert summary["rounds"][0]["attempts"] == 2 * summary["items"]  # the pilot: 2 epochs each
    assert summary["calls"] <= 4 * summary["items"]
    # equal epochs on every item (a random subset one more): never by an item's own outcomes
    per = summary["attempts_per_item"]
    assert per["max"] - per["min"] <= 1
    assert summary["target"]["reached"] == summary["stop_reason"].startswith("target")
    assert summary["stop_reason"].startswith(("target", "budget"))
    frame = project.store().attempts(out["run_id"])
    assert len(frame) == summary["calls"]
    assert out["harness"]["planned"] == summary["calls"]
    run = project.store().get_run(out["run_id"])
    assert run.status == "complete"
    assert run.spec["adaptive"]["target_halfwidth"] == 0.3
    # the summary is kept with the run in the store, not in the project's local state
    stored = project.store().adaptive(out["run_id"])
    assert stored is not None and stored["rounds"] == summary["rounds"]
    assert not adaptive_file(Layout(project.root), out["run_id"]).exists()
    # the report shows the rounds, the intervals and why the run stopped
    report_dir = project.root / "report-adaptive"
    made = project.invoke("report", out["run_id"], "--out", str(report_dir))
    assert made.exit_code == 0, made.stderr
    markdown = (report_dir / "report.md").read_text()
    assert "## Adaptive runs" in markdown
    assert f"| 1 | {2 * summary['items']} | {summary['items']} |" in markdown
    assert f"Stopped: {summary['stop_reason']}." in markdown
    html = (report_dir / "index.html").read_text()
    assert 'id="adaptive"' in html
    assert html.count('<tr><td class="num">') >= len(summary["rounds"])


def test_adaptive_holdout_run_is_one_look_with_its_rule(project: Project) -> None:
    result = project.invoke(
        *BASE,
        "--split",
        "holdout",
        "--adaptive",
        "--target-halfwidth",
        "0.3",
        "--max-calls",
        "40",
        "--json",
    )
    assert result.exit_code == 0, result.stderr
    out = json_out(result)
    assert len(out["adaptive"]["rounds"]) >= 2
    entries = [
        e
        for e in read_ledger(Layout(project.root).ledger_file("probe"))
        if e.run_id == out["run_id"]
    ]
    looks = [e for e in entries if e.kind == "access" and not e.resumed]
    assert len(looks) == 1
    assert looks[0].stopping_rule is not None
    assert looks[0].stopping_rule["target_halfwidth"] == 0.3
    assert looks[0].stopping_rule["max_calls"] == 40
    assert looks[0].stopping_rule["method"].startswith("stein_")
    assert looks[0].stopping_rule["estimand"] == "suite_items"


def test_adaptive_flags_without_adaptive_are_refused(project: Project) -> None:
    result = project.invoke(*BASE, "--target-halfwidth", "0.1")
    assert result.exit_code == 2
    assert "add --adaptive" in result.stderr


def test_adaptive_with_epochs_is_refused(project: Project) -> None:
    result = project.invoke(*BASE, "--adaptive", "--target-halfwidth", "0.1", "--epochs", "3")
    assert result.exit_code == 2
    assert "drop --epochs" in result.stderr


def test_adaptive_without_a_target_is_refused(project: Project) -> None:
    result = project.invoke(*BASE, "--adaptive")
    assert result.exit_code == 2
    assert "--target-halfwidth H" in result.stderr


def test_adaptive_versus_a_stored_run(project: Project, base_id: str) -> None:
    result = project.invoke(
        *BASE, "--adaptive", "--versus", base_id, "--max-calls", "8", "--seed", "3", "--json"
    )
    assert result.exit_code == 0, result.stderr
    adaptive = json_out(result)["adaptive"]
    versus = adaptive["versus"]
    assert versus["run_id"] == base_id
    # the sequential comparison (docs/design/sequential.md): method and estimand named
    assert adaptive["method"].startswith("group_sequential_lan_demets_pocock+")
    assert adaptive["estimand"] == "item_population" == versus["estimand"]
    assert adaptive["interval"] == "repeated" and adaptive["seed"] == 3
    assert adaptive["sequential"]["design"]["seed"] == 3
    assert versus["method"] == "paired_item_differences"
    # the contract's fields are kept: the whole alpha is the design's
    assert versus["alpha_sequence"] == pytest.approx(0.05)
    assert versus["alpha_final"] is None and versus["final_test"] is None
    assert versus["verdict"] in (
        "better", "worse", "no_difference_beyond_margin", "futile", "undecided"
    )  # fmt: skip
    # --max-calls 8 is fewer than the full 5-epoch run's attempts
    assert adaptive["budget"] == 8 < 5 * adaptive["items"]
    assert adaptive["calls"] <= 8
    if adaptive["stop_reason"].startswith("budget"):
        assert versus["verdict"] == "undecided"


def test_adaptive_versus_with_max_epochs_is_a_comparison_at_that_many_epochs(
    project: Project, base_id: str
) -> None:
    result = project.invoke(
        *BASE, "--adaptive", "--versus", base_id, "--max-epochs", "2", "--seed", "4", "--json"
    )
    assert result.exit_code == 0, result.stderr
    out = json_out(result)
    adaptive = out["adaptive"]
    frame = project.store().attempts(out["run_id"])
    # no item passes --max-epochs: the full run it stands for has 2 epochs on every item
    assert frame.groupby("item_id")["epoch"].max().max() <= 2
    assert adaptive["sequential"]["design"]["epochs"] == 2
    assert adaptive["method"].endswith("+fixed_epochs_2+paired_t")
    assert len(frame) == adaptive["calls"] <= 2 * adaptive["items"] == adaptive["budget"]
    assert adaptive["stop_reason"].startswith("look ")


def test_adaptive_versus_an_unknown_run_is_refused(project: Project) -> None:
    result = project.invoke(*BASE, "--adaptive", "--versus", "no-such-run")
    assert result.exit_code == 2
    assert "no-such-run" in result.stderr


@pytest.mark.parametrize(
    ("status", "valid", "error", "message"),
    [
        ("running", None, "UsageError", "is still running and is not complete"),
        ("interrupted", None, "UsageError", "was interrupted and is not complete"),
        ("complete", False, "InvalidRunError", "is invalid"),
    ],
)
def test_adaptive_versus_a_run_not_complete_or_invalid_is_refused(
    tmp_path: Path, status: str, valid: bool | None, error: str, message: str
) -> None:
    """`--versus` a sharded run whose other shards had not finished (or an interrupted run)
    paired the adaptive run with the attempts that happened to be stored, and gave a verdict
    with exit 0; `compare` refuses such runs, and so does `--versus` now."""
    from types import SimpleNamespace

    from evalsuite import errors
    from evalsuite.service import versus_results
    from evalsuite.store import RunRecord, Store

    store = Store(f"sqlite:///{tmp_path / 'results.sqlite'}")
    store.create_run(
        RunRecord(
            run_id="stored",
            model="m/x",
            epochs=2,
            planned=4,
            status=status,  # type: ignore[arg-type]
            source="evalsuite",
            started_at="2026-12-01T00:00:00+00:00",
            suite="probe",
            version="1.0.0",
            split="dev",
            valid=valid,
        )
    )
    spec = SimpleNamespace(suite="probe", version="1.0.0", split="dev")
    with pytest.raises(getattr(errors, error), match=message):
        versus_results(store, "stored", spec, [])  # type: ignore[arg-type]


def test_item_weights_share_each_stratum_weight() -> None:
    from types import SimpleNamespace

    from evalsuite.errors import UsageError
    from evalsuite.service import item_weights

    items = [SimpleNamespace(stratum=s) for s in ("a", "a", "b")]
    weights = item_weights(items, {"a": 0.5, "b": 0.5})  # type: ignore[arg-type]
    assert list(weights) == [0.25, 0.25, 0.5]
    with pytest.raises(UsageError, match="no deployment weight for stratum 'b'"):
        item_weights(items, {"a": 1.0})  # type: ignore[arg-type]


def test_an_adaptive_run_says_its_rounds_not_an_epoch_count(project: Project) -> None:
    result = project.invoke(*BASE, "--adaptive", "--target-halfwidth", "0.3", "--max-epochs", "2")
    assert result.exit_code == 0, result.stderr
    assert "epoch(s)" not in result.stdout
    assert "adaptive, " in result.stdout and " round(s) · seed " in result.stdout
    assert "plain mean over all rounds' scored and limit attempts" in result.stdout
    method = "stein_two_stage_equal_epochs+pilot_variance_satterthwaite_t"
    assert f"adaptive ({method}):" in result.stdout
    text = " ".join(result.stdout.split())
    assert "few-stage 95% interval" in text
    assert "estimand (suite_items)" in text and "Welch-Satterthwaite" in text


def test_a_target_run_counts_harness_errors_and_excludes_them(project: Project) -> None:
    result = project.invoke(
        *BASE, "--adaptive", "--target-halfwidth", "0.2", "--max-epochs", "3",
        "--inject-faults", "0.3", "--json",
    )  # fmt: skip
    assert result.exit_code == 5, result.stderr  # too many harness errors: invalid, as fixed
    out = json_out(result)
    adaptive = out["adaptive"]
    counted = sum(r["harness_errors"] for r in adaptive["rounds"])
    assert counted == out["harness"]["harness_errors"] > 0
    assert adaptive["calls"] == out["harness"]["planned"]
    assert adaptive["estimand"] == "suite_items"


def test_adaptive_population_target_is_refused_when_epochs_cannot_reach_it(
    project: Project,
) -> None:
    """A population target far below the spread between items: refused after the pilot."""
    result = project.invoke(
        *BASE,
        "--adaptive",
        "--target-halfwidth",
        "0.01",
        "--estimand",
        "population",
        "--json",
    )
    assert result.exit_code == 0, result.stderr
    summary = json_out(result)["adaptive"]
    assert summary["estimand"] == "item_population"
    assert summary["method"] == "stein_few_stage_equal_epochs+item_means_t"
    assert summary["calls"] == 2 * summary["items"]  # the pilot only
    assert summary["target"]["refused"] is True
    population = summary["target"]["population"]
    assert population["reachable"] is False and population["items_needed"] > summary["items"]
    assert "more epochs cannot reach" in summary["stop_reason"]
    assert any("did not reach the target" in c for c in summary["caveats"])


def test_adaptive_estimand_flag_refusals(project: Project) -> None:
    alone = project.invoke(*BASE, "--estimand", "population")
    assert alone.exit_code == 2 and "add --adaptive" in alone.stderr
    versus = project.invoke(*BASE, "--adaptive", "--versus", "x", "--estimand", "population")
    assert versus.exit_code == 2 and "applies to --target-halfwidth" in versus.stderr
    small = project.invoke(*BASE, "--adaptive", "--target-halfwidth", "0.1", "--max-calls", "3")
    assert small.exit_code == 2 and "raise --max-calls" in small.stderr
    one = project.invoke(*BASE, "--adaptive", "--target-halfwidth", "0.1", "--max-epochs", "1")
    assert one.exit_code == 2 and "--max-epochs 2 or more" in one.stderr
