"""compare_runs: pairing, the paired t (clustered), permutation, McNemar, Holm, gate, verdict."""

from __future__ import annotations

import json
import math
from unittest import mock

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests as _multipletests
from statsmodels.stats.power import TTestPower

from evalsuite.analyse import Gate, compare_runs, paired_difference, score_run
from evalsuite.analyse._compare import _gate
from evalsuite.analyse._paired import (
    constant_difference_bounds,
    holm_adjust,
    mcnemar_midp,
    sign_flip_p,
)
from evalsuite.errors import IncomparableRunsError, UsageError
from tests.analyse.conftest import make_attempts


def statsmodels_holm(p: list[float] | np.ndarray, alpha: float = 0.05) -> np.ndarray:
    """statsmodels' Holm-adjusted p-values (the reference), without the full garbage collection
    statsmodels runs after every Holm adjustment: in a pytest worker's heap that took about
    0.5 s of CPU a call, and it changes no number (docs/design/test-speed.md)."""
    with mock.patch("gc.collect", return_value=0):
        adjusted: np.ndarray = _multipletests(p, alpha=alpha, method="holm")[1]
    return adjusted


def pair(
    rng: np.random.Generator,
    n: int,
    k: int,
    shift: float = 0.0,
    strata: list[str] | None = None,
    clusters: list[str] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray, np.ndarray]:
    x = rng.beta(2, 2, size=(n, 1))
    a = (rng.random((n, k)) < x).astype(float)
    b = (rng.random((n, k)) < np.clip(x + shift, 0, 1)).astype(float)
    return (
        make_attempts(a, run_id="base", strata=strata, clusters=clusters),
        make_attempts(b, run_id="cand", strata=strata, clusters=clusters),
        a,
        b,
    )


def test_paired_t_matches_scipy(rng: np.random.Generator) -> None:
    base, cand, a, b = pair(rng, 80, 3, shift=0.05)
    res = compare_runs(base, cand, rng=rng)
    ref = stats.ttest_rel(b.mean(axis=1), a.mean(axis=1))
    assert res.diff == pytest.approx(b.mean() - a.mean())
    assert res.test.p_value == pytest.approx(ref.pvalue, rel=1e-10)
    assert res.test.ci == pytest.approx(tuple(ref.confidence_interval(0.95)), abs=1e-12)
    assert res.test.method == "paired_t"
    assert (res.baseline, res.candidate) == ("base", "cand")
    sd = float(np.std(b.mean(axis=1) - a.mean(axis=1), ddof=1))
    effect = TTestPower().solve_power(nobs=80, alpha=0.05, power=0.8)
    # at the observed variance the MDE is statsmodels' ...
    fixed = paired_difference(b.mean(axis=1) - a.mean(axis=1))
    assert fixed.mde == pytest.approx(effect * sd, rel=1e-4)
    # ... and compare's, with the variance under the alternative, is the same noncentral t
    # solved at the SD of the differences the alternative implies (docs/design/mde.md)
    detail = res.mde_detail
    assert detail is not None and detail.variance == "alternative"
    assert res.test.mde == detail.value == max(detail.increase, detail.decrease)


