"""A few-stage (Stein-type) design for a target half-width (``run --adaptive --target-halfwidth``).

Two estimands (`evalsuite.analyse._estimand`; docs/design/sequential.md, "Target half-width"):

- ``suite_items``: ``mu = sum_j w_j p_j``, the weighted mean long-run score of the suite's own
  items (only epochs vary).
- ``item_population``: the mean over the population of items the suite was drawn from (items
  and epochs vary).

The design (`TargetDesign`, one round at a time):

1. **Pilot**: `pilot` epochs (at least 2) on every item.
2. **Plan**. ``suite_items``, from the pilot: its within-item variances ``s_j^2``
   (unbiased, ``ddof = 1``) give the variance with ``E`` epochs on every item,
   ``V(E) = sum_j w_j^2 s_j^2 / E``; the epochs needed are ``E* = q^2 sum_j w_j^2 s_j^2 / H^2``
   (Stein 1945's two-stage idea: the item count, not the epoch count, is the sample size).
   ``item_population``: `population_target` (between- and within-item spread); when more
   epochs cannot reach +-H the design stops after the pilot with that refusal and its figures.
3. **Top up**: every item is brought to ``floor(E*)`` epochs, and a random subset of the
   items, drawn independently of every outcome, to one more (the average is ``E*``).
4. **Check**: the interval from all attempts; if wider than +-H, plan and top up again (at
   most `max_stages` stages, never past `max_epochs` on an item nor `max_calls` in all).

Which items get how many epochs never depends on their own outcomes beyond the common plan
(a later top-up's size depends on the pilot's variances, its items are drawn at random), so
each item's plain mean is unbiased for its solve rate and the weights stay the deployment
weights. Stopping depends on the variance estimate alone, not the mean.

The interval (``suite_items``) is Stein's: ``mu_hat +- q0 sqrt(sum_j w_j^2 s0_j^2 / n_j)``,
with the pilot's item variances ``s0_j^2`` at the epochs run since, and ``q0`` the t quantile on
their Welch-Satterthwaite degrees of freedom (few items with mixed outcomes in the pilot: few
degrees of freedom), at ``1 - 0.9 alpha / 2`` (the reserve). The plan makes it +-H after one
top-up; a later top-up adds one epoch to the fewest items, in a random order, that bring it
to +-H. Stopping depends on the pilot alone, so stopping cannot select runs whose variance
estimate happens to be low (that selection cost a variance-checking design 0.005-0.015 of
coverage; docs/design/sequential.md). ``item_population``: the weighted t interval of item
means on ``N - 1`` degrees of freedom (as the paired t, `_adaptive_final`), never narrower
than the pilot's between- and within-item spreads give at the epochs run, at the same level.

Why not spend the epochs on the items whose outcomes are mixed: an item's unbiased estimate
under a plan that extends it only when its own pilot is mixed has, with a 2-epoch pilot,
exactly the variance of its 2-epoch mean whatever the extension (docs/design/sequential.md):
the extension buys nothing, so "epochs where they matter" cannot beat a common plan under an
unbiased estimate that uses only this run's outcomes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import stats

from evalsuite.analyse._estimand import Estimand, PopulationTarget, population_target
from evalsuite.errors import UsageError

__all__ = [
    "METHOD",
    "METHOD_POPULATION",
    "TargetDesign",
    "TargetOutcome",
    "method_for",
    "target_halfwidth_run",
]

METHOD = "stein_two_stage_equal_epochs+pilot_variance_satterthwaite_t"
"""``suite_items``: Stein's two-stage design; the interval from the pilot's variances, t on
their Welch-Satterthwaite df."""
METHOD_POPULATION = "stein_few_stage_equal_epochs+item_means_t"
"""``item_population``: the few-stage design, weighted t interval of item means."""

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

Draw = Callable[[IntArray], FloatArray]
"""Runs ``counts[j]`` more attempts of item j; returns each item's sum of (0/1) scores."""

_MAX_VAR = 0.25
"""Variance of one score in [0, 1] at most: an item with fewer than 2 scores gets it."""


