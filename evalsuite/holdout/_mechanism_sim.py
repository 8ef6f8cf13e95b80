"""Simulated adaptive analysts against exact holdout answers, Thresholdout and the Ladder.

The analyst (docs/design/reusable-holdout.md, "Simulation") makes noise-only changes to a
checkpoint: each change re-draws the outcome of a fraction of the items, dev and holdout
alike, from the same success rate, so every checkpoint's true score is the same ``p``. After
each change it asks the holdout and keeps the new checkpoint when its answer beats the best
answer so far. Overfitting is the kept checkpoint's best answer minus ``p``.

A checkpoint is summarised by its count of solved items on each split, so a change is three
draws per replication (how many items are re-drawn, how many of them were solved, how many
are solved now): thousands of replications of hundreds of looks take seconds. The mechanisms'
rules are the ones the product uses (`thresholdout_decide`, `ladder_decide`), fed with noise
drawn in bulk from the simulation's own generator.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from evalsuite.holdout._mechanism import (
    ladder_decide,
    laplace_from_uniform,
    thresholdout_decide,
)

__all__ = [
    "AnalystSetup",
    "LadderSimulation",
    "ThresholdoutSimulation",
    "independent_mde",
    "simulate_ladder",
    "simulate_thresholdout",
]


@dataclass(frozen=True, slots=True)
class AnalystSetup:
    """The suite and the analyst: true score, split sizes, size of a change, number of looks."""

    true_score: float = 0.6
    holdout_items: int = 500
    dev_items: int = 2500
    change_fraction: float = 0.02
    """Share of items whose outcome a noise-only change re-draws."""
    looks: int = 500
    """Holdout answers asked for after the first checkpoint's."""

    @property
    def holdout_se(self) -> float:
        """Standard error of one checkpoint's exact holdout score."""
        p = self.true_score
        return math.sqrt(p * (1 - p) / self.holdout_items)

    @property
    def dev_se(self) -> float:
        """Standard error of one checkpoint's dev score."""
        p = self.true_score
        return math.sqrt(p * (1 - p) / self.dev_items)


