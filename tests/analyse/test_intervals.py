"""Interval primitives and the interval decision, against statsmodels/scipy and slow loops."""

from __future__ import annotations

import math

import numpy as np
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.proportion import proportion_confint
from statsmodels.stats.weightstats import DescrStatsW

from evalsuite.analyse import Estimate, estimate_mean
from evalsuite.analyse._bootstrap import N_RESAMPLES
from evalsuite.analyse._intervals import (
    clopper_pearson_interval,
    cluster_codes,
    cluster_variance,
    korn_graubard_trials,
    t_interval,
    wilson_neff_interval,
)
from evalsuite.errors import UsageError


def slow_cluster_variance(values: list[float], clusters: list[str]) -> float:
    """Miller (2024) App. A written out: SE_CLT² + cross terms, then × C/(C−1)."""
    n = len(values)
    mean = sum(values) / n
    total = 0.0
    for i in range(n):
        for j in range(n):
            if clusters[i] == clusters[j]:
                total += (values[i] - mean) * (values[j] - mean)
    c = len(set(clusters))
    return c / (c - 1) * total / n**2


def test_cluster_variance_matches_slow_loop_and_statsmodels(rng: np.random.Generator) -> None:
    values = rng.integers(0, 4, 60) / 3
    clusters = [f"c{i // 4}" for i in range(60)]
    var, c = cluster_variance(values, cluster_codes(clusters, 60))
    assert c == 15
    assert var == pytest.approx(slow_cluster_variance(values.tolist(), clusters), rel=1e-12)
    fit = sm.OLS(values, np.ones(60)).fit(
        cov_type="cluster", cov_kwds={"groups": cluster_codes(clusters, 60)}, use_t=True
    )
    assert math.sqrt(var) == pytest.approx(float(fit.bse[0]), rel=1e-12)
    assert fit.df_resid_inference == c - 1


def test_unclustered_variance_is_s2_over_n(rng: np.random.Generator) -> None:
    values = rng.random(37)
    var, c = cluster_variance(values, cluster_codes(None, 37))
    assert c == 37
    assert var == pytest.approx(np.var(values, ddof=1) / 37, rel=1e-12)


def test_cluster_variance_undefined_with_one_cluster() -> None:
    var, c = cluster_variance(np.array([0.2, 0.4]), np.array([0, 0]))
    assert c == 1
    assert math.isnan(var)


def test_t_interval_matches_descrstatsw(rng: np.random.Generator) -> None:
    values = rng.random(25)
    se = float(np.std(values, ddof=1) / 5)
    low, high = DescrStatsW(values).tconfint_mean(alpha=0.1)
    assert t_interval(float(values.mean()), se, 24, 0.9) == pytest.approx((low, high), abs=1e-12)


@pytest.mark.parametrize(("x", "n"), [(0, 10), (3, 10), (27, 30), (50, 100), (99, 100)])
def test_wilson_with_binomial_n_is_wilson(x: int, n: int) -> None:
    # with n_eff = n (se from p(1−p)/n), n trials and df = inf, the formula is Wilson (1927)
    p = x / n
    if 0 < x < n:
        ci, n_eff = wilson_neff_interval(p, math.sqrt(p * (1 - p) / n), math.inf, 0.95, n)
        assert n_eff == pytest.approx(n)
        assert ci == pytest.approx(proportion_confint(x, n, method="wilson"), abs=1e-12)
    assert clopper_pearson_interval(x, n, 0.95) == pytest.approx(
        proportion_confint(x, n, method="beta"), abs=1e-12
    )


def test_korn_graubard_factor_is_t_n_minus_1_over_t_df() -> None:
    # issue 10 item 27: the published correction (Korn & Graubard 1998, as R's
    # survey::svyciprop(method = "beta") computes it) is (t_{N−1} / t_df)², not (z / t_df)²:
    # n.eff * (qt(alpha/2, nrow(design) - 1) / qt(alpha/2, degf(design)))^2
    for n_eff, n_obs, df, level in [(40.0, 120, 9, 0.95), (12.5, 30, 29, 0.9), (80, 600, 49, 0.99)]:
        alpha = 1 - level
        expected = n_eff * (stats.t.ppf(alpha / 2, n_obs - 1) / stats.t.ppf(alpha / 2, df)) ** 2
        assert korn_graubard_trials(n_eff, n_obs, df, level) == pytest.approx(expected, rel=1e-12)
    # one observation per unit (df = N − 1): no adjustment at all
    assert korn_graubard_trials(17.0, 20, 19, 0.95) == pytest.approx(17.0, rel=1e-12)


