"""The few-stage design for a target half-width on the suite's items (`_target_design`)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from evalsuite.analyse._target_design import target_halfwidth_run
from evalsuite.errors import UsageError


def _binomial(
    p: np.ndarray, rng: np.random.Generator, asked: list[np.ndarray]
) -> Callable[[np.ndarray], np.ndarray]:
    def draw(counts: np.ndarray) -> np.ndarray:
        asked.append(counts.copy())
        return rng.binomial(counts, p).astype(float)

    return draw


def test_it_stops_at_the_target_with_the_calls_it_asked_for() -> None:
    rng = np.random.default_rng(0)
    p = rng.beta(2, 2, 200)
    asked: list[np.ndarray] = []
    h = 1.96 * math.sqrt(float(np.mean(p * (1 - p))) / (200 * 4))  # the oracle: 4 epochs
    out = target_halfwidth_run(np.full(200, 1 / 200), h, _binomial(p, rng, asked), rng)
    assert out.reached and out.halfwidth <= h
    assert (asked[0] == 2).all()  # the pilot: 2 epochs on every item
    assert out.calls == int(sum(a.sum() for a in asked)) == int(out.epochs.sum())
    assert 3.5 * 200 <= out.calls <= 5 * 200  # about the oracle's 4 epochs (one replicate)
    # the extra epochs never depend on an item's own outcomes: at most one apart
    assert out.epochs.max() - out.epochs.min() <= 1
    assert out.to_dict()["estimand"] == "suite_items"


def test_coverage_and_calls_by_simulation() -> None:
    rng = np.random.default_rng(1)
    covered, ratios = [], []
    for _ in range(200):
        p = rng.beta(0.5, 0.5, 100)
        h = 1.96 * math.sqrt(float(np.mean(p * (1 - p))) / 300)
        out = target_halfwidth_run(np.full(100, 0.01), h, _binomial(p, rng, []), rng)
        covered.append(out.lower <= p.mean() <= out.upper)
        ratios.append(out.calls / 300)
    assert np.mean(covered) >= 0.9  # 200 replicates: the benchmark measures it to +-0.005
    assert 0.95 <= np.mean(ratios) <= 1.15


def test_bad_settings_are_refused() -> None:
    rng = np.random.default_rng(2)
    with pytest.raises(UsageError, match="at least 2 epochs"):
        target_halfwidth_run(np.ones(3), 0.1, _binomial(np.ones(3) / 2, rng, []), rng, pilot=1)
    with pytest.raises(UsageError, match="half-width must be in"):
        target_halfwidth_run(np.ones(3), 0.6, _binomial(np.ones(3) / 2, rng, []), rng)
