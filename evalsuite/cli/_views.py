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


def print_scorecard(out: Console, card: Scorecard) -> None:
    """The scorecard as a table, one row per comparison, badges coloured by tone.

    The same rows as the report's first screen (`evalsuite.service.scorecard`), within 100
    columns: the difference above its interval, names folded rather than cut. Nothing is
    printed when there is no comparison. Plain text: a model name is never read as markup.
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
    # a run's name is read whole (up to 22 characters); the suite wraps at its spaces
    names = max(len(r.label) for row in card.rows for r in (row.baseline, row.candidate))
    suite = max(len(word) for row in card.rows for word in row.suite.split())
    for i, column in enumerate(card.columns):
        table.add_column(
            column.name,
            justify="right" if column.numeric else "left",
            overflow="fold",
            no_wrap=i >= 3,  # the difference and the badges keep their lines whole
            min_width=min(names, 22) if i in (1, 2) else None,
            max_width=max(suite, 10) if i == 0 else None,
        )
    for row in card.rows:
        weighted = " weighted" if row.basis == "deployment-weighted" else ""
        difference = (
            row.difference
            if row.difference_text == row.difference
            else f"{row.difference}{weighted}\n{row.interval}"
        )
        table.add_row(
            Text(printable(row.suite)),
            Text(printable(row.baseline.label)),
            Text(printable(row.candidate.label)),
            Text(printable(difference, keep_lines=True)),
            _badge(row.gate),
            _badge(row.validity),
            _badge(row.audit),
        )
    out.print(table, width=min(out.width, 100))
