"""Environment health before any model score; numbers of unaudited suites marked (issue 13)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.audit.toy import toy_project
from tests.helpers import Project, json_out


def _run(project: Project, ref: str) -> dict:
    result = project.invoke("run", ref, "--model", "mockllm/model", "--no-progress", "--json")
    assert result.exit_code == 0, result.stderr
    return json_out(result)  # type: ignore[no-any-return]


# mockllm scores 0 everywhere: matplotlib warns that the pass@k plot has nothing to label
pytestmark = pytest.mark.filterwarnings("ignore:No artists with labels:UserWarning")


def test_numbers_of_a_suite_frozen_without_its_audit_are_marked_everywhere(
    tmp_path: Path,
) -> None:
    project = toy_project(tmp_path, [("fam", "none")], suite="solo")
    assert project.invoke("freeze", "solo", "--version", "1.0.0").exit_code == 0  # skipped
    run = _run(project, "solo@1.0.0")
    assert run["audit"]["status"] == "skipped"
    assert run["audit"]["marker"] == "GRADER AUDIT SKIPPED"
    text = project.invoke("run", "solo@1.0.0", "--model", "mockllm/model", "--no-progress")
    assert "GRADER AUDIT SKIPPED: solo@1.0.0 frozen without the grader audit" in text.stdout
    runs = json_out(project.invoke("runs", "--json"))
    assert {r["audit"] for r in runs} == {"skipped"}
    assert "GRADER AUDIT SKIPPED" in project.invoke("runs").stdout
    score = json_out(project.invoke("score", run["run_id"], "--json"))
    assert score["audit"]["status"] == "skipped"
    assert score["notes"][0].startswith("GRADER AUDIT SKIPPED: run ")
    out = tmp_path / "report"
    report = json_out(
        project.invoke("report", run["run_id"], "--out", str(out), "--json", "--allow-partial")
    )
    assert report["unaudited_runs"][0]["run_id"] == run["run_id"]
    (health,) = report["environment_health"]
    assert (health["suite"], health["family"], health["audit"]["status"]) == (
        "solo",
        "fam",
        "skipped",
    )
    assert health["runs"][0]["harness_error_rate"] == 0.0
    html = (out / "index.html").read_text(encoding="utf-8")
    assert html.index("Environment health") < html.index('<section id="runs">')
    assert 'id="audit-banner"' in html and "GRADER AUDIT SKIPPED" in html
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert markdown.index("## Environment health") < markdown.index("## Run ")


def test_an_audited_suite_shows_its_checks_and_no_marker(tmp_path: Path) -> None:
    project = toy_project(tmp_path, [("fam", "none")], suite="solo")
    project.audit = True
    assert project.invoke("freeze", "solo", "--version", "1.0.0").exit_code == 0
    run = _run(project, "solo@1.0.0")
    assert run["audit"]["status"] == "passed" and run["audit"]["marker"] is None
    out = tmp_path / "report"
    report = json_out(project.invoke("report", run["run_id"], "--out", str(out), "--json"))
    assert report["unaudited_runs"] == []
    (health,) = report["environment_health"]
    checks = {c["check"] + (f"/{c['policy']}" if c["policy"] else ""): c for c in health["checks"]}
    assert checks["oracle"]["status"] == "passed"
    assert checks["exploit/claim_success"]["status"] == "passed"
    html = (out / "index.html").read_text(encoding="utf-8")
    assert 'data-table="audit-checks"' in html and 'id="audit-banner"' not in html
