"""One view model per result (docs/design/result-model.md): built once by the service layer,
rendered by the CLI, Markdown, HTML and JSON; a report that leads with the answer.

The stores here are built from attempts tables directly (no inspect run), so that the checks
are quick; the browser test (tests/report/test_browser.py) renders a real report.
"""

from __future__ import annotations

import io
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from evalsuite._core.layout import Layout
from evalsuite.cli import cli
from evalsuite.cli._views import print_view
from evalsuite.report import build_report, write_report
from evalsuite.report._figures import comparison_forest, strata_forest
from evalsuite.service import (
    AnalysisOptions,
    compare,
    comparison_view,
    record_gate,
    recorded_gate,
    score_view,
)
from evalsuite.service import score as score_run
from evalsuite.service._format import fmt, fmt_ci, fmt_counts, fmt_p, fmt_signed
from evalsuite.store import Store
from tests.analyse.test_scale_parity import attempts, stored

WEIGHTS = {"s0": 0.6, "s1": 0.3, "s2": 0.1}
LEAKS = re.compile(r"\bNone\b|\bnan\b|\bNaN\b|\{'|\['|\[/?bold\]|np\.float")


def _store(root: Path, *, weights: dict[str, float] | None) -> Store:
    """Two ingested runs `run-a` (model base-model) and `run-b` (cand-model), 40 items."""
    store = Store(f"sqlite:///{root / '.evalsuite' / 'results.sqlite'}")
    base, cand = attempts(4), attempts(5, run_id="run-b")
    stored(store, base, "run-a", len(base))
    stored(store, cand, "run-b", len(cand))
    store.update_run("run-a", model="base-model", error_threshold=0.5)
    store.update_run("run-b", model="cand-model", error_threshold=0.5)
    if weights:
        store.update_run("run-a", weights=weights)
        store.update_run("run-b", weights=weights)
    return store


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".evalsuite").mkdir()
    return tmp_path


def test_compare_weighs_as_the_suite_does_and_only_then(project: Path) -> None:
    options = AnalysisOptions(seed=1)
    weighted_result = compare(
        _store(project, weights=WEIGHTS), "run-a", "run-b", options, allow_invalid=True
    )
    weighted = weighted_result.to_dict()
    assert weighted["weighted"]["weights"] == WEIGHTS
    assert math.isfinite(weighted["weighted"]["diff"])
    view = comparison_view(weighted_result)
    rows = [r[0] for r in view.tables[0].rows]
    assert rows[:2] == ["deployment-weighted", "unweighted"]  # weighted first
    assert "deployment-weighted difference" in view.headline

    plain_root = project / "plain"
    (plain_root / ".evalsuite").mkdir(parents=True)
    plain_result = compare(
        _store(plain_root, weights=None), "run-a", "run-b", options, allow_invalid=True
    )
    plain = plain_result.to_dict()
    assert plain["weighted"] == {
        "weights": {},
        "reason": "the suite declares no deployment weights",
    }
    view = comparison_view(plain_result)
    assert all("deployment-weighted" not in r[0] for t in view.tables for r in t.rows)
    assert view.tables[0].rows[0][0] == "overall"
    assert "deployment-weighted" not in view.headline
    # every --json field is still there, with the view's sentences added
    assert set(plain) <= set(view.to_dict())
    assert {"headline", "gate_line", "caveats"} <= set(view.to_dict())


def test_the_headline_names_the_models_and_says_everything_once(project: Path) -> None:
    store = _store(project, weights=WEIGHTS)
    options = AnalysisOptions(seed=1, margin=0.05)
    view = comparison_view(compare(store, "run-a", "run-b", options, allow_invalid=True))
    h = view.headline
    assert "cand-model (run run-b)" in h and "base-model (run run-a)" in h
    assert "95% CI" in h and "paired items" in h
    assert "non-inferiority gate (margin 0.05)" in h
    assert "suite audit" in h
    assert view.gate_line is not None and "deployment-weighted" in view.gate_line
    assert len(view.caveats) == len(set(view.caveats))
    score = score_view(score_run(store, "run-b", options))
    assert score.headline.startswith("cand-model (run run-b) scores ")
    assert "deployment-weighted" in score.headline


def test_format_says_na_and_never_python() -> None:
    assert fmt(None) == "n/a" and fmt(math.nan) == "n/a" and fmt(0.12345) == "0.123"
    assert fmt_p(0.0) == "< 0.001" and fmt_p(0.0123) == "0.012" and fmt_p(math.nan) == "n/a"
    assert fmt_signed(-1.0) == "−1.000" and fmt_signed(0.25) == "+0.250"
    assert fmt_ci([math.nan, 0.2]) == "n/a" and fmt_ci([0.1, 0.2]) == "[0.100, 0.200]"
    assert fmt_counts({"ConnectionError": 60}) == "ConnectionError 60"
    assert fmt_counts({}) == "none"


def _plain_text(view: Any, *, wide: bool, width: int = 160) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, highlight=False, soft_wrap=True)
    print_view(console, view, wide=wide)
    return buffer.getvalue()


def test_terminal_tables_fit_100_columns_and_wide_shows_all(project: Path) -> None:
    store = _store(project, weights=WEIGHTS)
    options = AnalysisOptions(seed=1, margin=0.05)
    view = comparison_view(compare(store, "run-a", "run-b", options, allow_invalid=True))
    narrow = _plain_text(view, wide=False)
    table_lines = [line for line in narrow.splitlines() if line[:1] in "┏┃┡│└"]
    assert table_lines and max(len(line) for line in table_lines) <= 100
    header = next(line for line in narrow.splitlines() if "comparison" in line and "┃" in line)
    assert "MDE" not in header
    wide = _plain_text(view, wide=True)
    header = next(line for line in wide.splitlines() if "comparison" in line and "┃" in line)
    assert "MDE" in header
    for text in (narrow, wide):
        assert not LEAKS.search(text), LEAKS.search(text)
        assert text.count("caveats:") <= 1
        assert text.rstrip().splitlines()[-1].startswith("- ")  # caveats last


