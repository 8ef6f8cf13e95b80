"""A family's score declaration: which of its task's scores counts, and its scale.

Declared in the suite file (``score``, ``score_bounds`` under ``[[families]]``), frozen into the
manifest's family record and covered by its hash; absent, a family is scored as before (the
single scorer's single value). Semantics: docs/design/scorers.md.
"""

from __future__ import annotations

import math
import re

__all__ = ["check_score_bounds", "check_score_selector"]

_SELECTOR = re.compile(r"^[^/\s](?:[^\s]*[^/\s])?$")


def check_score_selector(value: str | None) -> str | None:
    """Validate ``score``: a scorer name, a key of a dict-valued score, or ``scorer/key``.

    Raises:
        ValueError: empty, white space inside, or a leading/trailing ``/``.
    """
    if value is None:
        return None
    if not _SELECTOR.match(value):
        raise ValueError(
            f"score must name a scorer ('match'), a key of a dict-valued score ('utility') "
            f"or both ('scorer_name/utility'), without spaces (got {value!r})"
        )
    return value


def check_score_bounds(value: tuple[float, float] | None) -> tuple[float, float] | None:
    """Validate ``score_bounds``: two finite numbers, low < high.

    Raises:
        ValueError: not finite, or not increasing.
    """
    if value is None:
        return None
    low, high = value
    if not (math.isfinite(low) and math.isfinite(high)) or not low < high:
        raise ValueError(
            f"score_bounds must be [low, high] with finite low < high, the scale of the "
            f"scorer's numeric value (got [{low!r}, {high!r}]); e.g. score_bounds = [0, 10]"
        )
    return (float(low), float(high))