def independent_mde(setup: AnalystSetup, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """MDE of two independent holdout runs' scores (two-sided `alpha`, `power`): a Ladder step."""
    from scipy.stats import norm

    z = float(norm.ppf(1 - alpha / 2) + norm.ppf(power))
    return z * math.sqrt(2.0) * setup.holdout_se


def _change(rng: np.random.Generator, solved: np.ndarray, n: int, f: float, p: float) -> np.ndarray:
    redrawn = rng.binomial(n, f, solved.shape)
    lost = rng.hypergeometric(solved, n - solved, redrawn)
    return solved - lost + rng.binomial(redrawn, p)


def _mean_se(values: np.ndarray) -> tuple[float, float]:
    return float(values.mean()), float(values.std(ddof=1) / math.sqrt(values.size))


@dataclass(frozen=True, slots=True)
class ThresholdoutSimulation:
    """Overfitting with exact answers and with Thresholdout, each with its Monte-Carlo error."""

    setup: AnalystSetup
    threshold: float
    noise_scale: float
    budget: int
    reps: int
    seed: int
    exact_overfit: float
    exact_overfit_se: float
    thresholdout_overfit: float
    thresholdout_overfit_se: float
    ratio: float
    ratio_se: float
    exact_holdout_overfit: float
    """The kept checkpoint's exact holdout score minus ``p`` (exact answers: the same)."""
    thresholdout_holdout_overfit: float
    """The kept checkpoint's exact holdout score minus ``p``, analyst on Thresholdout."""
    answered_looks: float
    """Mean looks Thresholdout answered (the rest were refused: budget spent)."""
    budget_spent: float
    """Mean units of budget spent."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def _analyst(
    setup: AnalystSetup,
    reps: int,
    rng: np.random.Generator,
    answer: Any,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    p, nh, nd, f = setup.true_score, setup.holdout_items, setup.dev_items, setup.change_fraction
    hold = rng.binomial(nh, p, reps)
    dev = rng.binomial(nd, p, reps)
    best, live = answer(hold / nh, dev / nd)
    best = np.where(live, best, -np.inf)
    answered = live.astype(float)
    for _ in range(setup.looks):
        hold_new = _change(rng, hold, nh, f, p)
        dev_new = _change(rng, dev, nd, f, p)
        ans, live = answer(hold_new / nh, dev_new / nd)
        keep = live & (ans > best)
        hold = np.where(keep, hold_new, hold)
        dev = np.where(keep, dev_new, dev)
        best = np.where(keep, ans, best)
        answered += live
    return best - p, hold / nh - p, answered


def simulate_thresholdout(
    setup: AnalystSetup,
    *,
    threshold: float,
    noise_scale: float,
    budget: int,
    reps: int = 1000,
    seed: int = 0,
) -> ThresholdoutSimulation:
    """The analyst with exact answers, then with Thresholdout (same setup and number of looks)."""
    exact_rng, mech_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))

    def exact(hold: np.ndarray, dev: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return hold, np.ones(hold.shape, dtype=bool)

    exact_over, _, _ = _analyst(setup, reps, exact_rng, exact)

    sigma = noise_scale
    spent = np.zeros(reps, dtype=int)
    gamma = laplace_from_uniform(mech_rng.random(reps), 2 * sigma)

    def thresholdout(hold: np.ndarray, dev: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        nonlocal gamma, spent
        live = spent < budget
        eta = laplace_from_uniform(mech_rng.random(reps), 4 * sigma)
        xi = laplace_from_uniform(mech_rng.random(reps), sigma)
        ans, over = thresholdout_decide(dev, hold, threshold, gamma, eta, xi)
        used = over & live
        spent = spent + used
        fresh = laplace_from_uniform(mech_rng.random(reps), 2 * sigma)
        gamma = np.where(used, fresh, gamma)
        return ans, live

    mech_over, mech_hold, answered = _analyst(setup, reps, mech_rng, thresholdout)
    e_mean, e_se = _mean_se(exact_over)
    m_mean, m_se = _mean_se(mech_over)
    ratio = e_mean / m_mean if m_mean > 0 else math.inf
    ratio_se = ratio * math.hypot(e_se / e_mean, m_se / m_mean) if m_mean > 0 else math.nan
    return ThresholdoutSimulation(
        setup=setup,
        threshold=threshold,
        noise_scale=noise_scale,
        budget=budget,
        reps=reps,
        seed=seed,
        exact_overfit=e_mean,
        exact_overfit_se=e_se,
        thresholdout_overfit=m_mean,
        thresholdout_overfit_se=m_se,
        ratio=ratio,
        ratio_se=ratio_se,
        exact_holdout_overfit=e_mean,
        thresholdout_holdout_overfit=float(mech_hold.mean()),
        answered_looks=float(answered.mean()),
        budget_spent=float(spent.mean()),
    )


@dataclass(frozen=True, slots=True)
class LadderSimulation:
    """Share of replications in which the Ladder released no improvement after the first."""

    setup: AnalystSetup
    step: float
    reps: int
    seed: int
    no_improvement_climbing: float
    """The hill-climbing analyst (keeps a change when the Ladder moves)."""
    no_improvement_climbing_se: float
    no_improvement_independent: float
    """Independent noise-only checkpoints (every one a fresh draw of every item)."""
    no_improvement_independent_se: float
    released_overfit_climbing: float
    """Mean final released score minus ``p`` (the hill-climbing analyst)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def simulate_ladder(
    setup: AnalystSetup, *, step: float, reps: int = 1000, seed: int = 0
) -> LadderSimulation:
    """The analyst on the Ladder: does a noise-only checkpoint ever move the released score?"""
    climb_rng, indep_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    p, nh, f = setup.true_score, setup.holdout_items, setup.change_fraction

    hold = climb_rng.binomial(nh, p, reps)
    best, _ = ladder_decide(hold / nh, np.full(reps, np.nan), step)
    moved_any = np.zeros(reps, dtype=bool)
    for _ in range(setup.looks):
        hold_new = _change(climb_rng, hold, nh, f, p)
        best, moved = ladder_decide(hold_new / nh, best, step)
        hold = np.where(moved, hold_new, hold)
        moved_any |= moved
    climbing = ~moved_any
    released_over = best - p

    first = indep_rng.binomial(nh, p, reps) / nh
    indep_best, _ = ladder_decide(first, np.full(reps, np.nan), step)
    indep_moved = np.zeros(reps, dtype=bool)
    for _ in range(setup.looks):
        indep_best, moved = ladder_decide(indep_rng.binomial(nh, p, reps) / nh, indep_best, step)
        indep_moved |= moved
    independent = ~indep_moved

    def share(flags: np.ndarray) -> tuple[float, float]:
        q = float(flags.mean())
        return q, math.sqrt(q * (1 - q) / flags.size)

    c, c_se = share(climbing)
    i, i_se = share(independent)
    return LadderSimulation(
        setup=setup,
        step=step,
        reps=reps,
        seed=seed,
        no_improvement_climbing=c,
        no_improvement_climbing_se=c_se,
        no_improvement_independent=i,
        no_improvement_independent_se=i_se,
        released_overfit_climbing=float(released_over.mean()),
    )
