"""The stop-if-agree design's estimators, checked by enumerating every outcome sequence.

docs/design/sequential.md, "Why the call-ratio acceptance cannot be met from the run's own
outcomes".
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from evalsuite.analyse._stop_if_agree import (
    StopIfAgree,
    best_case,
    plan_design,
    plan_horizon,
    stop_if_agree_run,
)
from evalsuite.errors import UsageError

PLANS = [(2, 2), (2, 5), (3, 3), (3, 4), (3, 6), (4, 8), (5, 7)]
RATES = [0.0, 0.07, 0.3, 0.5, 0.83, 1.0]


def _enumerate(k: int, horizon: int, p: float) -> list[tuple[float, int, int, int]]:
    """Every sequence the design can run: (probability, attempts, pilot successes, total).

    Built from the attempts one by one (not from the sufficient statistic), so the tests do
    not take the derivation for granted.
    """
    out = []
    for seq in itertools.product((0, 1), repeat=horizon):
        first = sum(seq[:k])
        run = seq if 0 < first < k else seq[:k]
        if len(run) < horizon and seq[k:] != (0,) * (horizon - k):
            continue  # the same stopped outcome: counted once, with the pilot's probability
        prob = float(np.prod([p if x else 1 - p for x in run]))
        out.append((prob, len(run), first, sum(run)))
    return out


def _moments(k: int, horizon: int, p: float) -> dict[str, float]:
    plan = StopIfAgree(k, horizon)
    rows = _enumerate(k, horizon, p)
    prob = np.array([r[0] for r in rows])
    calls = np.array([r[1] for r in rows])
    p_hat, p2_hat = plan.estimate([r[2] for r in rows], [r[3] for r in rows])
    var_hat = plan.variance_estimate([r[2] for r in rows], [r[3] for r in rows])
    mean = float(prob @ p_hat)
    return {
        "total": float(prob.sum()),
        "mean": mean,
        "p2": float(prob @ p2_hat),
        "variance": float(prob @ p_hat**2) - mean**2,
        "var_hat": float(prob @ var_hat),
        "calls": float(prob @ calls),
    }


@pytest.mark.parametrize(("k", "horizon"), PLANS)
@pytest.mark.parametrize("p", RATES)
def test_the_estimates_of_p_and_p_squared_are_exactly_unbiased(
    k: int, horizon: int, p: float
) -> None:
    m = _moments(k, horizon, p)
    assert m["total"] == pytest.approx(1.0, abs=1e-12)
    assert m["mean"] == pytest.approx(p, abs=1e-12)
    assert m["p2"] == pytest.approx(p * p, abs=1e-12)


@pytest.mark.parametrize(("k", "horizon"), PLANS)
@pytest.mark.parametrize("p", RATES)
def test_exact_calls_variance_and_its_unbiased_estimate(k: int, horizon: int, p: float) -> None:
    plan = StopIfAgree(k, horizon)
    m = _moments(k, horizon, p)
    assert float(plan.expected_calls(p)) == pytest.approx(m["calls"], abs=1e-12)
    assert float(plan.variance(p)) == pytest.approx(m["variance"], abs=1e-12)
    assert m["var_hat"] == pytest.approx(m["variance"], abs=1e-12)


@pytest.mark.parametrize(("k", "horizon"), PLANS)
def test_the_statistic_is_complete_so_the_estimate_is_the_only_unbiased_one(
    k: int, horizon: int
) -> None:
    """The outcomes' probabilities at horizon + 1 rates form a non-singular matrix: a
    function of the statistic with expectation 0 at every rate is 0."""
    rates = np.linspace(0.05, 0.95, horizon + 1)
    columns: dict[tuple[str, int], list[float]] = {}
    for i, p in enumerate(rates):
        for prob, _, first, total in _enumerate(k, horizon, float(p)):
            key = ("stop", first) if not 0 < first < k else ("go", total)
            columns.setdefault(key, [0.0] * rates.size)[i] += prob
    matrix = np.array(list(columns.values())).T
    assert matrix.shape == (horizon + 1, horizon + 1)
    assert np.linalg.matrix_rank(matrix) == horizon + 1


def test_a_two_attempt_pilot_makes_the_extension_worthless() -> None:
    """k = 2: a continued item is estimated 1/2 whatever its later attempts (the variance is
    the 2-epoch mean's); k = horizon is the plain mean."""
    table = StopIfAgree(2, 7).p_table
    assert np.allclose(table[1:-1], 0.5)
    p = np.array([0.1, 0.4, 0.8])
    assert np.allclose(StopIfAgree(2, 7).variance(p), p * (1 - p) / 2)
    p_hat, p2_hat = StopIfAgree(4, 4).estimate([0, 1, 2, 4], [0, 1, 2, 4])
    assert np.allclose(p_hat, [0, 0.25, 0.5, 1])
    assert np.allclose(p2_hat, [0, 0, 2 / 12, 1])


def test_impossible_counts_and_plans_are_refused() -> None:
    with pytest.raises(UsageError):
        StopIfAgree(1, 4)
    with pytest.raises(UsageError):
        StopIfAgree(3, 2)
    plan = StopIfAgree(3, 5)
    with pytest.raises(UsageError):
        plan.estimate([3], [4])  # an agreeing pilot is never continued
    with pytest.raises(UsageError):
        plan.estimate([1], [4])  # at most 2 more successes
    with pytest.raises(UsageError):
        plan.estimate([4], [4])


def test_the_known_rate_best_case() -> None:
    rng = np.random.default_rng(5)
    p = rng.beta(2, 2, 100)
    u = rng.random(100)
    p[u < 0.3], p[(u >= 0.3) & (u < 0.6)] = 0.0, 1.0
    three = best_case(p, 3)
    assert 0.99 < three.ratio <= 1.0  # hardly better than the fixed 3-epoch design
    ten = best_case(p, 10)
    assert 0.5 < ten.ratio < 1.0
    assert ten.variance <= float(np.sum(p * (1 - p))) / (100**2 * 10) * (1 + 1e-9)
    sure = best_case(np.array([0.0, 1.0, 1.0]), 5)  # only certain items: 2 attempts each
    assert sure.ratio == pytest.approx(2 / 5)
    with pytest.raises(UsageError):
        best_case(np.array([]), 3)


def test_the_plan_under_the_pilot_prior() -> None:
    """No certain items: the plan is the fixed design; only certain items: 2 attempts."""
    rng = np.random.default_rng(2)
    n = 200
    w = np.full(n, 1 / n)
    half = rng.binomial(2, np.full(n, 0.5))
    assert plan_design(half, 2, w, 0.25 / (n * 4), 20) == (4, 4)
    sure = rng.binomial(2, rng.integers(0, 2, n).astype(float))
    assert plan_design(sure, 2, w, 0.25 / (n * 4), 20) == (2, 2)
    assert plan_horizon(sure, 2, w, 0.25 / (n * 4), 9) == 2


@pytest.mark.parametrize("k", [3, None])
def test_a_run_asks_only_mixed_items_for_more_and_is_unbiased(k: int | None) -> None:
    rng = np.random.default_rng(7)
    p = rng.beta(2, 2, 100)
    p[:40] = np.repeat([0.0, 1.0], 20)
    n = p.size
    h = 1.96 * float(np.sqrt(np.mean(p * (1 - p)) / (n * 5)))
    asked: list[np.ndarray] = []

    def draw(counts: np.ndarray) -> np.ndarray:
        asked.append(counts.copy())
        return rng.binomial(counts, p).astype(float)

    out = stop_if_agree_run(np.full(n, 1 / n), h, draw, k=k)
    assert out.calls == sum(int(a.sum()) for a in asked)
    assert (asked[-1][:40] == 0).all()  # certain items always agree: never continued
    assert {int(x) for x in asked[-1]} <= {0, out.horizon - out.k}
    estimates = [stop_if_agree_run(np.full(n, 1 / n), h, draw, k=k).estimate for _ in range(300)]
    se = float(np.std(estimates, ddof=1)) / np.sqrt(len(estimates))
    assert abs(float(np.mean(estimates)) - float(p.mean())) < 4 * se
