"""Benchmark of the reusable holdout (issue 36): an adaptive analyst against exact answers,
Thresholdout and the Ladder (`evalsuite.holdout._mechanism_sim`).

The analyst makes noise-only changes to a checkpoint (each re-draws the outcomes of a share
of the items, dev and holdout, from the same success rate, so every checkpoint's true score is
the same ``p``), asks the holdout after each, and keeps the checkpoint with the best answer.
Overfitting is the best answer minus ``p``; every figure has its Monte-Carlo standard error.

Part 1, Thresholdout against exact answers, same number of looks: the headline setup
(p = 0.6, 500 holdout and 2,500 dev items, 2% of items re-drawn per change, 500 looks,
``T`` = the standard deviation of dev minus holdout, ``sigma`` = a quarter of the holdout's
standard error, a budget that never runs out), then what changes it: equal split sizes,
bigger changes, independent checkpoints (every item re-drawn), a budget of 50, fewer looks.

Part 2, the Ladder: share of replications in which no noise-only checkpoint moved the released
score after the first, with the step at the MDE of two independent holdout runs (80% power,
5% two-sided) and at twice it, for the hill-climbing analyst and for independent checkpoints.

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/bench_reusable_holdout.py [--reps 2000]
[--seed 0]``.
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import replace

from evalsuite.holdout._mechanism_sim import (
    AnalystSetup,
    independent_mde,
    simulate_ladder,
    simulate_thresholdout,
)


def _thresholdout_rows(reps: int, seed: int) -> None:
    base = AnalystSetup()
    cases: list[tuple[str, AnalystSetup, int | None]] = [
        ("headline", base, None),
        ("dev items = holdout items (500)", replace(base, dev_items=500), None),
        ("10% of items re-drawn per change", replace(base, change_fraction=0.1), None),
        ("independent checkpoints (100% re-drawn)", replace(base, change_fraction=1.0), None),
        ("budget B = 50", base, 50),
        ("100 looks", replace(base, looks=100), None),
    ]
    print("Part 1: Thresholdout vs exact answers (overfitting = best answer - true score)")
    header = (
        f"{'case':42} {'exact':>15} {'thresholdout':>15} {'ratio':>12} "
        f"{'hold. overfit':>13} {'answered':>9} {'spent':>7}"
    )
    print(header)
    for name, setup, budget in cases:
        spread = math.hypot(setup.holdout_se, setup.dev_se)
        sim = simulate_thresholdout(
            setup,
            threshold=spread,
            noise_scale=setup.holdout_se / 4,
            budget=budget if budget is not None else setup.looks + 1,
            reps=reps,
            seed=seed,
        )
        print(
            f"{name:42} {sim.exact_overfit:7.4f}±{sim.exact_overfit_se:.4f}"
            f" {sim.thresholdout_overfit:7.4f}±{sim.thresholdout_overfit_se:.4f}"
            f" {sim.ratio:5.2f}±{sim.ratio_se:.2f}"
            f" {sim.thresholdout_holdout_overfit:13.4f}"
            f" {sim.answered_looks:9.1f} {sim.budget_spent:7.1f}"
        )
    print(
        "  exact and thresholdout: mean overfitting ± Monte-Carlo s.e.; 'hold. overfit': the kept "
        "checkpoint's exact holdout score minus p with Thresholdout (with exact answers it equals "
        "the exact column); 'answered': looks answered of looks + 1; 'spent': budget units spent."
    )


def _ladder_rows(reps: int, seed: int) -> None:
    base = AnalystSetup()
    mde = independent_mde(base)
    print("\nPart 2: the Ladder, share of replications with no improvement released")
    print(f"{'step':28} {'hill-climbing':>16} {'independent':>16} {'released - p':>13}")
    for name, step in (("MDE", mde), ("2 x MDE", 2 * mde)):
        sim = simulate_ladder(base, step=step, reps=reps, seed=seed)
        print(
            f"{name + f' = {step:.4f}':28}"
            f" {sim.no_improvement_climbing:9.3f}±{sim.no_improvement_climbing_se:.3f}"
            f" {sim.no_improvement_independent:9.3f}±{sim.no_improvement_independent_se:.3f}"
            f" {sim.released_overfit_climbing:13.4f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    start = time.perf_counter()
    print(f"reps = {args.reps}, seed = {args.seed}; setup: {AnalystSetup()}\n")
    _thresholdout_rows(args.reps, args.seed)
    _ladder_rows(args.reps, args.seed)
    print(f"\n{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
