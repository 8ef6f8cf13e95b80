"""The fixed-sample end of an adaptive `--versus` run (docs/design/adaptive.md, "Comparing").

A `--versus` run fills the slots (item, epoch <= E) of a fixed E-epoch run in an adaptive
order. When every slot is filled its data are the fixed run's data, and `final_paired_test`
is the fixed run's own paired t on them, at the share ``alpha_final`` of alpha. Before
that, the run stops early only when the confidence sequence shows that the final test would
reach the same verdict whatever the unfilled slots hold: `final_halfwidth_bound` bounds the
final test's half-width over every completion of the unfilled slots.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from scipy import stats

from evalsuite.analyse._paired import constant_difference_bounds, zero_variance_p
from evalsuite.errors import UsageError

__all__ = [
    "FINAL_METHOD",
    "FinalTest",
    "final_halfwidth_bound",
    "final_paired_test",
    "t_quantile",
]

FINAL_METHOD = "paired_t_final"
"""The final fixed-sample test: the weighted paired t on item-mean differences."""

FinalVerdict = Literal["better", "worse", "no_difference_beyond_margin", "undecided"]


@dataclass(frozen=True, slots=True)
class FinalTest:
    """The paired t at the budget: difference, its interval at 1 - alpha, p-value, verdict."""

    diff: float
    se: float
    lower: float
    upper: float
    p_value: float
    alpha: float
    verdict: FinalVerdict

    def to_dict(self) -> dict[str, Any]:
        """JSON fields."""
        return {
            "method": FINAL_METHOD,
            "alpha": self.alpha,
            "diff": self.diff,
            "se": self.se,
            "ci": [self.lower, self.upper],
            "p_value": self.p_value,
            "verdict": self.verdict,
        }


def t_quantile(n_items: int, alpha: float) -> float:
    """``t_{n-1, 1 - alpha/2}``: the final test's critical value (NaN below 2 items)."""
    if n_items < 2:
        return math.nan
    return float(stats.t.ppf(1 - alpha / 2, n_items - 1))


def _check(d: npt.NDArray[np.float64], w: npt.NDArray[np.float64], alpha: float) -> None:
    if not 0 < alpha < 1:
        raise UsageError(f"the final test's alpha must be in (0, 1) (got {alpha})")
    if d.ndim != 1 or d.shape != w.shape or d.size == 0:
        raise UsageError("the final test needs one difference and one weight per item")
    if (w < 0).any() or not math.isclose(float(w.sum()), 1.0, rel_tol=1e-9):
        raise UsageError("the final test's weights must be non-negative and sum to 1")


def final_paired_test(
    differences: npt.ArrayLike,
    weights: npt.ArrayLike,
    *,
    alpha: float,
    margin: float,
) -> FinalTest:
    """Weighted paired t on per-item differences ``d_j = ybar_A,j - ybar_B,j``.

    ``diff = sum_j w_j d_j`` with ``se^2 = n/(n-1) sum_j w_j^2 (d_j - diff)^2`` on ``n - 1``
    degrees of freedom (the linearised variance of a weighted mean; with equal weights
    ``sd(d)/sqrt(n)``, exactly `paired_difference`). Verdict: ``better``/``worse`` when the
    interval at ``1 - alpha`` excludes 0, else ``no_difference_beyond_margin`` when it lies
    inside ``+-margin``, else ``undecided``. When every difference is equal (no variance) the
    p-value is the exact sign-flip one (`zero_variance_p`), and the interval
    `constant_difference_bounds`, not the point.

    Raises:
        UsageError: shapes, weights or alpha out of range.
    """
    d = np.asarray(differences, dtype=float)
    w = np.asarray(weights, dtype=float)
    _check(d, w, alpha)
    n = d.size
    diff = float(w @ d)
    if n < 2:
        return FinalTest(diff, math.nan, math.nan, math.nan, math.nan, alpha, "undecided")
    se = math.sqrt(n / (n - 1) * float(np.sum(w**2 * (d - diff) ** 2)))
    if se > 0:
        p = float(2 * stats.t.sf(abs(diff) / se, n - 1))
        half = t_quantile(n, alpha) * se
        lower, upper = diff - half, diff + half
    else:
        # every weighted item showed the same difference: the exact bounds, never the point
        # (docs/methods.md, section 6, "Zero variance")
        p = zero_variance_p(diff, n)
        lower, upper = constant_difference_bounds(diff, int(np.count_nonzero(w)), alpha / 2)
    verdict: FinalVerdict
    if p <= alpha and diff > 0:
        verdict = "better"
    elif p <= alpha and diff < 0:
        verdict = "worse"
    elif -margin < lower and upper < margin:
        verdict = "no_difference_beyond_margin"
    else:
        verdict = "undecided"
    return FinalTest(diff, se, lower, upper, p, alpha, verdict)


def final_halfwidth_bound(
    low: npt.ArrayLike,
    high: npt.ArrayLike,
    weights: npt.ArrayLike,
    *,
    alpha: float,
) -> float:
    """An upper bound on the final test's half-width over every completion of the data.

    Item j's final difference ``d_j`` is known to lie in ``[low_j, high_j]`` (its unfilled
    slots may hold anything in [0, 1]), so the weighted mean lies in ``[A, B] = [sum w low,
    sum w high]`` and ``(d_j - diff)^2 <= max((low_j - B)^2, (high_j - A)^2)``. The bound is
    ``t_{n-1, 1-alpha/2} sqrt(n/(n-1) sum_j w_j^2 max(...))``; it equals the half-width once
    every slot is filled (``low = high``), up to the zero-variance case, where it is 0 too.
    """
    lo = np.asarray(low, dtype=float)
    hi = np.asarray(high, dtype=float)
    w = np.asarray(weights, dtype=float)
    _check(lo, w, alpha)
    if lo.shape != hi.shape or (lo > hi + 1e-12).any():
        raise UsageError("final_halfwidth_bound: low <= high, one pair per item")
    n = lo.size
    if n < 2:
        return math.inf
    a, b = float(w @ lo), float(w @ hi)
    worst = np.maximum((lo - b) ** 2, (hi - a) ** 2)
    return t_quantile(n, alpha) * math.sqrt(n / (n - 1) * float(np.sum(w**2 * worst)))
