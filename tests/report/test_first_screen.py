"""The report's first screen in headless Chromium: the scorecard, the answer, the gate, no leaks.

The report is built from stored runs (no inspect run, so it is quick) with a gate recorded by
`compare`, one suite with deployment weights. At 1400 × 900 the first screen must hold the
verdict sentence with both model names, the gate line, and no `nan`, `None` or raw braces; at
1280 × 1000 (issue 30) it leads with the scorecard, whole, above every sentence, with the
models by name where unique, and no time with seconds (docs/design/result-model.md).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evalsuite._core.layout import Layout
from evalsuite.report import build_report, write_report
from evalsuite.service import AnalysisOptions, record_gate
from tests.analyse.test_scale_parity import attempts, stored
from tests.report.test_browser import ARTIFACTS, FLAGS, _require_browser
from tests.service.test_views import WEIGHTS, _store

VIEWPORT = {"width": 1400, "height": 900}
# the text of every visible text node whose box starts on the first screen
FIRST_SCREEN_TEXT = """() => {
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.textContent.trim();
    if (!text) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    const box = range.getBoundingClientRect();
    if (box.width > 0 && box.height > 0 && box.top < window.innerHeight && box.bottom > 0) {
      out.push(text);
    }
  }
  return out.join("\\n");
}"""


@pytest.mark.browser
def test_first_screen_says_the_answer_and_the_gate(tmp_path: Path) -> None:
    executable = _require_browser()
    from playwright.sync_api import sync_playwright

    (tmp_path / ".evalsuite").mkdir()
    store = _store(tmp_path, weights=WEIGHTS)
    layout = Layout(tmp_path)
    record_gate(store, "run-a", "run-b", kind="noninferior", margin=0.05, alpha=0.05)
    report = build_report(store, layout, ["run-a", "run-b"], AnalysisOptions(seed=1), validity=[])
    out = tmp_path / "report"
    write_report(report, out)
    headline = report.payload["comparisons"][0]["headline"]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=FLAGS)
        page = browser.new_page(viewport=VIEWPORT)
        page.goto((out / "index.html").resolve().as_uri(), wait_until="load")
        first = page.evaluate(FIRST_SCREEN_TEXT)
        verdict = page.locator(".verdict-sentence").first.bounding_box()
        gate = page.locator(".gate-line").first.bounding_box()
        forest = page.locator('figure[data-figure="answer_0"] svg').bounding_box()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "report-first-screen.png"))
        browser.close()
    assert verdict is not None and gate is not None and forest is not None
    for box in (verdict, gate, forest):
        assert box["y"] + box["height"] <= VIEWPORT["height"], box  # wholly on the first screen
    text = " ".join(first.split())
    assert " ".join(headline.split()) in text
    assert "base-model" in text and "cand-model" in text
    assert "Gate: non-inferiority gate (margin 0.05" in text and "PASS" in text
    assert not re.search(r"\bnan\b|\bNaN\b|\bNone\b|[{}]", text), text


SCORECARD_VIEWPORT = {"width": 1280, "height": 1000}


@pytest.mark.browser
def test_first_screen_leads_with_the_scorecard(tmp_path: Path) -> None:
    executable = _require_browser()
    from playwright.sync_api import sync_playwright

    (tmp_path / ".evalsuite").mkdir()
    store = _store(tmp_path, weights=WEIGHTS)
    rerun = attempts(6, run_id="run-c")  # a second run of cand-model: shown by its id
    stored(store, rerun, "run-c", len(rerun))
    store.update_run("run-c", model="cand-model", error_threshold=0.5, weights=WEIGHTS)
    record_gate(store, "run-a", "run-b", kind="noninferior", margin=0.05, alpha=0.05)
    report = build_report(
        store, Layout(tmp_path), ["run-a", "run-b", "run-c"], AnalysisOptions(seed=1), validity=[]
    )
    out = tmp_path / "report"
    write_report(report, out)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=FLAGS)
        page = browser.new_page(viewport=SCORECARD_VIEWPORT)
        page.goto((out / "index.html").resolve().as_uri(), wait_until="load")
        first = page.evaluate(FIRST_SCREEN_TEXT)
        card = page.locator("table.scorecard").bounding_box()
        cells = page.eval_on_selector_all(
            "table.scorecard tr[data-row]",
            "rows => rows.map(r => Array.from(r.cells).map(c => c.innerText.trim()))",
        )
        sentence = page.locator(".verdict-sentence").first.bounding_box()
        badges = page.locator("table.scorecard .badge").count()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "report-scorecard-first-screen.png"))
        browser.close()
    assert card is not None and sentence is not None
    assert card["y"] + card["height"] <= SCORECARD_VIEWPORT["height"], card  # whole, on screen
    assert card["y"] < 200, card  # it leads: right under the title
    assert card["y"] + card["height"] <= sentence["y"]  # the full sentence below it
    assert [row[:3] for row in cells] == [
        ["ingested runs (no manifest)", "base-model", "run-b"],
        ["ingested runs (no manifest)", "base-model", "run-c"],
    ]
    assert all(re.match(r"[+−]\d\.\d{3} \[[+−]\d\.\d{3}, [+−]\d\.\d{3}\]", r[3]) for r in cells)
    assert badges == 3 * len(cells)  # gate, validity and audit on every row
    text = " ".join(first.split())
    assert "difference (95% CI)" in text and "validity" in text
    assert not re.search(r"\d{2}:\d{2}:\d{2}", text), text  # times to the minute
    assert not re.search(r"\bnan\b|\bNaN\b|\bNone\b|[{}]", text), text
