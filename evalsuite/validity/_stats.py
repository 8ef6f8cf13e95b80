"""Numerical primitives of predictive validity (docs/methods.md): pure numpy/scipy, no records.

Correlation intervals on the Fisher-z scale, separation reliability, the attenuation
correction, closed-form Deming regression (vectorised over bootstrap resamples), PRESS
residuals and forward-chaining errors of ``OLS y ~ x``. `evalsuite.validity._validity` turns
these into the `Validity` record; docs/design/validity.md gives the decisions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from evalsuite.analyse import Interval

__all__ = [
    "Correlations",
    "FloatArray",
    "correlations",
    "critical_r",
    "deming_bootstrap",
    "deming_slopes",
    "disattenuate",
    "fisher_interval",
    "forward_chain_errors",
    "is_perfect",
    "kendall_se",
    "ols_press",
    "pearson_se",
    "rowwise_pearson",
    "rowwise_spearman",
    "separation_reliability",
    "spearman_se",
]

FloatArray = npt.NDArray[np.float64]
NAN_INTERVAL = Interval(math.nan, math.nan)

#: A correlation within this of ±1 is ±1 up to floating-point rounding: scipy returns
#: 0.9999999999999999 for identical ranks, and exactly linear data give |r| within a few
#: ulps of 1. Its Fisher-z interval would be (1 − 1e−11, 1) at 5 models, zero-width as shown.
PERFECT_TOLERANCE = 1e-12


def is_perfect(r: float) -> bool:
    """True when the correlation `r` is ±1 up to floating-point rounding (`PERFECT_TOLERANCE`)."""
    return math.isfinite(r) and abs(r) >= 1.0 - PERFECT_TOLERANCE


def pearson_se(n: int) -> float:
    """SE of ``atanh(r)`` for Pearson r: ``1/√(n − 3)`` (infinite for n ≤ 3)."""
    return 1.0 / math.sqrt(n - 3) if n > 3 else math.inf


def spearman_se(rho: float, n: int) -> float:
    """Bonett–Wright SE of ``atanh(r_s)``: ``√((1 + r_s²/2)/(n − 3))`` (infinite for n ≤ 3).

    References:
        Bonett & Wright (2000), Psychometrika 65:23.
    """
    return math.sqrt((1.0 + rho * rho / 2.0) / (n - 3)) if n > 3 else math.inf


def kendall_se(n: int) -> float:
    """Fieller–Hartley–Pearson SE of ``atanh(τ)``: ``√(0.437/(n − 4))`` (infinite for n ≤ 4).

    References:
        Fieller, Hartley & Pearson (1957), Biometrika 44:470.
    """
    return math.sqrt(0.437 / (n - 4)) if n > 4 else math.inf


def fisher_interval(r: float, se_z: float, level: float) -> Interval:
    """``tanh(atanh(r) ± z_{(1+level)/2}·se_z)``.

    Notes:
        An infinite `se_z` (too few models for the approximation) gives ``(−1, 1)``: the
        data exclude nothing. ``|r| = 1`` (up to rounding, `is_perfect`) or a NaN `r` gives
        NaN ends: the transform is infinite there and a zero-width interval would claim a
        certainty the data do not have; the caller flags it.
    """
    from scipy import stats  # about 1 s to import: only where it is used

    if not math.isfinite(r) or is_perfect(r):
        return NAN_INTERVAL
    if not math.isfinite(se_z):
        return Interval(-1.0, 1.0)
    q = float(stats.norm.ppf(0.5 + level / 2.0))
    z = math.atanh(r)
    return Interval(math.tanh(z - q * se_z), math.tanh(z + q * se_z))


def critical_r(n: int, level: float) -> float:
    """Smallest |Pearson r| two-sided significant at ``1 − level`` with n models.

    ``r* = t/√(n − 2 + t²)`` with ``t = t_{(1+level)/2, n−2}``; NaN for n < 3.
    """
    from scipy import stats  # about 1 s to import: only where it is used

    if n < 3:
        return math.nan
    t = float(stats.t.ppf(0.5 + level / 2.0, n - 2))
    return t / math.sqrt(n - 2 + t * t)


def separation_reliability(values: FloatArray, se: FloatArray) -> tuple[float, str]:
    """``1 − mean(SE²)/Var(values)`` over the models given, and why it is NaN when it is.

    Notes:
        The separation reliability of Rasch measurement (Wright & Masters 1982): the
        share of the
        observed between-model variance (``ddof=1``) that is not measurement error. It
        refers to this set of models only (range restriction). SEs that are NaN are left
        out of the mean. NaN when no SE is known, when the scores do not vary, or when
        the mean error variance reaches the observed variance (reliability ≤ 0).
    """
    known = se[np.isfinite(se)]
    if known.size == 0:
        return math.nan, "no standard error known"
    var = float(np.var(values, ddof=1)) if values.size > 1 else math.nan
    if not var > 0.0:
        return math.nan, "the scores do not vary across these models"
    rel = 1.0 - float(np.mean(known**2)) / var
    if rel <= 0.0:
        return math.nan, (
            f"mean SE² ({float(np.mean(known**2)):.4g}) is at least the between-model "
            f"variance ({var:.4g}): separation reliability ≤ 0"
        )
    return rel, ""


def disattenuate(r: float, ci: Interval, rel_x: float, rel_y: float) -> tuple[float, Interval]:
    """Spearman's correction ``r/√(r_xx·r_yy)``, applied to the estimate and both ends.

    Notes:
        Values above 1 are returned as they are (not clipped); the caller flags them.
        The interval ignores the sampling error of the reliabilities (Charles 2005,
        Psychological Methods 10:206, discusses the consequences).

    References:
        Spearman (1904), Am. J. Psychol. 15:72.
    """
    if not (rel_x > 0.0 and rel_y > 0.0):
        return math.nan, NAN_INTERVAL
    k = math.sqrt(rel_x * rel_y)
    return r / k, Interval(ci.low / k, ci.high / k)


def _moments(x: FloatArray, y: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Sample (co)variances along the last axis (ddof=1)."""
    xc = x - x.mean(axis=-1, keepdims=True)
    yc = y - y.mean(axis=-1, keepdims=True)
    d = x.shape[-1] - 1
    return (xc * xc).sum(axis=-1) / d, (yc * yc).sum(axis=-1) / d, (xc * yc).sum(axis=-1) / d


