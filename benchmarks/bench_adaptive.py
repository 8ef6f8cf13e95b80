"""Benchmark of adaptive runs against the best fixed design that makes the same claim (issue 31).

Suites (`evalsuite.analyse._sequential_sim.SUITES`): Beta(0.5, 0.5) and Beta(2, 2) solve
rates of 100 and 300 items, 100 items of which 60% are always or never solved (the rest
Beta(2, 2)), and the 50 tau-bench airline tasks with GPT-4o's 4 recorded trials resampled
(tests/data/tau_bench, in this repository). Each replicate draws a fresh suite (simulated).

Part 1, sequential comparison (`evalsuite.analyse._sequential`), against the full fixed
paired design it stands for (both runs 5 epochs on every item, paired t at 0.05), with the
margin set to that design's MDE (80% power):
- true difference 2 x MDE: agreement of the verdicts, calls / the full run's;
- equal models: type-I error (better or worse), "no difference beyond the margin" reached
  with fewer calls than the full run, and at an interim look (before the last group).
Every figure has its Monte-Carlo standard error.

Part 2, `--target-halfwidth` on the suite's items, against the best fixed design with the same
target and coverage: the oracle fixed design, which knows the true within-item variances and
gives every item ``E = z^2 mean p(1-p) / (N H^2)`` epochs (fractional: a random subset gets one
more), so that its normal interval with the true variances is exactly +-H at coverage 0.95; no
real fixed design can do better (one that estimates its variances at those epochs covers
0.938-0.957: column "fixed cov"). H is set so that E = 3 on each drawn suite.
- `--stein-reps`: the wired few-stage design (`_target_design`, `run --adaptive
  --target-halfwidth`): calls / the oracle's, coverage of the suite's item mean, share
  reaching +-H;
- `--target-reps`: the anytime-valid betting design it replaced (`AdaptiveRun`).

Part 3, `--population-reps`: `--estimand population` (the item population's mean), H the
3-epoch fixed design's half-width from the population's true spreads: share refused after the
pilot, coverage where not refused, share reaching +-H, calls / 3 epochs, the fixed design's
own coverage, and the share refused at a target below the floor (0.8 x the between-item
spread's half-width). Tau-bench's population: its 50 tasks, resampled with replacement.

Part 4, `--agree-reps` (off by default): why the call-ratio acceptance cannot be met from the
run's own outcomes (docs/design/sequential.md). For each oracle epoch count E0
(`--oracle-epochs`, default 3; it also repeats part 2's wired design at each), the
stop-if-agree design (`evalsuite.analyse._stop_if_agree`: a pilot of k attempts on every item,
the items whose pilot agrees stop, the others run to one planned horizon, exact unbiased
estimates) for each pilot of `--agree-k` (``auto``: k planned from a 2-epoch pilot): calls /
the oracle's, coverage, share reaching +-H, mean k and horizon; and its known-rate best case
(the cheapest mixture of two (k, horizon) plans with the oracle's variance, exact, over
`--best-reps` drawn suites).

Run: ``.venv/bin/python benchmarks/bench_adaptive.py [--reps 2000] [--target-reps 200]
[--stein-reps 2000] [--population-reps 2000] [--skip-comparison] [--seed 0]
[--oracle-epochs 3,5,10] [--agree-reps 2000] [--agree-k 3,auto] [--best-reps 200]``.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from evalsuite.analyse._adaptive import AdaptiveRule, AdaptiveRun
from evalsuite.analyse._sequential import SequentialDesign
from evalsuite.analyse._sequential_sim import (
    SUITES,
    ComparisonOutcome,
    Suite,
    fixed_mde,
    make_suite,
    simulate_comparison,
)
from evalsuite.analyse._stop_if_agree import best_case, stop_if_agree_run
from evalsuite.analyse._target_design import METHOD as STEIN_METHOD
from evalsuite.analyse._target_design import target_halfwidth_run

TAU = Path(__file__).parents[1] / "tests" / "data" / "tau_bench" / "gpt-4o-airline_trials.csv"


def tau_trials() -> list[np.ndarray]:
    """The 50 tau-bench airline tasks' recorded trials (in this repository)."""
    frame = pd.read_csv(TAU)
    return [g["reward"].to_numpy(dtype=float) for _, g in frame.groupby("task_id", sort=True)]


def _share(xs: list[bool]) -> str:
    p = float(np.mean(xs))
    return f"{p:.3f}±{math.sqrt(p * (1 - p) / len(xs)):.3f}"


def _mean(xs: list[float]) -> str:
    return f"{np.mean(xs):.3f}±{np.std(xs, ddof=1) / math.sqrt(len(xs)):.3f}"


