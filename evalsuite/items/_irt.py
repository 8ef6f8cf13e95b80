"""A two-parameter logistic IRT model fitted by marginal maximum likelihood (EM).

The response of model ``m`` to item ``i`` is ``k`` successes in ``n`` scored attempts, with
``P(success | θ_m) = 1 / (1 + exp(-(a_i θ_m + c_i)))`` (Lord 1980): ``a_i`` is the item's
discrimination and ``b_i = -c_i / a_i`` its difficulty on the ability scale. Abilities are
integrated out over a standard normal by Gauss-Hermite quadrature and the item parameters are
found by the EM algorithm of Bock & Aitkin (1981), with weak normal priors on ``a`` and ``c``
(Bayes modal estimation, Mislevy 1986) so that an item every strong model solves and every
weak one fails keeps finite parameters. Identification: the ability distribution is fixed at
N(0, 1) (location and scale) and the prior mean of ``a`` is positive (sign). See
docs/design/items.md.

Plain numpy and scipy: no database, no store, no pandas.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from numpy.polynomial.hermite_e import hermegauss
from scipy.special import expit, log_expit, logsumexp
from scipy.stats import norm

__all__ = ["IrtFit", "fit_2pl", "simulate_2pl"]

FloatArray = npt.NDArray[np.float64]

PRIOR_A = (1.0, 0.5)
"""Normal prior (mean, sd) of the discrimination ``a``: allows a negative ``a``; tight enough
that a handful of models identify one ability dimension (docs/design/items.md)."""
PRIOR_C = (0.0, 4.0)
"""Normal prior (mean, sd) of the intercept ``c = -a b``."""


@dataclass(frozen=True, slots=True)
class IrtFit:
    """A fitted 2PL model: item parameters, model abilities and how the fit went."""

    a: FloatArray
    """Discrimination per item."""
    b: FloatArray
    """Difficulty per item on the ability scale, ``-c / a``; NaN where ``a`` is not
    distinguishable from 0 (``|a| ≤ z · a_se`` at `level`, or no SE), where it is unbounded."""
    c: FloatArray
    """Intercept per item."""
    a_se: FloatArray
    """Standard error of ``a`` from the likelihood alone: the item's block of the observed
    information of the marginal likelihood at the estimate (Louis 1982), without the priors'
    precision; NaN where that block is not positive definite."""
    theta: FloatArray
    """Expected a posteriori ability per model."""
    theta_sd: FloatArray
    """Posterior standard deviation of each ability."""
    iterations: int
    converged: bool
    max_change: float
    """Largest parameter change in the last EM iteration."""
    log_likelihood: float
    """Marginal log-likelihood at the estimate (without the priors' terms)."""
    quadrature_points: int
    tolerance: float
    level: float = 0.95
    """Level of the interval of ``a`` that decides whether ``b`` is given."""

    def describe(self) -> dict[str, Any]:
        """The fit's method, identification and convergence (for JSON output)."""
        return {
            "model": "2PL",
            "estimation": "marginal maximum likelihood by EM (Bock & Aitkin 1981), Bayes modal",
            "quadrature": f"Gauss-Hermite, {self.quadrature_points} points",
            "identification": "abilities ~ N(0, 1) (location, scale); prior mean of a > 0 (sign)",
            "priors": {"a": {"mean": PRIOR_A[0], "sd": PRIOR_A[1]}}
            | {"c": {"mean": PRIOR_C[0], "sd": PRIOR_C[1]}},
            "iterations": self.iterations,
            "converged": self.converged,
            "max_change": self.max_change,
            "tolerance": self.tolerance,
            "log_likelihood": self.log_likelihood,
            "a_se": "observed information of the marginal likelihood (Louis 1982), the "
            "item's block, without the priors",
            "b": f"-c/a; omitted where a's {self.level:.0%} interval contains 0 (b is "
            "unbounded as a nears 0)",
        }


def _marginal(
    k: FloatArray, n: FloatArray, a: FloatArray, c: FloatArray, nodes: FloatArray, logw: FloatArray
) -> tuple[FloatArray, float]:
    """Posterior weights over the nodes per model, and the marginal log-likelihood."""
    eta = np.outer(nodes, a) + c  # nodes x items
    log_p, log_q = log_expit(eta), log_expit(-eta)
    loglik = k @ log_p.T + (n - k) @ log_q.T  # models x nodes
    joint = loglik + logw
    total = logsumexp(joint, axis=1, keepdims=True)
    return np.exp(joint - total), float(total.sum())


def _objective(
    r: FloatArray, t: FloatArray, a: FloatArray, c: FloatArray, nodes: FloatArray
) -> FloatArray:
    """Each item's expected complete-data log posterior (the M step's objective)."""
    eta = a[:, None] * nodes[None, :] + c[:, None]
    loglik = (r * log_expit(eta) + (t - r) * log_expit(-eta)).sum(axis=1)
    prior = ((a - PRIOR_A[0]) / PRIOR_A[1]) ** 2 + ((c - PRIOR_C[0]) / PRIOR_C[1]) ** 2
    return np.asarray(loglik - prior / 2, dtype=float)


def fit_2pl(  # noqa: PLR0915 - one EM loop, kept in one piece to read against the paper
    successes: npt.ArrayLike,
    trials: npt.ArrayLike,
    *,
    quadrature_points: int = 61,
    tolerance: float = 1e-4,
    max_iterations: int = 2000,
    level: float = 0.95,
) -> IrtFit:
    """Fit the 2PL model to a models x items table of successes out of trials.

    Args:
        successes: Successes per (model, item): a model's summed scores over its scored
            attempts of the item (fractional scores enter as fractional successes).
        trials: Scored attempts per (model, item); 0 where the model did not run the item
            (that cell carries no information; no value is imputed).
        quadrature_points: Gauss-Hermite nodes over the N(0, 1) ability distribution.
        tolerance: Stop when no parameter moves by more than this in one EM iteration.
        max_iterations: Give up after this many iterations (``converged`` is then False).
        level: Level of the Wald interval of ``a``; ``b`` is omitted (NaN) where it holds 0.

    Raises:
        ValueError: shapes differ, or successes outside [0, trials].
    """
    k = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    if k.shape != n.shape or k.ndim != 2:
        raise ValueError(f"successes {k.shape} and trials {n.shape} must be one 2-D shape")
    if np.any(n < 0) or np.any(k < -1e-12) or np.any(k > n + 1e-9):
        raise ValueError("successes must lie in [0, trials] and trials be non-negative")
    nodes, weights = hermegauss(quadrature_points)
    logw = np.log(weights / weights.sum())
    n_items = k.shape[1]
    # start from the items' logits of their pooled solve rates, a at the prior mean
    rate = (k.sum(axis=0) + 0.5) / (n.sum(axis=0) + 1.0)
    c = np.log(rate / (1 - rate))
    a = np.full(n_items, PRIOR_A[0])
    pa, pc = 1 / PRIOR_A[1] ** 2, 1 / PRIOR_C[1] ** 2
    converged, change, iterations = False, float("inf"), 0
    h_aa = h_ac = h_cc = np.zeros(n_items)
    for iterations in range(1, max_iterations + 1):  # noqa: B007  (reported below)
        post, _ = _marginal(k, n, a, c, nodes, logw)
        r = k.T @ post  # items x nodes: expected successes at each node
        t = n.T @ post  # expected trials
        # M step: one Newton step per item on the expected complete-data log posterior
        p = expit(np.outer(a, nodes) + c[:, None])
        resid = r - t * p
        g_a = resid @ nodes - pa * (a - PRIOR_A[0])
        g_c = resid.sum(axis=1) - pc * (c - PRIOR_C[0])
        info = t * p * (1 - p)
        h_aa = info @ nodes**2 + pa
        h_ac = info @ nodes
        h_cc = info.sum(axis=1) + pc
        det = h_aa * h_cc - h_ac**2
        step_a = (h_cc * g_a - h_ac * g_c) / det
        step_c = (h_aa * g_c - h_ac * g_a) / det
        # step halving where the full Newton step would lower the item's objective
        before = _objective(r, t, a, c, nodes)
        scale = np.ones(n_items)
        for _ in range(30):
            after = _objective(r, t, a + scale * step_a, c + scale * step_c, nodes)
            worse = after < before - 1e-12
            if not worse.any():
                break
            scale = np.where(worse, scale / 2, scale)
        stalled = bool((scale < 1.0 / 2**29).any())  # no ascent found: not convergence
        step_a, step_c = scale * step_a, scale * step_c
        a, c = a + step_a, c + step_c
        change = float(max(np.abs(step_a).max(initial=0), np.abs(step_c).max(initial=0)))
        if change < tolerance and not stalled:
            converged = True
            break
    post, loglik = _marginal(k, n, a, c, nodes, logw)
    theta = post @ nodes
    theta_sd = np.sqrt(np.maximum(post @ nodes**2 - theta**2, 0.0))
    a_se = _observed_se_a(k, n, a, c, nodes, post)
    z = float(norm.ppf(0.5 + level / 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        b = np.where(np.abs(a) > z * a_se, -c / a, np.nan)  # NaN SE: not distinguishable
    return IrtFit(
        a=a,
        b=b,
        c=c,
        a_se=a_se,
        theta=theta,
        theta_sd=theta_sd,
        iterations=iterations,
        converged=converged,
        max_change=change,
        log_likelihood=loglik,
        quadrature_points=quadrature_points,
        tolerance=tolerance,
        level=level,
    )


def _observed_se_a(
    k: FloatArray, n: FloatArray, a: FloatArray, c: FloatArray, nodes: FloatArray, post: FloatArray
) -> FloatArray:
    """SE of each ``a`` from the item's 2x2 block of the observed marginal information.

    Louis (1982): observed information = E[complete-data information | data] −
    Var[complete-data score | data], each model's ability under its posterior over the
    nodes. For item i and model m at node θ the complete-data score of ``(a_i, c_i)`` is
    ``(k − n·p(θ))·(θ, 1)`` and its information ``n·p(1 − p)·(θ, 1)(θ, 1)ᵀ``. The block treats
    the other items' parameters as known; the priors are left out (a likelihood SE).
    """
    p = expit(np.outer(a, nodes) + c[:, None])  # items x nodes
    t = n.T @ post
    info = t * p * (1 - p)
    e_aa, e_ac, e_cc = info @ nodes**2, info @ nodes, info.sum(axis=1)
    # E[(k − n p)² | data] per item and node, summed over models
    sq = (k * k).T @ post - 2 * p * ((k * n).T @ post) + p * p * ((n * n).T @ post)
    s_aa, s_ac, s_cc = sq @ nodes**2, sq @ nodes, sq.sum(axis=1)
    # E[score | data] per model and item
    mean_theta = post @ nodes
    score_a = k * mean_theta[:, None] - n * (post @ (p.T * nodes[:, None]))
    score_c = k - n * (post @ p.T)
    i_aa = e_aa - s_aa + (score_a**2).sum(axis=0)
    i_ac = e_ac - s_ac + (score_a * score_c).sum(axis=0)
    i_cc = e_cc - s_cc + (score_c**2).sum(axis=0)
    det = i_aa * i_cc - i_ac**2
    with np.errstate(divide="ignore", invalid="ignore"):
        var_a = np.where((det > 0) & (i_cc > 0), i_cc / det, np.nan)
    return np.asarray(np.sqrt(var_a), dtype=np.float64)


def simulate_2pl(
    a: npt.ArrayLike, b: npt.ArrayLike, theta: npt.ArrayLike, rng: np.random.Generator
) -> npt.NDArray[np.int64]:
    """0/1 responses (models x items) drawn from the 2PL model with these parameters."""
    a_, b_, t_ = (np.asarray(x, dtype=float) for x in (a, b, theta))
    p: FloatArray = expit(a_[None, :] * (t_[:, None] - b_[None, :]))
    draws: npt.NDArray[np.int64] = (rng.random(p.shape) < p).astype(np.int64)
    return draws
