"""score_run: the attempts contract, harness errors, strata and weights, pass@k, JSON shape."""

from __future__ import annotations

import json
import math
from math import comb

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from evalsuite.analyse import estimate_mean, pass_at_k, pass_hat_k, score_run, stratified_mean
from evalsuite.errors import InsufficientDataError, UsageError
from tests.analyse.conftest import make_attempts


def scores(rng: np.random.Generator, n: int, k: int, a: float = 3.0, b: float = 0.5) -> np.ndarray:
    x = rng.beta(a, b, size=(n, 1))
    return (rng.random((n, k)) < x).astype(float)


def test_item_means_first_not_pooled_attempts(rng: np.random.Generator) -> None:
    y = scores(rng, 60, 3)
    y[0, 1:] = np.nan  # one epoch only for item 0: item mean, not attempt mean
    res = score_run(make_attempts(y), rng=rng)
    item_means = np.nanmean(y, axis=1)
    assert res.overall.mean == pytest.approx(item_means.mean())
    assert res.overall.se == pytest.approx(np.std(item_means, ddof=1) / np.sqrt(60))
    assert res.overall.n_items == 60
    assert res.epochs == 3


def test_harness_errors_never_change_a_score(rng: np.random.Generator) -> None:
    y = scores(rng, 40, 3)
    clean = score_run(make_attempts(y), rng=rng)
    # extra items whose every epoch is a harness error, and planned attempts never recorded
    broken = np.vstack([y, np.full((3, 3), np.nan)])
    dirty = score_run(make_attempts(broken), planned=3 * 45, rng=rng)
    assert dirty.overall.mean == clean.overall.mean
    assert dirty.overall.se == clean.overall.se
    assert dirty.overall.ci == clean.overall.ci
    assert dirty.overall.n_excluded == 3
    h = dirty.health
    assert (h.planned, h.recorded, h.unrecorded) == (135, 129, 6)
    assert h.harness_errors == 9 + 6
    assert h.error_rate == pytest.approx(15 / 135)
    assert h.n_items_excluded == 3


def test_limits_count_zero_and_are_counted(rng: np.random.Generator) -> None:
    y = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    outcomes = np.array([["scored", "limit"], ["scored", "scored"], ["limit", "scored"]])
    res = score_run(make_attempts(y, outcomes=outcomes), rng=rng)
    assert res.overall.mean == pytest.approx((0.5 + 1.0 + 0.5) / 3)
    assert res.health.limits == 2
    assert res.health.limits_by_type == {"message": 2}
    assert res.health.scored == 4


def test_row_order_does_not_matter(rng: np.random.Generator) -> None:
    att = make_attempts(scores(rng, 30, 2), strata=["a", "b", "c"] * 10)
    a = score_run(att, rng=np.random.default_rng(1))
    b = score_run(att.sample(frac=1.0, random_state=3), rng=np.random.default_rng(1))
    assert a.to_dict() == b.to_dict()


