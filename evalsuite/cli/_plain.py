"""The plain-text renderer of a result view, with click alone (no rich).

For the commands that must start at once (`runs`, `verify`: docs/design/startup.md): the same
reading order as `print_view` (alerts, title, headline, tables, facts, caveats), tables as
left-aligned columns, one line per row, never wrapped (grep and pipe friendly; rich measures
and wraps every cell, which took seconds for thousands of rows, docs/scale.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import click

from evalsuite._core.display import printable
from evalsuite.service import ResultView, TableView

__all__ = ["columns", "echo_table_view", "echo_view"]


def columns(rows: Sequence[Sequence[str]]) -> str:
    """Rows as left-aligned columns two spaces apart, one line per row."""
    if not rows:
        return ""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


def echo_table_view(table: TableView, *, wide: bool = False, title: bool = True) -> None:
    """One table: its title, then the header and a line per row (every cell escaped)."""
    shown = table if wide else table.narrow()
    if title:
        click.echo(click.style(shown.title, bold=True))
    header = tuple(c.name for c in shown.columns)
    rows = [tuple(printable(cell) for cell in row) for row in shown.rows]
    click.echo(columns([header, *rows]))


def _line(text: str, **style: object) -> None:
    text = printable(text, keep_lines=True)  # names and paths are data (terminal-output.md)
    click.echo(click.style(text, **style) if style else text)  # type: ignore[arg-type]


def echo_view(
    view: ResultView, *, wide: bool = False, title: bool = True, headline: bool = True
) -> None:
    """`view` in reading order as plain text (styles only on a terminal that shows them).

    A listing whose table is its answer (`runs`) leaves out the title and the headline, so that
    its first line is the table's header (grep and pipe friendly).
    """
    for alert in view.alerts:
        _line(alert, fg="red", bold=True)
    if title:
        _line(view.title, bold=True)
    if headline:
        _line(view.headline)
    for table in view.tables:
        echo_table_view(table, wide=wide, title=title)
    for fact in view.facts:
        _line(fact)
    if view.caveats:
        _line("caveats:", bold=True)
        for caveat in view.caveats:
            _line(f"- {caveat}", fg="yellow")
