"""Runs to report on: a probe project with two models, and one with injected faults."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import Project, json_out
from tests.run.conftest import make_probe_project
from tests.shared_build import build_once


@dataclass
class Reported:
    project: Project
    baseline: str
    candidate: str
    faulty: str
    holdout: str
    reports: Path
    """Where this process writes its reports (the project is shared by the xdist workers)."""


def _run(project: Project, *args: str) -> str:
    result = project.invoke(
        "run", "probe@1.0.0", "--model", "fakeagent/x", "--no-progress", "--json", *args
    )
    assert result.exit_code in (0, 5), result.stderr
    return str(json_out(result)["run_id"])


def _build(root: Path) -> dict[str, str]:
    project = make_probe_project(root)
    return {
        "baseline": _run(project, "-M", "accuracy=0.5", "--epochs", "3"),
        "candidate": _run(project, "-M", "accuracy=0.9", "--epochs", "3"),
        "faulty": _run(project, "-M", "accuracy=0.9", "--epochs", "3", "--inject-faults", "0.3"),
        "holdout": _run(project, "--split", "holdout", "--epochs", "2"),
    }


@pytest.fixture(scope="module")
def reported(tmp_path_factory: pytest.TempPathFactory) -> Reported:
    """The four runs, made once per test session and shared by the xdist workers
    (tests/shared_build.py): the tests read the store and write reports to their own paths."""
    root, runs = build_once(tmp_path_factory, "report-runs", _build)
    return Reported(
        project=Project(root=root / "project", key_dir=root / "keys"),
        reports=tmp_path_factory.mktemp("reports"),
        **runs,
    )


def report_dir(reported: Reported, name: str, *runs: str) -> Path:
    out = reported.reports / name
    result = reported.project.invoke("report", *runs, "--out", str(out))
    assert result.exit_code == 0, result.stderr
    return out
