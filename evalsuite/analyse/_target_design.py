"""A few-stage (Stein-type) design for a target half-width on the suite's items.

The estimand is the weighted mean solve rate of the suite's own items, ``mu = sum_j w_j p_j``
(``suite_items``, `evalsuite.analyse._estimand`). The design (docs/design/sequential.md,
"Target half-width"):

1. **Pilot**: `pilot` epochs (at least 2) on every item.
2. **Plan**: the within-item variances ``s_j^2`` (unbiased, ``ddof = 1``) give the variance of
   the estimate with ``E`` epochs on every item, ``V(E) = sum_j w_j^2 s_j^2 / E``; the epochs
   needed are ``E* = z^2 sum_j w_j^2 s_j^2 / H^2`` (Stein 1945's two-stage idea, with the
   normal quantile: the item count, not the epoch count, is the sample size).
3. **Top up**: every item is brought to ``floor(E*)`` epochs, and a random subset of the
   items, drawn independently of every outcome, to one more (so the average is ``E*``
   without rounding every item up).
4. **Check**: the interval ``mu_hat +- z sqrt(sum_j w_j^2 s_j^2 / n_j)`` from all attempts;
   if it is wider than ``+-H``, plan and top up again (at most `max_stages` stages, and
   never past `max_epochs` on an item).

Which items get how many epochs never depends on their own outcomes beyond the pilot's
common plan, so each item's plain mean is unbiased for its solve rate, and the weights stay
the deployment weights. Stopping depends on the variance estimate alone, not the mean.

Why not spend the epochs on the items whose outcomes are mixed: an item's unbiased estimate
under a plan that extends it only when its own pilot is mixed (`two_stage_estimate`) has,
with a 2-epoch pilot, exactly the variance of its 2-epoch mean whatever the extension
(docs/design/sequential.md gives the exact computation): the extension buys nothing, so
"epochs where they matter" cannot beat a common plan under an unbiased estimate.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import stats

from evalsuite.errors import UsageError

__all__ = ["METHOD", "TargetOutcome", "target_halfwidth_run"]

METHOD = "stein_two_stage_equal_allocation+normal"

Draw = Callable[[npt.NDArray[np.int64]], npt.NDArray[np.float64]]
"""Runs ``counts[j]`` more attempts of item j; returns each item's sum of (0/1) scores."""


@dataclass(frozen=True, slots=True)
class TargetOutcome:
    """The run's end: estimate, interval, calls, epochs per item, stages."""

    estimate: float
    lower: float
    upper: float
    halfwidth: float
    calls: int
    stages: int
    reached: bool
    """The interval is at most +-H (False: stopped at `max_epochs` or `max_stages`)."""
    epochs: npt.NDArray[np.int64]

    def to_dict(self) -> dict[str, Any]:
        """JSON fields."""
        return {
            "method": METHOD,
            "estimand": "suite_items",
            "estimate": self.estimate,
            "ci": [self.lower, self.upper],
            "halfwidth": self.halfwidth,
            "calls": self.calls,
            "stages": self.stages,
            "reached": self.reached,
        }


def _interval(
    w: npt.NDArray[np.float64], n: npt.NDArray[np.int64], s: npt.NDArray[np.float64], z: float
) -> tuple[float, float, float]:
    mean = s / n
    var = np.where(n > 1, (s - s * mean) / np.maximum(n - 1, 1), 0.0)  # 0/1 scores
    v = float(np.sum(w**2 * var / n))
    return float(w @ mean), z * math.sqrt(v), float(np.sum(w**2 * var))


def target_halfwidth_run(  # noqa: PLR0913 - the design's settings, each with a default
    weights: npt.ArrayLike,
    halfwidth: float,
    draw: Draw,
    rng: np.random.Generator,
    *,
    alpha: float = 0.05,
    pilot: int = 2,
    max_epochs: int = 20,
    max_stages: int = 8,
) -> TargetOutcome:
    """Run the few-stage design until the interval of the suite's items is at most +-H.

    Args:
        weights: deployment weight per item (normalised to sum 1).
        halfwidth: H.
        draw: runs the requested attempts (`Draw`).
        rng: draws the subset that gets the extra epoch (explicit, recorded by the caller).
        alpha: 1 - the interval's level.
        pilot: epochs on every item first (at least 2: the within-item variance needs 2).
        max_epochs: most epochs on any item.
        max_stages: most plan-and-top-up stages after the pilot.

    Raises:
        UsageError: bad weights, H, alpha or pilot.
    """
    w = np.asarray(weights, dtype=float)
    if w.ndim != 1 or w.size < 2 or (w < 0).any() or not w.sum() > 0:
        raise UsageError("one non-negative weight per item, at least two items")
    if not 0 < halfwidth < 0.5:
        raise UsageError(f"the target half-width must be in (0, 0.5) (got {halfwidth})")
    if not 0 < alpha < 1:
        raise UsageError(f"alpha must be in (0, 1) (got {alpha})")
    if pilot < 2 or max_epochs < pilot:
        raise UsageError("the pilot needs at least 2 epochs, and max_epochs at least the pilot")
    w = w / w.sum()
    z = float(stats.norm.isf(alpha / 2))
    n = np.full(w.size, pilot, dtype=np.int64)
    s = np.asarray(draw(n.copy()), dtype=float)
    stages = 0
    estimate, half, total = _interval(w, n, s, z)
    while half > halfwidth and stages < max_stages and (n < max_epochs).any():
        stages += 1
        need = z**2 * total / halfwidth**2  # E*: average epochs per item
        floor = math.floor(need)
        extra = np.clip(floor - n, 0, None)
        share = need - floor
        lucky = rng.random(w.size) < share
        extra = extra + ((n + extra == floor) & lucky)
        if not extra.any():  # the plan is already met: one more epoch where it is least
            extra = (n == n.min()).astype(np.int64)
        extra = np.minimum(extra, max_epochs - n)
        s = s + np.asarray(draw(extra.astype(np.int64)), dtype=float)
        n = n + extra
        estimate, half, total = _interval(w, n, s, z)
    return TargetOutcome(
        estimate,
        estimate - half,
        estimate + half,
        half,
        int(n.sum()),
        stages,
        half <= halfwidth,
        n,
    )
