"""Simulations behind docs/design/adaptive.md: coverage, attempts saved, verdict agreement.

Each function simulates one replicate from an explicit `np.random.Generator`; the tests in
``tests/analyse/test_adaptive_sim.py`` and ``benchmarks/bench_adaptive.py`` repeat them.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import stats

from evalsuite.analyse._adaptive import AdaptiveRule, AdaptiveRun, Versus
from evalsuite.analyse._estimates import estimate_mean
from evalsuite.analyse._paired import paired_difference

__all__ = [
    "FIXED_EPOCHS",
    "AdaptiveOutcome",
    "VersusOutcome",
    "fixed_halfwidth",
    "fixed_verdict",
    "inflated_beta_suite",
    "simulate_adaptive",
    "simulate_naive",
    "simulate_versus",
]

FIXED_EPOCHS = 5
"""The conventional fixed run adaptive runs are measured against (tau-bench, Terminal-Bench)."""


def inflated_beta_suite(
    n_items: int,
    rng: np.random.Generator,
    *,
    a: float = 2.0,
    b: float = 2.0,
    never: float = 0.3,
    always: float = 0.3,
) -> npt.NDArray[np.float64]:
    """True solve rates of `n_items`: a share `never` at 0, `always` at 1, the rest Beta(a, b)."""
    p = rng.beta(a, b, n_items)
    u = rng.random(n_items)
    p[u < never] = 0.0
    p[(u >= never) & (u < never + always)] = 1.0
    return p


def fixed_halfwidth(p: npt.NDArray[np.float64], rng: np.random.Generator) -> float:
    """Half-width of the default interval of one fixed 5-epoch run of suite `p`."""
    y = rng.binomial(FIXED_EPOCHS, p) / FIXED_EPOCHS
    est = estimate_mean(y, trials=np.full(p.size, FIXED_EPOCHS), rng=rng)
    return (est.ci.high - est.ci.low) / 2


@dataclass(frozen=True, slots=True)
class AdaptiveOutcome:
    """One simulated adaptive run: attempts, final interval, whether it covers the truth."""

    calls: int
    lower: float
    upper: float
    covered: bool
    rounds: int


def _bernoulli(p: npt.NDArray[np.float64], rng: np.random.Generator) -> Callable[[int], float]:
    def attempt(item: int) -> float:
        return float(rng.random() < p[item])

    return attempt


def simulate_adaptive(
    p: npt.NDArray[np.float64],
    target: float,
    rng: np.random.Generator,
    *,
    seed: int,
    max_epochs: int = FIXED_EPOCHS,
    round_share: float = 0.25,
) -> AdaptiveOutcome:
    """An adaptive run to half-width `target` on a suite of true solve rates `p` (equal weights)."""
    weights = np.full(p.size, 1 / p.size)
    rule = AdaptiveRule(
        target_halfwidth=target, seed=seed, max_epochs=max_epochs, round_share=round_share
    )
    run = AdaptiveRun(weights, rule)
    run.simulate(_bernoulli(p, rng))
    last = run.rounds[-1]
    mu = float(weights @ p)
    return AdaptiveOutcome(
        run.calls, last.lower, last.upper, last.lower <= mu <= last.upper, len(run.rounds)
    )


def simulate_naive(
    p: npt.NDArray[np.float64],
    target: float,
    rng: np.random.Generator,
    *,
    seed: int,
    max_epochs: int = FIXED_EPOCHS,
    round_share: float = 0.25,
    attempt: Callable[[int], float] | None = None,
) -> AdaptiveOutcome:
    """The naive rule on the same plan and data: peek after every round, stop when narrow.

    After every round the fixed-sample 95% t interval of the same pseudo-outcomes is computed
    and the run stops as soon as its half-width is at most `target`. Attempts are Bernoulli
    draws of `p`, or `attempt(item)` when given (resampled trials; `p` is then the truth).
    """
    weights = np.full(p.size, 1 / p.size)
    rule = AdaptiveRule(
        target_halfwidth=1e-9, seed=seed, max_epochs=max_epochs, round_share=round_share
    )
    run = AdaptiveRun(weights, rule)
    if attempt is None:
        attempt = _bernoulli(p, rng)
    mu = float(weights @ p)
    lower = upper = math.nan
    while (items := run.next_round()) is not None:
        run.observe([attempt(i) for i in items])
        xs = np.asarray(run.pseudo_outcomes)
        if xs.size < 2:
            continue
        half = _t975(xs.size - 1) * xs.std(ddof=1) / math.sqrt(xs.size)
        lower, upper = float(xs.mean() - half), float(xs.mean() + half)
        if half <= target:
            break
    return AdaptiveOutcome(run.calls, lower, upper, lower <= mu <= upper, len(run.rounds))


@functools.cache
def _t975(df: int) -> float:
    """The 0.975 quantile of Student's t with `df` degrees of freedom.

    Cached: the naive rule asks for it after every round, and a call of scipy's distribution
    object costs more than the rest of the round.
    """
    return float(stats.t.ppf(0.975, df))


Decision = Literal["better", "worse", "undecided"]


def fixed_verdict(
    candidate: npt.NDArray[np.float64], baseline: npt.NDArray[np.float64]
) -> Decision:
    """The fixed run's verdict: the paired t interval of item means excludes 0, or not."""
    diff = paired_difference(candidate - baseline)
    if diff.ci.low > 0:
        return "better"
    if diff.ci.high < 0:
        return "worse"
    return "undecided"


@dataclass(frozen=True, slots=True)
class VersusOutcome:
    """One simulated comparison: the full fixed run's verdict and the adaptive run's."""

    fixed: Decision
    adaptive: str
    calls: int
    early: bool
    """The adaptive run stopped before its budget."""


def simulate_versus(
    p_candidate: npt.NDArray[np.float64],
    p_baseline: npt.NDArray[np.float64],
    rng: np.random.Generator,
    *,
    seed: int,
    margin: float = 0.02,
    final_share: float = 0.9,
) -> VersusOutcome:
    """The full fixed run's verdict and the adaptive run's, on the same attempts.

    The baseline's stored run and the candidate's full run have 5 epochs per item; the
    fixed verdict is their paired t at 0.05. The adaptive run of the candidate against the
    stored run draws its attempts from the same table (item j's k-th attempt is epoch k of
    the full run), so at its budget it has exactly the full run's data.
    """
    n = p_baseline.size
    base = rng.binomial(FIXED_EPOCHS, p_baseline) / FIXED_EPOCHS
    table = (rng.random((n, FIXED_EPOCHS)) < p_candidate[:, None]).astype(float)
    fixed = fixed_verdict(table.mean(axis=1), base)
    weights = np.full(n, 1 / n)
    rule = AdaptiveRule(versus="baseline", margin=margin, seed=seed, final_share=final_share)
    versus = Versus("baseline", base, np.full(n, float(FIXED_EPOCHS)))
    used = np.zeros(n, dtype=int)

    def attempt(item: int) -> float:
        used[item] += 1
        return float(table[item, used[item] - 1])

    run = AdaptiveRun(weights, rule, versus).simulate(attempt)
    return VersusOutcome(fixed, str(run.verdict), run.calls, run.calls < run.budget)
