"""Validity as models accumulate: correlations on an expanding window in observation order."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from evalsuite.analyse import Interval, check_level
from evalsuite.errors import InsufficientDataError, UsageError
from evalsuite.validity._checks import FEW_FOR_P, aligned_order, as_vector
from evalsuite.validity._compare import plain_dict, plain_value
from evalsuite.validity._stats import (
    correlations,
    fisher_interval,
    kendall_se,
    pearson_se,
    spearman_se,
)
from evalsuite.validity._validity import Statistic

__all__ = ["OverTimePoint", "ValidityOverTime", "validity_over_time"]


@dataclass(frozen=True, slots=True)
class OverTimePoint:
    """The correlations over every model observed up to and including `through`.

    Attributes:
        n: models in the window.
        through: the latest observation time (order value) in the window.
        spearman: Spearman r_s, with `spearman_ci` (Bonett–Wright).
        spearman_ci: interval of `spearman`.
        kendall: Kendall τ-b, with `kendall_ci` (Fieller).
        kendall_ci: interval of `kendall`.
        pearson: Pearson r, with `pearson_ci` (Fisher).
        pearson_ci: interval of `pearson`.
    """

    n: int
    through: Any
    spearman: float
    spearman_ci: Interval
    kendall: float
    kendall_ci: Interval
    pearson: float
    pearson_ci: Interval


@dataclass(frozen=True, slots=True)
class ValidityOverTime:
    """Correlations recomputed as models are added in observation order.

    Attributes:
        level: level of every interval.
        start: the smallest window shown.
        n_dropped: models dropped because x or y was missing.
        points: one `OverTimePoint` per distinct observation time, oldest first.
        flags: warnings a reader must see.
    """

    level: float
    start: int
    n_dropped: int
    points: tuple[OverTimePoint, ...]
    flags: tuple[str, ...]

    def conf_int(
        self, level: float = 0.95, statistic: Statistic = "spearman"
    ) -> tuple[Interval, ...]:
        """The interval of `statistic` at `level`, one per point (Fisher-z, recomputed).

        Raises:
            UsageError: `statistic` is ``disattenuated`` (not computed over time).
        """
        check_level(level)
        if statistic == "spearman":
            return tuple(fisher_interval(p.spearman, spearman_se(p.spearman, p.n), level)
                         for p in self.points)  # fmt: skip
        if statistic == "kendall":
            return tuple(fisher_interval(p.kendall, kendall_se(p.n), level) for p in self.points)
        if statistic == "pearson":
            return tuple(fisher_interval(p.pearson, pearson_se(p.n), level) for p in self.points)
        raise UsageError(f"'statistic' must be spearman, kendall or pearson (got {statistic!r})")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``points`` as a list of dicts, intervals as ``[low, high]``."""
        return {
            "level": self.level,
            "start": self.start,
            "n_dropped": self.n_dropped,
            "points": [plain_dict(p) for p in self.points],
            "flags": plain_value(self.flags),
        }

    def to_frame(self) -> pd.DataFrame:
        """One row per window; intervals split into ``_low``/``_high`` columns."""
        rows = []
        for p in self.points:
            row: dict[str, Any] = {}
            for key, value in plain_dict(p).items():
                if key.endswith("_ci"):
                    row[f"{key[:-3]}_low"], row[f"{key[:-3]}_high"] = value
                else:
                    row[key] = value
            rows.append(row)
        return pd.DataFrame(rows)


def validity_over_time(
    x: npt.ArrayLike,
    y: npt.ArrayLike,
    order: npt.ArrayLike,
    *,
    level: float = 0.95,
    start: int = 5,
) -> ValidityOverTime:
    """Correlations of `x` with `y` over the models observed so far, as time advances.

    Args:
        x: the eval score of each model (NaN: missing).
        y: the deployment result of each model, aligned by position (NaN: missing).
        order: when each model's deployment result was observed (numbers or datetimes; no missing).
        level: level of every interval.
        start: the smallest window reported (at least 4, so that intervals exist).

    Returns:
        A `ValidityOverTime` with one point per distinct observation time from the first
        window holding `start` models on.

    Raises:
        InsufficientDataError: fewer than `start` models have both x and y.
        UsageError: misaligned inputs, a missing order value, or ``start < 4``.

    Notes:
        Each window holds every model observed at or before its time (models sharing a time
        enter together), so windows are nested and their intervals are not independent: the
        path shows saturation (the correlation falls as models bunch at the top) or drift,
        but successive points are not separate tests. Intervals as in `validity`: Bonett–
        Wright, Fieller, Fisher; NaN where a window is constant or perfectly correlated.
    """
    check_level(level)
    if isinstance(start, bool) or not isinstance(start, int) or start < 4:
        raise UsageError(f"'start' must be an integer >= 4 (got {start!r})")
    xs, ys = as_vector(x, "x"), as_vector(y, "y")
    if xs.size != ys.size:
        raise UsageError(f"'x' and 'y' must have one value per model ({xs.size} != {ys.size})")
    keep = np.isfinite(xs) & np.isfinite(ys)
    when = aligned_order(order, xs.size, keep)
    n = int(np.count_nonzero(keep))
    if n < start:
        raise InsufficientDataError(
            f"validity over time needs at least start={start} models with both x and y; got {n}"
        )
    xs, ys = xs[keep], ys[keep]
    points = []
    for t in np.unique(when):
        window = when <= t
        k = int(np.count_nonzero(window))
        if k < start:
            continue
        c, _ = correlations(xs[window], ys[window], level)
        points.append(OverTimePoint(k, t, c.spearman, c.spearman_ci, c.kendall, c.kendall_ci,
                                    c.pearson, c.pearson_ci))  # fmt: skip
    flags = []
    if start < FEW_FOR_P:
        flags.append(f"windows of fewer than {FEW_FOR_P} models: their intervals are wide")
    if any(math.isnan(p.spearman) for p in points):
        flags.append("some windows have a constant x or y: their correlations are NaN")
    return ValidityOverTime(level, start, int(keep.size - n), tuple(points), tuple(flags))
