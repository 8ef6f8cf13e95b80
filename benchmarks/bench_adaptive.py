"""Benchmark of adaptive runs: model calls against 5 fixed epochs, and --versus verdicts.

Savings: for each simulated suite (zero-one-inflated Beta difficulty: 30% of items never
solved, 30% always, the rest Beta(2, 2); and the 50 tau-bench airline tasks with their 4
recorded GPT-4o trials resampled), one fixed 5-epoch run gives the default interval's
half-width H; an adaptive run (`evalsuite.analyse._adaptive`) then runs to +-H with its
confidence sequence. Printed: the mean ratio of attempts (adaptive / fixed, the baseline
measured in the same run), the share saved, the confidence sequence's coverage of the suite
score, and beside it the coverage of the naive rule (re-check a fixed-sample t interval of
the same pseudo-outcomes after every round and stop when it is +-H) on the same suites.

Verdicts: simulated comparisons (100 items, logit shifts 0/1/2 of the mixed items) of an
adaptive `--versus` run with the full fixed 5-epoch run on the same attempts: of the fixed
verdicts that are decisive, how many the adaptive run agrees with, leaves undecided or
contradicts; its mean attempts; and its error rate where the true difference is 0.

Run: ``.venv/bin/python benchmarks/bench_adaptive.py [--reps 100] [--seed 0]``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from evalsuite.analyse._adaptive import AdaptiveRule, AdaptiveRun
from evalsuite.analyse._adaptive_sim import (
    FIXED_EPOCHS,
    fixed_halfwidth,
    inflated_beta_suite,
    simulate_naive,
    simulate_versus,
)

TAU = Path(__file__).parents[1] / "tests" / "data" / "tau_bench" / "gpt-4o-airline_trials.csv"


def _bernoulli(p: np.ndarray, rng: np.random.Generator) -> Callable[[int], float]:
    return lambda i: float(rng.random() < p[i])


def _resample(trials: list[np.ndarray], rng: np.random.Generator) -> Callable[[int], float]:
    return lambda i: float(rng.choice(trials[i]))


def _run(
    trials: list[np.ndarray] | None, n_items: int, reps: int, rng: np.random.Generator
) -> tuple[float, float, float]:
    """(attempts / 5 fixed epochs, coverage of the sequence, coverage of the naive rule)."""
    ratios, covered, naive = [], 0, 0
    for rep in range(reps):
        if trials is None:
            p = inflated_beta_suite(n_items, rng)
            draw = _bernoulli(p, rng)
        else:
            p = np.array([t.mean() for t in trials])
            draw = _resample(trials, rng)
        target = fixed_halfwidth(p, rng)
        rule = AdaptiveRule(target_halfwidth=target, seed=rep)
        run = AdaptiveRun(np.full(p.size, 1 / p.size), rule)
        run.simulate(draw)
        last = run.rounds[-1]
        covered += last.lower <= p.mean() <= last.upper
        ratios.append(run.calls / (FIXED_EPOCHS * p.size))
        naive += simulate_naive(p, target, rng, seed=rep, attempt=draw).covered
    return float(np.mean(ratios)), covered / reps, naive / reps


def _verdicts(reps: int, rng: np.random.Generator) -> dict[str, float]:
    out = dict.fromkeys(("decisive", "agree", "undecided", "contradict", "calls"), 0.0)
    errors = nulls = 0
    for rep in range(reps):
        base = inflated_beta_suite(100, rng)
        clipped = np.clip(base, 1e-3, 1 - 1e-3)
        shift = (0.0, 1.0, 2.0)[rep % 3]
        logit = np.log(clipped / (1 - clipped)) + shift
        cand = np.where((base > 0) & (base < 1), 1 / (1 + np.exp(-logit)), base)
        got = simulate_versus(cand, base, rng, seed=rep)
        out["calls"] += got.calls / (FIXED_EPOCHS * 100) / reps
        if shift == 0.0:
            nulls += 1
            errors += got.adaptive in ("better", "worse")
        if got.fixed == "undecided":
            continue
        out["decisive"] += 1
        out["agree"] += got.adaptive == got.fixed
        out["undecided"] += got.adaptive not in ("better", "worse")
        out["contradict"] += got.adaptive in ("better", "worse") and got.adaptive != got.fixed
    out["null_error_rate"] = errors / max(nulls, 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    frame = pd.read_csv(TAU)
    tau = [g["reward"].to_numpy(dtype=float) for _, g in frame.groupby("task_id", sort=True)]
    print("suite                          attempts/fixed  saved  coverage  naive coverage")
    for label, trials, n_items in (
        ("inflated Beta, 100 items", None, 100),
        ("inflated Beta, 200 items", None, 200),
        ("tau-bench airline, 50 tasks", tau, 50),
    ):
        ratio, coverage, naive = _run(trials, n_items, args.reps, rng)
        print(f"{label:<30} {ratio:14.3f}  {1 - ratio:5.1%}  {coverage:8.3f}  {naive:14.3f}")
    v = _verdicts(3 * args.reps, rng)
    print(
        f"--versus vs full 5-epoch run: {int(v['decisive'])} decisive fixed verdicts, "
        f"{int(v['agree'])} agree ({v['agree'] / max(v['decisive'], 1):.1%}), "
        f"{int(v['undecided'])} undecided, {int(v['contradict'])} contradict; "
        f"attempts/fixed {v['calls']:.3f}; error rate with no difference "
        f"{v['null_error_rate']:.3f} (alpha 0.05)"
    )


if __name__ == "__main__":
    main()