def deming_slopes(x: FloatArray, y: FloatArray, delta: float) -> FloatArray:
    """Deming slope along the last axis (one per row of a resample matrix).

    ``β = [s_yy − δs_xx + √((s_yy − δs_xx)² + 4δ·s_xy²)]/(2s_xy)``, with
    ``δ = σ²_err,y/σ²_err,x``; NaN where ``s_xy = 0``. ``δ = ∞`` (x without error) gives
    the OLS slope ``s_xy/s_xx``; ``δ = 0`` the reverse regression ``s_yy/s_xy``.

    References:
        Deming (1943), Statistical Adjustment of Data. Linnet (1993), Clin. Chem. 39:424
        (the closed form with error-variance ratio δ).
    """
    sxx, syy, sxy = _moments(x, y)
    with np.errstate(divide="ignore", invalid="ignore"):
        if math.isinf(delta):
            beta = sxy / sxx
        else:
            d = syy - delta * sxx
            beta = (d + np.sqrt(d * d + 4.0 * delta * sxy * sxy)) / (2.0 * sxy)
    return np.asarray(np.where(sxy == 0.0, np.nan, beta), dtype=np.float64)


def deming_bootstrap(
    x: FloatArray,
    y: FloatArray,
    delta: float,
    *,
    level: float,
    n_boot: int,
    rng: np.random.Generator,
) -> tuple[Interval, int]:
    """Percentile interval of the Deming slope, resampling models; and the unusable draws.

    Notes:
        δ is held fixed across resamples. Resamples with ``s_xy = 0`` are dropped and
        counted; with more than half of them unusable the interval is NaN.
    """
    n = x.size
    idx = rng.integers(0, n, size=(n_boot, n))
    slopes = deming_slopes(x[idx], y[idx], delta)
    ok = slopes[np.isfinite(slopes)]
    bad = n_boot - ok.size
    if ok.size < n_boot / 2:
        return NAN_INTERVAL, bad
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(ok, [tail, 1.0 - tail])
    return Interval(float(low), float(high)), bad


