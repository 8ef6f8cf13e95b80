"""The report leads with the scorecard (HTML, Markdown, report.json) and writes every time to
the minute (docs/design/result-model.md, decision 6).

The store is built from attempts tables (no inspect run): `run-a` (base-model) against
`run-b` (cand-model) and `run-c`, a second run of cand-model, so that the scorecard names
base-model and tells the two cand-model runs apart by id.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from evalsuite._core.layout import Layout
from evalsuite.report import build_report, write_report
from evalsuite.service import AnalysisOptions, record_gate, scorecard
from tests.analyse.test_scale_parity import attempts, stored
from tests.service.test_views import LEAKS, WEIGHTS, _store

SECONDS = re.compile(r"\d{2}:\d{2}:\d{2}")
"""A time with seconds (and so maybe microseconds): never in a report a reader reads."""
MICROSECONDS = re.compile(r"\d{2}:\d{2}:\d{2}\.\d+")
REPORT_KEYS = {
    "format", "generated_at", "evalsuite_version", "level", "alpha", "analysis_seed", "margin",
    "canaries", "invalid_runs", "unfinished_runs", "partial_runs", "environment_health",
    "adaptive", "item_analysis", "unaudited_runs", "model_corr", "runs", "comparisons",
    "items", "validity", "notes", "summary",
}  # fmt: skip
"""report.json's keys before the scorecard: every one kept."""


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("scorecard")
    (root / ".evalsuite").mkdir()
    store = _store(root, weights=WEIGHTS)
    rerun = attempts(6, run_id="run-c")
    stored(store, rerun, "run-c", len(rerun))
    store.update_run("run-c", model="cand-model", error_threshold=0.5, weights=WEIGHTS)
    # asked in compare: its time (with microseconds in the store) reaches the gate line
    record_gate(store, "run-a", "run-b", kind="noninferior", margin=0.05, alpha=0.05)
    report = build_report(
        store, Layout(root), ["run-a", "run-b", "run-c"], AnalysisOptions(seed=1), validity=[]
    )
    paths = write_report(report, root / "out")
    return {
        "report": report,
        "html": paths["html"].read_text(encoding="utf-8"),
        "md": paths["markdown"].read_text(encoding="utf-8"),
        "json": json.loads(paths["json"].read_text(encoding="utf-8")),
    }


def _visible(html: str) -> str:
    """The HTML without its figures and style sheet."""
    body = re.sub(r"<svg.*?</svg>", "", html, flags=re.DOTALL)
    return re.sub(r"<style>.*?</style>", "", body, flags=re.DOTALL)


def test_html_leads_with_the_scorecard(written: dict[str, Any]) -> None:
    html = _visible(written["html"])
    body = html[html.index("</header>") :]
    # the first thing after the title: the scorecard, then each full sentence, then the rest
    first_tag = re.search(r"<(table|p|div|section)\b[^>]*>", body[body.index('id="answer"') :])
    assert first_tag is not None
    assert 'class="scorecard"' in body[body.index('id="answer"') :][: first_tag.end() + 200]
    card = body.index('id="scorecard"')
    assert card < body.index('class="verdict-sentence"') < body.index('id="comparisons"')
    table = body[card : body.index("</table>", card)]
    rows = re.findall(r"<tr data-row=.*?</tr>", table, flags=re.DOTALL)
    assert len(rows) == 2
    # names where unique, ids where one model has two runs
    assert "base-model" in rows[0] and ">run-b<" in rows[0]
    assert "base-model" in rows[1] and ">run-c<" in rows[1]
    assert "cand-model" not in re.sub(r'title="[^"]*"', "", table)
    assert re.search(r'class="badge \w+"[^>]*>(PASS|FAIL|INCONCLUSIVE)', rows[0])
    assert 'class="badge neutral"' in rows[1] and ">no gate<" in rows[1]  # none asked
    for row in rows:
        assert re.search(r"[+−]\d\.\d{3}</strong> <span class=\"ci\">\[[+−]\d", row), row
        assert ">weighted<" in row  # the suite declares weights: the headline's difference
    # each row links to its sentence
    assert 'href="#answer-0"' in rows[0] and 'id="answer-0"' in body
    assert not LEAKS.search(html), LEAKS.search(html)


def test_markdown_leads_with_the_same_scorecard(written: dict[str, Any]) -> None:
    md = written["md"]
    answer = md[md.index("## Answer") : md.index("## Comparisons")]
    lines = [line for line in answer.splitlines() if line]
    assert lines[1].startswith("| suite | baseline | candidate | difference (95% CI) | gate |")
    card = scorecard(written["report"].payload["comparisons"])
    for i, row in enumerate(card.table().rows):
        cells = [c.strip().strip("*") for c in lines[3 + i].strip("|").split("|")]
        assert cells == list(row)
    # the full sentence one line below the table, then its gate
    headline = written["report"].payload["comparisons"][0]["headline"]
    assert lines[3 + len(card.rows)] == headline
    assert lines[4 + len(card.rows)].startswith("Gate: non-inferiority gate (margin 0.05")


def test_report_json_gains_the_scorecard_and_keeps_its_keys(written: dict[str, Any]) -> None:
    data = written["json"]
    assert set(data) >= REPORT_KEYS
    assert set(data) - REPORT_KEYS == {"scorecard", "why_it_failed"}  # issue 32: docs/review.md
    assert data["scorecard"] == json.loads(
        json.dumps(scorecard(written["report"].payload["comparisons"]).to_dict())
    )
    rows = data["scorecard"]["rows"]
    assert [(r["baseline"]["label"], r["candidate"]["label"]) for r in rows] == [
        ("base-model", "run-b"),
        ("base-model", "run-c"),
    ]
    assert rows[0]["gate"]["label"].startswith(("PASS", "FAIL", "INCONCLUSIVE"))
    assert rows[1]["gate"] == {
        "label": "no gate",
        "tone": "neutral",
        "detail": "none asked (`compare --gate noninferior --margin D` records one)",
    }


def test_no_time_with_seconds_in_the_report(written: dict[str, Any]) -> None:
    html, md = _visible(written["html"]), written["md"]
    for text in (html, md):
        assert not SECONDS.search(text), SECONDS.search(text)
    # times are shown to the minute in UTC: generated, the gate's asking, runs, in both
    for text in (html, md):
        assert re.search(r"Generated \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC", text)
        assert re.search(r"asked in compare at \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC\)", text)
    assert "2026-12-01 00:00 UTC" in html and "started 2026-12-01 00:00 UTC" in md
    # the scorecard's own texts too; report.json keeps its machine-read ISO times
    assert not MICROSECONDS.search(json.dumps(written["json"]["scorecard"]))
    assert written["json"]["generated_at"] == written["report"].payload["generated_at"]
