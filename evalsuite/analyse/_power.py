"""Power, minimum detectable effect and sample sizes for paired comparisons.

Two flavours: ``method="t"`` solves the noncentral-t power exactly (the same numbers as
statsmodels ``TTestPower``), ``method="z"`` uses Miller's closed forms
``n = (z_{1−α/2} + z_{1−β})² σ_d²/δ²``. `paired_mde` is the one MDE that `score`, `compare`
and the report show, with its assumptions attached (docs/methods.md, "Power and the MDE").
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, fields
from typing import Any, Literal

import numpy as np
from scipy import optimize, stats

from evalsuite.errors import InsufficientDataError, UsageError

__all__ = [
    "MDE_POWER",
    "Alternative",
    "PairedMde",
    "VarianceComponents",
    "epochs_needed",
    "items_needed",
    "mde",
    "mde_from_se",
    "paired_mde",
    "t_power",
]

Alternative = Literal["two-sided", "larger"]
PowerMethod = Literal["t", "z"]
_NCP_MAX = 1e3
MDE_POWER = 0.8
"""Power at which every MDE the product reports is computed."""
CorrelationSource = Literal["observed", "assumed"]


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


def _check_alpha_power(alpha: float, power: float) -> None:
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
            return float(stats.norm.sf(stats.norm.isf(alpha) - ncp))
        crit = stats.norm.isf(alpha / 2)
        return float(stats.norm.sf(crit - ncp) + stats.norm.cdf(-crit - ncp))
    if alternative == "larger":
        return float(stats.nct.sf(stats.t.isf(alpha, df), df, ncp))
    crit = stats.t.isf(alpha / 2, df)
    # the far tail underflows to NaN for large ncp (scipy's nct); it is 0 to double precision
    lower = float(np.nan_to_num(stats.nct.cdf(-crit, df, abs(ncp)), nan=0.0))
    return float(stats.nct.sf(crit, df, abs(ncp))) + lower


@functools.lru_cache(maxsize=4096)
def _ncp_for_power(df: float, alpha: float, power: float, alternative: Alternative) -> float:
    """Noncentrality δ/SE at which the t-test on `df` reaches `power` (cached by df)."""

    def gap(ncp: float) -> float:
        return t_power(ncp, df, alpha=alpha, alternative=alternative) - power

    high = 1.0
    while gap(high) < 0:
        high *= 2.0
    return float(optimize.brentq(gap, 0.0, high, xtol=1e-12))


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
    _check_alpha_power(alpha, power)
    if not (math.isfinite(se) and se >= 0 and df >= 1):
        return math.nan
    return _ncp_for_power(df, alpha, power, alternative) * se


def _z_sum(alpha: float, power: float, alternative: Alternative) -> float:
    """``z_{1−α/2} + z_{power}`` (``z_{1−α}`` for one-sided), Miller's power multiplier."""
    a = alpha if alternative == "larger" else alpha / 2
    return float(stats.norm.isf(a) + stats.norm.ppf(power))


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
    _check_alpha_power(alpha, power)
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
    _check_alpha_power(alpha, power)
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
    return math.ceil(float(optimize.brentq(gap, 2.0, high, xtol=1e-9)) - 1e-9)


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
    _check_alpha_power(alpha, power)
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
            else (float(optimize.brentq(gap, 1.0, 1e12, xtol=1e-9)) if feasible else math.inf)
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