def ols_press(x: FloatArray, y: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Residuals and PRESS (leave-one-out) residuals ``e_i/(1 − h_ii)`` of ``OLS y ~ x``.

    Notes:
        ``h_ii = 1/n + (x_i − x̄)²/S_xx``. A model whose leverage is 1 (the others share
        one x) has no leave-one-out fit: its PRESS residual is NaN.
    """
    xc = x - x.mean()
    sxx = float(np.sum(xc * xc))
    slope = float(np.sum(xc * (y - y.mean()))) / sxx
    resid = y - y.mean() - slope * xc
    h = 1.0 / x.size + xc * xc / sxx
    with np.errstate(divide="ignore", invalid="ignore"):
        press = np.where(h < 1.0 - 1e-12, resid / (1.0 - h), np.nan)
    return resid, press


def forward_chain_errors(
    x: FloatArray, y: FloatArray, order: npt.NDArray[np.generic], *, min_train: int = 3
) -> FloatArray:
    """Error ``y_j − ŷ_j`` of predicting each model from the models strictly before it.

    Notes:
        ``ŷ_j`` comes from ``OLS y ~ x`` fitted on the models whose `order` is smaller
        than model j's (ties are never used to predict each other). Models with fewer than
        `min_train` earlier models, or whose earlier models share one x, are NaN.
    """
    out = np.full(x.size, np.nan)
    for j in range(x.size):
        train = order < order[j]
        if int(np.count_nonzero(train)) < min_train:
            continue
        xt, yt = x[train], y[train]
        if np.ptp(xt) == 0.0:
            continue
        xc = xt - xt.mean()
        slope = float(np.sum(xc * (yt - yt.mean()))) / float(np.sum(xc * xc))
        out[j] = y[j] - (yt.mean() + slope * (x[j] - xt.mean()))
    return out


def rowwise_pearson(a: FloatArray, b: FloatArray) -> FloatArray:
    """Pearson correlation of each row of `a` with the same row of `b` (NaN if constant)."""
    ac = a - a.mean(axis=-1, keepdims=True)
    bc = b - b.mean(axis=-1, keepdims=True)
    den = np.sqrt((ac * ac).sum(axis=-1) * (bc * bc).sum(axis=-1))
    with np.errstate(divide="ignore", invalid="ignore"):
        r = (ac * bc).sum(axis=-1) / den
    return np.where(den > 0.0, r, np.nan)


def rowwise_spearman(a: FloatArray, b: FloatArray) -> FloatArray:
    """Spearman correlation per row: Pearson of mid-ranks (ties averaged, as scipy)."""
    from scipy import stats  # about 1 s to import: only where it is used

    ra = np.asarray(stats.rankdata(a, axis=-1), dtype=np.float64)
    rb = np.asarray(stats.rankdata(b, axis=-1), dtype=np.float64)
    return rowwise_pearson(ra, rb)


@dataclass(frozen=True, slots=True)
class Correlations:
    """The three correlations of x and y with their Fisher-z intervals and p-values."""

    spearman: float
    spearman_ci: Interval
    kendall: float
    kendall_ci: Interval
    pearson: float
    pearson_ci: Interval
    pearson_p: float
    kendall_p: float


def correlations(x: FloatArray, y: FloatArray, level: float) -> tuple[Correlations, list[str]]:
    """Spearman (Bonett–Wright), Kendall (Fieller) and Pearson (Fisher) with flags.

    Notes:
        NaN (flagged) when x or y is constant; NaN intervals (flagged) at |r| = 1. Spearman
        and Kendall are exactly ±1 when the two rankings are identical or reversed (mid-ranks,
        ties included), which is decided on the ranks, not on scipy's rounded statistic;
        Pearson r counts as ±1 within `PERFECT_TOLERANCE` (docs/design/validity.md).
    """
    from scipy import stats  # about 1 s to import: only where it is used

    n = x.size
    constant = [name for name, v in (("x", x), ("y", y)) if np.ptp(v) == 0.0]
    if constant:
        nan = math.nan
        flag = f"{' and '.join(constant)} constant across these models: correlations undefined"
        return Correlations(nan, NAN_INTERVAL, nan, NAN_INTERVAL, nan, NAN_INTERVAL, nan,
                             nan), [flag]  # fmt: skip
    rs = float(stats.spearmanr(x, y).statistic)
    kt = stats.kendalltau(x, y)
    pr = stats.pearsonr(x, y)
    r = float(pr.statistic)
    tau = float(kt.statistic)
    rank_x, rank_y = stats.rankdata(x), stats.rankdata(y)
    if np.array_equal(rank_x, rank_y):  # one ordering: both rank correlations are exactly 1
        rs = tau = 1.0
    elif np.array_equal(rank_x, n + 1.0 - rank_y):  # reversed: exactly −1
        rs = tau = -1.0
    out = Correlations(
        spearman=rs,
        spearman_ci=fisher_interval(rs, spearman_se(rs, n), level),
        kendall=tau,
        kendall_ci=fisher_interval(tau, kendall_se(n), level),
        pearson=r,
        pearson_ci=fisher_interval(r, pearson_se(n), level),
        pearson_p=float(pr.pvalue),
        kendall_p=float(kt.pvalue),
    )
    perfect = [name for name, v in (("Spearman", rs), ("Kendall", tau), ("Pearson", r))
               if is_perfect(v)]  # fmt: skip
    flags = []
    if perfect:
        flags.append(
            f"|{'|, |'.join(perfect)}| = 1 on these {n} models: the Fisher-z interval is "
            "undefined (n/a), and a perfect sample correlation does not mean a perfect "
            "population one"
        )
    return out, flags