def test_clustered_se_matches_statsmodels(rng: np.random.Generator) -> None:
    y = scores(rng, 60, 2)
    clusters = [f"passage-{i // 5}" for i in range(60)]
    res = score_run(make_attempts(y, clusters=clusters), interval="t", rng=rng)
    fit = sm.OLS(y.mean(axis=1), np.ones(60)).fit(
        cov_type="cluster", cov_kwds={"groups": np.arange(60) // 5}, use_t=True
    )
    assert res.clustered
    assert res.overall.method == "cluster_t"
    assert res.overall.se == pytest.approx(float(fit.bse[0]), rel=1e-12)
    assert res.overall.ci == pytest.approx(tuple(fit.conf_int()[0]), abs=1e-12)
    assert res.overall.n_clusters == 12


def slow_stratified(
    values: np.ndarray, strata: list[str], weights: dict[str, float]
) -> tuple[float, float]:
    mean = var = 0.0
    for h, w in weights.items():
        ys = [v for v, s in zip(values, strata, strict=True) if s == h]
        ybar = sum(ys) / len(ys)
        s2 = sum((y - ybar) ** 2 for y in ys) / (len(ys) - 1)
        mean += w * ybar
        var += w * w * s2 / len(ys)
    return mean, var


def test_weighted_mean_and_variance_match_the_textbook_loop(rng: np.random.Generator) -> None:
    strata = ["a"] * 30 + ["b"] * 20 + ["c"] * 10
    y = scores(rng, 60, 3)
    weights = {"a": 0.2, "b": 0.3, "c": 0.5}
    res = score_run(make_attempts(y, strata=strata), weights=weights, interval="t", rng=rng)
    mean, var = slow_stratified(y.mean(axis=1), strata, weights)
    assert res.weighted.mean == pytest.approx(mean)
    assert res.weighted.se == pytest.approx(math.sqrt(var))
    assert res.weighted.df == 29 + 19 + 9
    assert res.weighted.method == "stratified_t"
    assert [s.stratum for s in res.strata] == ["a", "b", "c"]
    assert [s.weight for s in res.strata] == [0.2, 0.3, 0.5]
    assert res.strata[2].estimate.mean == pytest.approx(y[50:].mean())


def test_score_run_uses_the_array_level_estimators(rng: np.random.Generator) -> None:
    # the calibration harness runs estimate_mean / stratified_mean on arrays: same numbers
    strata = ["a"] * 25 + ["b"] * 35
    clusters = [f"c{i // 3}" for i in range(60)]
    y = scores(rng, 60, 3)
    att = make_attempts(y, strata=strata, clusters=clusters)
    res = score_run(att, weights={"a": 0.7, "b": 0.3}, rng=np.random.default_rng(2))
    m = y.mean(axis=1)
    keys = np.array([f"cluster:{c}" for c in clusters], dtype=object)
    k3 = np.full(60, 3)
    assert res.overall == estimate_mean(m, clusters=keys, trials=k3, rng=np.random.default_rng(2))
    weighted, per = stratified_mean(
        m,
        strata,
        weights={"a": 0.7, "b": 0.3},
        clusters=keys,
        trials=k3,
        rng=np.random.default_rng(2),
    )
    assert res.weighted == weighted
    assert res.strata == per


def test_item_shares_when_no_weights(rng: np.random.Generator) -> None:
    y = scores(rng, 50, 2)
    res = score_run(make_attempts(y, strata=["a"] * 20 + ["b"] * 30), rng=rng)
    assert res.weighted.mean == pytest.approx(res.overall.mean)
    assert "item shares" in res.weighted.note


def test_singleton_stratum_is_imputed_and_reported(rng: np.random.Generator) -> None:
    y = scores(rng, 41, 2)
    res = score_run(
        make_attempts(y, strata=["a"] * 40 + ["b"]), weights={"a": 0.9, "b": 0.1}, rng=rng
    )
    assert math.isfinite(res.weighted.se)
    assert "['b'] have one unit" in res.weighted.note
    b = res.strata[1]
    assert b.estimate.n_items == 1
    assert b.estimate.method in {"undefined", "clopper_pearson"}


def test_weighted_is_undefined_when_a_weighted_stratum_has_no_items(
    rng: np.random.Generator,
) -> None:
    y = scores(rng, 20, 2)
    y[15:] = np.nan  # stratum b: every epoch a harness error
    res = score_run(
        make_attempts(y, strata=["a"] * 15 + ["b"] * 5), weights={"a": 0.5, "b": 0.5}, rng=rng
    )
    assert math.isnan(res.weighted.mean)
    assert res.weighted.method == "undefined"
    assert "['b'] have positive weight but no scored item" in res.weighted.note
    assert res.strata[1].estimate.n_excluded == 5
    assert res.strata[1].estimate.n_items == 0


def test_weighted_interval_when_every_stratum_is_constant_inside_itself() -> None:
    # issue 10 item 22: stratum a always passes, b always fails, c passes one epoch of two.
    # The stratified variance is 0, yet the strata differ: the weighted interval must not be
    # NaN ("no variation between items") while the unweighted one is fine.
    y = np.vstack([np.ones((10, 2)), np.zeros((10, 2)), np.tile([1.0, 0.0], (10, 1))])
    strata = ["a"] * 10 + ["b"] * 10 + ["c"] * 10
    weights = {"a": 0.5, "b": 0.3, "c": 0.2}
    res = score_run(make_attempts(y, strata=strata), weights=weights, rng=np.random.default_rng(0))
    assert res.overall.method == "wilson_neff"
    w = res.weighted
    assert w.mean == pytest.approx(0.6)
    assert w.method == "clopper_pearson"
    assert "every stratum constant inside itself" in w.note
    assert 0.0 < w.ci.low < 0.6 < w.ci.high < 1.0
    # Clopper–Pearson on the Kish effective n of the item weights W_h/n_h
    item_w = np.repeat([0.5, 0.3, 0.2], 10) / 10
    kish = item_w.sum() ** 2 / np.sum(item_w**2)
    assert w.n_eff == pytest.approx(kish)
    low = stats.beta.ppf(0.025, 0.6 * kish, kish - 0.6 * kish + 1)
    high = stats.beta.ppf(0.975, 0.6 * kish + 1, kish - 0.6 * kish)
    assert (w.ci.low, w.ci.high) == pytest.approx((low, high), abs=1e-12)
    assert w.conf_int(0.95) == pytest.approx(tuple(w.ci), abs=1e-12)


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ({"a": 0.5}, "no deployment share"),
        ({"a": 0.5, "b": 0.6}, "sum to 1"),
        ({"a": 1.5, "b": -0.5}, "non-negative"),
    ],
)
def test_bad_weights_are_refused(weights: dict[str, float], message: str) -> None:
    att = make_attempts(np.ones((4, 1)), strata=["a", "a", "b", "b"])
    with pytest.raises(UsageError, match=message):
        score_run(att, weights=weights, rng=np.random.default_rng(0))