def comparisons(
    name: str,
    reps: int,
    seed: int,
    tau: list[np.ndarray],
    design: SequentialDesign,
    null_reps: int | None = None,
) -> tuple[list[ComparisonOutcome], list[ComparisonOutcome]]:
    """(2 x MDE outcomes, equal-model outcomes) for suite `name`.

    `null_reps` (default `reps`) equal-model replicates: the type-I check can use more.
    """
    rng = np.random.default_rng(seed)
    shifted: list[ComparisonOutcome] = []
    equal: list[ComparisonOutcome] = []
    total = max(reps, null_reps if null_reps is not None else reps)
    for rep in range(total):
        cells = ((shifted, 2.0, reps), (equal, 0.0, null_reps if null_reps is not None else reps))
        for out, factor, wanted in cells:
            if rep >= wanted:
                continue
            suite = make_suite(name, rng, tau)
            mde = fixed_mde(suite, design.epochs)
            d = SequentialDesign(
                alpha=design.alpha,
                looks=design.looks,
                boundary=design.boundary,
                margin_boundary=design.margin_boundary,
                margin=mde,
                epochs=design.epochs,
                first_epochs=design.first_epochs,
                futility=design.futility,
                seed=rep,
                reserve=design.reserve,
            )
            out.append(simulate_comparison(suite, d, rng, delta=factor * mde))
    return shifted, equal


def _attempt(
    p: np.ndarray, trials: tuple[np.ndarray, ...] | None, rng: np.random.Generator
) -> Callable[[int], float]:
    if trials is None:
        return lambda i: float(rng.random() < p[i])
    return lambda i: float(rng.choice(trials[i]))


def target_halfwidth(name: str, reps: int, seed: int, tau: list[np.ndarray]) -> tuple[str, str]:
    """(calls / the oracle best fixed design's, coverage of the suite's item mean)."""
    rng = np.random.default_rng(seed)
    ratios, covered = [], []
    for rep in range(reps):
        suite = make_suite(name, rng, tau)
        n, p = suite.n_items, suite.p
        h = 1.96 * math.sqrt(float(np.mean(p * (1 - p))) / (n * 3))
        run = AdaptiveRun(
            np.full(n, 1 / n), AdaptiveRule(target_halfwidth=h, seed=rep, max_epochs=10)
        )
        run.simulate(_attempt(suite.p, suite.trials, rng))
        last = run.rounds[-1]
        covered.append(bool(last.lower <= p.mean() <= last.upper))
        ratios.append(run.calls / (3 * n))
    return _mean(ratios), _share(covered)


def target_stein(
    name: str, reps: int, seed: int, tau: list[np.ndarray], oracle_epochs: int = 3
) -> tuple[str, str, str, str]:
    """The few-stage design (`_target_design`) against the oracle fixed design.

    (calls / the oracle's, coverage of the suite's item mean, share reaching +-H, coverage
    of the fixed design at the oracle's epochs with its estimated variances). The oracle
    spends ``z^2 mean p(1-p) / (N H^2)`` epochs per item (fractional: the best a fixed
    design with the true variances can do); H is set so that this is `oracle_epochs`.
    """
    rng = np.random.default_rng(seed)
    ratios, covered, reached, fixed_covered = [], [], [], []
    for _ in range(reps):
        suite = make_suite(name, rng, tau)
        n, p = suite.n_items, suite.p
        e0 = oracle_epochs
        h = 1.96 * math.sqrt(float(np.mean(p * (1 - p))) / (n * e0))
        draw = _draw(suite.p, suite.trials, rng)
        out = target_halfwidth_run(np.full(n, 1 / n), h, draw, rng, max_epochs=50)
        ratios.append(out.calls / (e0 * n))
        covered.append(bool(out.lower <= p.mean() <= out.upper))
        reached.append(out.reached)
        y = draw(np.full(n, e0, dtype=np.int64))
        m = y / e0
        half = 1.96 * math.sqrt(float(np.sum((y - y * m) / (e0 - 1) / e0))) / n
        fixed_covered.append(bool(abs(m.mean() - p.mean()) <= half))
    return _mean(ratios), _share(covered), _share(reached), _share(fixed_covered)


def _rates(name: str, rng: np.random.Generator, tau: list[np.ndarray]) -> np.ndarray:
    """A suite's true solve rates (tau-bench: its tasks' recorded rates; 0/1 rewards, so
    resampling a task's trials is a Bernoulli draw at that rate)."""
    return make_suite(name, rng, tau).p


