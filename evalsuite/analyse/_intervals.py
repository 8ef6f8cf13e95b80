"""Interval primitives and the one place that chooses an interval method.

Everything here works on item-level numbers: item means (or per-item pass^k values), never on
pooled attempts. `choose_interval` is the single dispatch point of the interval decision; see
``docs/design/intervals.md`` (the decision and its calibration) and ``docs/methods.md``
(formulas and sources).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from evalsuite.analyse import _dist
from evalsuite.analyse._table import Interval, IntervalFields
from evalsuite.errors import UsageError

__all__ = [
    "EDGE_DISTANCE",
    "MIN_UNITS_FOR_T",
    "Estimate",
    "IntervalMethod",
    "Moments",
    "check_level",
    "choose_interval",
    "clopper_pearson_interval",
    "cluster_codes",
    "cluster_variance",
    "korn_graubard_trials",
    "t_interval",
    "wilson_neff_interval",
]

IntervalMethod = Literal["auto", "wilson_neff", "t", "switch", "bootstrap"]
"""``auto`` is the product default (currently ``wilson_neff``); see `choose_interval`."""

MIN_UNITS_FOR_T = 50
"""``switch``: below this many units (clusters, or items when unclustered), Wilson."""
EDGE_DISTANCE = 0.1
"""``switch``: when the mean is within this distance of 0 or 1, Wilson."""

_T_METHODS = frozenset({"t", "cluster_t", "stratified_t"})
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]
BootFn = Callable[[float], tuple[Interval, float]]


def check_level(level: float) -> None:
    """Check a confidence level: raise `UsageError` unless 0 < level < 1 (e.g. 0.95)."""
    if not 0.0 < level < 1.0:
        raise UsageError(f"'level' must be strictly between 0 and 1 (got {level!r})")


def _nan_interval() -> Interval:
    return Interval(math.nan, math.nan)


def t_interval(
    mean: float, se: float, df: float, level: float, bounds: tuple[float, float] = (0.0, 1.0)
) -> Interval:
    """``mean ± t_{df, (1+level)/2} · se``, clipped to `bounds`.

    Notes:
        Undefined (NaN ends) when `se` is not finite or ``df < 1``. ``df = inf`` gives the
        normal interval.
    """
    if not (math.isfinite(se) and df >= 1):
        return _nan_interval()
    q = _dist.t_ppf(0.5 + level / 2.0, df)
    return Interval(max(bounds[0], mean - q * se), min(bounds[1], mean + q * se))


def korn_graubard_trials(n_eff: float, n_trials: float, df: float, level: float) -> float:
    """The effective sample size adjusted for the variance's degrees of freedom.

    ``n_eff · (t_{N−1} / t_{df})²`` with both quantiles at ``(1 + level)/2``: Korn and
    Graubard's (1998) correction, as in R's ``survey::svyciprop(method = "beta")``
    (``n.eff * (qt(alpha/2, nrow(design) - 1) / qt(alpha/2, degf(design)))^2``). ``N`` is the
    number of observations behind the estimate (`n_trials`), ``df`` the design degrees of
    freedom (clusters − 1, or Σ_h (C_h − 1)). With one observation per unit (``df = N − 1``)
    the factor is 1; with fewer units than observations (clusters, or items with several
    epochs) it is below 1 and widens the interval.

    Args:
        n_eff: the effective sample size ``p(1−p)/Var``.
        n_trials: the number of observations N (``inf``: the normal reference ``z``).
        df: degrees of freedom of the variance (``inf``: no adjustment).
        level: confidence level.

    Returns:
        The adjusted number of trials; NaN when ``df < 1``.
    """
    if not math.isfinite(df):
        return n_eff
    if df < 1:
        return math.nan
    q = 0.5 + level / 2.0
    reference = _dist.norm_ppf(q) if not math.isfinite(n_trials) else _dist.t_ppf(q, n_trials - 1)
    return n_eff * (reference / _dist.t_ppf(q, df)) ** 2


def wilson_neff_interval(
    mean: float, se: float, df: float, level: float, n_trials: float
) -> tuple[Interval, float]:
    """Wilson interval with the design-effect (effective) sample size; returns it and n_eff.

    ``n_eff = p(1−p)/se²`` turns a design-based variance (clustered, stratified, K epochs)
    into the number of independent Bernoulli trials with the same variance, capped at the
    `n_trials` observations there are (a variance estimated small by chance must not claim
    more information than the data hold). The Wilson score formula is then applied to
    `korn_graubard_trials` (``n_eff · (t_{N−1}/t_df)²``), so that with few independent units
    the interval is wider.

    Args:
        mean: the estimate p.
        se: its design-based standard error.
        df: degrees of freedom of ``se²``.
        level: confidence level.
        n_trials: observations N behind the estimate: usable attempts for a score, one per
            value when the values are not built from attempts.

    Notes:
        n_eff counts Bernoulli trials (attempts), not items: with K epochs per item it can
        exceed the number of items, up to N. Requires ``0 < p < 1`` and ``se > 0``;
        otherwise NaN ends (`choose_interval` handles those data with Clopper–Pearson).

    References:
        Wilson (1927), JASA 22:209. Korn & Graubard (1998), Survey Methodology 24:193.
        Kish (1965), Survey Sampling (the design effect). docs/methods.md, "Intervals".
    """
    if not (0.0 < mean < 1.0 and math.isfinite(se) and se > 0.0):
        return _nan_interval(), math.nan
    n_eff = min(mean * (1.0 - mean) / se**2, n_trials)
    n = korn_graubard_trials(n_eff, n_trials, df, level)
    if not n > 0:
        return _nan_interval(), n_eff
    z = _dist.norm_ppf(0.5 + level / 2.0)
    denom = 1.0 + z * z / n
    centre = (mean + z * z / (2.0 * n)) / denom
    half = z * math.sqrt(mean * (1.0 - mean) / n + z * z / (4.0 * n * n)) / denom
    return Interval(max(0.0, centre - half), min(1.0, centre + half)), n_eff


def clopper_pearson_interval(successes: float, trials: float, level: float) -> Interval:
    """Clopper–Pearson ("exact") interval; `trials` may be fractional (an effective n).

    References:
        Clopper & Pearson (1934), Biometrika 26:404.
    """
    if not trials > 0:
        return _nan_interval()
    from scipy import stats  # the beta quantiles (about 1 s to import: only when needed)

    alpha = 1.0 - level
    x = min(max(successes, 0.0), trials)
    low = 0.0 if x <= 0 else float(stats.beta.ppf(alpha / 2.0, x, trials - x + 1.0))
    high = 1.0 if x >= trials else float(stats.beta.ppf(1.0 - alpha / 2.0, x + 1.0, trials - x))
    return Interval(low, high)


def cluster_codes(clusters: npt.ArrayLike | None, n: int) -> IntArray:
    """Integer codes 0..C-1 of `clusters` (None: every value its own cluster)."""
    if clusters is None:
        return np.arange(n, dtype=np.intp)
    codes, _ = pd.factorize(pd.Series(np.asarray(clusters, dtype=object)), sort=True)
    if len(codes) != n:
        raise UsageError(f"'clusters' must have one entry per value ({len(codes)} != {n})")
    return np.asarray(codes, dtype=np.intp)


def cluster_variance(values: FloatArray, codes: IntArray) -> tuple[float, int]:
    """Cluster-robust variance of the mean of `values`, and the number of clusters C.

    ``Var = C/(C-1) · (1/n²) · Σ_c (Σ_{i∈c} (v_i − v̄))²`` (Miller 2024, App. A, with the
    C/(C−1) factor of Inspect AI and statsmodels' ``cov_type="cluster"``). With every value
    its own cluster this is exactly ``s²/n``. Undefined (NaN) for fewer than two clusters.

    References:
        Miller (2024), arXiv:2411.00640. Cameron & Miller (2015), J. Human Resources 50:317.
    """
    n = len(values)
    if n == 0:
        return math.nan, 0
    resid = values - values.mean()
    totals = np.bincount(codes, weights=resid)
    n_clusters = int(np.count_nonzero(np.bincount(codes)))
    if n_clusters < 2:
        return math.nan, n_clusters
    var = n_clusters / (n_clusters - 1) * float(np.sum(totals**2)) / n**2
    return var, n_clusters


@dataclass(frozen=True, slots=True)
class Moments:
    """A mean and its design-based variance, before an interval method is chosen."""

    mean: float
    var: float  # variance of the mean; NaN when undefined
    df: float  # degrees of freedom of `var`
    units: int  # independent sampling units: clusters (or items when unclustered)
    n_items: int
    n_excluded: int
    variance: str  # "iid", "cluster" or "stratified"
    constant: bool  # every item value identical
    cp_trials: float  # trials for the Clopper–Pearson fallback (units, or Kish n)
    n_trials: float  # observations behind the mean (usable attempts), for n_eff and its df


@dataclass(frozen=True, slots=True)
class Estimate(IntervalFields):
    """A mean score with its standard error and interval.

    Attributes:
        mean: the estimate (mean of item means, or a weighted mean of stratum means).
        se: design-based standard error (clustered or stratified); NaN when undefined.
        ci: the interval at `level` from `method`.
        level: confidence level of `ci`.
        n_items: items with at least one non-excluded epoch.
        n_clusters: independent units used for the variance (items when unclustered).
        df: degrees of freedom of the variance (C−1, n−1 or Σ(C_h−1)).
        n_eff: effective number of Bernoulli trials ``p(1−p)/se²``, capped at `n_trials`
            (Clopper–Pearson: the trials used). A count of attempts, not of items.
        method: ``t``, ``cluster_t``, ``stratified_t``, ``wilson_neff``, ``clopper_pearson``,
            ``bootstrap_bca`` or ``undefined``.
        variance: ``iid``, ``cluster`` or ``stratified``: how `se` was computed.
        n_excluded: items dropped because every epoch was a harness error.
        note: why this method was chosen, or why the estimate is undefined.
        n_trials: observations behind the mean (usable attempts, or one per value); the
            Korn–Graubard reference degrees of freedom are ``n_trials − 1``.
    """

    mean: float
    se: float
    ci: Interval
    level: float
    n_items: int
    n_clusters: int
    df: float
    n_eff: float
    method: str
    variance: str
    n_excluded: int
    note: str
    n_trials: float = math.nan

    def conf_int(self, level: float = 0.95) -> Interval:
        """The interval at another `level`, by the same method.

        Raises:
            UsageError: the method is ``bootstrap_bca`` and `level` differs from the level it
                was computed at (re-run the analysis at that level).
        """
        check_level(level)
        if self.method in _T_METHODS:
            return t_interval(self.mean, self.se, self.df, level)
        if self.method == "wilson_neff":
            return wilson_neff_interval(self.mean, self.se, self.df, level, self.n_trials)[0]
        if self.method == "clopper_pearson":
            return clopper_pearson_interval(self.mean * self.n_eff, self.n_eff, level)
        if self.method == "bootstrap_bca":
            if math.isclose(level, self.level):
                return self.ci
            raise UsageError(
                f"a bootstrap interval was computed at level {self.level}; re-run the "
                f"analysis with level={level} instead of asking conf_int for it"
            )
        return _nan_interval()


def _make(
    m: Moments, level: float, se: float, ci: Interval, n_eff: float, method: str, note: str
) -> Estimate:
    return Estimate(
        m.mean,
        se,
        ci,
        level,
        m.n_items,
        m.units,
        m.df,
        n_eff,
        method,
        m.variance,
        m.n_excluded,
        note,
        m.n_trials,
    )


def _undefined(m: Moments, level: float, why: str) -> Estimate:
    """A NaN interval with the reason; the SE is kept when it is defined and positive."""
    se = math.sqrt(m.var) if math.isfinite(m.var) and m.var > 0 else math.nan
    return _make(m, level, se, _nan_interval(), math.nan, "undefined", why)


def _switch_rule(m: Moments) -> tuple[bool, str]:
    """The switching rule of thumb: t with ≥ 50 units and a mean in [0.1, 0.9], else Wilson."""
    unit_name = "items" if m.variance == "iid" else "units"
    if m.units < MIN_UNITS_FOR_T:
        return False, f"{m.units} {unit_name} < {MIN_UNITS_FOR_T}"
    if not EDGE_DISTANCE <= m.mean <= 1.0 - EDGE_DISTANCE:
        return False, f"mean {m.mean:.3f} within {EDGE_DISTANCE} of 0 or 1"
    return True, f"{m.units} {unit_name} >= {MIN_UNITS_FOR_T}, mean inside [0.1, 0.9]"


def choose_interval(
    m: Moments, *, level: float, interval: IntervalMethod, boot: BootFn | None = None
) -> Estimate:
    """Pick and compute the interval for `m` (docs/design/intervals.md).

    Rules, in order:

    1. No items: undefined (NaN interval, reason in ``note``).
    2. Degenerate data (every item value 0, or every one 1): Clopper–Pearson on
       ``m.cp_trials`` independent units (a 0/N or N/N count), never a zero-width interval.
    3. Fewer than two units: undefined.
    4. No estimated variance although the mean is strictly inside (0, 1) (every item value
       equal, or every stratum constant inside itself): Clopper–Pearson on ``m.cp_trials``
       units (the Kish effective n of a weighted mean) with ``mean × trials`` successes. A
       value in [0, 1] has at most the Bernoulli variance p(1−p) for its mean, so the
       binomial interval is the conservative one when the data show no variation at all.
    5. By `interval`:

       * ``auto`` (the default) and ``wilson_neff``: Wilson with the effective n,
         df-adjusted (`wilson_neff_interval`). It uses the same clustered/stratified
         variance as the t interval and converges to it as n_eff grows, but keeps its
         coverage near 0 and 1 and at small n.
       * ``t``: the t interval (``t``, ``cluster_t`` or ``stratified_t``).
       * ``switch``: the common rule of thumb: t with at least `MIN_UNITS_FOR_T` units and a
         mean in [0.1, 0.9], Wilson otherwise. Kept for comparison: switching on the
         estimate over-covers (0.966 at 50 skewed items, tests/analyse/
         test_calibration.py), which is why ``auto`` does not switch.
       * ``bootstrap``: `boot` (a cluster BCa bootstrap); Wilson when it returns NaN.

    Args:
        m: the mean, its variance, and the counts.
        level: confidence level.
        interval: the method family to use.
        boot: ``level -> (interval, se)``; required when `interval` is ``bootstrap``.

    Returns:
        An `Estimate` naming the method used and why.
    """
    check_level(level)
    if m.n_items == 0:
        return _undefined(m, level, "no scored items")
    se = math.sqrt(m.var) if math.isfinite(m.var) else math.nan
    at_edge = m.mean <= 1e-12 or m.mean >= 1.0 - 1e-12
    if m.constant and at_edge:
        ci = clopper_pearson_interval(m.mean * m.cp_trials, m.cp_trials, level)
        note = (
            f"degenerate data (every item {round(m.mean)}): Clopper–Pearson on "
            f"{m.cp_trials:.4g} independent units"
        )
        return _make(m, level, se, ci, m.cp_trials, "clopper_pearson", note)
    if not math.isfinite(m.var):
        return _undefined(m, level, f"{m.units} independent unit(s): variance undefined")
    if m.constant or m.var <= 0.0:
        ci = clopper_pearson_interval(m.mean * m.cp_trials, m.cp_trials, level)
        what = "every item value equal" if m.constant else "every stratum constant inside itself"
        note = (
            f"no variation to estimate a variance from ({what}): Clopper–Pearson on "
            f"{m.cp_trials:.4g} independent units"
        )
        return _make(m, level, se, ci, m.cp_trials, "clopper_pearson", note)
    family: str = interval
    if interval == "auto":
        family, why = "wilson_neff", "auto: Wilson with effective n (df-adjusted)"
    elif interval == "switch":
        use_t, reason = _switch_rule(m)
        family, why = ("t" if use_t else "wilson_neff"), f"switch rule: {reason}"
    else:
        why = f"requested {interval}"
    n_eff = min(m.mean * (1.0 - m.mean) / m.var, m.n_trials)
    if family == "bootstrap":
        if boot is None:
            raise UsageError("interval='bootstrap' needs the item data (use estimate_mean)")
        ci, boot_se = boot(level)
        if math.isfinite(ci.low) and math.isfinite(ci.high):
            note = why + " (cluster BCa, 9999 resamples)"
            return _make(m, level, boot_se, ci, n_eff, "bootstrap_bca", note)
        family, why = "wilson_neff", why + "; BCa undefined on these data, fell back to Wilson"
    if family == "t":
        method = {"iid": "t", "cluster": "cluster_t"}.get(m.variance, "stratified_t")
        return _make(m, level, se, t_interval(m.mean, se, m.df, level), n_eff, method, why)
    ci, n_eff = wilson_neff_interval(m.mean, se, m.df, level, m.n_trials)
    return _make(m, level, se, ci, n_eff, "wilson_neff", why)
