"""Adaptive runs by simulation (docs/design/adaptive.md, "What the simulation shows").

Simulated suites: zero-one-inflated Beta difficulty (30% of items never solved, 30% always,
the rest Beta(2, 2)), and the 50 tau-bench airline tasks with GPT-4o's 4 recorded trials
each, resampled (tests/data/tau_bench). The quick tier runs few replicates with margins the
slow tier's figures leave room for; `--runslow` runs the figures the design note reports.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalsuite.analyse import estimate_mean
from evalsuite.analyse._adaptive import AdaptiveRule, AdaptiveRun
from evalsuite.analyse._adaptive_sim import (
    FIXED_EPOCHS,
    fixed_halfwidth,
    inflated_beta_suite,
    simulate_adaptive,
    simulate_naive,
    simulate_versus,
)

TAU = Path(__file__).parents[1] / "data" / "tau_bench" / "gpt-4o-airline_trials.csv"


def _coverage(reps: int, n_items: int, seed: int) -> tuple[float, float]:
    """(CS coverage, naive coverage) at the stopping round, target +-0.06, many small rounds."""
    rng = np.random.default_rng(seed)
    cs = naive = 0
    for rep in range(reps):
        p = inflated_beta_suite(n_items, rng)
        kw = {"seed": rep, "max_epochs": 20, "round_share": 0.04}
        cs += simulate_adaptive(p, 0.06, rng, **kw).covered  # type: ignore[arg-type]
        naive += simulate_naive(p, 0.06, rng, **kw).covered  # type: ignore[arg-type]
    return cs / reps, naive / reps


def test_cs_covers_under_adaptive_stopping_and_the_naive_rule_does_not() -> None:
    cs, naive = _coverage(reps=40, n_items=50, seed=20261201)
    assert cs >= 0.95
    assert naive < 0.9


@pytest.mark.slow
def test_coverage_figures_of_the_design_note() -> None:
    cs, naive = _coverage(reps=400, n_items=50, seed=7)
    assert cs >= 0.95, f"confidence sequence {cs:.3f}"
    assert naive < 0.95, f"naive re-checked t interval {naive:.3f}"


def _savings(reps: int, n_items: int, seed: int) -> tuple[float, float]:
    """(mean attempts / attempts of 5 fixed epochs, coverage) at the fixed run's half-width."""
    rng = np.random.default_rng(seed)
    ratios, covered = [], 0
    for rep in range(reps):
        p = inflated_beta_suite(n_items, rng)
        target = fixed_halfwidth(p, rng)
        out = simulate_adaptive(p, target, rng, seed=rep)
        ratios.append(out.calls / (FIXED_EPOCHS * n_items))
        covered += out.covered
    return float(np.mean(ratios)), covered / reps


def test_attempts_saved_against_five_fixed_epochs() -> None:
    ratio, coverage = _savings(reps=16, n_items=100, seed=3)
    assert ratio <= 0.6  # at least 40% fewer attempts at the same half-width
    assert coverage >= 0.9


@pytest.mark.slow
def test_savings_figures_of_the_design_note() -> None:
    for n_items in (100, 200):
        ratio, coverage = _savings(reps=200, n_items=n_items, seed=4)
        assert ratio <= 0.6, f"{n_items} items: attempts {ratio:.3f} of 5 epochs"
        assert coverage >= 0.95, f"{n_items} items: coverage {coverage:.3f}"


def _tau_trials() -> list[np.ndarray]:
    frame = pd.read_csv(TAU)
    return [g["reward"].to_numpy(dtype=float) for _, g in frame.groupby("task_id", sort=True)]


def _tau(reps: int, seed: int) -> tuple[float, float]:
    """Resampled tau-bench trials: (coverage of the suite score, attempts / 5 epochs)."""
    trials = _tau_trials()
    truth = float(np.mean([t.mean() for t in trials]))
    n = len(trials)
    rng = np.random.default_rng(seed)
    covered, ratios = 0, []
    for rep in range(reps):
        fixed = np.array([rng.choice(t, FIXED_EPOCHS).mean() for t in trials])
        est = estimate_mean(fixed, trials=np.full(n, FIXED_EPOCHS), rng=rng)
        target = (est.ci.high - est.ci.low) / 2
        run = AdaptiveRun(np.full(n, 1 / n), AdaptiveRule(target_halfwidth=target, seed=rep))
        run.simulate(lambda i: float(rng.choice(trials[i])))
        last = run.rounds[-1]
        covered += last.lower <= truth <= last.upper
        ratios.append(run.calls / (FIXED_EPOCHS * n))
    return covered / reps, float(np.mean(ratios))


