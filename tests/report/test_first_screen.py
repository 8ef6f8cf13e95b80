"""The report's first screen (1400 × 900) in headless Chromium: the answer, the gate, no leaks.

The report is built from a stored pair of runs (no inspect run, so it is quick) with a gate
recorded by `compare`, one suite with deployment weights; the first screen must hold the
verdict sentence with both model names, the gate line, and no `nan`, `None` or raw braces
(docs/design/result-model.md).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evalsuite._core.layout import Layout
from evalsuite.report import build_report, write_report
from evalsuite.service import AnalysisOptions, record_gate
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