@dataclass(frozen=True, slots=True)
class PairedMde:
    """A minimum detectable paired difference, with every assumption it rests on.

    The MDE is the true difference (candidate − baseline) that a two-sided paired t-test at
    `alpha` detects with probability `power`, given the spread of the item differences:
    ``Var(d_i) = sd_b² + sd_c² − 2·r·sd_b·sd_c`` with r the correlation of the two models'
    item means, ``SE = √(deff · Var(d_i)/n)`` on `df` degrees of freedom, solved with the
    noncentral t (`mde_from_se`).

    Attributes:
        value: the MDE; NaN when undefined (`reason` says why).
        alpha: two-sided significance level.
        power: probability of detecting a true difference of `value`.
        n_items: paired items.
        df: degrees of freedom of the paired t (items − 1, or clusters − 1).
        correlation: correlation of the two models' item means used for ``Var(d_i)``.
        correlation_source: ``observed`` (two runs at hand) or ``assumed`` (one run).
        true_score_correlation: the assumed correlation of the models' true item scores
            (``assumed`` only; the item-mean correlation is it times the run's reliability).
        sd_baseline: SD of the baseline's item means.
        sd_candidate: SD of the candidate's item means (``assumed``: the baseline's).
        design_effect: clustered over unclustered variance of the mean difference (1: none).
        reason: why the value is undefined, when it is.
    """

    value: float
    alpha: float
    power: float
    n_items: int
    df: float
    correlation: float
    correlation_source: CorrelationSource
    true_score_correlation: float
    sd_baseline: float
    sd_candidate: float
    design_effect: float
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Every field, plus ``description`` (the sentence every output prints)."""
        return {f.name: getattr(self, f.name) for f in fields(self)} | {
            "description": self.describe()
        }

    def describe(self) -> str:
        """The assumption in words, e.g. for a table note or a CLI line."""
        if self.correlation_source == "observed":
            corr = f"observed correlation of the two runs' item means {self.correlation:.2f}"
        else:
            corr = (
                f"assumed: a second model with this run's item variance whose true item scores "
                f"correlate {self.true_score_correlation:g} with this run's (item means "
                f"{self.correlation:.2f})"
            )
        text = (
            f"paired t, two-sided α = {self.alpha:g}, power {self.power:.0%}, "
            f"{self.n_items} items ({self.df:g} df), {corr}"
        )
        if self.design_effect != 1.0 and math.isfinite(self.design_effect):
            text += f", design effect {self.design_effect:.2f}"
        return text + (f"; undefined: {self.reason}" if self.reason else "")


def paired_mde(  # noqa: PLR0913 - every assumption of an MDE is an argument
    *,
    sd_baseline: float,
    sd_candidate: float,
    correlation: float,
    n_items: int,
    df: float,
    correlation_source: CorrelationSource,
    true_score_correlation: float = math.nan,
    design_effect: float = 1.0,
    alpha: float = 0.05,
    power: float = MDE_POWER,
) -> PairedMde:
    """The MDE of a paired comparison from the two runs' item-mean SDs and their correlation.

    One formula for every output: `compare` passes the observed SDs and correlation (then the
    value equals `mde_from_se` at the comparison's own SE); `score` and the report's run
    section pass one run's SD twice and an assumed correlation. The same inputs therefore
    give the same MDE wherever it is shown.

    Args:
        sd_baseline: SD (ddof 1) of the baseline's item means.
        sd_candidate: SD of the candidate's item means.
        correlation: correlation of the two models' item means; may be NaN when one SD is 0
            (the term vanishes then).
        n_items: paired items.
        df: degrees of freedom of the paired t.
        correlation_source: ``observed`` or ``assumed``.
        true_score_correlation: the assumed true-score correlation behind `correlation`.
        design_effect: clustered over unclustered variance of the mean difference.
        alpha: two-sided significance level.
        power: target power.

    Returns:
        The `PairedMde`; its value is NaN (reason given) with fewer than two items, an
        undefined SD or correlation, or fewer than one degree of freedom.

    References:
        Miller (2024), arXiv:2411.00640, power analysis. Cohen (1988), Statistical Power
        Analysis for the Behavioral Sciences, ch. 2 (paired t).
    """
    _check_alpha_power(alpha, power)
    record = functools.partial(
        PairedMde,
        alpha=alpha,
        power=power,
        n_items=n_items,
        df=df,
        correlation=correlation,
        correlation_source=correlation_source,
        true_score_correlation=true_score_correlation,
        sd_baseline=sd_baseline,
        sd_candidate=sd_candidate,
        design_effect=design_effect,
    )
    cross = 0.0 if sd_baseline == 0.0 or sd_candidate == 0.0 else correlation
    var_d = sd_baseline**2 + sd_candidate**2 - 2.0 * cross * sd_baseline * sd_candidate
    if n_items < 2 or not (math.isfinite(var_d) and math.isfinite(design_effect)):
        why = (
            f"{n_items} item(s)"
            if n_items < 2
            else "the item-mean spread or the correlation is undefined"
        )
        return record(value=math.nan, reason=why)
    se = math.sqrt(max(var_d, 0.0) * design_effect / n_items)
    value = mde_from_se(se, df, alpha=alpha, power=power)
    return record(value=value, reason="" if math.isfinite(value) else f"{df:g} df: too few units")
