"""The deployment-weighted paired difference (docs/design/result-model.md)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from evalsuite.analyse import Gate, compare_runs, weighted_difference
from evalsuite.analyse._power import mde_from_se
from evalsuite.errors import UsageError
from tests.analyse.conftest import make_attempts
from tests.analyse.test_scale_parity import attempts

WEIGHTS = {"s0": 0.6, "s1": 0.3, "s2": 0.1}


def test_weighted_difference_is_the_weighted_sum_of_stratum_differences() -> None:
    base, cand = attempts(4), attempts(5, run_id="run-b")
    comparison = compare_runs(base, cand, rng=np.random.default_rng(0))
    w = weighted_difference(comparison.strata, WEIGHTS, level=0.9, alpha=0.1)
    by = {s.stratum: s.test for s in comparison.strata}
    assert w.diff == pytest.approx(sum(WEIGHTS[h] * by[h].diff for h in WEIGHTS))
    var = sum(WEIGHTS[h] ** 2 * by[h].se ** 2 for h in WEIGHTS)
    assert w.se == pytest.approx(math.sqrt(var))
    df = var**2 / sum((WEIGHTS[h] ** 2 * by[h].se ** 2) ** 2 / by[h].df for h in WEIGHTS)
    assert w.df == pytest.approx(df)
    assert w.ci[0] < w.diff < w.ci[1]
    assert w.reason is None and w.mde > 0
    # a weighted stratum without a pair: undefined with its reason, never renormalised
    missing = weighted_difference(comparison.strata, {**WEIGHTS, "s9": 0.0, "s0": 0.6})
    assert missing.reason is None
    gone = weighted_difference(
        [s for s in comparison.strata if s.stratum != "s2"], WEIGHTS, level=0.95
    )
    assert math.isnan(gone.diff) and "s2" in (gone.reason or "")


def test_weighted_gate_and_bad_weights() -> None:
    comparison = compare_runs(
        attempts(4), attempts(5, run_id="run-b"), rng=np.random.default_rng(0)
    )
    w = weighted_difference(comparison.strata, WEIGHTS, gate=Gate(margin=0.5))
    assert w.gate is not None and w.gate.passed and w.gate.lower_bound < w.diff
    assert w.to_dict()["gate"]["status"] == "PASS"
    with pytest.raises(UsageError, match="no deployment share"):
        weighted_difference(comparison.strata, {"s0": 1.0})
    with pytest.raises(UsageError, match="needs the suite's deployment weights"):
        weighted_difference(comparison.strata, {})


def test_weighted_strata_without_variance_get_bounds_not_a_point() -> None:
    """Every stratum's items showed one difference each: the interval was (diff, diff) and a
    gate passed on it whatever the number of items."""
    y = np.tile([[1.0], [0.0]], (5, 1))  # 10 items, identical in both runs
    strata = ["s0"] * 4 + ["s1"] * 3 + ["s2"] * 3
    comparison = compare_runs(
        make_attempts(y, run_id="a", strata=strata),
        make_attempts(y, run_id="b", strata=strata),
        rng=np.random.default_rng(0),
    )
    w = weighted_difference(comparison.strata, WEIGHTS, gate=Gate(margin=0.02))
    assert w.diff == 0.0 and w.se == 0.0
    # each stratum's exact bound at alpha/3 (Bonferroni), weighted
    expected = sum(WEIGHTS[h] * stats.beta.ppf(1 - 0.025 / 3, 1, n) for h, n in
                   (("s0", 4), ("s1", 3), ("s2", 3)))  # fmt: skip
    assert w.ci == pytest.approx((-expected, expected))
    assert w.gate is not None and w.gate.status == "INCONCLUSIVE"
    assert w.gate.lower_bound < -0.02 and "no variance" in (w.reason or "")


def test_a_weighted_interval_beyond_minus_one_is_bounded_and_said_so() -> None:
    # issue 28 item 10: two strata of three items, each difference (-1, -1, +1): the
    # Welch-Satterthwaite t interval (4 df) is -0.333 ± 2.776 · 0.471 = (-1.64, 0.97)
    strata = ["s0"] * 3 + ["s1"] * 3
    base = make_attempts([[1.0], [1.0], [0.0]] * 2, run_id="a", strata=strata)
    cand = make_attempts([[0.0], [0.0], [1.0]] * 2, run_id="b", strata=strata)
    comparison = compare_runs(base, cand, rng=np.random.default_rng(0))
    w = weighted_difference(comparison.strata, {"s0": 0.5, "s1": 0.5}).to_dict()
    se = math.sqrt(2 * 0.25 * (np.var([-1, -1, 1], ddof=1) / 3))
    low = -1 / 3 - stats.t.isf(0.025, 4) * se
    assert w["ci"][0] == -1.0
    assert w["unclipped_ci"][0] == pytest.approx(low) and low < -1 and w["clipped"] is True
    fine = weighted_difference(comparison.strata, {"s0": 0.5, "s1": 0.5}, level=0.5).to_dict()
    assert fine["clipped"] is False and fine["unclipped_ci"] is None


def _weighted_t_power(
    rng: np.random.Generator, n_h: int, p_base: float, p_cand: float, reps: int
) -> float:
    """Simulated power of the weighted (0.5/0.5) Welch-Satterthwaite t over two strata of
    n_h independent 0/1 items each, one epoch, both strata shifted alike."""
    up, down = p_cand * (1 - p_base), p_base * (1 - p_cand)
    draws = rng.multinomial(n_h, [up, down, 1 - up - down], size=(reps, 2))
    mean = (draws[..., 0] - draws[..., 1]) / n_h
    var = (draws[..., 0] + draws[..., 1] - n_h * mean**2) / (n_h - 1)
    se2 = 0.25 * var / n_h  # W_h² · s_h²/n_h
    se = np.sqrt(se2.sum(axis=1))
    df = se2.sum(axis=1) ** 2 / (se2**2 / (n_h - 1)).sum(axis=1)
    diff = 0.5 * mean.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        reject = np.abs(diff / se) > stats.t.isf(0.025, df)
    return float(np.mean(reject & (se > 0)))


def test_weighted_mde_has_its_power_under_the_alternative() -> None:
    # issue 28 item 9, for the deployment-weighted difference the headline leads with: two
    # strata of 200 items at a mean of 0.1 in both runs, uncorrelated item means
    n_h = 200
    a, b = np.zeros((2 * n_h, 1)), np.zeros((2 * n_h, 1))
    for h in (0, 1):
        a[h * n_h : h * n_h + 20] = 1.0
        b[h * n_h + 18 : h * n_h + 38] = 1.0  # 2 in common of 20: covariance 0
    strata = ["s0"] * n_h + ["s1"] * n_h
    comparison = compare_runs(
        make_attempts(a, run_id="a", strata=strata),
        make_attempts(b, run_id="b", strata=strata),
        rng=np.random.default_rng(0),
    )
    w = weighted_difference(comparison.strata, {"s0": 0.5, "s1": 0.5})
    held = mde_from_se(w.se, w.df)  # the variance held at the observed one, as before
    rng = np.random.default_rng(2809)
    assert _weighted_t_power(rng, n_h, 0.1, 0.1 + held, 20_000) < 0.74
    assert 0.77 <= _weighted_t_power(rng, n_h, 0.1, 0.1 + w.mde, 20_000) <= 0.83
    assert w.mde_variance == "alternative" and w.mde_note == ""
    assert w.to_dict()["mde_variance"] == "alternative"
