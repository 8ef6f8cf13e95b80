"""How every renderer writes a number: one place, so the CLI, Markdown and HTML agree.

An undefined figure is ``n/a`` (with its reason where the view knows one), never ``None``,
``nan`` or a Python container (docs/design/result-model.md).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from typing import Any

__all__ = [
    "fmt",
    "fmt_bytes",
    "fmt_ci",
    "fmt_counts",
    "fmt_g",
    "fmt_mb",
    "fmt_p",
    "fmt_pct",
    "fmt_signed",
    "fmt_time",
    "is_number",
]

NA = "n/a"


def is_number(value: Any) -> bool:
    """A finite int or float (not a bool)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def fmt(value: Any, digits: int = 3) -> str:
    """A number with `digits` decimals; ``n/a`` when missing or not finite."""
    if value is None:
        return NA
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if not is_number(value):
        return NA if isinstance(value, float) else str(value)
    return f"{value:.{digits}f}"


def fmt_signed(value: Any, digits: int = 3) -> str:
    """A difference with its sign (``+0.236``, ``−0.010``); ``n/a`` when undefined."""
    if not is_number(value):
        return NA
    text = f"{value:+.{digits}f}"
    return text.replace("-", "−")


def fmt_p(value: Any) -> str:
    """A p-value: ``< 0.001`` below a thousandth (never ``0.0000``), else 3 decimals."""
    if not is_number(value):
        return NA
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def fmt_pct(value: Any) -> str:
    """A share as a percentage with one decimal."""
    return f"{value:.1%}" if is_number(value) else NA


def fmt_ci(ci: Sequence[Any] | None, digits: int = 3, *, signed: bool = False) -> str:
    """An interval ``[low, high]``; ``n/a`` when either bound is undefined."""
    if not ci or len(ci) != 2 or not (is_number(ci[0]) and is_number(ci[1])):
        return NA
    show = fmt_signed if signed else fmt
    return f"[{show(ci[0], digits)}, {show(ci[1], digits)}]"


def fmt_counts(counts: Mapping[str, Any] | None, *, none: str = "none") -> str:
    """``{'ConnectionError': 60}`` as ``ConnectionError 60``; `none` when empty."""
    if not counts:
        return none
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: str(kv[0])))


def fmt_mb(n_bytes: Any) -> str:
    """A byte count in megabytes with one decimal (``12.3 MB``); ``n/a`` when unknown."""
    return f"{n_bytes / 1e6:.1f} MB" if is_number(n_bytes) else NA


def fmt_bytes(n_bytes: Any) -> str:
    """A size in binary units (``512 B``, ``1.5 KiB``, ``12.3 MiB``); ``n/a`` when unknown."""
    if not is_number(n_bytes):
        return NA
    size = float(n_bytes)
    for unit in ("B", "KiB", "MiB"):
        if abs(size) < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"


_DATE_ONLY = re.compile(r"\d{4}-\d{2}-\d{2}")


def fmt_time(value: Any) -> str:
    """A moment to the minute, in UTC: ``2026-12-05 17:10 UTC``; ``n/a`` when missing.

    `value` is a `datetime` or its ISO 8601 text (what the store keeps). A time without a
    zone is taken as UTC (the store writes UTC); one with a zone is converted to UTC. Seconds
    and microseconds are dropped (truncated, never rounded up into the next minute). A date
    alone (``2026-12-05``) stays a date; a text that is not a time is returned unchanged.
    """
    if value is None or value == "":
        return NA
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        return value.isoformat()
    else:
        text = str(value).strip()
        if _DATE_ONLY.fullmatch(text):
            return text
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return text
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def fmt_g(value: Any) -> str:
    """A number in as few digits as it needs (``0.02``, ``3``, ``2.5``); ``n/a`` when undefined."""
    return f"{value:g}" if is_number(value) else NA
