"""Power, minimum detectable effect and sample sizes for paired comparisons.

Two flavours: ``method="t"`` solves the noncentral-t power exactly (the same numbers as
statsmodels ``TTestPower``), ``method="z"`` uses Miller's closed forms
``n = (z_{1−α/2} + z_{1−β})² σ_d²/δ²``. The MDE that `score`, `compare` and the report show,
with its assumptions attached, is built on `mde_from_se` in `_mde`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from evalsuite.analyse import _dist
from evalsuite.errors import InsufficientDataError, UsageError

__all__ = [
    "MDE_POWER",
    "Alternative",
    "VarianceComponents",
    "check_alpha_power",
    "epochs_needed",
    "items_needed",
    "mde",
    "mde_from_se",
    "t_power",
]

Alternative = Literal["two-sided", "larger"]
PowerMethod = Literal["t", "z"]
_NCP_MAX = 1e3
MDE_POWER = 0.8
"""Power at which every MDE the product reports is computed."""


@dataclass(frozen=True, slots=True)
class VarianceComponents:
    """The pilot variance components of a paired comparison (Miller 2024).

    Attributes:
        omega2: ``Var(x_A − x_B)``, variance across items of the true score difference
            (model disagreement; extra epochs cannot reduce it).
        sigma2_baseline: mean within-item attempt variance of the baseline, ``E[σ_A²]``.
        sigma2_candidate: the same for the candidate, ``E[σ_B²]``.
        design_effect: variance inflation from clustering, ``Var_cluster/Var_iid`` (1: none).
    """

    omega2: float
    sigma2_baseline: float
    sigma2_candidate: float
    design_effect: float = 1.0

    def __post_init__(self) -> None:
        for name in ("omega2", "sigma2_baseline", "sigma2_candidate"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise UsageError(f"'{name}' must be a finite number >= 0 (got {value!r})")
        if not (math.isfinite(self.design_effect) and self.design_effect > 0):
            raise UsageError(f"'design_effect' must be > 0 (got {self.design_effect!r})")

    def sd_diff(self, epochs: float) -> float:
        """SD of one item's paired difference of K-epoch means: √(ω² + (σ_A²+σ_B²)/K)."""
        _positive("epochs", epochs)
        return math.sqrt(self.omega2 + (self.sigma2_baseline + self.sigma2_candidate) / epochs)


def _positive(name: str, value: float) -> None:
    if not (math.isfinite(value) and value > 0):
        raise UsageError(f"'{name}' must be a finite number > 0 (got {value!r})")


def check_alpha_power(alpha: float, power: float) -> None:
    """Raise `UsageError` unless 0 < alpha < 1 and alpha < power < 1."""
    if not 0 < alpha < 1:
        raise UsageError(f"'alpha' must be strictly between 0 and 1 (got {alpha!r})")
    if not alpha < power < 1:
        raise UsageError(f"'power' must be between alpha and 1 (got {power!r})")


def t_power(
    ncp: float, df: float, *, alpha: float, alternative: Alternative = "two-sided"
) -> float:
    """Power of a one-sample (paired) t-test with noncentrality ``ncp = δ/SE`` on `df`.

    ``df = inf`` gives the normal (z) test. Two-sided: ``P(T > t_c) + P(T < −t_c)`` with
    ``t_c = t_{1−α/2}``; ``larger``: ``P(T > t_{1−α})``, T noncentral t.
    """
    if math.isinf(df):
        if alternative == "larger":
            return _dist.norm_sf(_dist.norm_isf(alpha) - ncp)
        crit = _dist.norm_isf(alpha / 2)
        return _dist.norm_sf(crit - ncp) + _dist.norm_cdf(-crit - ncp)
    if alternative == "larger":
        return _dist.nct_sf(_dist.t_isf(alpha, df), df, ncp)
    crit = _dist.t_isf(alpha / 2, df)
    # the far tail underflows to NaN for large ncp (scipy's nct); it is 0 to double precision
    lower = float(np.nan_to_num(_dist.nct_cdf(-crit, df, abs(ncp)), nan=0.0))
    return _dist.nct_sf(crit, df, abs(ncp)) + lower


def _brentq() -> Any:
    """``scipy.optimize.brentq``, imported when a root is first sought (not at start-up)."""
    from scipy.optimize import brentq

    return brentq


@functools.lru_cache(maxsize=4096)
def _ncp_for_power(df: float, alpha: float, power: float, alternative: Alternative) -> float:
    """Noncentrality δ/SE at which the t-test on `df` reaches `power` (cached by df)."""

    def gap(ncp: float) -> float:
        return t_power(ncp, df, alpha=alpha, alternative=alternative) - power

    high = 1.0
    while gap(high) < 0:
        high *= 2.0
    return float(_brentq()(gap, 0.0, high, xtol=1e-12))


def mde_from_se(
    se: float,
    df: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: Alternative = "two-sided",
) -> float:
    """Smallest true difference detected with probability `power` by a t-test with this SE.

    Solves ``t_power(δ/se, df) = power`` for δ (noncentral t, so at ``se = sd_d/√n`` and
    ``df = n − 1`` it equals statsmodels ``TTestPower().solve_power(nobs=n, ...)·sd_d``).
    NaN when `se` is not finite or ``df < 1`` (never 0).
    """
    check_alpha_power(alpha, power)
    if not (math.isfinite(se) and se >= 0 and df >= 1):
        return math.nan
    return _ncp_for_power(df, alpha, power, alternative) * se