def target_agree(
    name: str,
    reps: int,
    seed: int,
    tau: list[np.ndarray],
    oracle_epochs: int,
    k: int | None,
) -> tuple[str, str, str, str, str]:
    """The stop-if-agree design (`_stop_if_agree.stop_if_agree_run`) against the oracle.

    (calls / the oracle's, coverage of the suite's item mean, share reaching +-H, mean pilot
    k, mean horizon); H as in `target_stein`, with `oracle_epochs`.
    """
    rng = np.random.default_rng(seed)
    ratios, covered, reached, ks, horizons = [], [], [], [], []
    for _ in range(reps):
        p = _rates(name, rng, tau)
        n = p.size
        h = 1.96 * math.sqrt(float(np.mean(p * (1 - p))) / (n * oracle_epochs))
        out = stop_if_agree_run(
            np.full(n, 1 / n), h, lambda c, p=p: rng.binomial(c, p).astype(float), k=k
        )
        ratios.append(out.calls / (oracle_epochs * n))
        covered.append(abs(out.estimate - float(p.mean())) <= out.halfwidth)
        reached.append(out.reached)
        ks.append(float(out.k))
        horizons.append(float(out.horizon))
    return (
        _mean(ratios),
        _share(covered),
        _share(reached),
        f"{np.mean(ks):.2f}",
        f"{np.mean(horizons):.2f}",
    )


def agree_best_case(
    name: str, reps: int, seed: int, tau: list[np.ndarray], oracle_epochs: int
) -> tuple[str, str]:
    """The known-rate best case (`_stop_if_agree.best_case`) over `reps` drawn suites.

    (calls / the oracle's, the most common best plan as ``k/horizon``).
    """
    rng = np.random.default_rng(seed)
    ratios, plans = [], []
    for _ in range(reps if not name.startswith("tau-bench") else 1):  # tau: one fixed suite
        best = best_case(_rates(name, rng, tau), oracle_epochs)
        ratios.append(best.ratio)
        plans.append(f"{best.k}/{best.horizon}")
    ratio = _mean(ratios) if len(ratios) > 1 else f"{ratios[0]:.3f}±0.000"
    return ratio, max(set(plans), key=plans.count)


def _population(name: str, rng: np.random.Generator, tau: list[np.ndarray]) -> tuple[Suite, float]:
    """A suite drawn from its item population, and that population's mean solve rate.

    Simulated suites: Beta(a, a) (mean 1/2) or the 60% always/never mixture (mean 1/2). The
    tau-bench suite: 50 tasks resampled with replacement from the 50 recorded ones, whose
    mean solve rate is then the population's.
    """
    if name.startswith("tau-bench"):
        picks = rng.integers(0, len(tau), len(tau))
        return make_suite(name, rng, [tau[i] for i in picks]), float(
            np.mean([t.mean() for t in tau])
        )
    return make_suite(name, rng, tau), 0.5


def _population_spread(name: str, tau: list[np.ndarray]) -> tuple[float, float]:
    """(between-item variance, mean within-item variance) of the suite's item population."""
    if name.startswith("tau-bench"):
        p = np.array([t.mean() for t in tau])
        return float(p.var()), float(np.mean(p * (1 - p)))
    if name.startswith("60%"):
        # 0.3 at 0, 0.3 at 1, 0.4 Beta(2, 2): E p = 1/2, E p^2 = 0.3 + 0.4 * 0.3
        ep2 = 0.3 + 0.4 * 0.3
        return ep2 - 0.25, 0.5 - ep2
    a = 0.5 if "0.5" in name else 2.0
    var = 0.25 / (2 * a + 1)  # Beta(a, a)
    return var, 0.25 - var


def target_population(
    name: str, reps: int, seed: int, tau: list[np.ndarray], epochs: int = 3
) -> tuple[str, str, str, str, str]:
    """The few-stage design for the item population's mean at a target it can reach.

    H is the normal half-width of a fixed design with `epochs` epochs on every item, from the
    population's true spreads: ``z sqrt((sigma_b^2 + sigma_w^2 / E) / N)``; the oracle fixed
    design spends E epochs. Returns (share refused after the pilot, coverage of the
    population mean where not refused, share reaching +-H, calls / the oracle's, coverage of
    the oracle fixed design's own t interval of item means at E epochs, every replicate).
    """
    rng = np.random.default_rng(seed)
    between, within = _population_spread(name, tau)
    refused, covered, reached, ratios, fixed = [], [], [], [], []
    for _ in range(reps):
        suite, truth = _population(name, rng, tau)
        m = _draw(suite.p, suite.trials, rng)(np.full(suite.n_items, epochs, dtype=np.int64))
        m = m / epochs
        half = float(stats.t.isf(0.025, m.size - 1)) * float(np.std(m, ddof=1)) / math.sqrt(m.size)
        fixed.append(bool(abs(m.mean() - truth) <= half))
        n = suite.n_items
        h = 1.96 * math.sqrt((between + within / epochs) / n)
        draw = _draw(suite.p, suite.trials, rng)
        out = target_halfwidth_run(
            np.full(n, 1 / n), h, draw, rng, max_epochs=10, estimand="item_population"
        )
        refused.append(out.refused)
        if not out.refused:
            covered.append(bool(out.lower <= truth <= out.upper))
            reached.append(out.reached)
            ratios.append(out.calls / (epochs * n))
    return (
        _share(refused),
        _share(covered) if covered else "n/a",
        _share(reached) if reached else "n/a",
        _mean(ratios) if len(ratios) > 1 else "n/a",
        _share(fixed),
    )