def test_unclustered_binary_items_get_plain_wilson_on_n_eff() -> None:
    # 20 items, one 0/1 epoch each, 12 successes: df = N − 1 = 19, so Korn–Graubard changes
    # nothing and the interval is Wilson on n_eff = p(1−p)/(s²/n) = n − 1 = 19 trials. The
    # old (z / t_19)² factor made it wider than that.
    values = np.array([1.0] * 12 + [0.0] * 8)
    est = estimate_mean(values, rng=np.random.default_rng(0))
    assert est.method == "wilson_neff"
    assert est.n_trials == 20
    assert est.n_eff == pytest.approx(19.0)
    low, high = proportion_confint(0.6 * 19, 19, method="wilson")
    assert est.ci == pytest.approx((low, high), abs=1e-12)


def test_effective_n_is_capped_at_the_attempts_and_counts_attempts() -> None:
    # ten items, three epochs each: nine items at 2/3 and one at 1/3. The item variance is so
    # small that p(1−p)/Var ≈ 209 "trials", more than the 30 attempts there are: n_eff is
    # capped at 30, and the interval is no narrower than Wilson on 30 trials would be.
    values = np.array([2 / 3] * 9 + [1 / 3])
    est = estimate_mean(values, trials=np.full(10, 3), rng=np.random.default_rng(0))
    p = values.mean()
    assert p * (1 - p) / est.se**2 > 200
    assert est.n_eff == 30.0 and est.n_trials == 30.0
    kg = 30 * (stats.t.ppf(0.975, 29) / stats.t.ppf(0.975, 9)) ** 2
    assert est.ci == pytest.approx(proportion_confint(p * kg, kg, method="wilson"), abs=1e-12)
    # K epochs per item: n_eff counts attempts and may exceed the number of items
    rng = np.random.default_rng(3)
    means = rng.binomial(3, rng.beta(8, 8, 200)) / 3
    many = estimate_mean(means, trials=np.full(200, 3), rng=rng)
    assert 200 < many.n_eff <= 600
    assert many.conf_int(0.95) == many.ci


def test_df_adjusted_wilson_is_wider_and_tends_to_plain() -> None:
    plain, _ = wilson_neff_interval(0.8, 0.05, math.inf, 0.95, 10_000)
    small, _ = wilson_neff_interval(0.8, 0.05, 9, 0.95, 10_000)
    large, _ = wilson_neff_interval(0.8, 0.05, 9_999, 0.95, 10_000)
    assert small.high - small.low > plain.high - plain.low
    assert large == pytest.approx(plain, abs=1e-4)


def test_rule_of_three_for_all_successes() -> None:
    # every item passes: Clopper–Pearson lower bound (α/2)^(1/N), never a zero-width interval
    est = estimate_mean(np.ones(30), rng=np.random.default_rng(0))
    assert est.method == "clopper_pearson"
    assert est.ci.low == pytest.approx(0.025 ** (1 / 30))
    assert est.ci.high == 1.0
    assert est.conf_int(0.9).low == pytest.approx(0.05 ** (1 / 30))


def test_default_is_wilson_with_effective_n(rng: np.random.Generator) -> None:
    values = rng.integers(0, 4, 80) / 3
    est = estimate_mean(values, trials=np.full(80, 3), rng=rng)
    assert est.method == "wilson_neff"
    assert est.variance == "iid"
    assert est.se == pytest.approx(stats.sem(values))
    assert est.n_eff == pytest.approx(values.mean() * (1 - values.mean()) / est.se**2)
    assert est.conf_int(0.95) == est.ci
    assert est.ci.low < est.mean < est.ci.high


