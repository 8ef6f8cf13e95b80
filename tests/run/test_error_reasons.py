"""Harness error reasons are visible where a user looks: score, its JSON, the report (11.4)."""

from __future__ import annotations

from evalsuite._core.layout import Layout
from tests.helpers import Project, json_out


def test_score_and_report_show_the_top_reasons_with_an_example_and_advice(
    probe_project: Project,
) -> None:
    run = probe_project.invoke(
        "run", "probe@1.0.0", "--model", "fakeagent/x", "--epochs", "2", "--limit", "8",
        "--json", "--no-progress", "--inject-faults", "0.3", "--max-retries", "0",
    )  # fmt: skip
    assert run.exit_code == 5, run.stderr
    run_id = json_out(run)["run_id"]

    scored = json_out(probe_project.invoke("score", run_id, "--json"))
    top = scored["harness"]["top_errors"]
    assert top, "an invalid run must say why"
    assert {g["kind"] for g in top} == {"HarnessFault"}
    # every injected fault is in one of the groups (faults differ only by the tool named)
    assert sum(g["count"] for g in top) == scored["harness"]["errors_by_kind"]["HarnessFault"]
    assert [g["count"] for g in top] == sorted((g["count"] for g in top), reverse=True)
    assert top[0]["example_item"] and top[0]["example_epoch"] in (1, 2)
    assert "environment" in top[0]["advice"]

    text = probe_project.invoke("score", run_id)
    assert "top harness error reasons" in text.stdout
    assert f"e.g. item {top[0]['example_item']}" in text.stdout
    assert "what to do:" in text.stdout

    out = Layout(probe_project.root).root / "rep"
    report = probe_project.invoke("report", run_id, "--out", str(out))
    assert report.exit_code == 0, report.stderr
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert "Top harness error reasons" in markdown
    assert top[0]["example_item"] in markdown
    html = (out / "index.html").read_text(encoding="utf-8")
    assert 'data-table="top-errors"' in html


def test_run_summary_and_runs_show_the_top_reason(probe_project: Project) -> None:
    run = probe_project.invoke(
        "run", "probe@1.0.0", "--model", "fakeagent/x", "--limit", "8", "--no-progress",
        "--inject-faults", "0.3", "--max-retries", "0",
    )  # fmt: skip
    assert run.exit_code == 5
    assert "top harness error reasons:" in run.stdout
    assert "HarnessFault" in run.stdout and "what to do:" in run.stdout
    assert "{" not in run.stdout  # no raw dicts in the summary

    clean = probe_project.invoke(
        "run", "probe@1.0.0", "--model", "fakeagent/x", "--limit", "8", "--json"
    )
    listed = {r["run_id"]: r for r in json_out(probe_project.invoke("runs", "--json"))}
    faulty = next(r for r in listed.values() if r["valid"] is False)
    assert faulty["top_error"]["reason"].startswith("HarnessFault")
    assert faulty["top_error"]["count"] >= 1
    assert listed[json_out(clean)["run_id"]]["top_error"] is None
    text = probe_project.invoke("runs").stdout
    assert f"{faulty['run_id']}: most frequent harness error" in text