def population_refusal(name: str, reps: int, seed: int, tau: list[np.ndarray]) -> str:
    """Share refused at a target below the population floor: ``0.8 z sigma_b / sqrt(N)``."""
    rng = np.random.default_rng(seed)
    between, _ = _population_spread(name, tau)
    refused = []
    for _ in range(reps):
        suite, _truth = _population(name, rng, tau)
        n = suite.n_items
        h = 0.8 * 1.96 * math.sqrt(between / n)
        out = target_halfwidth_run(
            np.full(n, 1 / n),
            h,
            _draw(suite.p, suite.trials, rng),
            rng,
            max_epochs=10,
            estimand="item_population",
        )
        refused.append(out.refused)
    return _share(refused)


def _draw(
    p: np.ndarray, trials: tuple[np.ndarray, ...] | None, rng: np.random.Generator
) -> Callable[[np.ndarray], np.ndarray]:
    if trials is None:
        return lambda counts: rng.binomial(counts, p).astype(float)
    return lambda counts: np.array(
        [rng.choice(t, int(k)).sum() if k else 0.0 for t, k in zip(trials, counts, strict=True)]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--target-reps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--null-reps", type=int, default=None, help="equal-model replicates")
    parser.add_argument("--stein-reps", type=int, default=2000)
    parser.add_argument("--skip-comparison", action="store_true")
    parser.add_argument(
        "--population-reps", type=int, default=0, help="replicates of the population target"
    )
    parser.add_argument(
        "--oracle-epochs",
        default="3",
        help="the oracle fixed design's epochs, comma-separated (H is set from each)",
    )
    parser.add_argument(
        "--agree-reps", type=int, default=0, help="replicates of the stop-if-agree design"
    )
    parser.add_argument(
        "--agree-k", default="3,auto", help="its pilots, comma-separated ('auto': planned)"
    )
    parser.add_argument(
        "--best-reps", type=int, default=200, help="drawn suites for the known-rate best case"
    )
    args = parser.parse_args()
    tau = tau_trials()
    design = SequentialDesign()
    oracle = [int(e) for e in str(args.oracle_epochs).split(",")]
    if not args.skip_comparison:
        _part_one(args, tau, design)
    if args.stein_reps > 0:
        for e0 in oracle:
            _part_stein(args, tau, e0, timed=oracle != [3])
    if args.target_reps > 0:
        _part_two(args, tau)
    if args.population_reps > 0:
        _part_three(args, tau)
    if args.agree_reps > 0:
        _part_agree(args, tau, oracle)


def _part_stein(args: argparse.Namespace, tau: list[np.ndarray], e0: int, *, timed: bool) -> None:
    print(
        f"\n--target-halfwidth, few-stage design ({STEIN_METHOD}, wired) vs the oracle "
        f"best fixed design ({e0} epochs); {args.stein_reps} replicates per row, seed "
        f"{args.seed + 200}+k"
    )
    print(f"{'suite':<24} {'calls/fixed':>12} {'coverage':>12} {'reached':>12} {'fixed cov':>12}")
    started = time.perf_counter()
    for k, name in enumerate(SUITES):
        row = target_stein(name, args.stein_reps, args.seed + 200 + k, tau, e0)
        print(f"{name:<24} " + " ".join(f"{x:>12}" for x in row), flush=True)
    if timed:  # the default run's output stays as it was
        print(f"({time.perf_counter() - started:.0f} s)")


def _part_agree(args: argparse.Namespace, tau: list[np.ndarray], oracle: list[int]) -> None:
    pilots = [None if k == "auto" else int(k) for k in str(args.agree_k).split(",")]
    print(
        f"\nstop-if-agree (pilot k on every item; items whose k outcomes agree stop, the others "
        f"run to one planned horizon; exact Rao-Blackwell estimates of p and p^2) vs the oracle "
        f"best fixed design; {args.agree_reps} replicates per row, seed {args.seed + 500}+k; "
        f"best case: known rates, cheapest mixture of two (k, horizon) plans, "
        f"{args.best_reps} drawn suites, seed {args.seed + 600}+k"
    )
    print(
        f"{'suite':<24} {'E0':>3} {'best case':>12} {'best k/h':>8} {'pilot':>5} "
        f"{'calls/fixed':>12} {'coverage':>12} {'reached':>12} {'mean k':>6} {'mean h':>6}"
    )
    started = time.perf_counter()
    for e0 in oracle:
        for j, name in enumerate(SUITES):
            best, plan = agree_best_case(name, args.best_reps, args.seed + 600 + j, tau, e0)
            for pilot in pilots:
                row = target_agree(name, args.agree_reps, args.seed + 500 + j, tau, e0, pilot)
                label = "auto" if pilot is None else str(pilot)
                print(
                    f"{name:<24} {e0:>3} {best:>12} {plan:>8} {label:>5} "
                    + " ".join(f"{x:>12}" for x in row[:3])
                    + f" {row[3]:>6} {row[4]:>6}",
                    flush=True,
                )
    print(f"({time.perf_counter() - started:.0f} s)")


def _part_three(args: argparse.Namespace, tau: list[np.ndarray]) -> None:
    print(
        f"\n--target-halfwidth --estimand population (item_population, few-stage design); "
        f"H = the 3-epoch fixed design's half-width from the true spreads; "
        f"{args.population_reps} replicates per row, seed {args.seed + 300}+k; 'refused below "
        "floor': H = 0.8 x the spread-between-items floor"
    )
    print(
        f"{'suite':<24} {'refused':>12} {'coverage':>12} {'reached':>12} {'calls/fixed':>12} "
        f"{'fixed cov':>12} {'refused<floor':>14}"
    )
    for k, name in enumerate(SUITES):
        row = target_population(name, args.population_reps, args.seed + 300 + k, tau)
        below = population_refusal(name, args.population_reps // 4, args.seed + 400 + k, tau)
        print(f"{name:<24} " + " ".join(f"{x:>12}" for x in row) + f" {below:>14}", flush=True)


def _part_one(args: argparse.Namespace, tau: list[np.ndarray], design: SequentialDesign) -> None:
    null_reps = args.null_reps if args.null_reps is not None else args.reps
    print(f"sequential comparison: method {design.method}, reserve {design.reserve}")
    print(
        f"{args.reps} replicates per row at 2 x MDE, {null_reps} with equal models, "
        f"seed {args.seed}"
    )
    print(
        f"{'suite':<24} {'agree@2MDE':>12} {'calls@2MDE':>12} {'type-I':>12} "
        f"{'no-diff<full':>12} {'no-diff@int':>12} {'fixed no-diff':>13} {'calls@0':>12}"
    )
    started = time.perf_counter()
    for k, name in enumerate(SUITES):
        shifted, equal = comparisons(name, args.reps, args.seed + k, tau, design, null_reps)
        no_diff = [o.sequential == "no_difference_beyond_margin" for o in equal]
        print(
            f"{name:<24} {_share([o.agree for o in shifted]):>12} "
            f"{_mean([o.calls / o.budget for o in shifted]):>12} "
            f"{_share([o.sequential in ('better', 'worse') for o in equal]):>12} "
            f"{_share([a and o.early for a, o in zip(no_diff, equal, strict=True)]):>12} "
            f"{_share([a and o.interim for a, o in zip(no_diff, equal, strict=True)]):>12} "
            f"{_share([o.fixed == 'no_difference_beyond_margin' for o in equal]):>13} "
            f"{_mean([o.calls / o.budget for o in equal]):>12}",
            flush=True,
        )
    print(f"({time.perf_counter() - started:.0f} s)")


def _part_two(args: argparse.Namespace, tau: list[np.ndarray]) -> None:
    print(
        f"\n--target-halfwidth (suite's items, current AdaptiveRun) vs the oracle best fixed "
        f"design (3 epochs); {args.target_reps} replicates per row, seed {args.seed}"
    )
    print(f"{'suite':<24} {'calls/fixed':>12} {'coverage':>12}")
    for k, name in enumerate(SUITES):
        ratio, coverage = target_halfwidth(name, args.target_reps, args.seed + 100 + k, tau)
        print(f"{name:<24} {ratio:>12} {coverage:>12}", flush=True)


if __name__ == "__main__":
    main()
