"""Benchmark of adaptive runs: model calls against 5 fixed epochs at the same half-width.

For each simulated suite (zero-one-inflated Beta difficulty: 30% of items never solved, 30%
always, the rest Beta(2, 2); and the 50 tau-bench airline tasks with their 4 recorded GPT-4o
trials resampled), one fixed 5-epoch run gives the default interval's half-width H; an
adaptive run (`evalsuite.analyse._adaptive`) then runs to +-H with its confidence sequence.
Printed: the mean ratio of attempts (adaptive / fixed, the baseline measured in the same
run), the share saved, and the confidence sequence's coverage of the suite score. Run:
``.venv/bin/python benchmarks/bench_adaptive.py [--reps 100] [--seed 0]``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from evalsuite.analyse._adaptive import AdaptiveRule, AdaptiveRun
from evalsuite.analyse._adaptive_sim import FIXED_EPOCHS, fixed_halfwidth, inflated_beta_suite

TAU = Path(__file__).parents[1] / "tests" / "data" / "tau_bench" / "gpt-4o-airline_trials.csv"


def _bernoulli(p: np.ndarray, rng: np.random.Generator) -> Callable[[int], float]:
    return lambda i: float(rng.random() < p[i])


def _resample(trials: list[np.ndarray], rng: np.random.Generator) -> Callable[[int], float]:
    return lambda i: float(rng.choice(trials[i]))


def _run(
    trials: list[np.ndarray] | None, n_items: int, reps: int, rng: np.random.Generator
) -> tuple[float, float]:
    ratios, covered = [], 0
    for rep in range(reps):
        if trials is None:
            p = inflated_beta_suite(n_items, rng)
            draw = _bernoulli(p, rng)
        else:
            p = np.array([t.mean() for t in trials])
            draw = _resample(trials, rng)
        target = fixed_halfwidth(p, rng)
        run = AdaptiveRun(
            np.full(p.size, 1 / p.size), AdaptiveRule(target_halfwidth=target, seed=rep)
        )
        run.simulate(draw)
        last = run.rounds[-1]
        covered += last.lower <= p.mean() <= last.upper
        ratios.append(run.calls / (FIXED_EPOCHS * p.size))
    return float(np.mean(ratios)), covered / reps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    frame = pd.read_csv(TAU)
    tau = [g["reward"].to_numpy(dtype=float) for _, g in frame.groupby("task_id", sort=True)]
    print("suite                          attempts/fixed  saved  coverage")
    for label, trials, n_items in (
        ("inflated Beta, 100 items", None, 100),
        ("inflated Beta, 200 items", None, 200),
        ("tau-bench airline, 50 tasks", tau, 50),
    ):
        ratio, coverage = _run(trials, n_items, args.reps, rng)
        print(f"{label:<30} {ratio:14.3f}  {1 - ratio:5.1%}  {coverage:8.3f}")


if __name__ == "__main__":
    main()