def test_a_run_of_only_harness_errors_is_nan_not_zero() -> None:
    res = score_run(make_attempts(np.full((5, 2), np.nan)), rng=np.random.default_rng(0))
    assert math.isnan(res.overall.mean)
    assert res.overall.method == "undefined"
    assert res.health.error_rate == 1.0
    assert res.pass_k == ()


def contract_breakers() -> list[tuple[str, pd.DataFrame, str]]:
    good = make_attempts(np.array([[1.0, 0.0], [0.0, 1.0]]))
    cases = []
    cases.append(("missing column", good.drop(columns=["outcome"]), "missing column"))
    bad = good.copy()
    bad.loc[0, "outcome"] = "error"
    cases.append(("unknown outcome", bad, "unknown outcome"))
    bad = good.copy()
    bad.loc[1, "epoch"] = 1
    cases.append(("duplicate epoch", bad, "duplicate"))
    bad = good.copy()
    bad.loc[0, "score"] = 1.2
    cases.append(("score above 1", bad, r"\[0, 1\]"))
    bad = good.copy()
    bad.loc[0, "outcome"] = "limit"
    bad.loc[0, "score"] = 0.5
    cases.append(("limit with a score", bad, "limit"))
    bad = good.copy()
    bad.loc[0, "run_id"] = "other"
    cases.append(("two runs", bad, "exactly one run"))
    bad = good.copy()
    bad.loc[0, "stratum"] = "other"
    cases.append(("stratum changes", bad, "'stratum' differs"))
    return cases


