"""The HTML report's run sections render from the typed `ScoreResult`s, not the payload.

``report.json`` (`ReportData.payload`) is written from the same results, so the two agree;
this test proves which one the page reads by changing the payload after the fact.
"""

from __future__ import annotations

import copy
import re
from dataclasses import replace

from evalsuite._core.layout import Layout
from evalsuite.report import build_report, render_html
from evalsuite.service import AnalysisOptions, fmt
from tests.report.conftest import Reported


def _section(html: str, run_id: str) -> str:
    match = re.search(
        rf'<section class="run" id="run-{re.escape(run_id)}">.*?</section>', html, re.S
    )
    assert match is not None
    return match.group(0)


def test_run_sections_read_the_typed_results(reported: Reported) -> None:
    layout = Layout(reported.project.root)
    report = build_report(
        reported.project.store(), layout, [reported.baseline, reported.faulty], AnalysisOptions()
    )
    page = render_html(report)
    payload = copy.deepcopy(report.payload)
    for run in payload["runs"]:
        run["overall"]["mean"] = 0.123456
        run["harness"]["planned"] = 987654
        run["notes"] = ["a note only the payload has"]
    tampered = render_html(replace(report, payload=payload))
    for result in report.scores:
        section = _section(tampered, result.run_id)
        assert section == _section(page, result.run_id)
        assert f'<td class="num">{fmt(result.overall.mean)}</td>' in section
        assert "987654" not in section and "a note only the payload has" not in section
        assert f'<td class="num">{result.estimates.health.planned}</td>' in section
    faulty = next(s for s in report.scores if s.run_id == reported.faulty)
    assert faulty.harness.top_errors and 'data-table="top-errors"' in _section(page, faulty.run_id)
