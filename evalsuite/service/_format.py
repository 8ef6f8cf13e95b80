"""How every renderer writes a number: one place, so the CLI, Markdown and HTML agree.

An undefined figure is ``n/a`` (with its reason where the view knows one), never ``None``,
``nan`` or a Python container (docs/design/result-model.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "fmt",
    "fmt_ci",
    "fmt_counts",
    "fmt_g",
    "fmt_mb",
    "fmt_p",
    "fmt_pct",
    "fmt_signed",
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


def fmt_g(value: Any) -> str:
    """A number in as few digits as it needs (``0.02``, ``3``, ``2.5``); ``n/a`` when undefined."""
    return f"{value:g}" if is_number(value) else NA