def method_for(estimand: Estimand) -> str:
    """The method string of the design for `estimand`."""
    return METHOD if estimand == "suite_items" else METHOD_POPULATION


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
    """The interval is at most +-H (False: stopped by the budget, the stages or a refusal)."""
    epochs: IntArray
    estimand: Estimand = "suite_items"
    refused: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON fields."""
        return {
            "method": method_for(self.estimand),
            "estimand": self.estimand,
            "estimate": self.estimate,
            "ci": [self.lower, self.upper],
            "halfwidth": self.halfwidth,
            "calls": self.calls,
            "stages": self.stages,
            "reached": self.reached,
            "refused": self.refused,
        }


@dataclass(frozen=True, slots=True)
class TargetInterval:
    """The interval from the attempts so far."""

    estimate: float
    halfwidth: float
    quantile: float
    df: float
    spread: float
    """``suite_items``: ``sum_j w_j^2 s_j^2`` (the variance with one epoch per item)."""


def _check(weights: npt.ArrayLike, halfwidth: float, alpha: float, pilot: int, cap: int) -> None:
    w = np.asarray(weights, dtype=float)
    if w.ndim != 1 or w.size < 2 or (w < 0).any() or not w.sum() > 0:
        raise UsageError(
            "the target design needs one non-negative weight per item and at least two items "
            f"(got {w.size}); run more items"
        )
    if not 0 < halfwidth < 0.5:
        raise UsageError(f"the target half-width must be in (0, 0.5), e.g. 0.03 (got {halfwidth})")
    if not 0 < alpha < 1:
        raise UsageError(f"alpha must be in (0, 1) (got {alpha})")
    if pilot < 2 or cap < pilot:
        raise UsageError(
            f"--target-halfwidth needs at least 2 epochs per item (its pilot estimates each "
            f"item's variance from 2 attempts); got a pilot of {pilot} and at most {cap} "
            "epoch(s) per item: give --max-epochs 2 or more"
        )


@dataclass(slots=True)
class TargetDesign:
    """The few-stage design, one round at a time (`next_round`, then `observe`).

    Attributes:
        weights: deployment weight per item (normalised to sum 1).
        halfwidth: H.
        rng: draws the subset that gets an extra epoch (explicit: the run's seed).
        estimand: ``suite_items`` or ``item_population``.
        alpha: 1 - the interval's level.
        pilot: epochs on every item first (at least 2).
        max_epochs: most epochs on any item.
        max_calls: most attempts in all (None: ``max_epochs x items``).
        max_stages: most plan-and-top-up stages after the pilot.
        reserve: the share of alpha held back (both estimands): the t quantile is taken at
            ``1 - alpha (1 - reserve) / 2``. The normal-theory degrees of freedom overstate
            what 2 Bernoulli attempts per item say about their variance; the reserve (0.1,
            chosen on tuning seeds, checked on fresh ones: docs/design/sequential.md) keeps
            the coverage at 0.95.
    """

    weights: FloatArray
    halfwidth: float
    rng: np.random.Generator
    estimand: Estimand = "suite_items"
    alpha: float = 0.05
    pilot: int = 2
    max_epochs: int = 20
    max_calls: int | None = None
    max_stages: int = 8
    reserve: float = 0.1
    attempts: IntArray = field(init=False)
    scored: IntArray = field(init=False)
    sums: FloatArray = field(init=False)
    squares: FloatArray = field(init=False)
    stages: int = field(init=False, default=0)
    rounds: int = field(init=False, default=0)
    stop_reason: str | None = field(init=False, default=None)
    population: PopulationTarget | None = field(init=False, default=None)
    epochs_needed: float | None = field(init=False, default=None)
    _pending: IntArray | None = field(init=False, default=None)
    _pilot_var: FloatArray | None = field(init=False, default=None)
    _pilot_q: float = field(init=False, default=math.nan)
    _pilot_df: float = field(init=False, default=math.nan)

    def __post_init__(self) -> None:
        _check(self.weights, self.halfwidth, self.alpha, self.pilot, self.max_epochs)
        w = np.asarray(self.weights, dtype=float)
        self.weights = w / w.sum()
        n = w.size
        if self.max_calls is not None and self.max_calls < self.pilot * n:
            raise UsageError(
                f"--target-halfwidth's pilot runs {self.pilot} epochs on each of the {n} items "
                f"({self.pilot * n} attempts), more than --max-calls {self.max_calls}: raise "
                "--max-calls, or run fewer items"
            )
        if not 0 <= self.reserve < 1:
            raise UsageError(f"reserve must be in [0, 1) (got {self.reserve})")
        if self.estimand not in ("suite_items", "item_population"):
            raise UsageError(f"estimand must be suite_items or item_population ({self.estimand})")
        self.attempts = np.zeros(n, dtype=np.int64)
        self.scored = np.zeros(n, dtype=np.int64)
        self.sums = np.zeros(n)
        self.squares = np.zeros(n)

    @property
    def method(self) -> str:
        """The design and interval, as recorded with the run."""
        return method_for(self.estimand)

    @property
    def calls(self) -> int:
        """Attempts asked for so far."""
        return int(self.attempts.sum())

    @property
    def budget(self) -> int:
        """Most attempts the design may ask for."""
        cap = self.max_epochs * self.weights.size
        return cap if self.max_calls is None else min(cap, self.max_calls)

    def interval(self) -> TargetInterval:
        """The interval of the estimand from the scored attempts so far."""
        w, n = self.weights, self.scored
        mean = np.where(n > 0, self.sums / np.maximum(n, 1), 0.5)
        estimate = float(w @ mean)
        if self.estimand == "item_population":
            k = w.size
            se = math.sqrt(k / (k - 1) * float(np.sum(w**2 * (mean - estimate) ** 2)))
            q = float(stats.t.isf(self.alpha * (1 - self.reserve) / 2, k - 1))
            if self.population is not None:  # never narrower than the pilot's spreads give
                epochs = float(np.mean(np.maximum(n, 1)))
                b, v = self.population.between_sd**2, self.population.within_var
                pilot = math.sqrt(float(np.sum(w**2)) * (b + v / epochs))
                se = max(se, pilot)
            return TargetInterval(estimate, q * se, q, float(k - 1), se**2)
        # Stein's interval: the pilot's variances and quantile, at the epochs run since
        var = self._pilot_var
        if var is None:
            var = _item_variances(self.sums, self.squares, n)
            q, df = self._quantile(var, n)
        else:
            q, df = self._pilot_q, self._pilot_df
        total = float(np.sum(w**2 * var / np.maximum(n, 1)))
        return TargetInterval(estimate, q * math.sqrt(total), q, df, float(np.sum(w**2 * var)))

    def _quantile(self, var: FloatArray, n: IntArray) -> tuple[float, float]:
        """The t quantile on the Welch-Satterthwaite df of ``sum_j w_j^2 s_j^2 / n_j``."""
        c = self.weights**2 * var / np.maximum(n, 1)
        den = float(np.sum(c**2 / np.maximum(n - 1, 1)))
        df = max(float(c.sum()) ** 2 / den, 1.0) if den > 0 else math.inf
        level = self.alpha * (1 - self.reserve)
        q = float(stats.t.isf(level / 2, df)) if math.isfinite(df) else _z(level)
        return q, df

    def next_round(self) -> IntArray | None:
        """The extra attempts per item of the next round (None: the design has stopped)."""
        if self.stop_reason is not None:
            return None
        n = self.weights.size
        if self.rounds == 0:
            extra = np.full(n, self.pilot, dtype=np.int64)
        else:
            current = self.interval()
            if current.halfwidth <= self.halfwidth:
                self._stop(f"target: the interval is +-{current.halfwidth:.4f} <= +-H")
                return None
            if self.rounds == 1 and self.estimand == "item_population" and self._refuse():
                return None
            if self.stages >= self.max_stages:
                self._stop(f"stages: {self.max_stages} top-ups did not reach +-H")
                return None
            planned = self._plan(current)
            if planned is None:
                return None
            extra = planned
            self.stages += 1
        self._pending = extra
        return extra.copy()

    def _refuse(self) -> bool:
        if self.population is None:
            return False
        if self.population.reachable:
            self.epochs_needed = float(self.population.epochs_needed or self.pilot)
            return False
        self._stop(self.population.message)
        return True

    def _plan(self, current: TargetInterval) -> IntArray | None:
        n = self.weights.size
        if self.estimand == "item_population":
            need = float(self.epochs_needed or self.max_epochs)
            if (self.attempts >= need).all():  # the plan is met and still too wide: one more
                need = float(self.attempts.min() + 1)
        else:
            need = current.quantile**2 * current.spread / self.halfwidth**2
            self.epochs_needed = need
        floor = math.floor(need)
        extra = np.clip(floor - self.attempts, 0, None)
        lucky = self.rng.random(n) < need - floor
        extra = extra + ((self.attempts + extra == floor) & lucky)
        if self.estimand == "suite_items" and self.stages > 0:
            extra = np.zeros(n, dtype=np.int64)  # the plan ran: only what +-H still needs
        if not extra.any():  # the plan is met, the interval still wider: the fewest more
            extra = self._fewest(current)
        extra = np.minimum(extra, self.max_epochs - self.attempts).astype(np.int64)
        room = self.budget - self.calls
        if extra.sum() > room:  # a random subset of the planned attempts, outcome-blind
            slots = np.repeat(np.arange(n), extra)
            keep = self.rng.choice(slots.size, size=max(room, 0), replace=False)
            extra = np.bincount(slots[keep], minlength=n).astype(np.int64)
        if not extra.any():
            cap = "budget" if self.calls >= self.budget else "epochs"
            self._stop(
                f"{cap}: {self.calls} attempts ({self.max_epochs} epochs per item at most) "
                f"give +-{current.halfwidth:.4f}; about {need:.1f} epochs per item would "
                "reach +-H"
            )
            return None
        return extra

    def _fewest(self, current: TargetInterval) -> IntArray:
        """One more epoch on the fewest items that bring the interval to +-H.

        The items are taken in a random order among those with the fewest epochs
        (``suite_items``: until the pilot's variances give +-H; the population: all of them).
        """
        n = self.weights.size
        low = np.flatnonzero(self.attempts == self.attempts.min())
        order = self.rng.permutation(low)
        extra = np.zeros(n, dtype=np.int64)
        if self.estimand == "item_population" or self._pilot_var is None:
            extra[order] = 1
            return extra
        w2v = self.weights**2 * self._pilot_var
        k = np.maximum(self.scored, 1)
        gain = np.cumsum(w2v[order] * (1 / k[order] - 1 / (k[order] + 1)))
        excess = float(np.sum(w2v / k)) - (self.halfwidth / current.quantile) ** 2
        take = min(int(np.searchsorted(gain, excess)) + 1, order.size)
        extra[order[:take]] = 1
        return extra

    def _stop(self, reason: str) -> None:
        self.stop_reason = reason

    def observe(self, sums: npt.ArrayLike, scored: npt.ArrayLike, squares: npt.ArrayLike) -> None:
        """Record the round's scores: per item, the sum, the count and the sum of squares.

        Harness errors are not scored (count them in `scored` as absent): the item's
        estimate excludes them, as a fixed run's does.

        Raises:
            UsageError: no round pending, or shapes that do not match the round.
        """
        if self._pending is None:
            raise UsageError("observe() without a pending round: call next_round() first")
        s = np.asarray(sums, dtype=float)
        k = np.asarray(scored, dtype=np.int64)
        q = np.asarray(squares, dtype=float)
        if s.shape != self.weights.shape or k.shape != s.shape or q.shape != s.shape:
            raise UsageError("observe(): one sum, count and sum of squares per item")
        if (k > self._pending).any() or (k < 0).any():
            raise UsageError("observe(): more scores for an item than attempts asked for")
        self.attempts = self.attempts + self._pending
        self.scored = self.scored + k
        self.sums = self.sums + s
        self.squares = self.squares + q
        self._pending = None
        self.rounds += 1
        if self.rounds == 1 and self.estimand == "suite_items":
            var = _item_variances(self.sums, self.squares, self.scored)
            if np.count_nonzero(var) < 2:
                # fewer than 2 items with mixed outcomes: no variance to plan or claim from
                # (2 agreeing attempts do not show an item is deterministic); every item
                # counts with the largest variance of a [0, 1] score
                var = np.full(var.size, _MAX_VAR)
            self._pilot_var = var
            self._pilot_q, self._pilot_df = self._quantile(var, self.scored)
        elif self.rounds == 1:
            self.population = population_target(
                self.sums / np.maximum(self.scored, 1),
                np.maximum(self.scored, 1),
                self.halfwidth,
                alpha=self.alpha * (1 - self.reserve),  # the level the interval is taken at
                max_epochs=self.max_epochs,
            )

    def outcome(self) -> TargetOutcome:
        """The interval the design ends on."""
        current = self.interval()
        reached = current.halfwidth <= self.halfwidth
        return TargetOutcome(
            current.estimate,
            current.estimate - current.halfwidth,
            current.estimate + current.halfwidth,
            current.halfwidth,
            self.calls,
            self.stages,
            reached,
            self.attempts.copy(),
            self.estimand,
            self.population is not None and not self.population.reachable,
        )


def _item_variances(sums: FloatArray, squares: FloatArray, n: IntArray) -> FloatArray:
    """Each item's unbiased variance of one score (``ddof = 1``); 0.25 below 2 scores."""
    mean = sums / np.maximum(n, 1)
    var = np.where(n > 1, (squares - sums * mean) / np.maximum(n - 1, 1), _MAX_VAR)
    return np.asarray(np.clip(var, 0.0, None), dtype=float)


def _z(alpha: float) -> float:
    return float(stats.norm.isf(alpha / 2))


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
    estimand: Estimand = "suite_items",
) -> TargetOutcome:
    """Run `TargetDesign` to its end with `draw` (0/1 scores; simulations and tests).

    Raises:
        UsageError: bad weights, H, alpha or pilot.
    """
    _check(weights, halfwidth, alpha, pilot, max_epochs)
    design = TargetDesign(
        np.asarray(weights, dtype=float),
        halfwidth,
        rng,
        estimand=estimand,
        alpha=alpha,
        pilot=pilot,
        max_epochs=max_epochs,
        max_stages=max_stages,
    )
    while (extra := design.next_round()) is not None:
        s = np.asarray(draw(extra), dtype=float)
        design.observe(s, extra, s)  # 0/1 scores: squares = sums
    return design.outcome()
