"""The terminal renderer of a result view (`evalsuite.service.ResultView`).

Reading order: alerts, the title, the headline, the gate, the tables (essential columns only
unless ``--wide``, so they fit 100 columns), further facts, then the caveats, once each.
A comparison is led by its scorecard row (`print_scorecard`), the report's first screen.
"""

from __future__ import annotations

import click
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from evalsuite._core.display import printable
from evalsuite.service import Badge, ResultView, Scorecard, TableView

__all__ = ["print_scorecard", "print_table_view", "print_view", "wide_option"]

BADGE_STYLES = {"good": "bold green", "bad": "bold red", "warn": "bold yellow", "neutral": "dim"}
"""How a scorecard badge's tone is shown in a terminal."""

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


def _badge(badge: Badge) -> Text:
    return Text(printable(badge.label), style=BADGE_STYLES.get(badge.tone, ""))


SCORECARD_WIDTH = 100
"""The scorecard keeps to 100 columns, as every table does without ``--wide``."""


def _scorecard_cells(card: Scorecard) -> list[tuple[str, ...]]:
    """Each row's cells as text; the difference above its interval (two short lines)."""
    rows: list[tuple[str, ...]] = []
    for row in card.rows:
        weighted = " weighted" if row.basis == "deployment-weighted" else ""
        difference = (
            row.difference
            if row.difference_text == row.difference
            else f"{row.difference}{weighted}\n{row.interval}"
        )
        rows.append(
            (
                row.suite,
                row.baseline.label,
                row.candidate.label,
                difference,
                row.gate.label,
                row.validity.label,
                row.audit.label,
            )
        )
    return rows


def _widths(cells: list[tuple[str, ...]], headers: list[str]) -> list[int]:
    """Each column's width, so that the scorecard fits `SCORECARD_WIDTH` columns.

    A column starts at its widest line, its header's included. While the table is too wide,
    columns give, down to their longest word, in this order: the suite, the badges, the
    difference's header, the names (a cell wraps at its spaces). Only when every cell is down
    to its longest word do the names, then the suite, fold inside a word (never cut).
    """
    n = len(headers)
    natural = [
        max(
            max(len(line) for row in cells for line in row[i].splitlines() or [""]),
            len(headers[i]),
        )
        for i in range(n)
    ]
    least = [
        min(natural[i], max(len(word) for row in cells for word in row[i].split() or [""]))
        for i in range(n)
    ]
    least = [max(w, max(len(word) for word in headers[i].split())) for i, w in enumerate(least)]
    # the difference's two lines stay whole (its header may wrap)
    least[3] = max(len(line) for row in cells for line in row[3].splitlines() or [""])
    budget = SCORECARD_WIDTH - 2 * (n - 1)  # two spaces between two columns
    widths = list(natural)
    for i in (0, 4, 5, 6, 3, 1, 2):  # who gives first: the suite, the badges, the header
        while sum(widths) > budget and widths[i] > least[i]:
            widths[i] -= 1
    while sum(widths) > budget:  # still too wide: fold the names, then the suite, in a word
        can = [i for i in (1, 2) if widths[i] > 8] or [i for i in (0,) if widths[i] > 8]
        if not can:
            break
        widths[max(can, key=lambda i: widths[i])] -= 1
    return widths


def print_scorecard(out: Console, card: Scorecard) -> None:
    """The scorecard as a table, one row per comparison, badges coloured by tone.

    The same rows as the report's first screen (`evalsuite.service.scorecard`), within 100
    columns: the difference above its interval, cells wrapped at their spaces (a word longer
    than its column is folded, never cut). Nothing is printed when there is no comparison.
    Plain text: a model name is never read as markup.
    """
    if not card.rows:
        return
    table = Table(
        title="scorecard",
        title_justify="left",
        title_style="bold",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        collapse_padding=True,
    )
    cells = _scorecard_cells(card)
    widths = _widths(cells, [c.name for c in card.columns])
    for column, width in zip(card.columns, widths, strict=True):
        table.add_column(
            column.name,
            justify="right" if column.numeric else "left",
            overflow="fold",
            width=width,
        )
    badges = [(r.gate, r.validity, r.audit) for r in card.rows]
    for row, (gate, validity, audit) in zip(cells, badges, strict=True):
        table.add_row(
            *(Text(printable(cell, keep_lines=True)) for cell in row[:4]),
            _badge(gate),
            _badge(validity),
            _badge(audit),
        )
    out.print(table, width=min(out.width, SCORECARD_WIDTH))
    out.print()  # a blank line between the scorecard and what follows
