"""`service.items`: the item analysis as a typed result with one view (issue 30).

The same view is what `evalsuite items` prints, the report's item section lays out and
``items --json`` writes; bad references stay clear errors with their exit codes.
"""

from __future__ import annotations

import numpy as np
import pytest

from evalsuite._core.layout import Layout
from evalsuite.errors import InsufficientDataError, NotFoundError
from evalsuite.items import ItemAnalysis
from evalsuite.service import ItemsResult, item_sections, items, items_csv, items_view
from tests.helpers import Project, json_out
from tests.items import conftest as item_fixtures
from tests.items.conftest import StoreRun, ability_scores
from tests.service.renderers import assert_same_rows, terminal

project = item_fixtures.project  # a project with demo@1.0.0 frozen (12 items, 2 strata)
store_run = item_fixtures.store_run
item_ids = item_fixtures.item_ids


def _three_models(store_run: StoreRun, item_ids: list[str]) -> list[str]:
    data = ability_scores(item_ids, 3, 2, np.random.default_rng(0))
    add = [i for i in item_ids if i.startswith("add")]
    run_ids = []
    for name, scores in sorted(data.items()):
        scores |= {i: [1.0, 1.0] for i in add}  # everyone solves the add items: dead, saturated
        run_ids.append(store_run(name, scores))
    return run_ids


def test_items_returns_a_typed_result(
    project: Project, store_run: StoreRun, item_ids: list[str]
) -> None:
    _three_models(store_run, item_ids)
    result = items(project.store(), Layout(project.root), "demo", "1.0.0")
    assert isinstance(result, ItemsResult) and isinstance(result.analysis, ItemAnalysis)
    assert result.ref == "demo@1.0.0" and result.csv_file is None
    assert len(result.analysis.items) == len(item_ids) and len(result.analysis.models) == 3
    assert {i.item_id for i in result.flagged} >= {i for i in item_ids if i.startswith("add")}
    with pytest.raises(AttributeError):  # frozen
        result.csv_file = None  # type: ignore[misc]
    assert items_csv(result).splitlines()[0].startswith("item_id,stratum,")
    assert len(items_csv(result).splitlines()) == len(item_ids) + 1


def test_the_view_is_what_every_renderer_shows(
    project: Project, store_run: StoreRun, item_ids: list[str]
) -> None:
    _three_models(store_run, item_ids)
    view = items_view(items(project.store(), Layout(project.root), "demo", "1.0.0"))
    assert view.kind == "items" and view.title == "Item analysis: demo@1.0.0"
    assert [t.title for t in view.tables] == ["models", "saturation watch", "flagged items"]
    assert any(a.startswith("fam/add: best ") and "WATCH" in a for a in view.alerts)
    assert view.headline.startswith("demo@1.0.0: 12 items, 3 model(s), 3 stored run(s).")
    assert_same_rows(view)
    # the terminal keeps to 100 columns unless --wide: the equal-scores p drops out
    narrow = terminal(view, wide=False, width=100)
    assert "equal-scores p" not in narrow and "equal-scores p" in terminal(view)
    # the CLI prints this view and writes its JSON (today's fields, plus the sentences)
    printed = project.invoke("items", "demo@1.0.0")
    assert printed.exit_code == 0, printed.stderr
    assert " ".join(view.headline.split()) in " ".join(printed.stdout.split())
    payload = json_out(project.invoke("items", "demo@1.0.0", "--json"))
    assert set(view.payload) <= set(payload) and payload["headline"] == view.headline


def test_report_sections_are_the_same_result(
    project: Project, store_run: StoreRun, item_ids: list[str]
) -> None:
    run_ids = _three_models(store_run, item_ids)
    store = project.store()
    runs = [{"suite": "demo", "version": "1.0.0", "manifest": {}, "run_id": r} for r in run_ids]
    assert item_sections(store, Layout(project.root), runs, level=0.95) == []  # no manifest
    runs = [r | {"manifest": {"canary": "x"}} for r in runs]
    (section,) = item_sections(store, Layout(project.root), runs, level=0.95)
    direct = items(store, Layout(project.root), "demo", "1.0.0")
    assert items_view(section).tables == items_view(direct).tables
    assert section.section_dict()["flagged"] == [i.to_dict() for i in direct.flagged]


def test_bad_references_are_clear_errors(project: Project, store_run: StoreRun) -> None:
    layout = Layout(project.root)
    with pytest.raises(NotFoundError, match="nosuch"):
        items(project.store(), layout, "nosuch", "1.0.0")
    with pytest.raises(NotFoundError, match=r"9\.9\.9"):
        items(project.store(), layout, "demo", "9.9.9")
    with pytest.raises(NotFoundError, match=r"no stored run of demo@1\.0\.0"):
        items(project.store(), layout, "demo", "1.0.0")
    for argv, code in (
        (("items", "nosuch@1.0.0"), 2),
        (("items", "demo@9.9.9"), 2),
        (("items", "demo"), 2),
    ):
        assert project.invoke(*argv).exit_code == code, argv


def test_a_run_not_complete_is_left_out_with_a_reason(
    project: Project, store_run: StoreRun, item_ids: list[str]
) -> None:
    store_run("m", {i: [1.0] for i in item_ids}, status="running")
    with pytest.raises(InsufficientDataError, match="running"):
        items(project.store(), Layout(project.root), "demo", "1.0.0")
