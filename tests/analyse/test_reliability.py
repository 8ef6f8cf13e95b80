"""Reliability: ANOVA components against loops and MixedLM, flip rate, noise floor, K*."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

from evalsuite.analyse import VarianceComponents, mde, reliability
from evalsuite.analyse._mde import paired_mde
from evalsuite.errors import UsageError
from tests.analyse.conftest import make_attempts


def binary(rng: np.random.Generator, n: int, k: int, a: float = 2.0, b: float = 2.0) -> np.ndarray:
    return (rng.random((n, k)) < rng.beta(a, b, size=(n, 1))).astype(float)


def slow_anova(y: np.ndarray) -> tuple[float, float]:
    """Balanced one-way ANOVA mean squares, written out."""
    n, k = y.shape
    grand = sum(sum(row) for row in y) / (n * k)
    means = [sum(row) / k for row in y]
    ssb = sum(k * (m - grand) ** 2 for m in means)
    ssw = sum((v - m) ** 2 for row, m in zip(y, means, strict=True) for v in row)
    return ssb / (n - 1), ssw / (n * (k - 1))


def test_components_and_iccs_match_the_loop(rng: np.random.Generator) -> None:
    y = binary(rng, 80, 4)
    rel = reliability(make_attempts(y))
    msb, msw = slow_anova(y)
    assert rel.ms_between == pytest.approx(msb)
    assert rel.var_within == pytest.approx(msw)
    assert rel.var_between == pytest.approx((msb - msw) / 4)
    assert rel.icc1 == pytest.approx((msb - msw) / (msb + 3 * msw))
    assert rel.icc1k == pytest.approx((msb - msw) / msb)
    # ICC(1,K) is Spearman–Brown applied to ICC(1)
    assert rel.icc1k == pytest.approx(4 * rel.icc1 / (1 + 3 * rel.icc1))
    assert rel.test_retest == rel.icc1k
    assert rel.test_retest_kind == "icc1k_single_run"
    # Miller's decomposition: var of item means = Var(x) + E[σ²]/K
    assert np.var(y.mean(axis=1), ddof=1) == pytest.approx(rel.var_between + msw / 4)


def test_anova_equals_reml_mixed_model(rng: np.random.Generator) -> None:
    y = binary(rng, 60, 5)
    rel = reliability(make_attempts(y))
    long = pd.DataFrame({"score": y.ravel(), "item": np.repeat(np.arange(60), 5)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # statsmodels' optimiser chatter
        fit = smf.mixedlm("score ~ 1", long, groups=long["item"]).fit(reml=True)
    assert float(fit.cov_re.iloc[0, 0]) == pytest.approx(rel.var_between, rel=1e-4)
    assert float(fit.scale) == pytest.approx(rel.var_within, rel=1e-4)


def test_flip_rate_matches_the_loop(rng: np.random.Generator) -> None:
    y = binary(rng, 50, 3)
    y[0, 2] = np.nan  # two usable epochs still count
    y[1, 1:] = np.nan  # one usable epoch: cannot flip, left out
    rel = reliability(make_attempts(y))
    flips = [len(set(r[~np.isnan(r)])) > 1 for r in y if np.sum(~np.isnan(r)) >= 2]
    assert rel.flip_rate == pytest.approx(sum(flips) / len(flips))


def test_noise_floor_predicts_rerun_differences() -> None:
    # fixed items, two independent runs: the SD of the difference of means is the floor
    rng = np.random.default_rng(11)
    x = rng.beta(3, 0.5, size=(200, 1))
    diffs = [
        (rng.random((200, 3)) < x).mean() - (rng.random((200, 3)) < x).mean() for _ in range(3000)
    ]
    y = (rng.random((200, 3)) < x).astype(float)
    rel = reliability(make_attempts(y))
    assert rel.noise_floor == pytest.approx(float(np.std(diffs)), rel=0.1)
    assert rel.noise_floor_half_width == pytest.approx(1.959964 * rel.noise_floor, rel=1e-6)
    # it is not sqrt(2)·SE of the mean, which also counts the between-item spread
    se = float(np.std(y.mean(axis=1), ddof=1)) / math.sqrt(200)
    assert rel.noise_floor < 0.9 * math.sqrt(2) * se


def test_cost_optimal_k(rng: np.random.Generator) -> None:
    rel = reliability(make_attempts(binary(rng, 100, 4)), cost_ratio=9.0)
    assert rel.k_optimal == pytest.approx(math.sqrt(rel.var_within / rel.var_between * 9.0))
    cost = {k: (9.0 + k) * (rel.var_between + rel.var_within / k) for k in range(1, 40)}
    assert rel.k_recommended == min(cost, key=lambda k: cost[k])


def test_pilot_mde_states_its_assumption(rng: np.random.Generator) -> None:
    rel = reliability(make_attempts(binary(rng, 100, 3)), model_corr=0.8)
    c = rel.components
    assert c is not None
    assert c.omega2 == pytest.approx(2 * rel.var_between * 0.2)
    assert c.sigma2_baseline == c.sigma2_candidate == rel.var_within
    # Miller's MDE of these components is the pilot's with the variance held where it is;
    # the pilot itself takes the variance under the alternative (docs/design/mde.md)
    detail = rel.mde_detail
    assert detail is not None and detail.variance == "alternative"
    fixed = paired_mde(
        sd_baseline=detail.sd_baseline,
        sd_candidate=detail.sd_candidate,
        correlation=detail.correlation,
        n_items=detail.n_items,
        df=detail.df,
        correlation_source="assumed",
        design_effect=detail.design_effect,
    )
    assert fixed.value == pytest.approx(mde(c, n_items=100, epochs=3))
    assert rel.mde == max(detail.increase, detail.decrease)
    assert rel.to_dict()["mde_assumption"]["model_corr"] == 0.8
    same_model = reliability(make_attempts(binary(rng, 100, 3)), model_corr=1.0)
    assert same_model.components == VarianceComponents(
        0.0, same_model.var_within, same_model.var_within
    )


def test_a_run_whose_item_means_do_not_vary_has_no_pilot_mde_of_0() -> None:
    """Every item 0 in both epochs (e.g. every attempt hit a limit): the pilot MDE was 0.000,
    as if a second model differing by any amount would be detected."""
    rel = reliability(make_attempts(np.zeros((6, 2))))
    assert math.isnan(rel.mde)
    detail = rel.to_dict()["mde_assumption"]
    assert "no spread" in detail["reason"] and "nan" not in detail["description"]


def test_one_epoch_is_nan_with_reason(rng: np.random.Generator) -> None:
    rel = reliability(make_attempts(binary(rng, 30, 1)))
    assert math.isnan(rel.icc1) and math.isnan(rel.noise_floor) and math.isnan(rel.flip_rate)
    assert "one usable epoch" in rel.reason
    assert math.isnan(rel.conf_int().low)


def test_retest_correlation(rng: np.random.Generator) -> None:
    x = rng.beta(2, 2, size=(80, 1))
    first = make_attempts((rng.random((80, 4)) < x).astype(float), run_id="r1")
    second = make_attempts((rng.random((80, 4)) < x).astype(float), run_id="r2")
    rel = reliability(first, retest=second)
    a = first.groupby("item_id")["score"].mean()
    b = second.groupby("item_id")["score"].mean()
    assert rel.test_retest_kind == "item_means_retest_r"
    assert rel.test_retest == pytest.approx(float(np.corrcoef(a, b)[0, 1]))
    assert rel.retest_diff == pytest.approx(float(b.mean() - a.mean()))
    # both estimate the reliability of the K-epoch item mean
    assert abs(rel.test_retest - rel.icc1k) < 0.15


def test_icc_interval_brackets_the_estimate(rng: np.random.Generator) -> None:
    rel = reliability(make_attempts(binary(rng, 60, 4)))
    low, high = rel.conf_int(0.95)
    assert low < rel.icc1k < high
    narrow = rel.conf_int(0.5)
    assert low < narrow.low < narrow.high < high


def test_arguments_are_checked(rng: np.random.Generator) -> None:
    att = make_attempts(binary(rng, 10, 2))
    with pytest.raises(UsageError):
        reliability(att, cost_ratio=0)
    with pytest.raises(UsageError):
        reliability(att, model_corr=1.5)


def test_reliability_serialises(rng: np.random.Generator) -> None:
    rel = reliability(make_attempts(binary(rng, 20, 3)))
    d = rel.to_dict()
    assert {"flip_rate", "test_retest", "noise_floor", "icc1", "icc1k", "k_optimal"} <= set(d)
    assert len(rel.to_frame()) == 1
    assert list(rel.to_frame().columns)[:1] == list(d)[:1]
