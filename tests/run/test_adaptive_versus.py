"""`run --adaptive --versus RUN` end to end: the sequential comparison through inspect.

The stored runs and the candidates are real runs of the offline `fakeagent` (token usage set
on every output, so inspect needs no tokenizer) on the `probe` family's 20 dev items. The
sequential verdict is checked against the full fixed run's: the candidate run for 5 epochs
on every item, compared with the stored run by the paired t (`final_paired_test`, the claim
the sequential comparison stands for; docs/design/sequential.md).
"""

from __future__ import annotations

import numpy as np
import pytest

from evalsuite.analyse._adaptive_final import final_paired_test
from tests.helpers import Project, json_out
from tests.run.conftest import make_probe_project

RUN = ("run", "probe@1.0.0", "--model", "fakeagent/x", "--no-progress")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    return make_probe_project(tmp_path_factory.mktemp("versus"), n_per_stratum=20)


def _run(project: Project, *args: str) -> dict[str, object]:
    result = project.invoke(*RUN, *args, "--json")
    assert result.exit_code == 0, result.stderr
    out: dict[str, object] = json_out(result)
    return out


def _fixed_verdict(project: Project, base: str, full: str, margin: float) -> str:
    """The full fixed run's verdict: paired t on item-mean differences at 0.05."""
    store = project.store()
    means = [
        store.attempts(r).groupby("item_id")["score"].mean().sort_index() for r in (base, full)
    ]
    d = (means[1] - means[0]).to_numpy()
    return final_paired_test(d, np.full(d.size, 1 / d.size), alpha=0.05, margin=margin).verdict


@pytest.fixture(scope="module")
def weak_base(project: Project) -> str:
    """A stored 5-epoch run of a model that answers 30% of the time."""
    return str(_run(project, "-M", "accuracy=0.3", "--epochs", "5", "--seed", "1")["run_id"])


@pytest.fixture(scope="module")
def perfect_base(project: Project) -> str:
    """A stored 5-epoch run of a model that always answers."""
    return str(_run(project, "-M", "accuracy=1.0", "--epochs", "5", "--seed", "1")["run_id"])


def test_a_clearly_better_candidate_stops_early_with_better(
    project: Project, weak_base: str
) -> None:
    out = _run(project, "-M", "accuracy=1.0", "--adaptive", "--versus", weak_base, "--seed", "7")
    adaptive = out["adaptive"]
    assert isinstance(adaptive, dict)
    versus = adaptive["versus"]
    assert versus["verdict"] == "better"
    # early: an interim look (4 items per group, 3 attempts each) decides
    assert adaptive["calls"] < adaptive["budget"] // 2
    assert adaptive["stop_reason"].startswith(("look 1 of 5", "look 2 of 5"))
    # exactly the requested attempts ran, no more: the store holds the summary's calls
    frame = project.store().attempts(str(out["run_id"]))
    assert len(frame) == adaptive["calls"] == sum(r["attempts"] for r in adaptive["rounds"])
    # the method, the estimand and the seed are in the JSON and in the stored run
    stored = project.store().adaptive(str(out["run_id"]))
    assert stored is not None and stored["method"] == adaptive["method"]
    assert stored["estimand"] == "item_population" and stored["seed"] == 7
    spec = project.store().get_run(str(out["run_id"])).spec["adaptive"]
    assert spec["method"] == adaptive["method"] and spec["sequential"]["seed"] == 7
    # the full fixed run says the same
    full = str(_run(project, "-M", "accuracy=1.0", "--epochs", "5", "--seed", "7")["run_id"])
    assert _fixed_verdict(project, weak_base, full, margin=0.02) == "better"


def test_an_identical_candidate_ends_with_no_difference_like_the_full_run(
    project: Project, perfect_base: str
) -> None:
    # 20 items all solved by both: the zero-variance bounds at 20 items are about +-0.14
    # (rule of three), so "no difference" needs a margin wider than that, as in the fixed run
    out = _run(
        project, "-M", "accuracy=1.0", "--adaptive", "--versus", perfect_base,
        "--margin", "0.2", "--seed", "8",
    )  # fmt: skip
    adaptive = out["adaptive"]
    assert isinstance(adaptive, dict)
    assert adaptive["versus"]["verdict"] == "no_difference_beyond_margin"
    # every item solved in its 3 first-stage attempts: none extended to 5
    assert adaptive["calls"] == 3 * adaptive["items"] < adaptive["budget"]
    full = str(_run(project, "-M", "accuracy=1.0", "--epochs", "5", "--seed", "8")["run_id"])
    assert _fixed_verdict(project, perfect_base, full, margin=0.2) == (
        "no_difference_beyond_margin"
    )


def test_the_terminal_names_the_method_the_estimand_and_the_verdict(
    project: Project, weak_base: str
) -> None:
    result = project.invoke(
        *RUN, "-M", "accuracy=1.0", "--adaptive", "--versus", weak_base, "--seed", "9"
    )
    assert result.exit_code == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert "repeated 95.5% interval" in text
    assert "group_sequential_lan_demets_pocock" in text
    assert "estimand (item_population)" in text
    assert f"against run {weak_base}: better" in text


def test_harness_errors_are_excluded_and_counted(project: Project, weak_base: str) -> None:
    result = project.invoke(
        *RUN, "-M", "accuracy=1.0", "--adaptive", "--versus", weak_base, "--seed", "5",
        "--inject-faults", "0.3", "--json",
    )  # fmt: skip
    # over 5% of attempts are harness errors: the run is stored invalid and exits 5, as a
    # fixed run would
    assert result.exit_code == 5, result.stderr
    out = json_out(result)
    adaptive = out["adaptive"]
    counted = sum(r["harness_errors"] for r in adaptive["rounds"])
    assert counted == out["harness"]["harness_errors"] > 0
    assert out["valid"] is False
    # excluded: the comparison's calls count them, its estimates do not
    assert adaptive["calls"] == out["harness"]["planned"]