def _z_sum(alpha: float, power: float, alternative: Alternative) -> float:
    """``z_{1−α/2} + z_{power}`` (``z_{1−α}`` for one-sided), Miller's power multiplier."""
    a = alpha if alternative == "larger" else alpha / 2
    return _dist.norm_isf(a) + _dist.norm_ppf(power)


def mde(
    components: VarianceComponents,
    *,
    n_items: int,
    epochs: float,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: Alternative = "two-sided",
    method: PowerMethod = "t",
) -> float:
    """Minimum detectable paired difference at n items and K epochs per model.

    ``MDE = (z_{1−α/2} + z_{1−β}) · √(deff · (ω² + (σ_A²+σ_B²)/K)/n)`` (``method="z"``), or
    the noncentral-t solution on ``n − 1`` df (``method="t"``, the default).

    Raises:
        UsageError: ``n_items < 2`` or a non-positive `epochs`.

    References:
        Miller (2024), arXiv:2411.00640, power analysis. Cohen (1988), ch. 2.
    """
    check_alpha_power(alpha, power)
    if n_items < 2:
        raise UsageError(f"'n_items' must be >= 2 (got {n_items})")
    se = components.sd_diff(epochs) * math.sqrt(components.design_effect / n_items)
    if method == "z":
        return _z_sum(alpha, power, alternative) * se
    return mde_from_se(se, n_items - 1, alpha=alpha, power=power, alternative=alternative)


def items_needed(
    components: VarianceComponents,
    *,
    delta: float,
    epochs: float,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: Alternative = "two-sided",
    method: PowerMethod = "t",
) -> int:
    """Items needed to detect a true paired difference `delta` with probability `power`.

    ``n = (z_{1−α/2} + z_{1−β})² · deff · (ω² + (σ_A²+σ_B²)/K)/δ²`` (``method="z"``), or the
    smallest n whose noncentral-t power on n − 1 df reaches `power` (``method="t"``; equals
    ``ceil`` of statsmodels ``TTestPower().solve_power(effect_size=δ/sd_d)`` times deff).
    For a non-inferiority gate pass ``delta = δ_true + Δ`` and ``alternative="larger"``.

    Raises:
        UsageError: `delta` not positive, or no variance at all (any n would do).
    """
    check_alpha_power(alpha, power)
    _positive("delta", delta)
    var = components.sd_diff(epochs) ** 2 * components.design_effect
    if var <= 0:
        raise UsageError("all variance components are 0: the difference is known exactly")
    if method == "z":
        return max(2, math.ceil(_z_sum(alpha, power, alternative) ** 2 * var / delta**2 - 1e-9))

    def gap(n: float) -> float:
        ncp = delta / math.sqrt(var / n)
        return t_power(ncp, n - 1, alpha=alpha, alternative=alternative) - power

    high = 4.0
    while gap(high) < 0:
        high *= 2
    if gap(2.0) >= 0:
        return 2
    return math.ceil(float(_brentq()(gap, 2.0, high, xtol=1e-9)) - 1e-9)


def epochs_needed(
    components: VarianceComponents,
    *,
    delta: float,
    n_items: int,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: Alternative = "two-sided",
    method: PowerMethod = "t",
) -> int:
    """Epochs per model needed to detect `delta` at `n_items` items (Miller's formula solved for K).

    ``K = (σ_A²+σ_B²)/(nδ²/(deff·(z_{1−α/2}+z_{1−β})²) − ω²)`` (``method="z"``), or the
    smallest K whose noncentral-t power reaches `power` (``method="t"``).

    Raises:
        InsufficientDataError: no number of epochs is enough, because model disagreement ω²
            alone exceeds what n items can resolve; the message gives the items needed as
            K → ∞. Add items: extra epochs cannot reduce ω².
        UsageError: bad arguments.
    """
    check_alpha_power(alpha, power)
    _positive("delta", delta)
    if n_items < 2:
        raise UsageError(f"'n_items' must be >= 2 (got {n_items})")
    within = components.sigma2_baseline + components.sigma2_candidate
    deff = components.design_effect
    if method == "z":
        budget = n_items * delta**2 / (deff * _z_sum(alpha, power, alternative) ** 2)
        feasible = budget > components.omega2
        k = within / (budget - components.omega2) if feasible else math.inf
    else:

        def gap(k: float) -> float:
            se = math.sqrt(deff * (components.omega2 + within / k) / n_items)
            return (
                t_power(
                    delta / se if se > 0 else _NCP_MAX,
                    n_items - 1,
                    alpha=alpha,
                    alternative=alternative,
                )
                - power
            )

        feasible = gap(1e12) > 0
        k = (
            1.0
            if gap(1.0) >= 0
            else (float(_brentq()(gap, 1.0, 1e12, xtol=1e-9)) if feasible else math.inf)
        )
    if not feasible:
        as_k_infinite = VarianceComponents(components.omega2, 0.0, 0.0, deff)
        need = (
            items_needed(
                as_k_infinite,
                delta=delta,
                epochs=1,
                alpha=alpha,
                power=power,
                alternative=alternative,
                method=method,
            )
            if components.omega2 > 0
            else n_items
        )
        raise InsufficientDataError(
            f"no number of epochs detects delta={delta:g} with {n_items} items: model "
            f"disagreement omega2={components.omega2:g} alone needs at least {need} items. "
            "Add items; epochs only reduce the within-item term."
        )
    return max(1, math.ceil(k - 1e-9))
