"""Adaptive evaluation: plan attempts in rounds, stop when an anytime-valid interval says so.

The design (docs/design/adaptive.md):

1. Round 1 (the pilot) runs every item once, in a random order. Its outcomes seed the
   predictions and the plan; they are not part of the confidence sequence (they are the
   information the sequence conditions on).
2. Every later round draws items at random, with replacement, from a plan ``q`` fixed
   before the round: ``q_j = (1 - gamma) w_j sqrt(v_j) / sum_k w_k sqrt(v_k) + gamma w_j``,
   where ``w`` are the deployment weights and ``v_j = p_j (1 - p_j)`` is item j's predicted
   variance from its attempts so far (mixed-outcome items get more draws; an item that was
   always or never solved gets few, never none: ``q_j >= gamma w_j``).
3. Each draw of item I with score Y gives the doubly robust pseudo-outcome
   ``x = sum_j w_j p_j + (w_I / q_I) (Y - p_I)``, whose conditional mean is the suite score
   ``mu = sum_j w_j P(item j solved)`` whatever the predictions and the plan, and whose range
   is known before the draw. A betting confidence sequence (`BettingCS`) on these is valid
   at every round, so at the round the run stops.

The item is the sampling unit (each draw picks an item; attempts at one item share its
difficulty, which the pseudo-outcome's conditional mean already accounts for), and the
deployment weights are in the estimand.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from evalsuite.analyse._adaptive_rule import DEFAULT_MAX_EPOCHS, AdaptiveRule
from evalsuite.analyse._confseq import (
    BETTING_METHOD,
    HOEFFDING_METHOD,
    BettingCS,
    hoeffding_interval,
)
from evalsuite.errors import UsageError

Verdict = Literal["better", "worse", "no_difference_beyond_margin", "undecided"]

__all__ = [
    "DEFAULT_MAX_EPOCHS",
    "AdaptiveRule",
    "AdaptiveRun",
    "Draw",
    "RoundRecord",
    "Versus",
]


@dataclass(frozen=True, slots=True)
class Versus:
    """The stored run an adaptive run is compared with: item means and epochs, suite order."""

    run_id: str
    item_means: npt.NDArray[np.float64]
    epochs: npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Draw:
    """One planned attempt of a round after the pilot: item `item`, and its pseudo-outcome."""

    item: int
    ratio: float
    """w_I / q_I."""
    prediction: float
    """p_I, item I's prediction before the round."""
    anchor: float
    """sum_j w_j p_j before the round."""
    lo: float
    hi: float

    def pseudo(self, score: float) -> float:
        """The draw's pseudo-outcome for `score` in [0, 1]."""
        return self.anchor + self.ratio * (score - self.prediction)


@dataclass(slots=True)
class RoundRecord:
    """What one round did, and the interval after it."""

    index: int
    attempts: int
    harness_errors: int
    items: int
    """Distinct items attempted in the round."""
    estimate: float
    lower: float
    upper: float
    calls: int
    """Attempts so far, this round included."""
    difference: tuple[float, float] | None = None
    """With --versus: the interval of the difference (this run - the stored run)."""

    @property
    def halfwidth(self) -> float:
        """Half the interval's width."""
        return (self.upper - self.lower) / 2

    def to_dict(self) -> dict[str, Any]:
        """JSON fields."""
        out: dict[str, Any] = {
            "round": self.index,
            "attempts": self.attempts,
            "harness_errors": self.harness_errors,
            "items": self.items,
            "estimate": self.estimate,
            "ci": [self.lower, self.upper],
            "halfwidth": self.halfwidth,
            "calls": self.calls,
        }
        if self.difference is not None:
            out["difference_ci"] = list(self.difference)
        return out


