"""The small table every result's `summary()` returns, and the number formatting it owns."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, NamedTuple, cast

import pandas as pd

__all__ = ["Interval", "Table", "format_cell"]


class Interval(NamedTuple):
    """A confidence interval; both ends are NaN when it is undefined."""

    low: float
    high: float


def format_cell(value: object) -> str:
    """Render one cell: 4 decimals for floats, ``NaN`` for undefined, ``—`` for absent."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Interval):
        return f"[{format_cell(value.low)}, {format_cell(value.high)}]"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "∞" if value > 0 else "-∞"
        return f"{value:.4f}" if abs(value) < 1e4 else f"{value:.4g}"
    return str(value)


@dataclass(frozen=True, slots=True)
class Table:
    """A titled table of already-computed values; `report/` renders it, never reformats it.

    Attributes:
        title: one line naming what the table shows.
        columns: column headers.
        rows: one tuple per row, as long as `columns`.
        notes: sentences printed under the table (methods, exclusions, assumptions).
    """

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[object, ...], ...]
    notes: tuple[str, ...] = ()

    @classmethod
    def build(
        cls,
        title: str,
        columns: Sequence[str],
        rows: Sequence[Sequence[object]],
        notes: Sequence[str] = (),
    ) -> Table:
        """Build a table from any sequences (converted to tuples)."""
        return cls(title, tuple(columns), tuple(tuple(r) for r in rows), tuple(notes))

    def to_markdown(self) -> str:
        """GitHub-flavoured Markdown: a bold title, the table, then the notes."""
        lines = [f"**{self.title}**", ""]
        lines.append("| " + " | ".join(self.columns) + " |")
        lines.append("|" + "|".join("---" for _ in self.columns) + "|")
        for row in self.rows:
            lines.append("| " + " | ".join(format_cell(v) for v in row) + " |")
        if self.notes:
            lines.append("")
            lines.extend(f"- {note}" for note in self.notes)
        return "\n".join(lines)

    def to_html(self) -> str:
        """An HTML fragment (a table with a caption, then a list of notes)."""
        head = "".join(f"<th>{html.escape(c)}</th>" for c in self.columns)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(format_cell(v))}</td>" for v in row) + "</tr>"
            for row in self.rows
        )
        notes = "".join(f"<li>{html.escape(n)}</li>" for n in self.notes)
        return (
            f"<table><caption>{html.escape(self.title)}</caption>"
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
            + (f"<ul>{notes}</ul>" if notes else "")
        )

    def _repr_html_(self) -> str:
        return self.to_html()

    def __str__(self) -> str:
        return self.to_markdown()


class IntervalFields:
    """Mixin for frozen result dataclasses with a ``ci`` field.

    Gives a JSON-ready `to_dict` with ``ci`` as ``[low, high]`` and a one-row `to_frame` with
    ``ci_low`` and ``ci_high``.
    """

    __slots__ = ()

    ci: Interval

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields (NaN kept; the CLI writes it as null); `ci` is ``[low, high]``."""
        out = asdict(cast(Any, self))
        out["ci"] = [self.ci.low, self.ci.high]
        return out

    def to_frame(self) -> pd.DataFrame:
        """One row with every field, the interval split into ``ci_low`` and ``ci_high``."""
        row = self.to_dict()
        low, high = row.pop("ci")
        return pd.DataFrame([{**row, "ci_low": low, "ci_high": high}])
