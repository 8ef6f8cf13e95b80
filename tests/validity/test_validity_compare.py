"""`compare_predictors`, `validity_over_time` and `validity_table` (the report's JSON shape)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalsuite.errors import InsufficientDataError, UsageError
from evalsuite.validity._compare import compare_predictors
from evalsuite.validity._stats import rowwise_pearson, rowwise_spearman
from evalsuite.validity._table import validity_table
from evalsuite.validity._time import validity_over_time
from evalsuite.validity._validity import validity

# --- compare_predictors --------------------------------------------------------------------


def test_rowwise_correlations_match_scipy_row_by_row(rng: np.random.Generator) -> None:
    a = rng.integers(0, 6, size=(50, 9)).astype(float)  # many ties, as in resamples
    b = a + rng.normal(size=(50, 9))
    rs, rp = rowwise_spearman(a, b), rowwise_pearson(a, b)
    for i in range(50):
        if np.ptp(a[i]) == 0:
            assert math.isnan(rs[i])
            continue
        assert rs[i] == pytest.approx(stats.spearmanr(a[i], b[i]).statistic, abs=1e-12)
        assert rp[i] == pytest.approx(stats.pearsonr(a[i], b[i]).statistic, abs=1e-12)


def test_identical_predictors_are_not_distinguishable(rng: np.random.Generator) -> None:
    y = rng.normal(size=20)
    x = y + rng.normal(size=20)
    c = compare_predictors(x, x.copy(), y, rng=rng, n_boot=500)
    assert c.spearman_diff == 0 and c.spearman_diff_ci == (0.0, 0.0)
    assert c.verdict == "not distinguishable" and c.p_value == 1.0


def test_a_clearly_better_predictor_wins_either_way_round(rng: np.random.Generator) -> None:
    y = rng.normal(size=40)
    good, bad = y + 0.2 * rng.normal(size=40), y + 3.0 * rng.normal(size=40)
    ab = compare_predictors(good, bad, y, rng=rng, n_boot=2000, names=("good", "bad"))
    ba = compare_predictors(bad, good, y, rng=rng, n_boot=2000)
    assert ab.verdict == "a better" and ba.verdict == "b better"
    assert ab.spearman_diff_ci.low > 0 and ab.p_value < 0.01
    assert "good predicts the deployment result better" in ab.statement
    assert ab.name_a == "good" and ba.name_a == "a"


def test_comparison_uses_the_models_with_all_three(rng: np.random.Generator) -> None:
    y = rng.normal(size=12)
    a, b = y + rng.normal(size=12), y + rng.normal(size=12)
    a[0], b[1], y[2] = np.nan, np.nan, np.nan
    c = compare_predictors(a, b, y, rng=rng, n_boot=300)
    keep = np.arange(12) >= 3
    assert (c.n, c.n_dropped) == (9, 3)
    assert c.spearman_a == pytest.approx(stats.spearmanr(a[keep], y[keep]).statistic)
    assert c.pearson_b == pytest.approx(stats.pearsonr(b[keep], y[keep]).statistic)
    assert any("only 9 common models" in f for f in c.flags)


def test_comparison_refuses_too_few_models_and_other_levels(rng: np.random.Generator) -> None:
    with pytest.raises(InsufficientDataError, match="at least 5 models"):
        compare_predictors([1, 2, 3, 4], [1, 3, 2, 4], [2, 1, 3, 4], rng=rng)
    with pytest.raises(InsufficientDataError, match="constant"):
        compare_predictors([1, 1, 1, 1, 1], [1, 3, 2, 4, 5], [2, 1, 3, 4, 5], rng=rng)
    y = rng.normal(size=10)
    c = compare_predictors(y + rng.normal(size=10), y, y, rng=rng, n_boot=200)
    assert c.conf_int(0.95) == c.spearman_diff_ci
    with pytest.raises(UsageError, match="re-run"):
        c.conf_int(0.9)
    d = c.to_dict()
    json.dumps(d)
    assert d["verdict"] in {"not distinguishable", "a better", "b better"}
    assert len(c.to_frame()) == 1


# --- validity_over_time --------------------------------------------------------------------


def test_expanding_window_in_observation_order(rng: np.random.Generator) -> None:
    x = rng.normal(size=15)
    y = x + rng.normal(size=15)
    order = np.array([5, 1, 2, 3, 4, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14])
    x[7] = np.nan  # dropped: its time (7) never closes a window
    t = validity_over_time(x, y, order, start=5)
    sizes = [p.n for p in t.points]
    assert sizes == list(range(5, 15))  # the two models observed at time 4 enter together
    assert [p.through for p in t.points][:4] == [4, 5, 6, 8]
    last = validity(x, y, rng=rng, n_boot=200)
    assert t.points[-1].spearman == pytest.approx(last.spearman)
    assert t.points[-1].pearson_ci == pytest.approx(last.pearson_ci)
    assert t.conf_int(0.95)[-1] == pytest.approx(last.spearman_ci)
    assert t.n_dropped == 1 and any("fewer than 10" in f for f in t.flags)
    frame = t.to_frame()
    assert list(frame["n"]) == sizes and "spearman_low" in frame.columns
    json.dumps(t.to_dict())


def test_over_time_accepts_dates_and_refuses_bad_input(rng: np.random.Generator) -> None:
    x = rng.normal(size=8)
    dates = pd.date_range("2024-01-01", periods=8, freq="W").to_numpy()
    t = validity_over_time(x, x + rng.normal(size=8), dates, start=6)
    assert len(t.points) == 3 and t.to_dict()["points"][0]["through"].startswith("2024-02-11")
    with pytest.raises(InsufficientDataError):
        validity_over_time(x[:4], x[:4], dates[:4])
    with pytest.raises(UsageError, match="start"):
        validity_over_time(x, x, dates, start=3)
    with pytest.raises(UsageError, match="statistic"):
        t.conf_int(0.9, "disattenuated")


# --- validity_table ------------------------------------------------------------------------


def make_frames(rng: np.random.Generator, m: int = 20) -> tuple[pd.DataFrame, pd.DataFrame]:
    models = [f"model-{i:02d}" for i in range(m)]
    truth = rng.normal(size=m)
    rows = []
    for name, noise in (("sharp", 0.2), ("blurry", 1.0), ("noise", 5.0)):
        score = truth + noise * rng.normal(size=m)
        rows += [{"model": mo, "predictor": name, "score": s, "se": noise / 2}
                 for mo, s in zip(models, score, strict=True)]  # fmt: skip
    rows.append({"model": "model-00", "predictor": "tiny", "score": 1.0, "se": 0.1})
    scores = pd.DataFrame(rows)
    scores.loc[scores.index[3], "score"] = np.nan
    outcomes = pd.DataFrame(
        {"model": models, "value": 10 * truth + rng.normal(size=m), "se": 1.0,
         "observed_at": pd.date_range("2024-01-01", periods=m, freq="D")}
    )  # fmt: skip
    outcomes.loc[5, "value"] = np.nan
    return scores, outcomes


def test_table_json_has_designs_shape(rng: np.random.Generator) -> None:
    scores, outcomes = make_frames(rng)
    rep = validity_table(scores, outcomes, metric="resolution rate", rng=rng, n_boot=300)
    d = json.loads(json.dumps(rep.to_dict()))
    assert d["metric"] == "resolution rate" and d["n_models"] == 19
    names = [p["name"] for p in d["predictors"]]
    assert names == ["sharp", "blurry", "noise", "tiny"]
    for p in d["predictors"]:
        assert {"name", "n", "spearman", "spearman_ci", "kendall", "kendall_ci", "pearson",
                "pearson_ci", "disattenuated", "deming_slope", "deming_slope_ci",
                "loo_error"} <= set(p)  # fmt: skip
    sharp = rep.predictor("sharp")
    assert (sharp.n, sharp.n_dropped) == (18, 2)  # one score and one deployment result missing
    assert sharp.reliability_x_source == "separation" == sharp.reliability_y_source
    assert sharp.deming_delta_source == "se" and sharp.n_forward > 0
    assert rep.predictor("tiny").n == 1 and "at least 3 needed" in rep.predictor("tiny").flags[0]
    pairs = [(c["name_a"], c["name_b"]) for c in d["comparisons"]]
    assert pairs == [("sharp", "blurry"), ("sharp", "noise"), ("blurry", "noise")]
    assert len(rep.to_frame()) == 4 and "sharp" in set(rep.to_frame()["name"])
    assert set(rep.conf_int(0.9)) == set(names)


def test_table_matches_validity_per_predictor(rng: np.random.Generator) -> None:
    scores, outcomes = make_frames(rng)
    rep = validity_table(scores, outcomes, metric="m", rng=rng, n_boot=300, compare_top=0)
    sub = scores[scores["predictor"] == "blurry"].merge(outcomes, on="model", how="left")
    v = validity(sub["score"], sub["value"], se_x=sub["se_x"], se_y=sub["se_y"],
                 rng=rng, n_boot=300)  # fmt: skip
    got = rep.predictor("blurry")
    assert got.spearman == v.spearman and got.disattenuated == pytest.approx(v.disattenuated)
    assert rep.comparisons == ()


def test_table_min_models_and_bad_frames(rng: np.random.Generator) -> None:
    scores, outcomes = make_frames(rng)
    rep = validity_table(scores, outcomes, metric="m", rng=rng, n_boot=200, min_models=20)
    assert all(math.isnan(v.spearman) for v in rep.predictors)
    assert rep.comparisons == ()
    with pytest.raises(UsageError, match="lacks column"):
        validity_table(scores.drop(columns="score"), outcomes, metric="m", rng=rng)
    with pytest.raises(UsageError, match="duplicate"):
        validity_table(pd.concat([scores, scores.head(1)]), outcomes, metric="m", rng=rng)
    with pytest.raises(UsageError, match="duplicate"):
        validity_table(scores, pd.concat([outcomes, outcomes.head(1)]), metric="m", rng=rng)
    with pytest.raises(UsageError, match="min_models"):
        validity_table(scores, outcomes, metric="m", rng=rng, min_models=2)
    with pytest.raises(UsageError, match="no predictor"):
        rep.predictor("absent")