def test_tau_bench_resampled_trials() -> None:
    coverage, ratio = _tau(reps=20, seed=5)
    assert coverage >= 0.9
    assert ratio <= 0.6  # at least 40% fewer attempts than 5 fixed epochs


@pytest.mark.slow
def test_tau_bench_figures_of_the_design_note() -> None:
    coverage, ratio = _tau(reps=500, seed=6)
    assert coverage >= 0.95, f"tau-bench: coverage {coverage:.3f}"
    assert ratio <= 0.6, f"tau-bench: attempts {ratio:.3f} of 5 epochs"


def _verdicts(reps: int, seed: int, shifts: tuple[float, ...] = (0.0, 1.0, 2.0)) -> dict[str, int]:
    """Agreement with the full fixed run's verdict, and errors against the truth.

    Keys: ``decisive`` (fixed verdicts that are better/worse), ``agree``, ``undecided`` (of
    those, adaptive verdicts that are not better/worse), ``contradict``; ``early`` (runs that
    stopped before the budget); ``errors`` (adaptive verdicts the true suite difference
    contradicts: better/worse when it is 0 or has the other sign, no difference beyond the
    margin when it is at least the margin) over ``runs``.
    """
    rng = np.random.default_rng(seed)
    out = dict.fromkeys(
        ("runs", "decisive", "agree", "undecided", "contradict", "early", "errors"), 0
    )
    for rep in range(reps):
        base = inflated_beta_suite(100, rng)
        clipped = np.clip(base, 1e-3, 1 - 1e-3)
        shift = shifts[rep % len(shifts)]
        logit = np.log(clipped / (1 - clipped)) + shift
        cand = np.where((base > 0) & (base < 1), 1 / (1 + np.exp(-logit)), base)
        delta = float(np.mean(cand - base))
        got = simulate_versus(cand, base, rng, seed=rep)
        out["runs"] += 1
        out["early"] += got.early
        out["errors"] += (
            (got.adaptive == "better" and delta <= 0)
            or (got.adaptive == "worse" and delta >= 0)
            or (got.adaptive == "no_difference_beyond_margin" and abs(delta) >= 0.02)
        )
        if got.fixed == "undecided":
            continue
        out["decisive"] += 1
        out["agree"] += got.adaptive == got.fixed
        out["undecided"] += got.adaptive not in ("better", "worse")
        out["contradict"] += got.adaptive in ("better", "worse") and got.adaptive != got.fixed
    return out


def test_versus_agrees_with_the_full_fixed_run() -> None:
    got = _verdicts(reps=30, seed=8)
    assert got["decisive"] >= 15
    assert got["contradict"] == 0
    assert got["agree"] >= 0.9 * got["decisive"], got
    assert got["early"] > 0  # some comparisons stop before the budget


def test_versus_errors_stay_below_alpha_when_there_is_no_difference() -> None:
    got = _verdicts(reps=40, seed=10, shifts=(0.0,))
    assert got["errors"] <= 5, got  # 0.05 x 40 = 2 expected at most; 5 leaves room for chance


@pytest.mark.slow
def test_verdict_figures_of_the_design_note() -> None:
    got = _verdicts(reps=300, seed=9)
    assert got["contradict"] == 0, got
    assert got["agree"] >= 0.95 * got["decisive"], got


@pytest.mark.slow
def test_versus_error_rate_figure_of_the_design_note() -> None:
    reps = 600
    got = _verdicts(reps=reps, seed=11, shifts=(0.0,))
    # the rate is at most alpha = 0.05; allow two binomial standard errors of chance
    assert got["errors"] <= reps * (0.05 + 2 * (0.05 * 0.95 / reps) ** 0.5), got
