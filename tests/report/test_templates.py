"""The report's templates print values, never a Python object's repr.

Issue 30: the adaptive section printed ``<built-in method items of dict ...>``: Jinja's
``s.items`` on a dict is the dict's method, not its ``"items"`` key. A key that shares its
name with a dict method is read with ``s["items"]``.
"""

from __future__ import annotations

from pathlib import Path

from evalsuite._core.layout import Layout
from evalsuite.report import build_report, render_html
from evalsuite.service import AnalysisOptions
from tests.service.test_adaptive_views import TARGET, VERSUS, _adaptive


def test_the_adaptive_section_prints_its_item_counts_not_a_method(tmp_path: Path) -> None:
    for name, summary in (("target", TARGET), ("versus", VERSUS)):
        project = tmp_path / name
        (project / ".evalsuite").mkdir(parents=True)
        store = _adaptive(project, summary)
        report = build_report(
            store, Layout(project), ["run-a", "run-b"], AnalysisOptions(seed=1), validity=[]
        )
        html = render_html(report)
        assert 'id="adaptive"' in html
        assert "<built-in method" not in html and "&lt;built-in method" not in html
        assert "bound method" not in html and "function " not in html.split("<style>")[0]
        assert f"attempts on {summary['items']} items" in html
        for r in summary["rounds"]:  # each round's item count in its row
            assert f'<td class="num">{r["items"]}</td>' in html
