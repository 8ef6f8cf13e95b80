"""The terminal renderer of a result view (`evalsuite.service.ResultView`).

Reading order: alerts, the title, the headline, the gate, the tables (essential columns only
unless ``--wide``, so they fit 100 columns), further facts, then the caveats, once each.
"""

from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from evalsuite._core.display import printable
from evalsuite.service import ResultView, TableView

__all__ = ["print_table_view", "print_view", "wide_option"]

wide_option = click.option(
    "--wide",
    is_flag=True,
    help="Show every column (by default tables keep to the columns that fit 100 characters).",
)


def print_table_view(out: Console, table: TableView, *, wide: bool) -> None:
    """One table of formatted cells (plain text: a cell is never read as markup)."""
    shown = table if wide else table.narrow()
    rich_table = Table(title=shown.title, title_justify="left", title_style="bold")
    for column in shown.columns:
        rich_table.add_column(column.name, justify="right" if column.numeric else "left")
    for row in shown.rows:
        rich_table.add_row(*(Text(printable(cell)) for cell in row))
    # at most 100 columns unless --wide (a wider terminal still gets 100: one layout)
    out.print(rich_table, width=None if wide else min(out.width, 100))


def print_view(out: Console, view: ResultView, *, wide: bool = False) -> None:
    """`view` in reading order; every line plain text (no markup), control characters escaped.

    `printable`: a model name read from a file cannot act on the terminal.
    """
    for alert in view.alerts:
        out.print(Text(printable(alert, keep_lines=True), style="bold red"))
    out.print(Text(printable(view.title, keep_lines=True), style="bold"))
    out.print(Text(printable(view.headline, keep_lines=True)))
    if view.gate_line:
        out.print(Text(printable(view.gate_line, keep_lines=True), style="bold"))
    for table in view.tables:
        print_table_view(out, table, wide=wide)
    for fact in view.facts:
        out.print(Text(printable(fact, keep_lines=True)))
    if view.caveats:
        out.print(Text("caveats:", style="bold"))
        for caveat in view.caveats:
            out.print(Text(printable(f"- {caveat}", keep_lines=True)))
