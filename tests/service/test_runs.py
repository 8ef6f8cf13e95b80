"""`service.list_runs`: the stored runs as a typed result with one view (issue 30)."""

from __future__ import annotations

from pathlib import Path

from evalsuite._core.layout import Layout
from evalsuite.service import RunListing, RunsResult, list_runs, runs_view
from tests.helpers import json_out, make_project
from tests.service.renderers import assert_same_rows


def test_runs_are_a_typed_listing_with_one_view(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    layout = Layout(project.root)
    empty = list_runs(layout, None)
    assert empty == RunsResult((), 0, None, empty.missing_store) and empty.missing_store
    assert runs_view(empty).headline == "no runs stored yet"
    assert project.invoke("runs").stdout.startswith("no runs stored yet")
    for model in ("acme/a", "acme/b"):
        table = tmp_path / f"{model.replace('/', '-')}.csv"
        table.write_text(f"model,item_id,epoch,score\n{model},q1,1,1\n{model},q2,1,0\n")
        ingested = project.invoke("ingest", str(table), "--format", "csv")
        assert ingested.exit_code == 0, ingested.stderr
    result = list_runs(layout, None)
    assert isinstance(result, RunsResult) and result.total == 2 and result.missing_store is None
    assert all(isinstance(r, RunListing) for r in result.runs)
    assert [r.run.model for r in result.runs] == ["acme/a", "acme/b"]  # oldest first
    newest = list_runs(layout, None, newest=1)
    assert [r.run.model for r in newest.runs] == ["acme/b"] and newest.total == 2
    view = runs_view(newest)
    assert "1 of 2 runs shown (the newest)" in view.facts[0]
    assert_same_rows(view)
    # the command's JSON is the listing (a list, today's fields); its table the view's rows
    assert json_out(project.invoke("runs", "--json")) == result.to_list()
    text = project.invoke("runs").stdout
    assert text.splitlines()[0].split()[:2] == ["run", "suite"]
    for row in runs_view(result).tables[0].rows:
        assert any(line.split() == " ".join(row).split() for line in text.splitlines()), row