def test_cli_json_keeps_its_fields_and_adds_the_headline(project: Path) -> None:
    _store(project, weights=WEIGHTS)
    runner = CliRunner()
    base = ["--root", str(project)]
    args = ["compare", "run-a", "run-b", "--allow-invalid", "--gate", "noninferior"]
    result = runner.invoke(cli, [*base, *args, "--margin", "0.05", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    for key in ("diff", "ci", "p_value", "verdict", "mde", "strata", "gate", "notes"):
        assert key in payload
    assert payload["weighted"]["gate"]["status"] in ("PASS", "FAIL", "INCONCLUSIVE")
    assert payload["headline"].startswith("On ingested runs")
    # the gate asked for is recorded with the pair, in the store
    store = Store(f"sqlite:///{project / '.evalsuite' / 'results.sqlite'}")
    record = recorded_gate(store, "run-a", "run-b")
    assert record is not None and record["margin"] == 0.05
    text = runner.invoke(cli, [*base, "score", "run-b"])
    assert text.exit_code == 0, text.output
    assert not LEAKS.search(text.stdout), LEAKS.search(text.stdout)
    assert "cand-model (run run-b)" in text.stdout


def test_the_report_leads_with_the_answer_and_ends_with_provenance(project: Path) -> None:
    store = _store(project, weights=WEIGHTS)
    layout = Layout(project)
    record_gate(store, "run-a", "run-b", kind="noninferior", margin=0.05, alpha=0.05)
    report = build_report(store, layout, ["run-a", "run-b"], AnalysisOptions(seed=1), validity=[])
    comparison = report.payload["comparisons"][0]
    assert comparison["gate"]["margin"] == 0.05  # recorded by compare, shown here
    assert comparison["gate"]["source"].startswith("asked in compare")
    assert report.payload["summary"] == [comparison["headline"]]
    paths = write_report(report, project / "out")
    md = paths["markdown"].read_text(encoding="utf-8")
    order = [md.index(s) for s in ("## Answer", "## Comparisons", "## Provenance")]
    assert order == sorted(order)
    answer = md[md.index("## Answer") : md.index("## Comparisons")]
    assert comparison["headline"] in answer and "Gate: non-inferiority gate" in answer
    html = paths["html"].read_text(encoding="utf-8")
    assert html.index('id="answer"') < html.index('id="comparisons"') < html.index('id="runs"')
    assert html.index('id="runs"') < html.index('id="provenance"')
    assert 'class="gate-line"' in html
    body = re.sub(r"<svg.*?</svg>", "", html, flags=re.DOTALL)
    body = re.sub(r"<style>.*?</style>", "", body, flags=re.DOTALL)
    for text in (md, body):
        assert not LEAKS.search(text), LEAKS.search(text)


def test_a_suite_without_weights_has_no_weighted_rows_in_the_report(project: Path) -> None:
    store = _store(project, weights=None)
    report = build_report(
        store, Layout(project), ["run-a", "run-b"], AnalysisOptions(seed=1), validity=[]
    )
    paths = write_report(report, project / "out")
    md = paths["markdown"].read_text(encoding="utf-8")
    assert "deployment-weighted" not in md
    html = paths["html"].read_text(encoding="utf-8")
    assert "deployment-weighted" not in re.sub(r"<svg.*?</svg>", "", html, flags=re.DOTALL)
    assert "Gate: none asked for this comparison" in md


def _stratum(name: str, diff: float, ci: tuple[float, float]) -> dict[str, Any]:
    return {"stratum": name, "diff": diff, "ci": list(ci), "se": math.nan}


def test_forest_draws_a_difference_of_minus_one_whole_and_marks_its_missing_ci() -> None:
    comparison = {
        "diff": -0.4,
        "ci": [-0.6, -0.2],
        "level": 0.95,
        "strata": [_stratum("all-wrong", -1.0, (math.nan, math.nan)), _stratum("ok", 0.1, (0, 1))],
    }
    fig = comparison_forest(comparison)
    ax = fig.axes[0]
    low, high = ax.get_xlim()
    assert low < -1.0 and high > 1.0  # neither end clipped at the axis
    texts = [t.get_text() for t in ax.texts]
    assert "CI n/a" in texts
    markers = [line for line in ax.lines if line.get_marker() not in (None, "None", "")]
    assert markers and all(not line.get_clip_on() for line in markers)


def test_score_markers_at_zero_and_one_are_not_clipped() -> None:
    estimate = {"mean": 1.0, "ci": [0.8, 1.0], "n_items": 3}
    zero = {"mean": 0.0, "ci": [0.0, 0.2], "n_items": 3}
    run = {
        "run_id": "r1",
        "model": "m",
        "level": 0.95,
        "overall": estimate,
        "weighted": estimate,
        "weights": {},
        "strata": [{"stratum": "a", **zero}, {"stratum": "b", **estimate}],
    }
    ax = strata_forest([run]).axes[0]
    low, high = ax.get_xlim()
    assert low < 0.0 - 0.02 and high > 1.0 + 0.02
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert "weighted" not in labels  # no weights: no weighted row
    markers = [line for line in ax.lines if line.get_marker() not in (None, "None", "")]
    assert markers and all(not line.get_clip_on() for line in markers)