@pytest.mark.parametrize(("case", "frame", "message"), contract_breakers())
def test_contract_violations_are_usage_errors(case: str, frame: pd.DataFrame, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        score_run(frame, rng=np.random.default_rng(0))


def test_empty_table_is_insufficient_data() -> None:
    with pytest.raises(InsufficientDataError):
        score_run(make_attempts(np.ones((1, 1))).iloc[:0], rng=np.random.default_rng(0))


def test_planned_fewer_than_rows_is_refused() -> None:
    with pytest.raises(UsageError, match="planned"):
        score_run(make_attempts(np.ones((3, 2))), planned=5, rng=np.random.default_rng(0))


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 12).flatmap(
        lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))
    )
)
def test_pass_k_product_forms_match_binomial_coefficients(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    assert pass_at_k([n], [c], k)[0] == pytest.approx(1 - comb(n - c, k) / comb(n, k), abs=1e-12)
    assert pass_hat_k([n], [c], k)[0] == pytest.approx(comb(c, k) / comb(n, k), abs=1e-12)


def test_pass_k_is_unbiased() -> None:
    # E over Bin(n, p) of the estimators equals 1 − (1−p)^k and p^k (Chen et al. 2021;
    # Yao et al. 2024)
    n, p = 5, 0.3
    c = np.arange(n + 1)
    pmf = np.array([comb(n, j) * p**j * (1 - p) ** (n - j) for j in c])
    for k in range(1, n + 1):
        assert pmf @ pass_at_k(np.full(n + 1, n), c, k) == pytest.approx(1 - (1 - p) ** k)
        assert pmf @ pass_hat_k(np.full(n + 1, n), c, k) == pytest.approx(p**k)


def test_pass_k_uses_the_items_with_enough_epochs_for_each_k(rng: np.random.Generator) -> None:
    # issue 10 item 25: one item with three harness errors in four epochs must not hide
    # pass^2..4 of the other 29 items; each k says over how many items it was computed
    y = scores(rng, 30, 4)
    y[3, 1:] = np.nan
    res = score_run(make_attempts(y), rng=rng)
    assert [p.k for p in res.pass_k] == [1, 2, 3, 4]
    n = np.array([1 if i == 3 else 4 for i in range(30)])
    c = np.nansum(y, axis=1).astype(int)
    assert res.pass_k[0].pass_hat_k.n_items == 30
    assert res.pass_k[0].pass_hat_k.mean == pytest.approx(pass_hat_k(n, c, 1).mean())
    others = n == 4
    for p in res.pass_k[1:]:
        assert p.pass_hat_k.n_items == p.pass_at_k.n_items == 29
        assert p.n_items_short == 1
        assert p.pass_hat_k.mean == pytest.approx(pass_hat_k(n[others], c[others], p.k).mean())
        assert p.pass_at_k.mean == pytest.approx(pass_at_k(n[others], c[others], p.k).mean())
    payload = res.to_dict()
    assert payload["pass_k_n_items"] == {"1": 30, "2": 29, "3": 29, "4": 29}
    assert [e["n_items"] for e in payload["pass_k"]] == [30, 29, 29, 29]
    assert any("fewer than all 30 items at k = 2 (29 items)" in note for note in res.notes)


def test_pass_k_out_of_range_is_refused() -> None:
    with pytest.raises(UsageError):
        pass_hat_k([3], [2], 4)


def test_score_json_carries_design_keys(rng: np.random.Generator) -> None:
    att = make_attempts(scores(rng, 30, 3), strata=["x", "y"] * 15)
    d = score_run(att, rng=rng).to_dict()
    assert set(d["harness"]) >= {"planned", "scored", "limits", "harness_errors", "error_rate"}
    for key in ("overall", "weighted"):
        assert set(d[key]) >= {"mean", "se", "ci", "level", "n_items", "method"}
    assert set(d["strata"][0]) >= {"stratum", "weight", "mean", "se", "ci", "n_items", "method"}
    assert set(d["pass_at_k"]) == set(d["pass_hat_k"]) == {"1", "2", "3"}
    assert set(d["reliability"]) >= {"flip_rate", "test_retest", "noise_floor"}
    json.loads(json.dumps(d))  # NaN allowed; the CLI turns it into null


def test_frame(rng: np.random.Generator) -> None:
    res = score_run(make_attempts(scores(rng, 30, 2), strata=["x", "y"] * 15), rng=rng)
    frame = res.to_frame()
    assert list(frame["scope"]) == ["overall", "weighted", "stratum", "stratum"]
    assert res.conf_int(0.95) == res.overall.ci
