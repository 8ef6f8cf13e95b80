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
4. With ``--versus`` the run fills the slots (item, epoch <= E) of a fixed E-epoch run
   instead, drawing without replacement: the sequence is then one for the score the full
   E-epoch run would have, the stored run's score is held fixed (conditioned on), the run
   stops early only when the sequence shows that the full run's paired t would reach the
   verdict, and at the budget (every slot filled: the fixed run's data) that paired t
   decides, at the share of alpha the sequence did not spend (`_adaptive_final`).

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

from evalsuite.analyse._adaptive_final import (
    FINAL_METHOD,
    FinalTest,
    final_halfwidth_bound,
    final_paired_test,
)
from evalsuite.analyse._adaptive_rule import DEFAULT_MAX_EPOCHS, AdaptiveRule
from evalsuite.analyse._confseq import BETTING_METHOD, BettingCS
from evalsuite.analyse._paired import zero_variance_p
from evalsuite.errors import UsageError

Verdict = Literal["better", "worse", "no_difference_beyond_margin", "undecided"]

WOR_METHOD = f"{BETTING_METHOD}_wor"
"""The sequence of a --versus run: slots of the fixed run drawn without replacement."""
VERSUS_METHOD = f"{WOR_METHOD}+{FINAL_METHOD}"
"""The method of a --versus run: the sequence, then the fixed run's paired t at the budget."""
CONDITIONED_METHOD = "conditioned_on_stored_run"
"""The stored run's side of a --versus run: its score is held fixed, not estimated."""

__all__ = [
    "CONDITIONED_METHOD",
    "DEFAULT_MAX_EPOCHS",
    "VERSUS_METHOD",
    "WOR_METHOD",
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


@dataclass(frozen=True, slots=True)
class _SlotDraw:
    """One draw of a --versus round: item, the plan over items and their open slots before it."""

    item: int
    plan: npt.NDArray[np.float64]
    remaining: npt.NDArray[np.float64]


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
    final: FinalTest | None = None
    """With --versus: the fixed run's paired t, once the budget filled every slot."""
    _rng: np.random.Generator = field(init=False, repr=False)
    _sums: npt.NDArray[np.float64] = field(init=False, repr=False)
    _counts: npt.NDArray[np.float64] = field(init=False, repr=False)
    _cs: BettingCS = field(init=False, repr=False)
    _pending: list[int] | None = field(init=False, default=None, repr=False)
    _draws: list[Draw] | None = field(init=False, default=None, repr=False)
    _slot_draws: list[_SlotDraw] | None = field(init=False, default=None, repr=False)
    _remaining: npt.NDArray[np.float64] = field(init=False, repr=False)
    _revealed: float = field(init=False, default=0.0, repr=False)
    _errors: int = field(init=False, default=0, repr=False)
    _reference: float | None = field(init=False, default=None)
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
        self._remaining = np.full(w.size, float(self.epoch_cap))
        self._cs = BettingCS(
            alpha=self.alpha_sequence,
            c=self.rule.truncation,
            bets=self.rule.bet_rule,
            target=self.rule.target_halfwidth,
        )
        if self.rule.versus is not None and self.versus is None:
            raise UsageError(f"--versus {self.rule.versus}: the stored run's results are needed")
        if self.versus is not None:
            if self.versus.item_means.shape != w.shape:
                raise UsageError(
                    f"--versus {self.versus.run_id}: the stored run must have every item of "
                    "this run (paired by item)"
                )
            self._reference = float(w @ self.versus.item_means)

    @property
    def n_items(self) -> int:
        """Items in the suite."""
        return int(self.weights.size)

    @property
    def budget(self) -> int:
        """Most attempts the run may make."""
        return self.rule.budget(self.n_items)

    @property
    def epoch_cap(self) -> int:
        """E: with --versus, the epochs of the fixed run whose slots the run fills."""
        return self.rule.max_epochs or DEFAULT_MAX_EPOCHS

    @property
    def alpha_sequence(self) -> float:
        """The alpha the confidence sequence spends (all of it without --versus)."""
        return self.rule.alpha if self.versus is None else self.rule.alpha_sequence

    @property
    def alpha_final(self) -> float | None:
        """With --versus: the alpha of the final paired t at the budget."""
        return None if self.versus is None else self.rule.alpha_final

    @property
    def method(self) -> str:
        """The interval's method (with --versus: the sequence, then the final paired t)."""
        return self.rule.method

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
        if self.versus is not None:
            return self._plan_slots(q, size)
        p = self.predictions()
        anchor = float(self.weights @ p)
        ratios = self.weights / q
        lo = anchor - float(np.max(ratios * p))
        hi = anchor + float(np.max(ratios * (1 - p)))
        chosen = self._rng.choice(self.n_items, size=size, p=q)
        self._draws = [Draw(int(i), float(ratios[i]), float(p[i]), anchor, lo, hi) for i in chosen]
        self._pending = [d.item for d in self._draws]
        return list(self._pending)

    def _plan_slots(self, q: npt.NDArray[np.float64], size: int) -> list[int] | None:
        """A --versus round: `size` draws, one at a time, among items with open slots.

        Each draw picks item j with probability ``q_j`` renormalised over the items that
        still have one of their E slots open, then takes its next slot. No item passes E
        attempts, so the budget (E x N) fills exactly the slots of the fixed E-epoch run.
        """
        remaining = self._remaining.copy()
        draws: list[_SlotDraw] = []
        # Each draw is ``rng.choice(n_items, p=plan)``, done as numpy's Generator does it (the
        # plan's normalised cumulative sum searched for one uniform draw), with the uniforms
        # drawn at once (the same stream) and the plan renormalised only when an item's last
        # slot is taken: the same items as one `choice` per draw, at a fraction of the cost
        # (tests/analyse/test_adaptive.py checks it against the per-draw loop).
        draws_left = min(size, int(remaining[remaining > 0].sum()))
        uniforms = self._rng.random(draws_left).tolist() if draws_left > 0 else []
        plan: npt.NDArray[np.float64] | None = None
        cdf = np.empty(0)
        for u in uniforms:
            if plan is None:
                plan = np.where(remaining > 0, q, 0.0)
                plan = plan / plan.sum()
                cdf = plan.cumsum()
                cdf /= cdf[-1]
            item = int(cdf.searchsorted(u, side="right"))
            draws.append(_SlotDraw(item, plan, remaining.copy()))
            remaining[item] -= 1
            if remaining[item] <= 0:
                plan = None
        if not draws:
            self.stop_reason = f"budget: every slot of the {self.epoch_cap}-epoch run is filled"
            return None
        self._slot_draws = draws
        self._pending = [d.item for d in draws]
        return list(self._pending)

    def _observe_slots(self, scores: Sequence[float | None]) -> None:
        """Pseudo-outcomes of a --versus round, draw by draw (the pilot only fills slots).

        Draw t of item I from plan ``q`` over open slots gives
        ``x = R + sum_j (w_j/E) r_j p_j + (w_I r_I / (E q_I)) (Y - p_I)``, R the weighted
        sum of the slots filled before it and r_j the open slots: its conditional mean is
        the score of the full E-epoch run, ``T = sum_j (w_j/E) sum_e y_je``, whatever the
        slots hold (a slot is any of its item's open ones: attempts of an item are
        exchangeable). After a harness error the slot table is no longer the fixed run's, so
        the sequence stops taking draws (the final test still decides at the budget).
        """
        e = float(self.epoch_cap)
        p = self.predictions()
        if self._slot_draws is None:  # the pilot
            for item, s in zip(self._pending or [], scores, strict=True):
                self._fill(item, s, e)
            return
        draws = self._slot_draws
        # the draws the sequence takes: those before the round's first harness error (none
        # after an earlier one); their pseudo-outcomes are computed for all at once, each
        # exactly as one draw at a time would (tests/analyse/test_adaptive.py)
        taken = 0
        if not self._errors:
            while taken < len(draws) and scores[taken] is not None:
                taken += 1
        if taken:
            w = self.weights
            items = np.array([d.item for d in draws[:taken]])
            ys = np.array(scores[:taken], dtype=float)
            remaining = np.array([d.remaining for d in draws[:taken]])
            plans = np.array([d.plan for d in draws[:taken]])
            revealed = np.cumsum(np.concatenate(([self._revealed], w[items] * ys / e)))[:-1]
            base = revealed + np.sum(w * remaining * p, axis=1) / e
            open_ = remaining > 0
            ratio = np.where(open_, w * remaining / (e * np.where(open_, plans, 1)), 0)
            rows = np.arange(taken)
            xs = base + ratio[rows, items] * (ys - p[items])
            los = base - np.max(ratio * p, axis=1)
            his = base + np.max(ratio * (1 - p), axis=1)
            self._cs.update(xs, los, his)
            self.pseudo_outcomes.extend(xs.tolist())
        for draw, s in zip(draws, scores, strict=True):
            self._fill(draw.item, s, e)

    def _fill(self, item: int, score: float | None, e: float) -> None:
        self._remaining[item] -= 1
        if score is None:
            self._errors += 1
        else:
            self._revealed += float(self.weights[item]) * score / e

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
        if self.versus is not None:
            self._observe_slots(scores)
        elif self._draws is not None:
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
        self._slot_draws = None
        self._decide(record)
        return record

    def estimate(self) -> float:
        """Point estimate of the suite score: the pseudo-outcomes' mean (after the pilot).

        Before any draw after the pilot: the weighted mean of the item means so far. With
        --versus once every slot is filled: the full run's score (the weighted item means).
        """
        if self.versus is not None and not self._errors and not self._remaining.any():
            return float(self._revealed)
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
        return (lower - self._reference, upper - self._reference)

    def final_bound(self) -> float:
        """With --versus: a bound on the final paired t's half-width, whatever the open slots.

        Each item's final mean lies in ``[s_j/E, (s_j + r_j)/E]`` (s_j its scores so far,
        r_j its open slots); `final_halfwidth_bound` turns that into the bound.
        """
        if self.versus is None:
            raise UsageError("final_bound is defined for --versus runs only")
        e = float(self.epoch_cap)
        base = self.versus.item_means
        return final_halfwidth_bound(
            self._sums / e - base,
            (self._sums + self._remaining) / e - base,
            self.weights,
            alpha=self.rule.alpha_final,
        )

    def _early_verdict(self, lo: float, hi: float) -> Verdict | None:
        """The verdict the full run's paired t is sure to reach, if the sequence shows one.

        The sequence holds the full run's difference ``D`` in [lo, hi]; the final test's
        half-width is at most ``h``. ``lo > h`` means the final test says ``better``
        (``hi < -h``: ``worse``); ``-margin + h < lo`` and ``hi < margin - h`` mean its
        interval lies inside the margin. Not after a harness error (the full run's data are
        then not the slot table), nor on suites too small for the final test to reject
        with zero variance.
        """
        if self._errors or not self._cs.n:
            return None
        if zero_variance_p(1.0, self.n_items) > self.rule.alpha_final:
            return None
        h = self.final_bound()
        if lo > h:
            return "better"
        if hi < -h:
            return "worse"
        if -self.rule.margin + h < lo and hi < self.rule.margin - h:
            return "no_difference_beyond_margin"
        return None

    def _final_test(self) -> FinalTest | None:
        """The fixed run's paired t on the filled slots (items with a score), or None."""
        if self.versus is None or self.budget < self.epoch_cap * self.n_items:
            return None
        seen = self._counts > 0
        if seen.sum() < 2:
            return None
        w = self.weights[seen] / self.weights[seen].sum()
        d = self._sums[seen] / self._counts[seen] - self.versus.item_means[seen]
        return final_paired_test(d, w, alpha=self.rule.alpha_final, margin=self.rule.margin)

    def _decide(self, record: RoundRecord) -> None:
        rule = self.rule
        if record.difference is not None:
            verdict = self._early_verdict(*record.difference)
            if verdict is not None:
                self.verdict = verdict
                lo, hi = record.difference
                self.stop_reason = (
                    f"verdict {verdict}: the full run's difference lies in "
                    f"[{lo:+.3f}, {hi:+.3f}] and its paired t half-width is at most "
                    f"{self.final_bound():.3f} (margin {rule.margin:g})"
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
                self.final = self._final_test()
                if self.final is None:
                    self.verdict = "undecided"
                    self.stop_reason += " (fewer than the full run's, so no final test)"
                else:
                    self.verdict = self.final.verdict
                    self.stop_reason += (
                        f"; final paired t at alpha {self.final.alpha:g}: difference "
                        f"{self.final.diff:+.3f} [{self.final.lower:+.3f}, "
                        f"{self.final.upper:+.3f}], p = {self.final.p_value:.3g}"
                    )

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
            out["level"] = 1 - self.alpha_sequence
            out["versus"] = {
                "run_id": self.versus.run_id,
                "estimate": self._reference,
                "ci": [self._reference, self._reference],
                "method": CONDITIONED_METHOD,
                "verdict": self.verdict,
                "margin": self.rule.margin,
                "alpha_sequence": self.alpha_sequence,
                "alpha_final": self.alpha_final,
                "epochs": self.epoch_cap,
                "final_test": None if self.final is None else self.final.to_dict(),
            }
        return out
