"""Figures computed from public evaluation results match what their owners published.

Data: tests/data, copied byte for byte from the repositories named in its README.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

from evalsuite.analyse import compare_runs, reliability, score_run
from tests.analyse.conftest import shared_data

# sierra-research/tau-bench, README.md at commit 9ed9fd9cb776ee4cab8e0cf20d8a92f6a8bd67a9,
# "Leaderboard / Airline", row "TC (gpt-4o)": Pass^1 0.420, Pass^2 0.273, Pass^3 0.220,
# Pass^4 0.200. (An older README, commit 034a26763e59, shows 0.380/0.237/0.185/0.160 for a
# different, undifferentiated run; the trials file is the airline run of the newer table.)
TAU_PUBLISHED = {1: 0.420, 2: 0.273, 3: 0.220, 4: 0.200}


def attempts_frame(
    run_id: str, items: pd.Series, epochs: pd.Series, scores: pd.Series
) -> pd.DataFrame:
    n = len(scores)
    return pd.DataFrame(
        {
            "run_id": run_id,
            "item_id": items.astype(str).to_numpy(),
            "item_hash": None,
            "stratum": "all",
            "cluster": None,
            "epoch": epochs.to_numpy(),
            "seed": None,
            "outcome": "scored",
            "limit_type": None,
            "score": scores.astype(float).to_numpy(),
            "reason": None,
            "retries": np.zeros(n, dtype=int),
            "duration_s": np.zeros(n),
            "tokens": np.zeros(n, dtype=int),
            "checks": None,
        }
    )


@pytest.fixture(scope="module")
def tau() -> pd.DataFrame:
    trials = pd.read_csv(shared_data() / "tau_bench" / "gpt-4o-airline_trials.csv")
    return attempts_frame(
        "gpt-4o-airline", trials["task_id"], trials["trial"] + 1, trials["reward"]
    )


@pytest.fixture(scope="module")
def chembench() -> tuple[pd.DataFrame, pd.Series]:
    root = shared_data() / "chembench_irt"
    matrix = pd.read_csv(root / "binary_matrix.csv", index_col=0)
    published = pd.read_csv(root / "model_score_allcorrect.csv", index_col=0)["score"]
    return matrix, published


def chem_run(matrix: pd.DataFrame, model: str) -> pd.DataFrame:
    items = pd.Series(matrix.index)
    return attempts_frame(
        model,
        items,
        pd.Series(np.ones(len(items), dtype=int)),
        matrix[model].reset_index(drop=True),
    )


def test_tau_bench_pass_hat_k_matches_the_readme(tau: pd.DataFrame) -> None:
    res = score_run(tau, rng=np.random.default_rng(0))
    assert res.epochs == 4
    assert [p.k for p in res.pass_k] == [1, 2, 3, 4]
    for p in res.pass_k:
        assert round(p.pass_hat_k.mean, 3) == TAU_PUBLISHED[p.k]
        assert p.pass_hat_k.se > 0
    assert res.overall.mean == pytest.approx(0.42)
    assert res.overall.n_items == 50


def test_tau_bench_reliability_is_consistent(tau: pd.DataFrame) -> None:
    rel = reliability(tau)
    assert rel.n_items == 50 and rel.epochs == 4
    # 26 of the 50 tasks neither always pass nor always fail across the 4 trials
    per_task = tau.groupby("item_id")["score"].agg(["min", "max"])
    assert rel.flip_rate == pytest.approx(float(np.mean(per_task["min"] < per_task["max"])))
    assert 0 < rel.icc1 < rel.icc1k < 1
    first = tau[tau["epoch"] <= 2].assign(run_id="first-half")
    second = tau[tau["epoch"] > 2].assign(run_id="second-half", epoch=lambda f: f["epoch"] - 2)
    retest = reliability(first, retest=second)
    assert retest.test_retest_kind == "item_means_retest_r"
    assert abs(retest.retest_diff) < 3 * retest.noise_floor


def test_chembench_fraction_correct_matches_published(
    chembench: tuple[pd.DataFrame, pd.Series],
) -> None:
    matrix, published = chembench
    assert matrix.shape == (2854, 22)
    for model in matrix.columns:
        res = score_run(chem_run(matrix, model), rng=np.random.default_rng(0))
        assert res.overall.mean == pytest.approx(published[model], abs=1e-12), model
        assert res.overall.n_items == 2854


def test_chembench_clustered_se_matches_statsmodels(
    chembench: tuple[pd.DataFrame, pd.Series],
) -> None:
    matrix, _ = chembench
    run = chem_run(matrix, "GPT-4o")
    blocks = np.arange(len(matrix)) // 20  # consecutive items as stand-in clusters
    run["cluster"] = [f"block-{b}" for b in blocks]
    res = score_run(run, interval="t", rng=np.random.default_rng(0))
    y = matrix["GPT-4o"].to_numpy(float)
    fit = sm.OLS(y, np.ones(len(y))).fit(
        cov_type="cluster", cov_kwds={"groups": blocks}, use_t=True
    )
    assert res.overall.se == pytest.approx(float(fit.bse[0]), rel=1e-10)
    assert res.overall.ci == pytest.approx(tuple(fit.conf_int()[0]), abs=1e-10)
    assert res.overall.df == fit.df_resid_inference


def test_chembench_paired_comparison_matches_scipy(
    chembench: tuple[pd.DataFrame, pd.Series],
) -> None:
    matrix, _ = chembench
    base, cand = "GPT-4o", "Claude-3.5 (Sonnet)"
    res = compare_runs(chem_run(matrix, base), chem_run(matrix, cand), rng=np.random.default_rng(0))
    ref = stats.ttest_rel(matrix[cand], matrix[base])
    assert res.diff == pytest.approx(float((matrix[cand] - matrix[base]).mean()))
    assert res.test.p_value == pytest.approx(float(ref.pvalue), rel=1e-9)
    assert res.test.ci == pytest.approx(tuple(ref.confidence_interval()), abs=1e-12)
    # one attempt per item: McNemar mid-p = exact p − point probability (Fagerland 2013)
    b = int(((matrix[base] == 1) & (matrix[cand] == 0)).sum())
    c = int(((matrix[base] == 0) & (matrix[cand] == 1)).sum())
    exact = mcnemar([[0, b], [c, 0]], exact=True).pvalue
    assert res.p_value_mcnemar_midp == pytest.approx(
        exact - stats.binom.pmf(min(b, c), b + c, 0.5), rel=1e-9
    )
