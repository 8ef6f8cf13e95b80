"""An adaptive run's anytime-valid interval leads in `score`, `compare` and the report.

Issue 28, item 5: `score` of an adaptive run printed only the fixed-sample Wilson interval of
its attempts, which is not valid under the stopping rule the run used. The interval the run
stopped on (its confidence sequence, named) now comes first, and the fixed one is secondary.
The runs here are stored attempts with a stored adaptive summary (no inspect run), so the
checks are quick; tests/run/test_adaptive_run.py runs one end to end.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from evalsuite._core.layout import Layout
from evalsuite.cli import cli
from evalsuite.report import build_report, render_html, render_markdown
from evalsuite.service import (
    AdaptiveResult,
    AnalysisOptions,
    adaptive_view,
    compare,
    comparison_view,
    score,
    score_view,
)
from evalsuite.store import Store
from tests.service.test_views import _store

TARGET: dict[str, Any] = {
    "method": "betting_cs_hedged_target",
    "rule": {"target_halfwidth": 0.2, "alpha": 0.05, "max_epochs": 5},
    "estimate": 0.571,
    "ci": [0.402, 0.731],
    "level": 0.95,
    "calls": 140,
    "budget": 200,
    "stop_reason": "half-width 0.165 <= target 0.2",
    "rounds": [
        {"round": 1, "attempts": 40, "harness_errors": 2, "items": 40, "estimate": 0.55,
         "ci": [0.0, 1.0], "halfwidth": 0.5, "calls": 40},
        {"round": 2, "attempts": 100, "harness_errors": 3, "items": 31, "estimate": 0.571,
         "ci": [0.402, 0.731], "halfwidth": 0.165, "calls": 140},
    ],
    "attempts_per_item": {"min": 1, "median": 3.0, "max": 9},
    "run_id": "run-b",  # as `run --adaptive` keeps it (evalsuite/cli/_adaptive_cmd.py)
    "items": 40,
}  # fmt: skip
VERSUS: dict[str, Any] = TARGET | {
    "method": "betting_cs_hedged_wor+paired_t_final",
    "level": 0.995,
    "stop_reason": "the difference's interval excludes 0: better",
    "rounds": [
        TARGET["rounds"][0] | {"difference_ci": [-0.6, 0.9]},
        TARGET["rounds"][1] | {"difference_ci": [0.012, 0.304]},
    ],
    "versus": {
        "run_id": "run-a",
        "estimate": 0.48,
        "ci": [0.48, 0.48],
        "method": "conditioned_on_stored_run",
        "verdict": "better",
        "margin": 0.02,
        "alpha_sequence": 0.005,
        "alpha_final": 0.045,
        "epochs": 5,
        "final_test": None,
    },
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".evalsuite").mkdir()
    return tmp_path


def _adaptive(project: Path, summary: dict[str, Any]) -> Store:
    """`run-a` a fixed run, `run-b` an adaptive one with `summary` kept in the store."""
    store = _store(project, weights=None)
    store.update_run("run-b", spec={"adaptive": summary["rule"], "epochs": 1}, epochs=1)
    store.set_adaptive("run-b", summary)
    return store


def test_score_of_an_adaptive_run_leads_with_its_anytime_valid_interval(project: Path) -> None:
    store = _adaptive(project, TARGET)
    result = score(store, "run-b", AnalysisOptions(seed=1), layout=Layout(project))
    view = score_view(result)
    payload = result.to_dict()
    head = view.headline
    assert "anytime-valid 95% interval [0.402, 0.731] (betting_cs_hedged_target" in head
    block = payload["adaptive"]
    assert block["ci"] == TARGET["ci"] and block["method"] == "betting_cs_hedged_target"
    assert block["interval"] == "anytime-valid" and "Waudby-Smith" in block["name"]
    assert head.index("anytime-valid") < head.index("fixed-sample")
    assert "not valid under the run's stopping rule" in head
    estimates = view.tables[0]
    assert estimates.rows[0][0] == "adaptive (anytime-valid)"
    assert estimates.rows[0][3] == "[0.402, 0.731]"
    assert estimates.rows[1][0].endswith("(fixed-sample)")
    assert any("not valid under that stopping rule" in c for c in view.caveats)
    assert view.title.endswith("adaptive, 2 round(s)")  # no fixed epochs
    # the same through the CLI, in the terminal and as --json
    runner = CliRunner()
    text = runner.invoke(cli, ["--root", str(project), "score", "run-b"])
    assert text.exit_code == 0, text.output
    assert "anytime-valid 95% interval [0.402, 0.731]" in " ".join(text.output.split())
    out = runner.invoke(cli, ["--root", str(project), "score", "run-b", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["adaptive"]["ci"] == TARGET["ci"]
    # a fixed run says nothing of the kind
    fixed = score(store, "run-a", AnalysisOptions(seed=1), layout=Layout(project))
    assert fixed.adaptive is None and "adaptive" not in fixed.to_dict()
    assert "anytime" not in score_view(fixed).headline


def test_compare_with_an_adaptive_versus_run_leads_with_its_verdict(project: Path) -> None:
    store = _adaptive(project, VERSUS)
    result = compare(
        store, "run-a", "run-b", AnalysisOptions(seed=1), allow_invalid=True, layout=Layout(project)
    )
    view = comparison_view(result)
    payload = result.to_dict()
    head = view.headline
    assert "adaptive run against this baseline: better" in head
    assert payload["adaptive"]["baseline"] is None
    cand = payload["adaptive"]["candidate"]
    assert cand["versus"]["difference_ci"] == [0.012, 0.304]
    assert "anytime-valid 99.5% interval of the difference [+0.012, +0.304]" in head
    assert head.index("anytime-valid") < head.index("fixed-sample paired t")
    assert any("not valid under that stopping rule" in c for c in view.caveats)


def test_compare_with_an_adaptive_run_of_a_target_names_its_interval(project: Path) -> None:
    store = _adaptive(project, TARGET)
    result = compare(
        store, "run-a", "run-b", AnalysisOptions(seed=1), allow_invalid=True, layout=Layout(project)
    )
    view = comparison_view(result)
    # no anytime-valid interval of the difference exists: the paired t stays, named as
    # fixed-sample, and the adaptive run's own anytime-valid score interval is shown
    assert "fixed-sample paired t" in view.headline
    runs = view.tables[1]
    assert "anytime-valid [0.402, 0.731]" in " ".join(runs.rows[1])
    assert any("not valid under that stopping rule" in c for c in view.caveats)


def test_the_report_shows_the_anytime_valid_interval_first(project: Path) -> None:
    store = _adaptive(project, TARGET)
    report = build_report(
        store, Layout(project), ["run-a", "run-b"], AnalysisOptions(), validity=[]
    )
    markdown = render_markdown(report, {})
    assert "| adaptive (anytime-valid) | 0.571 |" in markdown
    assert "betting_cs_hedged_target" in markdown
    assert "; adaptive, 2 round(s); seed" in markdown  # no fixed epoch count
    html = render_html(report)
    assert '[0.402, 0.731] <span class="tag">anytime-valid, betting_cs_hedged_target</span>' in html
    assert html.index("adaptive (anytime-valid") < html.index(
        "unweighted (manifest) (fixed-sample)"
    )
    assert "not valid under the run's stopping rule" in html


FEW_STAGE: dict[str, Any] = TARGET | {
    "method": "stein_few_stage_equal_epochs+item_means_t",
    "estimand": "item_population",
    "estimand_text": "the mean score over the population of items the suite was drawn from",
    "interval": "few-stage",
    "stop_reason": "refused: more epochs cannot reach +-0.01 for the item population",
    "target": {"halfwidth": 0.01, "reached": False, "refused": True},
}


def test_a_few_stage_run_names_its_interval_estimand_and_method(project: Path) -> None:
    """`--target-halfwidth` (issue 31): the few-stage interval is named as such, not as
    anytime-valid, with its estimand and method, and a refusal is a caveat."""
    store = _adaptive(project, FEW_STAGE)
    result = score(store, "run-b", AnalysisOptions(seed=1), layout=Layout(project))
    view = score_view(result)
    assert "few-stage 95% interval [0.402, 0.731]" in view.headline
    assert "anytime-valid" not in view.headline
    rows = view.tables[0].rows
    assert rows[0][0] == "adaptive (few-stage)"
    block = result.to_dict()["adaptive"]
    assert block["estimand"] == "item_population"
    assert "pilot's spreads" in block["name"]
    caveats = adaptive_view(AdaptiveResult.from_dict(FEW_STAGE)).caveats
    assert any("did not reach the target ±0.01: refused: more epochs" in c for c in caveats)
