"""Runs to report on: a probe project with two models, one run with injected faults and one
on the holdout split; and the reports the tests read, each made once per test session.

What each run is for, and so how small it can be (docs/design/test-speed.md, fifth pass):
10 dev and 10 holdout items (`n_per_stratum=10`); the baseline and the candidate at 2 epochs
(pass@k, pass^k and the variance split need repeated epochs); the faulty run at 3 epochs and
without retries (its injected faults stay harness errors, and leave some items with fewer
usable epochs than others, which the pass@k item counts must show); the holdout run at one
epoch (its only use is a report that must not carry holdout text).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import Project, json_out
from tests.run.conftest import make_probe_project
from tests.shared_build import build_once

N_PER_STRATUM = 10
"""Items per stratum of the probe project: 10 dev and 10 holdout items."""


@dataclass
class Reported:
    project: Project
    baseline: str
    candidate: str
    faulty: str
    holdout: str
    reports: Path
    """Where this process writes its own reports (the project is shared by the xdist workers)."""
    factory: pytest.TempPathFactory


def _run(project: Project, *args: str) -> str:
    result = project.invoke(
        "run", "probe@1.0.0", "--model", "fakeagent/x", "--no-progress", "--json", *args
    )
    assert result.exit_code in (0, 5), result.stderr
    return str(json_out(result)["run_id"])


def _build(root: Path) -> dict[str, str]:
    project = make_probe_project(root, n_per_stratum=N_PER_STRATUM)
    faults = ("--inject-faults", "0.3", "--max-retries", "0")
    return {
        "baseline": _run(project, "-M", "accuracy=0.5", "--epochs", "2"),
        "candidate": _run(project, "-M", "accuracy=0.9", "--epochs", "2"),
        "faulty": _run(project, "-M", "accuracy=0.9", "--epochs", "3", *faults),
        "holdout": _run(project, "--split", "holdout", "--epochs", "1"),
    }


@pytest.fixture(scope="module")
def reported(tmp_path_factory: pytest.TempPathFactory) -> Reported:
    """The four runs, made once per test session and shared by the xdist workers
    (tests/shared_build.py): the tests read the store and write reports to their own paths."""
    root, runs = build_once(tmp_path_factory, "report-runs", _build)
    return Reported(
        project=Project(root=root / "project", key_dir=root / "keys"),
        reports=tmp_path_factory.mktemp("reports"),
        factory=tmp_path_factory,
        **runs,
    )


def report_dir(reported: Reported, name: str, *runs: str) -> Path:
    """A report of `runs` made by this test into a directory of its own."""
    out = reported.reports / name
    result = reported.project.invoke("report", *runs, "--out", str(out))
    assert result.exit_code == 0, result.stderr
    return out


def shared_report(reported: Reported, name: str, *runs: str) -> Path:
    """The report of `runs`, made once per test session (`build_once`) for every test that
    reads it: the tests must only read the directory returned."""

    def build(root: Path) -> dict[str, str]:
        report_dir_path = root / "out"
        result = reported.project.invoke("report", *runs, "--out", str(report_dir_path))
        assert result.exit_code == 0, result.stderr
        return {"runs": " ".join(runs)}

    root, built = build_once(reported.factory, f"report-{name}", build)
    assert built["runs"] == " ".join(runs), (name, built)  # one name, one set of runs
    return root / "out"
