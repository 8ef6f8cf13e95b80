"""The sequential comparison by simulation (docs/design/sequential.md, "Measured").

Suites of issue 31 (`SUITES`): Beta(0.5, 0.5) and Beta(2, 2) of 100 and 300 items, 100 items
of which 60% are always or never solved, and the 50 tau-bench airline tasks' recorded trials
resampled (tests/data/tau_bench). The margin is the full fixed design's MDE. The quick tier
runs a few replicates with room for chance; `--runslow` runs the 2,000-replicate acceptance.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalsuite.analyse._sequential import SequentialDesign
from evalsuite.analyse._sequential_sim import (
    SUITES,
    ComparisonOutcome,
    fixed_mde,
    make_suite,
    simulate_comparison,
)

TAU = Path(__file__).parents[1] / "data" / "tau_bench" / "gpt-4o-airline_trials.csv"


def _tau() -> list[np.ndarray]:
    frame = pd.read_csv(TAU)
    return [g["reward"].to_numpy(dtype=float) for _, g in frame.groupby("task_id", sort=True)]


def _outcomes(name: str, reps: int, seed: int, factor: float) -> list[ComparisonOutcome]:
    rng = np.random.default_rng(seed)
    tau = _tau()
    out = []
    for rep in range(reps):
        suite = make_suite(name, rng, tau)
        mde = fixed_mde(suite, 5)
        design = SequentialDesign(margin=mde, seed=rep)
        out.append(simulate_comparison(suite, design, rng, delta=factor * mde))
    return out


def test_a_difference_of_twice_the_mde_agrees_with_the_full_run_for_half_the_calls() -> None:
    got = _outcomes("60% always/never x100", reps=60, seed=1, factor=2.0)
    assert np.mean([o.agree for o in got]) >= 0.9
    assert np.mean([o.calls / o.budget for o in got]) <= 0.5


def test_equal_models_rarely_differ_and_often_show_no_difference_early() -> None:
    got = _outcomes("beta(2,2) x100", reps=60, seed=2, factor=0.0)
    assert sum(o.sequential in ("better", "worse") for o in got) <= 8
    assert np.mean([o.sequential == "no_difference_beyond_margin" and o.early for o in got]) >= 0.35


def test_the_suites_are_those_of_the_issue() -> None:
    rng = np.random.default_rng(3)
    sizes = [make_suite(name, rng, _tau()).n_items for name in SUITES]
    assert sizes == [100, 300, 100, 300, 100, 50]
    always_never = make_suite("60% always/never x100", rng)
    share = float(np.mean((always_never.p == 0) | (always_never.p == 1)))
    assert 0.45 <= share <= 0.75


def _se(p: float, n: int) -> float:
    return math.sqrt(p * (1 - p) / n)


@pytest.mark.slow
@pytest.mark.parametrize("name", SUITES)
def test_acceptance_versus_twice_the_mde(name: str) -> None:
    reps = 2000
    got = _outcomes(name, reps, seed=100 + SUITES.index(name), factor=2.0)
    agree = float(np.mean([o.agree for o in got]))
    calls = float(np.mean([o.calls / o.budget for o in got]))
    assert agree >= 0.95, f"{name}: agreement {agree:.3f}"
    assert calls <= 0.5, f"{name}: calls {calls:.3f} of the full run"


@pytest.mark.slow
@pytest.mark.parametrize("name", SUITES)
def test_acceptance_versus_equal_models(name: str) -> None:
    reps = 2000
    got = _outcomes(name, reps, seed=200 + SUITES.index(name), factor=0.0)
    type_one = float(np.mean([o.sequential in ("better", "worse") for o in got]))
    early = float(np.mean([o.sequential == "no_difference_beyond_margin" and o.early for o in got]))
    # the better / worse boundaries spend 0.9 alpha (`SequentialDesign.reserve`): below
    # alpha on every suite (docs/design/sequential.md, "Type-I error")
    se = _se(type_one, reps)
    assert type_one <= 0.05, f"{name}: type-I {type_one:.4f} +- {se:.4f} (> 0.05)"
    assert early >= 0.5, f"{name}: early no-difference {early:.3f}"
