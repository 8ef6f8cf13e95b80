"""`validity`: cross-checks against scipy/statsmodels and explicit loops, flags, missing data."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest
import statsmodels.api as sm
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import optimize, stats

from evalsuite.analyse._table import Interval
from evalsuite.errors import InsufficientDataError, UsageError
from evalsuite.validity._stats import (
    critical_r,
    deming_slopes,
    forward_chain_errors,
    ols_press,
    separation_reliability,
)
from evalsuite.validity._validity import Validity, validity

DESIGN_KEYS = {
    "name", "n", "spearman", "spearman_ci", "kendall", "kendall_ci", "pearson", "pearson_ci",
    "disattenuated", "deming_slope", "deming_slope_ci", "loo_error",
}  # fmt: skip


def linear_models(rng: np.random.Generator, m: int, noise: float = 0.5) -> tuple[np.ndarray, ...]:
    x = rng.normal(size=m)
    return x, 2.0 * x + noise * rng.normal(size=m)


# --- correlations and their intervals ------------------------------------------------------


@pytest.mark.parametrize("m", [4, 7, 12, 40])
@pytest.mark.parametrize("level", [0.8, 0.95, 0.99])
def test_pearson_interval_is_scipys(m: int, level: float, rng: np.random.Generator) -> None:
    x, y = linear_models(rng, m, noise=3.0)
    v = validity(x, y, level=level, rng=rng, n_boot=200)
    ref = stats.pearsonr(x, y)
    ci = ref.confidence_interval(confidence_level=level)
    assert v.pearson == pytest.approx(ref.statistic, abs=1e-12)
    assert v.pearson_ci == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert v.conf_int(level, "pearson") == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert v.pearson_p == pytest.approx(ref.pvalue)


def test_fisher_z_worked_examples() -> None:
    # tanh(atanh(r) ± 1.96/√(M − 3)) worked by hand: (0.095, 0.918) for r = 0.683 at M = 10;
    # r = 0.80: (−0.28, 0.99) at M = 5, (0.34, 0.95) at M = 10, (0.55, 0.92) at M = 20 and
    # (0.62, 0.90) at M = 30 (Fisher 1921, Metron 1:3).
    from evalsuite.validity._stats import fisher_interval, pearson_se

    # r = 0.683 is itself rounded (r = 0.6835 gives 0.0950), hence the tolerance
    assert fisher_interval(0.683, pearson_se(10), 0.95) == pytest.approx((0.095, 0.918), abs=2e-3)
    for m, (lo, hi) in {5: (-0.28, 0.99), 10: (0.34, 0.95), 20: (0.55, 0.92),
                        30: (0.62, 0.90)}.items():  # fmt: skip
        assert fisher_interval(0.8, pearson_se(m), 0.95) == pytest.approx((lo, hi), abs=0.006)


def test_r_needed_for_significance() -> None:
    # the t-test of r on M − 2 df: r = 0.5 is not significant until M = 16
    assert critical_r(15, 0.95) > 0.5 > critical_r(16, 0.95)
    for m in (5, 10, 30):  # the critical r has p-value exactly 1 - level
        r = critical_r(m, 0.95)
        t = r * math.sqrt((m - 2) / (1 - r * r))
        assert 2 * stats.t.sf(t, m - 2) == pytest.approx(0.05)


def test_spearman_and_kendall_intervals_follow_their_formulas(rng: np.random.Generator) -> None:
    x, y = linear_models(rng, 15, noise=2.0)
    v = validity(x, y, rng=rng, n_boot=200)
    rs = stats.spearmanr(x, y).statistic
    tau = stats.kendalltau(x, y).statistic
    z = stats.norm.ppf(0.975)
    se_bw = math.sqrt((1 + rs**2 / 2) / 12)  # Bonett & Wright (2000)
    se_f = math.sqrt(0.437 / 11)  # Fieller et al. (1957)
    assert v.spearman == pytest.approx(rs) and v.kendall == pytest.approx(tau)
    assert v.spearman_ci == pytest.approx(np.tanh(np.arctanh(rs) + np.array([-z, z]) * se_bw))
    assert v.kendall_ci == pytest.approx(np.tanh(np.arctanh(tau) + np.array([-z, z]) * se_f))
    assert v.kendall_p == pytest.approx(stats.kendalltau(x, y).pvalue)


# --- attenuation correction ----------------------------------------------------------------


def test_separation_reliability_is_one_minus_error_share() -> None:
    values = np.array([0.2, 0.4, 0.5, 0.7, 0.9])
    se = np.array([0.05, 0.05, 0.1, 0.05, 0.05])
    rel, why = separation_reliability(values, se)
    assert rel == pytest.approx(1 - np.mean(se**2) / np.var(values, ddof=1)) and why == ""
    assert math.isnan(separation_reliability(values, np.full(5, 1.0))[0])
    assert math.isnan(separation_reliability(values, np.full(5, np.nan))[0])


def test_disattenuation_divides_estimate_and_both_ends(rng: np.random.Generator) -> None:
    x, y = linear_models(rng, 20, noise=3.0)
    v = validity(x, y, reliability_x=0.64, reliability_y=0.81, rng=rng, n_boot=200)
    k = math.sqrt(0.64 * 0.81)
    assert v.disattenuated == pytest.approx(v.pearson / k)
    assert v.disattenuated_ci == pytest.approx((v.pearson_ci.low / k, v.pearson_ci.high / k))
    assert v.conf_int(0.95, "disattenuated") == pytest.approx(v.disattenuated_ci)
    assert (v.reliability_x_source, v.reliability_y_source) == ("given", "given")


def test_reliability_from_se_and_assumed_outcome_reliability(rng: np.random.Generator) -> None:
    x, y = linear_models(rng, 20, noise=3.0)
    se_x = np.full(20, 0.4)
    v = validity(x, y, se_x=se_x, rng=rng, n_boot=200)
    assert v.reliability_x == pytest.approx(1 - 0.16 / np.var(x, ddof=1))
    assert v.reliability_x_source == "separation"
    assert (v.reliability_y, v.reliability_y_source) == (1.0, "assumed")
    assert any("r_yy = 1 assumed" in f for f in v.flags)
    assert v.disattenuated == pytest.approx(v.pearson / math.sqrt(v.reliability_x))


def test_no_eval_reliability_means_no_correction(rng: np.random.Generator) -> None:
    x, y = linear_models(rng, 10)
    v = validity(x, y, rng=rng, n_boot=200)
    assert math.isnan(v.disattenuated) and v.reliability_x_source == "unknown"
    assert any("eval reliability unknown" in f for f in v.flags)


def test_disattenuated_above_one_is_flagged_not_clipped(rng: np.random.Generator) -> None:
    x, y = linear_models(rng, 12, noise=0.1)
    v = validity(x, y, reliability_x=0.5, rng=rng, n_boot=200)
    assert v.disattenuated > 1.0 and v.disattenuated_ci.high > 1.0
    assert any("exceeds 1" in f and "unclipped" in f for f in v.flags)


# --- Deming regression ---------------------------------------------------------------------


@pytest.mark.parametrize("delta", [0.25, 1.0, 4.0, 30.0])
def test_deming_slope_minimises_the_weighted_orthogonal_loss(
    delta: float, rng: np.random.Generator
) -> None:
    x, y = linear_models(rng, 15, noise=1.0)
    xc, yc = x - x.mean(), y - y.mean()
    # Deming's loss after profiling out the true x: Σ(y_c − b·x_c)²/(δ + b²)
    res = optimize.minimize_scalar(lambda b: np.sum((yc - b * xc) ** 2) / (delta + b * b),
                                   bracket=(0.5, 3.0), tol=1e-12)  # fmt: skip
    assert float(deming_slopes(x, y, delta)) == pytest.approx(res.x, rel=1e-6)


def test_deming_limits_are_ols_and_reverse_regression(rng: np.random.Generator) -> None:
    x, y = linear_models(rng, 15, noise=1.0)
    sxx, syy, sxy = np.var(x, ddof=1), np.var(y, ddof=1), np.cov(x, y)[0, 1]
    assert float(deming_slopes(x, y, math.inf)) == pytest.approx(sxy / sxx)
    assert float(deming_slopes(x, y, 0.0)) == pytest.approx(syy / sxy)


def test_deming_recovers_the_slope_ols_attenuates() -> None:
    # 12 models, x and y measured with SE 0.05, true slope 2: OLS attenuates the slope by the
    # reliability of x (median 1.79), Deming recovers it (2.00). x_true ~ U(0.2, 0.7)
    # (reliability ≈ 0.89), 2000 replicates.
    rng = np.random.default_rng(10)
    xt = rng.uniform(0.2, 0.7, size=(2000, 12))
    x = xt + rng.normal(0, 0.05, xt.shape)
    y = 1 + 2 * xt + rng.normal(0, 0.05, xt.shape)
    xc = x - x.mean(axis=1, keepdims=True)
    ols = (xc * (y - y.mean(axis=1, keepdims=True))).sum(axis=1) / (xc * xc).sum(axis=1)
    assert np.median(deming_slopes(x, y, 1.0)) == pytest.approx(2.00, abs=0.02)
    assert np.median(ols) == pytest.approx(1.79, abs=0.02)
    v = validity(x[0], y[0], se_x=np.full(12, 0.05), se_y=np.full(12, 0.05), rng=rng)
    assert (v.deming_delta, v.deming_delta_source) == (1.0, "se")
    assert v.deming_slope_ci.low < v.deming_slope < v.deming_slope_ci.high


def test_deming_delta_from_standard_errors(rng: np.random.Generator) -> None:
    x, y = linear_models(rng, 10)
    v = validity(x, y, se_x=np.full(10, 0.1), se_y=np.full(10, 0.3), rng=rng, n_boot=200)
    assert v.deming_delta == pytest.approx(9.0)
    assert v.deming_slope == pytest.approx(float(deming_slopes(x, y, 9.0)))
    w = validity(x, y, rng=rng, n_boot=200)
    assert w.deming_delta_source == "assumed" and any("δ = 1 assumed" in f for f in w.flags)


def test_deming_bootstrap_is_reproducible_and_resamples_models() -> None:
    x, y = linear_models(np.random.default_rng(1), 20)
    a = validity(x, y, rng=np.random.default_rng(5), n_boot=500)
    b = validity(x, y, rng=np.random.default_rng(5), n_boot=500)
    assert a.deming_slope_ci == b.deming_slope_ci
    idx = np.random.default_rng(5).integers(0, 20, size=(500, 20))  # the same draws, by loop
    slopes = [float(deming_slopes(x[i], y[i], 1.0)) for i in idx]
    assert a.deming_slope_ci == pytest.approx(tuple(np.quantile(slopes, [0.025, 0.975])))


# --- prediction errors ---------------------------------------------------------------------


def test_press_residuals_match_statsmodels_and_explicit_refits(rng: np.random.Generator) -> None:
    x, y = linear_models(rng, 14)
    resid, press = ols_press(x, y)
    fit = sm.OLS(y, sm.add_constant(x)).fit()
    assert press == pytest.approx(fit.get_influence().resid_press, abs=1e-10)
    assert resid == pytest.approx(fit.resid, abs=1e-10)
    for i in range(14):
        rest = np.arange(14) != i
        slope, intercept = np.polyfit(x[rest], y[rest], 1)
        assert press[i] == pytest.approx(y[i] - (intercept + slope * x[i]), abs=1e-10)
    v = validity(x, y, rng=rng, n_boot=200)
    assert v.loo_error == pytest.approx(math.sqrt(np.mean(press**2)))
    assert v.in_sample_error == pytest.approx(math.sqrt(np.mean(fit.resid**2)))
    assert v.loo_error > v.in_sample_error
    assert v.loo_spearman == pytest.approx(stats.spearmanr(y, y - press).statistic)
    assert v.ols_slope == pytest.approx(fit.params[1])


def test_forward_chaining_predicts_each_model_from_earlier_ones(
    rng: np.random.Generator,
) -> None:
    x, y = linear_models(rng, 10)
    order = np.array([3, 1, 2, 2, 5, 6, 4, 8, 9, 7])  # two models share time 2
    errors = forward_chain_errors(x, y, order)
    for j in range(10):
        train = order < order[j]
        if train.sum() < 3:
            assert math.isnan(errors[j])
            continue
        slope, intercept = np.polyfit(x[train], y[train], 1)
        assert errors[j] == pytest.approx(y[j] - (intercept + slope * x[j]), abs=1e-10)
    v = validity(x, y, order=order, rng=rng, n_boot=200)
    ok = errors[np.isfinite(errors)]
    assert v.n_forward == ok.size == 7
    assert v.forward_error == pytest.approx(math.sqrt(np.mean(ok**2)))
    dates = np.datetime64("2024-01-01") + order.astype("timedelta64[D]")
    assert validity(x, y, order=dates, rng=rng, n_boot=200).forward_error == v.forward_error
    assert math.isnan(validity(x, y, rng=rng, n_boot=200).forward_error)


# --- small M, missing data, errors ---------------------------------------------------------


def test_fewer_than_three_models_raise_a_clear_error(rng: np.random.Generator) -> None:
    with pytest.raises(InsufficientDataError, match=r"at least 3 models .* got 2 of 4"):
        validity([1.0, 2.0, np.nan, 4.0], [1.0, 3.0, 2.0, np.nan], rng=rng)


def test_pairwise_complete_drops_models_missing_x_or_y(rng: np.random.Generator) -> None:
    x = np.array([1.0, 2.0, np.nan, 4.0, 5.0, 6.0, 7.0, 8.0])
    y = np.array([1.5, 1.0, 3.0, np.nan, 4.0, 7.0, 6.0, 9.0])
    se = np.array([0.1, 0.1, 9.0, 9.0, 0.1, 0.1, 0.1, 0.1])
    v = validity(x, y, se_x=se, rng=rng, n_boot=200)
    keep = ~(np.isnan(x) | np.isnan(y))
    ref = validity(x[keep], y[keep], se_x=se[keep], rng=np.random.default_rng(0), n_boot=200)
    assert (v.n, v.n_dropped) == (6, 2)
    assert v.spearman == ref.spearman and v.reliability_x == ref.reliability_x  # SE of kept only
    assert any("2 model(s) dropped" in f for f in v.flags)


def test_small_m_is_never_a_bare_number(rng: np.random.Generator) -> None:
    v = validity([0.1, 0.3, 0.2, 0.5], [10.0, 25.0, 30.0, 40.0], rng=rng, n_boot=200)
    d = v.to_dict()
    assert d["n"] == 4 and d["spearman"] == pytest.approx(0.8)
    assert d["spearman_ci"][0] < 0 < d["spearman_ci"][1]
    assert "fewer than 5 models: the correlation is shown with its interval only" in d["flags"]
    assert any(f.startswith("M < 10: do not claim validity from p-values") for f in d["flags"])
    assert "Only 4 models" in d["statement"] and "never the point estimate alone" in d["statement"]
    three = validity([1.0, 2.0, 3.0], [1.0, 3.0, 2.0], rng=rng, n_boot=200)
    assert three.spearman_ci == (-1.0, 1.0) and three.kendall_ci == (-1.0, 1.0)
    big = validity(*linear_models(rng, 12), rng=rng, n_boot=200)
    assert not any("fewer than 5" in f for f in big.flags)
    assert not any(f.startswith("M < 10") for f in big.flags)
    assert "12 models: Spearman r_s" in big.statement and "±0.58" in big.statement


def test_perfect_and_constant_data_give_nan_with_reasons(rng: np.random.Generator) -> None:
    v = validity([1.0, 2, 3, 4, 5, 6], [2.0, 4, 5, 8, 9, 12], rng=rng, n_boot=200)
    assert v.spearman == pytest.approx(1.0) and all(math.isnan(e) for e in v.spearman_ci)
    assert any("Fisher-z interval is undefined" in f for f in v.flags)
    c = validity([1.0, 1, 1, 1, 1], [1.0, 2, 3, 4, 5], rng=rng, n_boot=200)
    assert math.isnan(c.spearman) and math.isnan(c.deming_slope) and math.isnan(c.loo_error)
    assert any("constant" in f for f in c.flags)


def test_perfect_rank_correlation_in_floating_point_gets_no_interval_and_a_flag(
    rng: np.random.Generator,
) -> None:
    # scipy returns 0.9999999999999999 for identical ranks (x and x² over 1..5): that is a
    # perfect rank correlation and must not get a zero-width interval without a flag.
    from evalsuite.validity._stats import correlations

    x = np.arange(1.0, 6.0)
    c, flags = correlations(x, x**2, 0.95)
    assert (c.spearman, c.kendall) == (1.0, 1.0)
    assert all(math.isnan(e) for e in (*c.spearman_ci, *c.kendall_ci))
    assert len(flags) == 1 and "|Spearman|, |Kendall| = 1" in flags[0]
    assert 0.98 < c.pearson < 1.0 and not math.isnan(c.pearson_ci.low)  # not perfect
    down, flags_down = correlations(x, -np.exp(x), 0.95)
    assert (down.spearman, down.kendall) == (-1.0, -1.0) and flags_down
    # seeded monotone draws of 5-30 models: every one is flagged, none gets an interval
    for _ in range(300):
        m = int(rng.integers(5, 31))
        xs = rng.normal(size=m)
        ys = np.exp(xs) * rng.uniform(0.5, 2.0) * rng.choice([-1.0, 1.0])
        cs, fs = correlations(xs, ys, 0.95)
        assert abs(cs.spearman) == 1.0 and abs(cs.kendall) == 1.0, (m, cs)
        assert math.isnan(cs.spearman_ci.low) and math.isnan(cs.kendall_ci.high) and fs
    # an exactly linear relation, up to rounding, is a perfect Pearson r too
    lin, lin_flags = correlations(xs, 3.0 * xs + 0.1, 0.95)
    assert math.isnan(lin.pearson_ci.low) and "Pearson" in lin_flags[0]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"y": [1.0, 2.0]}, "one value per model"),
        ({"x": [1.0, np.inf, 3.0, 4.0]}, "infinite"),
        ({"se_x": [0.1, -0.1, 0.1, 0.1]}, ">= 0"),
        ({"se_y": [0.1, 0.1]}, "one value per model"),
        ({"reliability_x": 1.5}, r"\(0, 1\]"),
        ({"reliability_y": 0.0}, r"\(0, 1\]"),
        ({"level": 1.0}, "level"),
        ({"n_boot": 10}, "n_boot"),
        ({"order": [1, 2, None, 4]}, "order"),
    ],
)
def test_bad_input_is_refused(kwargs: dict[str, object], match: str) -> None:
    args: dict[str, object] = {"x": [1.0, 2.0, 3.0, 4.0], "y": [1.0, 3.0, 2.0, 5.0]}
    args.update(kwargs)
    x, y = args.pop("x"), args.pop("y")
    with pytest.raises(UsageError, match=match):
        validity(x, y, rng=np.random.default_rng(0), **args)  # type: ignore[arg-type]  # bad on purpose


# --- the record ----------------------------------------------------------------------------


def test_record_protocol_and_json(rng: np.random.Generator) -> None:
    x, y = linear_models(rng, 12)
    v = validity(x, y, se_x=np.full(12, 0.2), rng=rng, n_boot=300)
    d = v.to_dict()
    assert set(d) >= DESIGN_KEYS
    assert isinstance(d["spearman_ci"], list) and isinstance(d["flags"], list)
    json.dumps(d, allow_nan=True)
    frame = v.to_frame()
    assert len(frame) == 1 and {"spearman_low", "deming_slope_high"} <= set(frame.columns)
    assert v.conf_int(0.95) == v.spearman_ci
    assert v.conf_int(0.5, "kendall").high - v.conf_int(0.5, "kendall").low < (
        v.kendall_ci.high - v.kendall_ci.low
    )
    with pytest.raises(UsageError, match="statistic"):
        v.conf_int(0.9, "deming")  # type: ignore[arg-type]  # bad on purpose
    u = Validity.undefined(2, "2 models", name="b")
    assert u.name == "b" and math.isnan(u.spearman) and u.flags == ("2 models",)
    assert isinstance(u.spearman_ci, Interval)


finite = st.floats(-1e3, 1e3, allow_nan=False, allow_subnormal=False)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(finite, finite), min_size=5, max_size=25), st.randoms())
# found by hypothesis: a spread of x whose square underflows to 0 (regression undefined)
@example([(0.0, 0.0)] * 3 + [(0.0, 1.0), (2.2250738585072014e-308, 0.0)], random.Random(0))
@example([(0.0, 0.0)] * 4 + [(2.2250738585072014e-308, 1.0)], random.Random(0))
def test_intervals_contain_estimates_and_ignore_model_order(
    pairs: list[tuple[float, float]], rand: object
) -> None:
    x, y = np.array(pairs).T
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return
    v = validity(x, y, rng=np.random.default_rng(0), n_boot=100)
    perm = np.random.default_rng(len(pairs)).permutation(len(pairs))
    w = validity(x[perm], y[perm], rng=np.random.default_rng(0), n_boot=100)
    for name in ("spearman", "kendall", "pearson"):
        est, ci = getattr(v, name), getattr(v, f"{name}_ci")
        assert est == pytest.approx(getattr(w, name), abs=1e-9)
        if abs(est) < 1 - 1e-9:
            assert ci.low - 1e-9 <= est <= ci.high + 1e-9
    assert v.loo_error == pytest.approx(w.loo_error, nan_ok=True, rel=1e-6)