@dataclass(slots=True)
class AdaptiveRun:
    """The state of one adaptive run: plan a round, observe it, decide whether to stop.

    Use::

        run = AdaptiveRun(weights, rule)
        while (items := run.next_round()) is not None:
            run.observe([score_of(item) for item in items])   # None: a harness error

    Attributes:
        weights: deployment weight per item (sum 1), in suite order.
        rule: the stopping rule and budget.
        versus: the stored run to compare with (rule.versus), or None.
    """

    weights: npt.NDArray[np.float64]
    rule: AdaptiveRule
    versus: Versus | None = None
    rounds: list[RoundRecord] = field(default_factory=list)
    stop_reason: str | None = None
    verdict: Verdict | None = None
    calls: int = 0
    _rng: np.random.Generator = field(init=False, repr=False)
    _sums: npt.NDArray[np.float64] = field(init=False, repr=False)
    _counts: npt.NDArray[np.float64] = field(init=False, repr=False)
    _cs: BettingCS = field(init=False, repr=False)
    _pending: list[int] | None = field(init=False, default=None, repr=False)
    _draws: list[Draw] | None = field(init=False, default=None, repr=False)
    _reference: tuple[float, float, float] | None = field(init=False, default=None)
    pseudo_outcomes: list[float] = field(init=False, default_factory=list)
    """The pseudo-outcomes fed to the confidence sequence, in draw order."""

    def __post_init__(self) -> None:
        w = np.asarray(self.weights, dtype=float)
        if w.ndim != 1 or w.size == 0:
            raise UsageError("an adaptive run needs at least one item")
        if (w <= 0).any() or not math.isclose(float(w.sum()), 1.0, rel_tol=1e-9):
            raise UsageError(
                "adaptive run: every item needs a positive deployment weight, summing to 1"
            )
        self.weights = w
        self._rng = np.random.default_rng(self.rule.seed)
        self._sums = np.zeros(w.size)
        self._counts = np.zeros(w.size)
        share = self.rule.alpha / 2 if self.versus is not None else self.rule.alpha
        self._cs = BettingCS(alpha=share)
        if self.rule.versus is not None and self.versus is None:
            raise UsageError(f"--versus {self.rule.versus}: the stored run's results are needed")
        if self.versus is not None:
            if self.versus.item_means.shape != w.shape:
                raise UsageError(
                    f"--versus {self.versus.run_id}: the stored run must have every item of "
                    "this run (paired by item)"
                )
            self._reference = hoeffding_interval(
                self.versus.item_means, self.versus.epochs, w, alpha=self.rule.alpha / 2
            )

    @property
    def n_items(self) -> int:
        """Items in the suite."""
        return int(self.weights.size)

    @property
    def budget(self) -> int:
        """Most attempts the run may make."""
        return self.rule.budget(self.n_items)

    @property
    def method(self) -> str:
        """The interval's method (and the stored run's, with --versus)."""
        return BETTING_METHOD if self.versus is None else f"{BETTING_METHOD}+{HOEFFDING_METHOD}"

    @property
    def attempts_per_item(self) -> npt.NDArray[np.float64]:
        """Attempts (with a score) per item so far."""
        return self._counts.copy()

    def predictions(self) -> npt.NDArray[np.float64]:
        """Each item's predicted score: (sum of its scores + k/2) / (attempts + k).

        k is `AdaptiveRule.prior_strength`; the prediction is in (0, 1) for any k > 0, so
        every item keeps a positive share of the draws.
        """
        k = self.rule.prior_strength
        return (self._sums + k / 2) / (self._counts + k)

    def plan(self) -> npt.NDArray[np.float64]:
        """Sampling probabilities of the next round (predictable: from attempts so far)."""
        p = self.predictions()
        spread = self.weights * np.sqrt(p * (1 - p))
        q: npt.NDArray[np.float64] = (1 - self.rule.mix) * spread / spread.sum()
        return q + self.rule.mix * self.weights

    def next_round(self) -> list[int] | None:
        """Items of the next round, in order (an item may appear more than once), or None.

        None once the run has stopped (`stop_reason` says why).
        """
        if self.stop_reason is not None:
            return None
        if self._pending is not None:
            raise UsageError("observe the planned round before planning the next one")
        left = self.budget - self.calls
        if left <= 0:
            self.stop_reason = f"budget: {self.calls} of {self.budget} attempts made"
            return None
        if not self.rounds:
            order = self._rng.permutation(self.n_items)[:left]
            self._pending = [int(i) for i in order]
            self._draws = None
            return list(self._pending)
        size = min(left, max(1, math.ceil(self.rule.round_share * self.n_items)))
        q = self.plan()
        p = self.predictions()
        anchor = float(self.weights @ p)
        ratios = self.weights / q
        lo = anchor - float(np.max(ratios * p))
        hi = anchor + float(np.max(ratios * (1 - p)))
        chosen = self._rng.choice(self.n_items, size=size, p=q)
        self._draws = [Draw(int(i), float(ratios[i]), float(p[i]), anchor, lo, hi) for i in chosen]
        self._pending = [d.item for d in self._draws]
        return list(self._pending)

    def observe(self, scores: Sequence[float | None]) -> RoundRecord:
        """Record the planned round's scores (None: a harness error, excluded and counted).

        Raises:
            UsageError: not one score per planned attempt, or a score outside [0, 1].
        """
        if self._pending is None:
            raise UsageError("no round is planned: call next_round() first")
        if len(scores) != len(self._pending):
            raise UsageError(
                f"the round planned {len(self._pending)} attempts but {len(scores)} scores came"
            )
        for s in scores:
            if s is not None and not (0.0 <= s <= 1.0):
                raise UsageError(f"a score must be in [0, 1] (got {s})")
        errors = sum(s is None for s in scores)
        if self._draws is not None:
            kept = [
                (d, float(s)) for d, s in zip(self._draws, scores, strict=True) if s is not None
            ]
            if kept:
                xs = [d.pseudo(s) for d, s in kept]
                self._cs.update(xs, [d.lo for d, _ in kept], [d.hi for d, _ in kept])
                self.pseudo_outcomes.extend(xs)
        for item, s in zip(self._pending, scores, strict=True):
            if s is not None:
                self._sums[item] += s
                self._counts[item] += 1
        self.calls += len(scores)
        lower, upper = self._cs.interval()
        record = RoundRecord(
            index=len(self.rounds) + 1,
            attempts=len(scores),
            harness_errors=errors,
            items=len(set(self._pending)),
            estimate=self.estimate(),
            lower=lower,
            upper=upper,
            calls=self.calls,
            difference=self._difference(lower, upper),
        )
        self.rounds.append(record)
        self._pending = None
        self._draws = None
        self._decide(record)
        return record

    def estimate(self) -> float:
        """Point estimate of the suite score: the pseudo-outcomes' mean (after the pilot).

        Before any draw after the pilot: the weighted mean of the item means so far.
        """
        if self._cs.n:
            return self._cs.mean
        seen = self._counts > 0
        if not seen.any():
            return math.nan
        w = self.weights[seen]
        return float(w @ (self._sums[seen] / self._counts[seen]) / w.sum())

    def _difference(self, lower: float, upper: float) -> tuple[float, float] | None:
        if self._reference is None:
            return None
        _, ref_lo, ref_hi = self._reference
        return (lower - ref_hi, upper - ref_lo)

    def _decide(self, record: RoundRecord) -> None:
        rule = self.rule
        if record.difference is not None and self._cs.n:
            lo, hi = record.difference
            if lo > 0:
                self.verdict = "better"
            elif hi < 0:
                self.verdict = "worse"
            elif -rule.margin < lo and hi < rule.margin:
                self.verdict = "no_difference_beyond_margin"
            if self.verdict is not None:
                self.stop_reason = (
                    f"verdict {self.verdict}: the difference's interval is "
                    f"[{lo:+.3f}, {hi:+.3f}] (margin {rule.margin:g})"
                )
                return
        if (
            rule.target_halfwidth is not None
            and self._cs.n
            and record.halfwidth <= rule.target_halfwidth
        ):
            self.stop_reason = (
                f"target: half-width {record.halfwidth:.4f} <= {rule.target_halfwidth:g}"
            )
            return
        if self.calls >= self.budget:
            self.stop_reason = f"budget: {self.calls} of {self.budget} attempts made"
            if self.versus is not None:
                self.verdict = "undecided"

    def simulate(self, attempt: Callable[[int], float | None]) -> AdaptiveRun:
        """Run to the end with `attempt(item) -> score` (simulations and tests); self."""
        while (items := self.next_round()) is not None:
            self.observe([attempt(i) for i in items])
        if self.versus is not None and self.verdict is None:
            self.verdict = "undecided"
        return self

    def to_dict(self) -> dict[str, Any]:
        """The adaptive part of `run --json` and of the report."""
        lower, upper = self._cs.interval()
        out: dict[str, Any] = {
            "method": self.method,
            "rule": self.rule.to_dict(),
            "estimate": self.estimate(),
            "ci": [lower, upper],
            "level": 1 - self.rule.alpha,
            "calls": self.calls,
            "budget": self.budget,
            "stop_reason": self.stop_reason,
            "rounds": [r.to_dict() for r in self.rounds],
            "attempts_per_item": {
                "min": int(self._counts.min()),
                "median": float(np.median(self._counts)),
                "max": int(self._counts.max()),
            },
        }
        if self.versus is not None and self._reference is not None:
            est, lo, hi = self._reference
            out["versus"] = {
                "run_id": self.versus.run_id,
                "estimate": est,
                "ci": [lo, hi],
                "method": HOEFFDING_METHOD,
                "verdict": self.verdict,
                "margin": self.rule.margin,
            }
        return out
