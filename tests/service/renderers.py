"""Render one view in the terminal and in Markdown, and check that both show the same rows.

Issue 30, point 2: terminal, Markdown/HTML and JSON are renderers of one view, so every row of
every table (and the headline, alerts and facts) reaches each of them.
"""

from __future__ import annotations

import io
import re

from rich.console import Console

from evalsuite.cli._views import print_view
from evalsuite.report import render_view_html, render_view_markdown
from evalsuite.service import ResultView

LEAKS = re.compile(r"\bNone\b|\bnan\b|\bNaN\b|\{'|\['|np\.float")


def terminal(view: ResultView, *, wide: bool = True, width: int = 1000) -> str:
    """`view` as the CLI prints it (rich), wide enough that no cell wraps."""
    out = Console(file=io.StringIO(), width=width, color_system=None, record=True)
    print_view(out, view, wide=wide)
    return out.export_text()


def _in_order(line: str, cells: tuple[str, ...]) -> bool:
    at = 0
    for cell in cells:
        found = line.find(cell, at)
        if found < 0:
            return False
        at = found + len(cell)
    return True


def assert_same_rows(view: ResultView) -> None:
    """Every sentence and every table row of `view` in the terminal, Markdown and HTML."""
    text = terminal(view)
    markdown = render_view_markdown(view)
    html = render_view_html(view)
    flat = " ".join(text.split())
    for sentence in (view.headline, *view.alerts, *view.facts, *view.caveats):
        assert " ".join(sentence.split()) in flat, sentence
        assert sentence in markdown, sentence
    for table in view.tables:
        assert f"**{table.title}**" in markdown and f"<h4>{table.title}</h4>" in html
        for row in table.rows:
            assert any(_in_order(line, row) for line in text.splitlines()), row
            assert "| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" in markdown
    for rendered in (text, markdown):
        assert not LEAKS.search(rendered), LEAKS.search(rendered)