def test_clustered_paired_t_matches_statsmodels(rng: np.random.Generator) -> None:
    clusters = [f"t{i // 4}" for i in range(80)]
    base, cand, a, b = pair(rng, 80, 2, clusters=clusters)
    res = compare_runs(base, cand, rng=rng)
    d = b.mean(axis=1) - a.mean(axis=1)
    fit = sm.OLS(d, np.ones(80)).fit(
        cov_type="cluster", cov_kwds={"groups": np.arange(80) // 4}, use_t=True
    )
    assert res.test.method == "cluster_paired_t"
    assert res.test.se == pytest.approx(float(fit.bse[0]), rel=1e-12)
    assert res.test.p_value == pytest.approx(float(fit.pvalues[0]), rel=1e-10)
    assert res.test.df == 19
    assert math.isnan(res.p_value_mcnemar_midp)


def test_sign_flip_exact_matches_scipy_and_enumeration() -> None:
    rng = np.random.default_rng(3)
    d = np.round(rng.normal(0.1, 0.3, 12), 2)
    p, exact = sign_flip_p(d, None, n_resamples=999, rng=rng)
    ref = stats.permutation_test(
        (d,),
        lambda x, axis: np.sum(x, axis=axis),
        permutation_type="samples",
        n_resamples=np.inf,
        vectorized=True,
    )
    assert exact
    assert p == pytest.approx(ref.pvalue, abs=1e-12)
    signs = np.array(np.meshgrid(*[[1, -1]] * 12)).reshape(12, -1).T
    null = np.abs(signs @ d)
    assert p == pytest.approx(np.mean(null >= abs(d.sum()) - 1e-12), abs=1e-12)


def test_sign_flip_on_clusters_flips_cluster_sums() -> None:
    d = np.array([0.5, 0.5, -1 / 3, 1 / 3, 0.0, 2 / 3])
    p, _ = sign_flip_p(
        d, ["a", "a", "b", "b", "c", "c"], n_resamples=999, rng=np.random.default_rng(0)
    )
    # cluster sums 1, 0, 2/3: |sum| >= 5/3 only for (+,±,+) and (−,±,−): 4 of 8
    assert p == pytest.approx(0.5)


def test_large_permutation_is_seeded(rng: np.random.Generator) -> None:
    base, cand, _, _ = pair(rng, 60, 2, shift=0.1)
    one = compare_runs(base, cand, rng=np.random.default_rng(9))
    two = compare_runs(base, cand, rng=np.random.default_rng(9))
    assert not one.permutation_exact
    assert one.p_value_permutation == two.p_value_permutation
    assert abs(one.p_value_permutation - one.test.p_value) < 0.05


def test_mcnemar_midp_reference() -> None:
    # b = 12, c = 4: the exact conditional p is 0.0768 (statsmodels), and the mid-p of
    # Fagerland et al. (2013) subtracts the point probability of 4 of 16: 0.0490
    exact = mcnemar([[10, 12], [4, 10]], exact=True).pvalue
    assert exact == pytest.approx(0.0768, abs=1e-4)
    assert mcnemar_midp(12, 4) == pytest.approx(exact - stats.binom.pmf(4, 16, 0.5))
    assert mcnemar_midp(12, 4) == pytest.approx(0.0490, abs=1e-4)
    assert mcnemar_midp(0, 0) == 1.0


def test_mcnemar_only_with_one_epoch(rng: np.random.Generator) -> None:
    base, cand, a, b = pair(rng, 100, 1, shift=0.1)
    res = compare_runs(base, cand, rng=rng)
    n_b = int(np.sum((a[:, 0] == 1) & (b[:, 0] == 0)))
    n_c = int(np.sum((a[:, 0] == 0) & (b[:, 0] == 1)))
    assert res.p_value_mcnemar_midp == pytest.approx(mcnemar_midp(n_b, n_c))
    three = compare_runs(*pair(rng, 100, 3)[:2], rng=rng)
    assert math.isnan(three.p_value_mcnemar_midp)


def test_strata_are_holm_adjusted(rng: np.random.Generator) -> None:
    strata = ["x"] * 30 + ["y"] * 30 + ["z"] * 30
    base, cand, a, b = pair(rng, 90, 2, shift=0.08, strata=strata)
    res = compare_runs(base, cand, rng=rng)
    d = b.mean(axis=1) - a.mean(axis=1)
    raw = [stats.ttest_1samp(d[i * 30 : (i + 1) * 30], 0).pvalue for i in range(3)]
    assert [s.test.p_value for s in res.strata] == pytest.approx(raw)
    assert [s.p_holm for s in res.strata] == pytest.approx(list(statsmodels_holm(raw)))
    entry = res.to_dict()["strata"][0]
    assert {"stratum", "diff", "se", "ci", "p_value", "p_holm", "n_items"} <= set(entry)


def test_items_with_only_harness_errors_are_dropped_symmetrically(
    rng: np.random.Generator,
) -> None:
    x = rng.beta(2, 2, size=(40, 1))
    a = (rng.random((40, 3)) < x).astype(float)
    b = (rng.random((40, 3)) < x).astype(float)
    a[0] = np.nan
    b[1:3] = np.nan
    res = compare_runs(make_attempts(a, run_id="a"), make_attempts(b, run_id="b"), rng=rng)
    keep = np.arange(3, 40)
    assert res.test.n_items == 37
    assert res.n_unpaired_baseline == 2 and res.n_unpaired_candidate == 1
    assert res.diff == pytest.approx(float(np.mean(b[keep].mean(1) - a[keep].mean(1))))
    assert "2 baseline and 1 candidate item(s) had no usable pair" in res.to_dict()["notes"][0]


def test_no_shared_items_is_refused(rng: np.random.Generator) -> None:
    base = make_attempts(np.ones((3, 2)), run_id="a")
    cand = make_attempts(np.ones((3, 2)), run_id="b")
    cand["item_id"] = cand["item_id"] + "-other"
    with pytest.raises(IncomparableRunsError, match="share no item"):
        compare_runs(base, cand, rng=rng)


def test_different_manifests_are_refused(rng: np.random.Generator) -> None:
    base = make_attempts(np.ones((3, 2)), run_id="a")
    cand = make_attempts(np.ones((3, 2)), run_id="b")
    cand.loc[cand["item_id"] == "item-0001", "item_hash"] = "sha256:changed"
    with pytest.raises(IncomparableRunsError, match="item_hash"):
        compare_runs(base, cand, rng=rng)


def test_verdicts_and_sentence(rng: np.random.Generator) -> None:
    better = compare_runs(*pair(rng, 300, 3, shift=0.2)[:2], rng=rng)
    assert better.verdict == "candidate_better"
    assert better.sentence.startswith("candidate better")
    worse = compare_runs(*pair(rng, 300, 3, shift=-0.2)[:2], rng=rng)
    assert worse.verdict == "baseline_better"
    same = compare_runs(*pair(rng, 60, 3)[:2], rng=np.random.default_rng(4))
    if same.verdict == "no_detectable_difference":
        assert f"±{same.test.mde:.3f} or larger" in same.sentence


def test_identical_runs_are_no_difference_not_an_error() -> None:
    y = np.array([[1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    res = compare_runs(
        make_attempts(y, run_id="a"), make_attempts(y, run_id="b"), rng=np.random.default_rng(0)
    )
    assert res.verdict == "no_detectable_difference"
    assert res.diff == 0.0
    assert res.test.p_value == 1.0  # the exact sign-flip p-value of no difference
    assert res.test.p_method == "exact_sign_flip"
    assert "no variance" in res.test.note
    assert res.p_value_permutation == 1.0


@pytest.mark.parametrize(("units", "alpha"), [(1, 0.05), (2, 0.025), (10, 0.025), (300, 0.05)])
def test_constant_difference_bounds_are_clopper_pearson_on_no_differing_unit(
    units: int, alpha: float
) -> None:
    q = stats.beta.ppf(1 - alpha, 1, units)  # Clopper–Pearson upper end for 0 of `units`
    assert constant_difference_bounds(0.0, units, alpha) == pytest.approx((-q, q), rel=1e-9)
    low, high = constant_difference_bounds(0.5, units, alpha)
    assert (low, high) == pytest.approx((0.5 - 1.5 * q, 0.5 + 0.5 * q), rel=1e-9)
    assert constant_difference_bounds(1.0, units, alpha)[1] == 1.0
    assert all(math.isnan(x) for x in constant_difference_bounds(0.0, 0, alpha))


def test_differences_without_variance_get_no_zero_width_interval_and_no_mde_of_0() -> None:
    """Two items scored the same by both runs gave the interval [0, 0], an MDE of 0 and a
    passing non-inferiority gate: certainty from two items. A population where 10% of the
    items are 1 worse (δ = −0.1) shows no differing item in 10 draws 35% of the time, so a
    zero-width interval misses δ at least that often."""
    two = paired_difference(np.zeros(2))
    assert two.ci.low < -0.8 and two.ci.high > 0.8  # 1 − 0.025^(1/2) = 0.842
    assert math.isnan(two.mde) and "MDE is undefined" in two.note
    assert two.conf_int(0.95) == two.ci
    assert two.conf_int(0.5).high < two.ci.high
    ten = paired_difference(np.zeros(10))
    assert ten.ci.low < -0.1 < ten.ci.high
    shifted = paired_difference(np.full(10, 0.5))
    assert shifted.ci.low < 0.5 < shifted.ci.high <= 1.0
    assert shifted.p_value == pytest.approx(2 * 0.5**10)  # the exact sign-flip p, as before


@pytest.mark.parametrize(
    ("n", "status"), [(2, "INCONCLUSIVE"), (30, "INCONCLUSIVE"), (300, "PASS")]
)
def test_a_gate_on_identical_runs_needs_enough_items_to_pass(n: int, status: str) -> None:
    y = np.tile([[1.0], [0.0]], (n // 2, 1))
    res = compare_runs(
        make_attempts(y, run_id="a"),
        make_attempts(y, run_id="b"),
        gate=Gate(margin=0.02),
        rng=np.random.default_rng(0),
    )
    assert res.gate is not None and res.gate.status == status
    q = stats.beta.ppf(0.95, 1, n)  # the one-sided 95% bound of the differing share
    assert res.gate.lower_bound == pytest.approx(-q) and res.gate.upper_bound == pytest.approx(q)
    assert (
        res.sentence.startswith("no detectable difference") and "MDE is undefined" in res.sentence
    )
    assert res.mde_detail is not None and math.isnan(res.mde_detail.value)
    assert "undefined" in res.mde_detail.describe() and "nan" not in res.mde_detail.describe()


def test_the_sentence_of_one_paired_item_says_undefined_not_nan() -> None:
    """A comparison over one shared item printed "95% CI +nan to +nan" in its sentence,
    which `report.md` shows as the paired-t verdict."""
    res = compare_runs(
        make_attempts([[1.0]], run_id="a"),
        make_attempts([[0.0]], run_id="b"),
        rng=np.random.default_rng(0),
    )
    assert "95% CI undefined" in res.sentence
    assert "nan" not in res.sentence.lower()


@pytest.mark.parametrize("seed", range(6))
def test_holm_adjust_is_statsmodels_holm_bit_for_bit(seed: int) -> None:
    """Written out (no statsmodels import in a comparison), the same floats as statsmodels."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 40))
    p = rng.choice([*rng.random(m), 0.0, 1.0, 0.5, 0.5, 1e-300], size=m)
    if seed % 2:
        p[rng.integers(0, m)] = math.nan
    ours = holm_adjust(list(p), 0.05)
    filled = np.where(np.isfinite(p), p, 1.0)
    theirs = np.where(np.isfinite(p), statsmodels_holm(filled, 0.05), np.nan)
    assert ours.tobytes() == theirs.tobytes()


def test_a_stratum_with_constant_differences_keeps_an_exact_p_and_its_holm_place(
    rng: np.random.Generator,
) -> None:
    # issue 10 item 21: stratum "a" improves on all 10 items by exactly one success in two
    # epochs; the t p-value is undefined there, but the stratum must stay in the Holm family
    n_a, n_other = 10, 30
    x = rng.beta(2, 2, size=(2 * n_other, 1))
    a_other = (rng.random((2 * n_other, 2)) < x).astype(float)
    b_other = (rng.random((2 * n_other, 2)) < np.clip(x + 0.1, 0, 1)).astype(float)
    a = np.vstack([np.tile([0.0, 1.0], (n_a, 1)), a_other])
    b = np.vstack([np.ones((n_a, 2)), b_other])
    strata = ["a"] * n_a + ["b"] * n_other + ["c"] * n_other
    res = compare_runs(
        make_attempts(a, run_id="base", strata=strata),
        make_attempts(b, run_id="cand", strata=strata),
        rng=rng,
    )
    by = {s.stratum: s for s in res.strata}
    assert by["a"].test.diff == pytest.approx(0.5)
    assert by["a"].test.p_value == pytest.approx(2 * 0.5**10)
    assert by["a"].test.p_method == "exact_sign_flip"
    # the exact enumeration over all 2^10 sign patterns agrees with the closed form
    assert by["a"].test.p_value == pytest.approx(
        sign_flip_p(np.full(n_a, 0.5), None, n_resamples=0, rng=rng)[0]
    )
    raw = [by[h].test.p_value for h in ("a", "b", "c")]
    assert all(math.isfinite(p) for p in raw)
    assert [by[h].p_holm for h in ("a", "b", "c")] == pytest.approx(list(statsmodels_holm(raw)))
    # a stratum with a single item (one unit) also keeps a p-value: 1, never NaN
    single = paired_difference(np.array([0.5]))
    assert single.p_value == 1.0 and single.p_method == "exact_sign_flip"


def test_noninferiority_gate_three_ways(rng: np.random.Generator) -> None:
    base, cand, a, b = pair(rng, 400, 3)
    res = compare_runs(base, cand, gate=Gate(margin=0.05), rng=rng)
    d = b.mean(axis=1) - a.mean(axis=1)
    t = res.test
    low = t.diff - stats.t.ppf(0.95, 399) * t.se
    assert res.gate is not None
    assert res.gate.lower_bound == pytest.approx(low)
    # one-sided 95% bound = lower end of the two-sided 90% interval (the t is symmetric)
    assert res.gate.lower_bound == pytest.approx(paired_difference(d, level=0.90).ci.low)
    assert res.gate.passed == (low > -0.05)
    assert res.gate.status == "PASS"
    unclear = _gate(Gate(margin=0.03), paired_difference(np.tile([-0.4, 0.36], 20)), 0.05)
    assert unclear.status == "INCONCLUSIVE" and not unclear.passed
    worse = compare_runs(*pair(rng, 400, 3, shift=-0.2)[:2], gate=Gate(margin=0.02), rng=rng)
    assert worse.gate is not None and worse.gate.status == "FAIL" and not worse.gate.passed


def test_compare_json_carries_design_keys(rng: np.random.Generator) -> None:
    base, cand, _, _ = pair(rng, 30, 2, strata=["s", "t"] * 15)
    d = compare_runs(base, cand, gate=Gate(margin=0.02), rng=rng).to_dict()
    assert {
        "baseline",
        "candidate",
        "diff",
        "se",
        "ci",
        "p_value",
        "n_items",
        "verdict",
        "mde",
        "strata",
        "gate",
    } <= set(d)
    assert {"kind", "margin", "passed"} <= set(d["gate"])
    assert d["verdict"] in {"candidate_better", "baseline_better", "no_detectable_difference"}
    json.loads(json.dumps(d))
    gated = compare_runs(base, cand, gate=Gate(0.02), rng=rng).to_dict()["gate"]
    assert gated["kind"] == "noninferior" and gated["margin"] == 0.02


def test_bad_arguments(rng: np.random.Generator) -> None:
    base, cand, _, _ = pair(rng, 10, 1)
    with pytest.raises(UsageError):
        Gate(margin=-0.1)
    with pytest.raises(UsageError):
        compare_runs(base, cand, alpha=1.5, rng=rng)


def test_an_ingested_run_takes_the_manifest_labels(rng: np.random.Generator) -> None:
    strata = ["s", "t"] * 20
    clusters = [f"c{i // 4}" for i in range(40)]
    base, cand, _, _ = pair(rng, 40, 2, strata=strata, clusters=clusters)
    ingested = cand.assign(stratum="all", cluster=None, item_hash=None)
    res = compare_runs(base, ingested, rng=rng)
    assert res.test.method == "cluster_paired_t"
    assert res.test.n_clusters == 10
    assert [s.stratum for s in res.strata] == ["s", "t"]
    assert res.test == compare_runs(base, cand, rng=rng).test


def test_conflicting_clusters_are_refused(rng: np.random.Generator) -> None:
    base, cand, _, _ = pair(rng, 8, 1, clusters=[f"c{i // 2}" for i in range(8)])
    cand["cluster"] = cand["cluster"].replace({"c0": "c9"})
    with pytest.raises(IncomparableRunsError, match="cluster"):
        compare_runs(base, cand, rng=rng)


def test_one_mde_with_its_assumptions_in_score_and_compare() -> None:
    # issue 10 item 26: the MDE comes from one formula. `compare` uses the observed
    # correlation of the two runs' item means and names it; `score` names its assumed
    # correlation. Given the same inputs (a second run with this run's spread, whose item
    # means correlate r with this run's), the two give the same MDE.
    rng = np.random.default_rng(26)
    n, k = 80, 8
    x = rng.beta(2, 2, size=(n, 1))
    a = (rng.random((n, k)) < x).astype(float)
    b = a[rng.permutation(n)]  # the same item means, shuffled over the items
    base, cand = make_attempts(a, run_id="a"), make_attempts(b, run_id="b")
    comparison = compare_runs(base, cand, rng=rng)
    detail = comparison.mde_detail
    assert detail is not None
    ma, mb = a.mean(axis=1), b.mean(axis=1)
    r = float(np.corrcoef(ma, mb)[0, 1])
    assert detail.correlation_source == "observed"
    assert detail.correlation == pytest.approx(r)
    assert (detail.alpha, detail.power, detail.n_items, detail.df) == (0.05, 0.8, n, n - 1)
    assert detail.value == pytest.approx(comparison.test.mde, rel=1e-9)
    assert comparison.to_dict()["mde_assumption"]["correlation"] == pytest.approx(r)
    # the pilot of run a with the true-score correlation that implies item means
    # correlating r (r = ρ · reliability of the item mean) gives the compare MDE
    single = score_run(base, rng=rng)
    reliability_of_mean = single.reliability.var_between / float(np.var(ma, ddof=1))
    rho = r / reliability_of_mean
    assert -1 < rho < 1
    pilot = score_run(base, model_corr=rho, rng=rng).reliability
    assert pilot.mde_detail is not None
    assert pilot.mde_detail.correlation_source == "assumed"
    assert pilot.mde_detail.correlation == pytest.approx(r)
    assert pilot.mde == pytest.approx(comparison.test.mde, rel=1e-9)
    # every output names the assumption
    assert "correlate" in pilot.to_dict()["mde_assumption"]["description"]
    assert f"{rho:g}" in pilot.mde_detail.describe()
    assert "observed correlation" in detail.describe()
    # and α follows the analysis: the pilot at α = 0.1 equals compare at α = 0.1
    loose = score_run(base, model_corr=rho, alpha=0.1, rng=rng).reliability.mde
    assert loose == pytest.approx(compare_runs(base, cand, alpha=0.1, rng=rng).test.mde)
    assert loose < pilot.mde


def test_set_mask_of_cluster_keys_is_is_set_per_value() -> None:
    """The column-wise prefix test of cluster keys (one key per unclustered item) gives what
    `_is_set` gives value by value: None, NaN, numbers, the bare prefix and look-alikes."""
    from evalsuite.analyse._compare import _NO_CLUSTER, _is_set, _set_mask

    values = np.array(
        [*(f"item:{i}" for i in range(50)), "c1", None, math.nan, 3, "item:", "xitem:1", "c1"],
        dtype=object,
    )
    for unset in (_NO_CLUSTER, "all", None):
        expected = [_is_set(v, unset) for v in values]
        assert _set_mask(values, unset).tolist() == expected


def _exact_paired_t_power(n: int, p_base: float, p_cand: float, alpha: float) -> float:
    """Exact power of the two-sided paired t over n independent 0/1 items, one epoch each.

    The difference of an item is +1 with probability ``p_c(1 − p_b)``, −1 with
    ``p_b(1 − p_c)``, else 0; the trinomial counts (i, j) of +1 and −1 give the t exactly.
    """
    from scipy import special, stats

    up, down = p_cand * (1 - p_base), p_base * (1 - p_cand)
    i, j = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    keep = i + j <= n
    i, j = i[keep], j[keep]
    log_p = (
        special.gammaln(n + 1) - special.gammaln(i + 1) - special.gammaln(j + 1)
        - special.gammaln(n - i - j + 1)
        + special.xlogy(i, up) + special.xlogy(j, down) + special.xlogy(n - i - j, 1 - up - down)
    )  # fmt: skip
    mean = (i - j) / n
    var = (i + j - n * mean**2) / (n - 1)
    t = np.abs(mean) / np.sqrt(np.where(var > 0, var, 1.0) / n)
    reject = (var > 0) & (t > stats.t.isf(alpha / 2, n - 1))
    return float(np.exp(log_p)[reject].sum())


def test_mde_near_zero_has_its_power_under_the_alternative() -> None:
    # issue 28 item 9: two runs at a mean of 0.1 with no difference (300 items, one 0/1
    # epoch, item means uncorrelated). The MDE at the observed variance (0.069) has an exact
    # power of 0.70: a candidate at 0.1 + δ has a larger item variance than at 0.1. Solved
    # with the variance under the alternative, it has the power it claims.
    n = 300
    a, b = np.zeros((n, 1)), np.zeros((n, 1))
    a[:30], b[27:57] = 1.0, 1.0  # 30 solved each, 3 in common: covariance exactly 0
    comparison = compare_runs(make_attempts(a, run_id="a"), make_attempts(b, run_id="b"),
                              rng=np.random.default_rng(9))  # fmt: skip
    out = comparison.to_dict()
    assert out["verdict"] == "no_detectable_difference"
    mde = out["mde"]
    power_up = _exact_paired_t_power(n, 0.1, 0.1 + mde, 0.05)
    power_down = _exact_paired_t_power(n, 0.1, 0.1 - mde, 0.05)
    assert 0.78 <= power_up <= 0.83, (mde, power_up)
    assert power_down >= 0.78  # the smaller variance of a decrease: at least the power
    assert out["mde_assumption"]["value"] == mde
    assert out["mde_assumption"]["variance"] == "alternative"
    assert out["mde_assumption"]["increase"] == mde > out["mde_assumption"]["decrease"]
    assert mde > 0.069  # the fixed-variance figure, which has power 0.70
    assert "baseline ± δ" in out["mde_assumption"]["description"]
    # the strata carry the same MDE (one stratum: the whole comparison)
    assert out["strata"][0]["mde"] == pytest.approx(mde)


def test_a_gate_bound_beyond_minus_one_is_bounded_and_said_so() -> None:
    # issue 28 item 10: a difference of two scores in [0, 1] lies in [-1, 1]; the t bound of
    # three items (one-sided 95%: -0.333 - 2.92 * 0.667 = -2.28) was reported as it was
    base = make_attempts([[1.0], [1.0], [0.0]], run_id="a")
    cand = make_attempts([[0.0], [0.0], [1.0]], run_id="b")
    comparison = compare_runs(base, cand, gate=Gate(margin=0.05), rng=np.random.default_rng(0))
    gate = comparison.to_dict()["gate"]
    t_low = -1 / 3 - stats.t.isf(0.05, 2) * np.std([-1, -1, 1], ddof=1) / math.sqrt(3)
    assert gate["lower_bound"] == -1.0 and gate["upper_bound"] <= 1.0
    assert gate["unclipped_bounds"][0] == pytest.approx(t_low) and t_low < -1
    assert gate["clipped"] is True and gate["status"] == "INCONCLUSIVE"
    assert any("[-1, 1]" in n and "-2.28" in n for n in comparison.notes())
    from evalsuite.service._views import _gate_line

    line = str(_gate_line(comparison.gate, None, None))
    assert "unweighted difference −1.000" in line
    assert "the t's lower bound −2.280, bounded to [-1, 1]" in line
    # the interval of the difference is bounded the same way, and said so
    assert comparison.test.ci.low == -1.0
    assert any("interval" in n and "[-1, 1]" in n for n in comparison.notes())
    # inside the range nothing changes and nothing is said
    rng = np.random.default_rng(28)
    a, b = (rng.random((60, 2)) < 0.6).astype(float), (rng.random((60, 2)) < 0.6).astype(float)
    ok = compare_runs(make_attempts(a, run_id="a"), make_attempts(b, run_id="b"),
                      gate=Gate(margin=0.05), rng=rng)  # fmt: skip
    assert ok.to_dict()["gate"]["clipped"] is False
    assert not any("[-1, 1]" in n for n in ok.notes())