def test_switch_rule_of_methods_section_12(rng: np.random.Generator) -> None:
    mid = rng.integers(0, 4, 60) / 3
    assert estimate_mean(mid, interval="switch", rng=rng).method == "t"
    assert estimate_mean(mid[:30], interval="switch", rng=rng).method == "wilson_neff"
    high = np.where(rng.random(60) < 0.95, 1.0, 0.0)
    assert estimate_mean(high, interval="switch", rng=rng).method == "wilson_neff"
    clustered = estimate_mean(mid, clusters=np.arange(60) // 2, interval="switch", rng=rng)
    assert clustered.method == "wilson_neff"  # 30 clusters < 50
    assert estimate_mean(mid, clusters=np.arange(60) // 2, interval="t", rng=rng).method == (
        "cluster_t"
    )


def test_forced_t_is_the_classic_interval(rng: np.random.Generator) -> None:
    values = rng.random(40)
    est = estimate_mean(values, interval="t", rng=rng)
    assert est.method == "t"
    assert est.df == 39
    assert est.ci == pytest.approx(DescrStatsW(values).tconfint_mean(), abs=1e-12)
    assert est.conf_int(0.8) == pytest.approx(DescrStatsW(values).tconfint_mean(0.2), abs=1e-12)


@pytest.mark.parametrize(
    ("values", "why"),
    [
        ([], "no scored items"),
        ([0.5], "variance undefined"),
    ],
)
def test_undefined_is_nan_with_a_reason(values: list[float], why: str) -> None:
    est = estimate_mean(values, rng=np.random.default_rng(0))
    assert est.method == "undefined"
    assert math.isnan(est.ci.low) and math.isnan(est.ci.high)
    assert why in est.note
    assert est.se != 0.0


@pytest.mark.parametrize("values", [[0.5] * 5, [0.9] * 7, [1 / 3] * 12])
def test_constant_values_inside_0_1_get_clopper_pearson(values: list[float]) -> None:
    # no variation to estimate from: the binomial interval on the units (conservative,
    # since a value in [0, 1] has at most the Bernoulli variance), never NaN and never 0 wide
    est = estimate_mean(values, rng=np.random.default_rng(0))
    n, p = len(values), float(np.mean(values))
    assert est.method == "clopper_pearson"
    assert "no variation" in est.note
    assert est.ci == pytest.approx(clopper_pearson_interval(p * n, n, 0.95), abs=1e-12)
    assert est.ci.low < p < est.ci.high


def test_bootstrap_matches_scipy_on_items(rng: np.random.Generator) -> None:
    values = rng.integers(0, 4, 40) / 3
    est = estimate_mean(values, interval="bootstrap", rng=np.random.default_rng(7))
    ref = stats.bootstrap(
        (values,), np.mean, method="BCa", n_resamples=N_RESAMPLES, rng=np.random.default_rng(7)
    )
    assert est.method == "bootstrap_bca"
    # resampling the 40 one-item "clusters" as ratio totals/sizes draws the same indices
    assert est.ci.low == pytest.approx(ref.confidence_interval.low, abs=1e-12)
    assert est.ci.high == pytest.approx(ref.confidence_interval.high, abs=1e-12)
    with pytest.raises(UsageError, match="bootstrap"):
        est.conf_int(0.9)


def test_bootstrap_on_degenerate_data_falls_back_without_warnings() -> None:
    est = estimate_mean([0.0] * 12, interval="bootstrap", rng=np.random.default_rng(1))
    assert est.method == "clopper_pearson"
    nearly = estimate_mean([1.0] * 11 + [2 / 3], interval="bootstrap", rng=np.random.default_rng(1))
    assert nearly.method in {"bootstrap_bca", "wilson_neff"}


def test_estimate_serialises() -> None:
    est = estimate_mean([0.0, 1.0, 0.5, 1.0], rng=np.random.default_rng(0))
    d = est.to_dict()
    assert set(d) >= {"mean", "se", "ci", "level", "n_items", "method", "n_excluded"}
    assert d["ci"] == [est.ci.low, est.ci.high]
    assert list(est.to_frame().columns)[-2:] == ["ci_low", "ci_high"]
    assert d["method"] == "wilson_neff"


def test_bad_input_is_refused() -> None:
    with pytest.raises(UsageError):
        estimate_mean([0.2, 1.5], rng=np.random.default_rng(0))
    with pytest.raises(UsageError):
        estimate_mean([0.2, 0.5], level=95, rng=np.random.default_rng(0))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, 1 / 3, 2 / 3, 1.0, 0.25, 0.9]), min_size=1, max_size=60),
    st.sampled_from(["auto", "t", "switch"]),
    st.floats(0.5, 0.995),
)
def test_interval_contains_the_estimate(values: list[float], interval: str, level: float) -> None:
    est: Estimate = estimate_mean(
        values,
        level=level,
        interval=interval,  # type: ignore[arg-type]
        rng=np.random.default_rng(0),
    )
    if est.method != "undefined":
        assert 0.0 <= est.ci.low <= est.mean + 1e-12
        assert est.mean - 1e-12 <= est.ci.high <= 1.0
        assert est.ci.high > est.ci.low
