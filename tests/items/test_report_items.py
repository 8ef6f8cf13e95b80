"""The report's item-analysis section: shown with enough models, with map, flags and watch."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from evalsuite._core.layout import Layout
from evalsuite.manifest import load_manifest
from tests.helpers import Project
from tests.items.conftest import StoreRun, ability_scores


def _dev_ids(project: Project) -> list[str]:
    manifest = load_manifest(Layout(project.root), "demo", "1.0.0")
    return sorted(i.id for i in manifest.items if i.split == "dev")


def test_report_shows_item_map_flags_and_saturation(
    project: Project, store_run: StoreRun, tmp_path: Path
) -> None:
    ids = _dev_ids(project)
    data = ability_scores(ids, 4, 2, np.random.default_rng(11))
    run_ids = []
    add = [i for i in ids if i.startswith("add")]
    for name, scores in sorted(data.items()):
        scores |= {i: [1.0, 1.0] for i in add}  # everyone solves the add items: dead, saturated
        run_ids.append(store_run(name, scores))
    out = tmp_path / "report"
    result = project.invoke("report", run_ids[-1], "--out", str(out))
    assert result.exit_code == 0, result.stderr
    payload = json.loads((out / "report.json").read_text(encoding="utf-8"))
    (section,) = payload["item_analysis"]
    assert section["suite"] == "demo" and len(section["models"]) == 4
    dead = {f["item_id"] for f in section["flagged"] if "dead" in f["flags"]}
    assert add and dead >= set(add)
    html = (out / "index.html").read_text(encoding="utf-8")
    assert 'id="items-0"' in html and 'data-figure="items_0"' in html
    assert 'data-table="item-flags"' in html and add[0] in html
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert "## Item analysis: demo@1.0.0" in markdown
    assert "![item map](figures/items_0.svg)" in markdown
    assert markdown.count("figures/items_0.svg") == 1
    assert (out / "figures" / "items_0.svg").read_text(encoding="utf-8").startswith("<svg")
    strata = {w["stratum"]: w for w in section["strata"]}
    assert strata["fam/add"]["saturated"] and strata["fam/add"]["best_score"] == 1.0
    assert not strata["fam/mul"]["saturated"]
    # the watched stratum is an alert of the section's view, before its tables
    assert "> **fam/add: best " in markdown and "WATCH: the best model" in markdown
    assert "data-alert>fam/add: best " in html
    assert "2PL IRT: not fitted: 4 model(s)" in markdown  # the words of `evalsuite items`


def test_report_without_enough_models_has_no_item_section(
    project: Project, store_run: StoreRun, tmp_path: Path
) -> None:
    ids = _dev_ids(project)
    data = ability_scores(ids, 2, 2, np.random.default_rng(0))
    run_ids = [store_run(name, scores) for name, scores in sorted(data.items())]
    out = tmp_path / "report"
    result = project.invoke("report", *run_ids, "--out", str(out))
    assert result.exit_code == 0, result.stderr
    payload = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert payload["item_analysis"] == []
    assert "Item analysis" not in (out / "report.md").read_text(encoding="utf-8")
    assert 'id="items-0"' not in (out / "index.html").read_text(encoding="utf-8")
