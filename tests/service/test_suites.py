"""`service.list_suites`: the suites of tasks/ as typed results with one view (issue 30)."""

from __future__ import annotations

from pathlib import Path

from evalsuite._core.layout import Layout
from evalsuite.service import SuiteSummary, SuiteVersion, list_suites, suites_view
from tests.helpers import json_out, make_project
from tests.service.renderers import assert_same_rows


def test_suites_are_typed_and_rendered_once(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    layout = Layout(project.root)
    (before,) = list_suites(layout)
    assert isinstance(before, SuiteSummary) and before.versions == ()
    view = suites_view((before,))
    assert view.tables == () and view.facts[0].endswith("not frozen yet")
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0
    (suite,) = list_suites(layout)
    (version,) = suite.versions
    assert isinstance(version, SuiteVersion) and version.version == "1.0.0"
    assert version.n_dev + version.n_holdout == version.n_items
    view = suites_view((suite,))
    (table,) = view.tables
    assert table.rows[-1][:4] == ("1.0.0", "all", str(version.n_dev), str(version.n_holdout))
    assert len(table.rows) == len(version.strata) + 1
    assert_same_rows(view)
    payload = json_out(project.invoke("suites", "--json"))
    assert payload["suites"] == [suite.to_dict()]
    assert set(payload["suites"][0]["versions"][0]) >= {"version", "manifest_hash", "strata"}
    text = project.invoke("suites")
    assert text.exit_code == 0 and "1.0.0" in text.stdout and "all" in text.stdout


def test_no_suites_says_where_to_add_one(tmp_path: Path) -> None:
    view = suites_view((), tasks="tasks/")
    assert view.headline == "no suites in tasks/ (add tasks/<suite>.toml)"
    assert view.to_dict()["suites"] == []
