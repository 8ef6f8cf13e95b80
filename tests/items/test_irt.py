"""The 2PL fit: ChemBench abilities against the published scores, and parameter recovery."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import pearsonr, spearmanr

from evalsuite.items import fit_2pl, simulate_2pl
from tests.helpers import REPO

CHEMBENCH = REPO / "tests" / "data" / "chembench_irt"


def test_chembench_abilities_follow_the_published_scores() -> None:
    """22 models x 2,854 items: EAP abilities against each model's published fraction correct.

    The owners publish each model's fraction correct (model_score_allcorrect.csv); the
    abilities must order the models as those scores do (docs/design/items.md states the
    numbers: Pearson 0.949, Spearman 0.975).
    """
    matrix = pd.read_csv(CHEMBENCH / "binary_matrix.csv", index_col=0)
    published = pd.read_csv(CHEMBENCH / "model_score_allcorrect.csv", index_col=0)["score"]
    responses = matrix.to_numpy(float).T  # models x items
    fit = fit_2pl(responses, np.ones_like(responses))
    assert fit.converged and fit.max_change < fit.tolerance
    scores = published[matrix.columns].to_numpy(float)
    assert round(float(pearsonr(fit.theta, scores)[0]), 3) == 0.949
    assert round(float(spearmanr(fit.theta, scores)[0]), 3) == 0.975
    # the identification holds: abilities centred near 0 on the N(0, 1) scale, a mostly > 0
    assert abs(float(fit.theta.mean())) < 0.5
    assert float(np.mean(fit.a > 0)) > 0.95


def test_parameters_are_recovered_from_simulated_2pl_data() -> None:
    rng = np.random.default_rng(17)
    a = rng.lognormal(0.0, 0.3, 40)
    b = rng.normal(0.0, 1.0, 40)
    theta = rng.normal(0.0, 1.0, 1000)
    responses = simulate_2pl(a, b, theta, rng)
    fit = fit_2pl(responses, np.ones_like(responses))
    assert fit.converged
    assert np.corrcoef(fit.a, a)[0, 1] > 0.95
    assert np.corrcoef(fit.b, b)[0, 1] > 0.99
    assert np.corrcoef(fit.theta, theta)[0, 1] > 0.9
    assert np.max(np.abs(fit.b - b)) < 0.5
    assert np.median(np.abs(fit.a - a)) < 0.1


def test_missing_cells_carry_no_information() -> None:
    """A model with no scored attempt (0 trials everywhere) leaves the items' parameters as is."""
    rng = np.random.default_rng(5)
    responses = simulate_2pl(np.ones(12), np.linspace(-1, 1, 12), rng.normal(size=30), rng)
    trials = np.ones_like(responses)
    fit = fit_2pl(responses, trials)
    padded = fit_2pl(
        np.vstack([responses, np.zeros((1, 12))]), np.vstack([trials, np.zeros((1, 12))])
    )
    assert fit.converged and padded.converged
    np.testing.assert_allclose(padded.a, fit.a, rtol=1e-6)
    np.testing.assert_allclose(padded.b, fit.b, rtol=1e-6)
    assert padded.theta[-1] == pytest.approx(0.0, abs=1e-9)  # the prior's mean: nothing seen


def test_bad_tables_are_refused() -> None:
    with pytest.raises(ValueError, match="one 2-D shape"):
        fit_2pl(np.zeros((2, 3)), np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"\[0, trials\]"):
        fit_2pl(np.full((2, 2), 2.0), np.ones((2, 2)))


def test_a_fit_that_runs_out_of_iterations_says_so() -> None:
    rng = np.random.default_rng(1)
    responses = simulate_2pl(np.ones(20), np.zeros(20), rng.normal(size=50), rng)
    fit = fit_2pl(responses, np.ones_like(responses), max_iterations=1)
    assert not fit.converged and fit.iterations == 1
    assert fit.describe()["converged"] is False


def _marginal_loglik(fit_k: np.ndarray, fit_n: np.ndarray, a: np.ndarray, c: np.ndarray) -> float:
    """The marginal log-likelihood of the 2PL model (no prior), by the fit's own quadrature."""
    from numpy.polynomial.hermite_e import hermegauss

    from evalsuite.items._irt import _marginal

    nodes, weights = hermegauss(61)
    return _marginal(fit_k, fit_n, a, c, nodes, np.log(weights / weights.sum()))[1]


def test_se_of_a_is_the_observed_information_without_the_prior() -> None:
    # issue 28 item 7: the SE of a was the complete-data information plus the prior's
    # precision 1/0.5² = 4 (an underestimate twice over). It is now the likelihood's:
    # the item's block of the observed information of the marginal likelihood (Louis 1982),
    # checked here against a finite-difference Hessian of that likelihood.
    rng = np.random.default_rng(28)
    a_true = np.r_[np.zeros(4), rng.lognormal(0.0, 0.3, 16)]
    responses = simulate_2pl(a_true, rng.normal(0.0, 1.0, 20), rng.normal(size=40), rng)
    trials = np.ones_like(responses, dtype=float)
    fit = fit_2pl(responses, trials)
    assert fit.converged
    k = responses.astype(float)
    h = 1e-4
    for item in (0, 1, 7, 15):

        def ll(da: float, dc: float, item: int = item) -> float:
            a, c = fit.a.copy(), fit.c.copy()
            a[item] += da
            c[item] += dc
            return _marginal_loglik(k, trials, a, c)

        f0 = ll(0, 0)
        haa = (ll(h, 0) - 2 * f0 + ll(-h, 0)) / h**2
        hcc = (ll(0, h) - 2 * f0 + ll(0, -h)) / h**2
        hac = (ll(h, h) - ll(h, -h) - ll(-h, h) + ll(-h, -h)) / (4 * h * h)
        info = -np.array([[haa, hac], [hac, hcc]])
        se_a = float(np.sqrt(np.linalg.inv(info)[0, 0]))
        assert fit.a_se[item] == pytest.approx(se_a, rel=1e-3), item
    assert fit.describe()["a_se"].startswith("observed information of the marginal likelihood")


def test_b_is_omitted_where_a_is_not_distinguishable_from_0() -> None:
    # issue 28 item 7: b = -c/a is unbounded as a nears 0 (|b| of 17.6 and 71 were seen).
    # Items with a true a of 0 get no b unless their a's 95% interval excludes 0.
    rng = np.random.default_rng(7)
    n_flat = 10
    a_true = np.r_[np.zeros(n_flat), rng.lognormal(0.0, 0.3, 30)]
    b_true = np.r_[np.zeros(n_flat), rng.normal(0.0, 1.0, 30)]
    responses = simulate_2pl(a_true, b_true, rng.normal(size=30), rng)
    # a true a of 0 with a solve rate away from 1/2: b = -c/a runs off as â nears 0
    responses[:, :n_flat] = (rng.random((30, n_flat)) < 0.8).astype(int)
    fit = fit_2pl(responses, np.ones_like(responses))
    z = 1.959963984540054
    undistinguished = np.abs(fit.a) <= z * fit.a_se
    assert undistinguished[:n_flat].mean() >= 0.8
    assert np.all(np.isnan(fit.b[undistinguished]))
    assert np.all(np.isfinite(fit.b[~undistinguished]))
    # whatever b is given is within the ability scale's quadrature range
    assert np.nanmax(np.abs(fit.b)) < 10
    assert not np.isnan(fit.b[n_flat:]).all()
