"""Where the sequential comparison's type-I error comes from (docs/design/sequential.md).

A vectorised re-implementation of the better / worse and "no difference" stops of
`SequentialComparison` with equal models (futility left out, which can only add rejections,
so the rate here bounds the real one from above), fast enough for 20,000 replicates per
suite. Per suite: the rejection rate of the sequential comparison, its rejections per look,
and the full fixed run's paired t on the same draws; with the design's reserve (the better /
worse boundaries spend ``0.9 alpha``) or without (``--reserve 0``); with the two-stage epochs
(3, then 5 for mixed items) or all 5 epochs on every item (``--all-epochs``).

Run: ``.venv/bin/python benchmarks/bench_sequential_type1.py [--reps 20000] [--reserve 0.1]
[--seed 11] [--all-epochs]``.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from evalsuite.analyse._sequential import SequentialDesign, _rb_table, _t_critical
from evalsuite.analyse._sequential_sim import SUITES, fixed_mde, make_suite

TAU = Path(__file__).parents[1] / "tests" / "data" / "tau_bench" / "gpt-4o-airline_trials.csv"


def _tau() -> list[np.ndarray]:
    frame = pd.read_csv(TAU)
    return [g["reward"].to_numpy(dtype=float) for _, g in frame.groupby("task_id", sort=True)]


def type_one(
    name: str, reps: int, seed: int, reserve: float, *, two_stage: bool
) -> tuple[float, float, np.ndarray]:
    """(sequential rejection rate, fixed paired t's, rejections per look) with equal models."""
    rng = np.random.default_rng(seed)
    tau = _tau()
    table = np.array(_rb_table(3, 2))
    rejected = fixed = 0
    per_look: np.ndarray | None = None
    for _ in range(reps):
        suite = make_suite(name, rng, tau)
        n = suite.n_items
        mde = fixed_mde(suite, 5)
        design = SequentialDesign(margin=mde, reserve=reserve)
        base = suite.draw(5, rng).mean(axis=1)
        y = suite.draw(5, rng)
        first = y[:, :3].sum(axis=1)
        if two_stage:
            mixed = (first > 0) & (first < 3)
            est = np.where(mixed, table[y.sum(axis=1).astype(int)], first / 3)
        else:
            est = y.mean(axis=1)
        d = (est - base)[rng.permutation(n)]
        sizes, z, z_eq = design.look_sizes(n), design.critical_z(n), design.equivalence_z(n)
        if per_look is None:
            per_look = np.zeros(sizes.size)
        for k, m in enumerate(sizes.tolist()):
            part = d[:m]
            mean, se = part.mean(), part.std(ddof=1) / math.sqrt(m)
            if abs(mean) > _t_critical(float(z[k]), m - 1) * se:
                rejected += 1
                per_look[k] += 1
                break
            if abs(mean) + _t_critical(float(z_eq[k]), m - 1) * se < mde:
                break
        full = y.mean(axis=1) - base
        fixed += bool(
            abs(full.mean()) > stats.t.isf(0.025, n - 1) * full.std(ddof=1) / math.sqrt(n)
        )
    assert per_look is not None
    return rejected / reps, fixed / reps, per_look / reps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20000)
    parser.add_argument("--reserve", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--all-epochs", action="store_true")
    args = parser.parse_args()
    plan = "all 5 epochs" if args.all_epochs else "two-stage epochs 3/5"
    print(
        f"type-I upper bound (no futility), {args.reps} replicates per row, reserve "
        f"{args.reserve}, {plan}, seed {args.seed}+k"
    )
    print(f"{'suite':<24} {'sequential':>16} {'fixed t':>8}  per look")
    started = time.perf_counter()
    for k, name in enumerate(SUITES):
        rate, fixed, looks = type_one(
            name, args.reps, args.seed + k, args.reserve, two_stage=not args.all_epochs
        )
        se = math.sqrt(rate * (1 - rate) / args.reps)
        print(
            f"{name:<24} {rate:>9.4f}±{se:.4f} {fixed:>8.4f}  "
            + " ".join(f"{x:.4f}" for x in looks),
            flush=True,
        )
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
