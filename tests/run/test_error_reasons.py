"""Harness error reasons are visible where a user looks: score, its JSON, the report (11.4)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import Project, json_out
from tests.run.conftest import make_probe_project
from tests.shared_build import build_once


@dataclass
class Faulted:
    project: Project
    faulty: str
    """an invalid run: 8 items x 2 epochs, 30% injected faults, no retries"""
    clean: str
    """a valid run of the same 8 items"""
    summary: str
    """what `run` printed for the faulty run (text, not --json)"""


def _build(root: Path) -> dict[str, str]:
    project = make_probe_project(root)
    run = project.invoke(
        "run", "probe@1.0.0", "--model", "fakeagent/x", "--epochs", "2", "--limit", "8",
        "--no-progress", "--inject-faults", "0.3", "--max-retries", "0",
    )  # fmt: skip
    assert run.exit_code == 5, run.stderr
    clean = project.invoke("run", "probe@1.0.0", "--model", "fakeagent/x", "--limit", "8", "--json")
    assert clean.exit_code == 0, clean.stderr
    listed = json_out(project.invoke("runs", "--json"))
    (faulty,) = [r["run_id"] for r in listed if r["valid"] is False]
    return {"faulty": faulty, "clean": json_out(clean)["run_id"], "summary": run.stdout}


@pytest.fixture(scope="module")
def faulted(tmp_path_factory: pytest.TempPathFactory) -> Faulted:
    """The two runs, made once per session (tests/shared_build.py); the tests only read them
    and write reports to paths of their own."""
    root, built = build_once(tmp_path_factory, "error-reasons", _build)
    return Faulted(Project(root=root / "project", key_dir=root / "keys"), **built)


def test_score_and_report_show_the_top_reasons_with_an_example_and_advice(
    faulted: Faulted, tmp_path: Path
) -> None:
    project, run_id = faulted.project, faulted.faulty
    scored = json_out(project.invoke("score", run_id, "--json"))
    top = scored["harness"]["top_errors"]
    assert top, "an invalid run must say why"
    assert {g["kind"] for g in top} == {"HarnessFault"}
    # every injected fault is in one of the groups (faults differ only by the tool named)
    assert sum(g["count"] for g in top) == scored["harness"]["errors_by_kind"]["HarnessFault"]
    assert [g["count"] for g in top] == sorted((g["count"] for g in top), reverse=True)
    assert top[0]["example_item"] and top[0]["example_epoch"] in (1, 2)
    assert "environment" in top[0]["advice"]

    text = project.invoke("score", run_id)
    assert "top harness error reasons" in text.stdout
    assert f"e.g. item {top[0]['example_item']}" in text.stdout
    assert "what to do:" in text.stdout

    out = tmp_path / "rep"
    report = project.invoke("report", run_id, "--out", str(out))
    assert report.exit_code == 0, report.stderr
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert "top harness error reasons" in markdown
    assert top[0]["example_item"] in markdown
    html = (out / "index.html").read_text(encoding="utf-8")
    assert 'data-table="top-errors"' in html


def test_run_summary_and_runs_show_the_top_reason(faulted: Faulted) -> None:
    assert "top harness error reasons:" in faulted.summary
    assert "HarnessFault" in faulted.summary and "what to do:" in faulted.summary
    assert "{" not in faulted.summary  # no raw dicts in the summary

    listed = {r["run_id"]: r for r in json_out(faulted.project.invoke("runs", "--json"))}
    faulty = listed[faulted.faulty]
    assert faulty["valid"] is False
    assert faulty["top_error"]["reason"].startswith("HarnessFault")
    assert faulty["top_error"]["count"] >= 1
    assert listed[faulted.clean]["top_error"] is None
    text = faulted.project.invoke("runs").stdout
    assert f"{faulty['run_id']}: most frequent harness error" in text
