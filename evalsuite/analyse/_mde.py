"""The one minimum detectable effect `score`, `compare` and the report show (docs/design/mde.md).

`paired_mde` is the formula; `observed_mde` feeds it two runs' item means, `pilot_mde` one
run and an assumed correlation of true item scores. Every result carries its assumptions.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from evalsuite.analyse._intervals import cluster_codes, cluster_variance
from evalsuite.analyse._power import MDE_POWER, _brentq, check_alpha_power, mde_from_se

__all__ = [
    "CorrelationSource",
    "PairedMde",
    "alternative_variance",
    "observed_mde",
    "paired_mde",
    "pilot_mde",
    "solve_shift",
]

CorrelationSource = Literal["observed", "assumed"]


@dataclass(frozen=True, slots=True)
class PairedMde:
    """A minimum detectable paired difference, with every assumption it rests on.

    The MDE is the true difference (candidate − baseline) that a two-sided paired t-test at
    `alpha` detects with probability `power`, given the spread of the item differences:
    ``Var(d_i) = sd_b² + sd_c² − 2·r·sd_b·sd_c`` with r the correlation of the two models'
    item means, ``SE = √(deff · Var(d_i)/n)`` on `df` degrees of freedom, solved with the
    noncentral t (`mde_from_se`). With the runs' means known (`variance` ``alternative``) the
    spread is the one under the alternative: the candidate's true mean is the baseline's
    plus or minus δ, and its item-mean variance moves with the Bernoulli variance
    ``p(1 − p)`` (docs/design/mde.md, "Variance under the alternative").

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
        mean_baseline: the baseline's mean, where the alternative starts (NaN: not used).
        mean_candidate: the candidate's observed mean, whose item-mean variance is scaled.
        variance: ``alternative`` (the spread at the alternative's means) or ``observed``
            (the spread held at the observed one: no means given).
        increase: the MDE of an increase (candidate better); NaN when none within the
            score's range reaches `power`.
        decrease: the same for a decrease; `value` is the larger of the two defined ones, so
            that a difference of ±`value` either way is detected with at least `power`.
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
    mean_baseline: float = math.nan
    mean_candidate: float = math.nan
    variance: Literal["alternative", "observed"] = "observed"
    increase: float = math.nan
    decrease: float = math.nan

    def observed_variance(self) -> float:
        """``Var(d_i)`` of the runs as observed: ``sd_b² + sd_c² − 2·r·sd_b·sd_c``."""
        cross = 0.0 if self.sd_baseline == 0.0 or self.sd_candidate == 0.0 else self.correlation
        return float(
            self.sd_baseline**2
            + self.sd_candidate**2
            - 2.0 * cross * self.sd_baseline * self.sd_candidate
        )

    def variance_at(self, delta: float) -> float:
        """``Var(d_i)`` when the candidate's true mean is the baseline's plus `delta`."""
        return alternative_variance(
            delta,
            sd_baseline=self.sd_baseline,
            sd_candidate=self.sd_candidate,
            correlation=self.correlation,
            mean_baseline=self.mean_baseline,
            mean_candidate=self.mean_candidate,
        )

    def to_dict(self) -> dict[str, Any]:
        """Every field, plus ``description`` (the sentence every output prints)."""
        return {f.name: getattr(self, f.name) for f in fields(self)} | {
            "description": self.describe()
        }

    def describe(self) -> str:
        """The assumption in words, e.g. for a table note or a CLI line."""
        # a correlation is undefined when a run's item means do not vary: never "nan"
        r = f"{self.correlation:.2f}" if math.isfinite(self.correlation) else "undefined"
        if self.correlation_source == "observed":
            corr = f"observed correlation of the two runs' item means {r}"
        else:
            corr = (
                f"assumed: a second model with this run's item variance whose true item scores "
                f"correlate {self.true_score_correlation:g} with this run's (item means {r})"
            )
        text = (
            f"paired t, two-sided α = {self.alpha:g}, power {self.power:.0%}, "
            f"{self.n_items} items ({self.df:g} df), {corr}"
        )
        if self.design_effect != 1.0 and math.isfinite(self.design_effect):
            text += f", design effect {self.design_effect:.2f}"
        if self.variance == "alternative":
            text += (
                f", item-mean variance at the alternative's means (baseline "
                f"{self.mean_baseline:.3f} against baseline ± δ)"
            )
            for name, v in (("increase", self.increase), ("decrease", self.decrease)):
                if not math.isfinite(v) and math.isfinite(self.value):
                    text += f"; no {name} within [0, 1] reaches power {self.power:.0%}"
        return text + (f"; undefined: {self.reason}" if self.reason else "")


_NO_SPREAD = 1e-12
"""Variance of the differences, relative to the runs' item-mean variances, below which the
differences have no spread (the rest is floating-point rounding of ``sd² + sd² − 2·r·sd·sd``)."""


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
    mean_baseline: float = math.nan,
    mean_candidate: float = math.nan,
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
        mean_baseline: the baseline's mean score; with `mean_candidate`, the variance of the
            differences is taken under the alternative (a shift of ±δ from the baseline's
            mean moves the candidate's item-mean variance with ``p(1 − p)``), else it is held
            at the observed one.
        mean_candidate: the candidate's observed mean score.

    Returns:
        The `PairedMde`; its value is NaN (reason given) with fewer than two items, an
        undefined SD or correlation, no spread of the differences (every item mean equal in
        both runs), or fewer than one degree of freedom.

    References:
        Miller (2024), arXiv:2411.00640, power analysis. Cohen (1988), Statistical Power
        Analysis for the Behavioral Sciences, ch. 2 (paired t).
    """
    check_alpha_power(alpha, power)
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
    if var_d <= _NO_SPREAD * (sd_baseline**2 + sd_candidate**2):
        # no spread of the differences (up to rounding: r = 1 - 1e-16 for identical runs): an
        # MDE of 0 would say any difference is detectable, where the exact test over n
        # identical differences cannot go below p = 2 * 0.5^n (docs/methods.md, section 6,
        # "Zero variance")
        return record(
            value=math.nan,
            reason="the item means have no spread: no variance to base a detectable difference on",
        )
    if math.isfinite(mean_baseline) and math.isfinite(mean_candidate):
        return _under_alternative(
            record,
            sd_baseline=sd_baseline,
            sd_candidate=sd_candidate,
            correlation=cross,
            mean_baseline=mean_baseline,
            mean_candidate=mean_candidate,
            scale=design_effect / n_items,
            ncp=mde_from_se(1.0, df, alpha=alpha, power=power),
        )
    se = math.sqrt(var_d * design_effect / n_items)
    value = mde_from_se(se, df, alpha=alpha, power=power)
    return record(value=value, reason="" if math.isfinite(value) else f"{df:g} df: too few units")


def _bernoulli(p: float) -> float:
    return p * (1.0 - p)


def alternative_variance(
    delta: float,
    *,
    sd_baseline: float,
    sd_candidate: float,
    correlation: float,
    mean_baseline: float,
    mean_candidate: float,
) -> float:
    """``Var(d_i)`` when the candidate's true mean is ``mean_baseline + delta`` (signed).

    The baseline is held at its observed mean and spread; the candidate's item-mean variance
    is ``k·p(1 − p)`` at its mean, with ``k = sd_c²/(p̂_c(1 − p̂_c))`` its own observed
    dispersion (the baseline's, and no correlation, when the candidate's item means do not
    vary). The observed correlation of the item means is kept. Under a beta-binomial model
    of the item means with a fixed intra-item correlation their variance is exactly
    proportional to ``p(1 − p)``. NaN when there is no spread to scale.
    """
    own = _bernoulli(mean_candidate)
    if own > 0.0 and sd_candidate > 0.0:
        k = sd_candidate**2 / own
        r = correlation if sd_baseline > 0.0 else 0.0
    elif _bernoulli(mean_baseline) > 0.0 and sd_baseline > 0.0:
        k, r = sd_baseline**2 / _bernoulli(mean_baseline), 0.0
    else:
        return math.nan
    sd_c = math.sqrt(k * _bernoulli(mean_baseline + delta))
    return max(sd_baseline**2 + sd_c**2 - 2.0 * r * sd_baseline * sd_c, 0.0)


def solve_shift(
    se_at: Callable[[float], float], ncp: float, room: tuple[float, float]
) -> tuple[float, float]:
    """The increase and the decrease δ with ``δ = ncp · se_at(±δ)`` (NaN where none fits).

    `room` is how far the mean can move up and down inside [0, 1]; a direction in which no
    difference within it reaches the power is NaN.
    """

    def gap(delta: float, sign: float) -> float:
        return delta - ncp * se_at(sign * delta)

    def solve(sign: float, limit: float) -> float:
        low = min(1e-12, limit / 2.0)
        if limit <= 0.0 or not gap(limit, sign) >= 0.0:
            return math.nan
        if gap(low, sign) >= 0.0:
            return low
        return float(_brentq()(gap, low, limit, args=(sign,), xtol=1e-12))

    return solve(1.0, room[0]), solve(-1.0, room[1])


def _under_alternative(  # noqa: PLR0913 - the inputs of Var(d_i) at the alternative
    record: functools.partial[PairedMde],
    *,
    sd_baseline: float,
    sd_candidate: float,
    correlation: float,
    mean_baseline: float,
    mean_candidate: float,
    scale: float,
    ncp: float,
) -> PairedMde:
    """Solve ``δ = ncp · √(scale · Var(d_i; ±δ))`` (`alternative_variance`) both ways."""
    common = functools.partial(
        record,
        mean_baseline=mean_baseline,
        mean_candidate=mean_candidate,
        variance="alternative",
    )
    variance = functools.partial(
        alternative_variance,
        sd_baseline=sd_baseline,
        sd_candidate=sd_candidate,
        correlation=correlation,
        mean_baseline=mean_baseline,
        mean_candidate=mean_candidate,
    )
    if not (math.isfinite(variance(0.0)) and math.isfinite(ncp)):
        why = "too few units" if not math.isfinite(ncp) else "no item-mean spread to scale"
        return common(value=math.nan, reason=why)
    up, down = solve_shift(
        lambda d: math.sqrt(variance(d) * scale), ncp, (1.0 - mean_baseline, mean_baseline)
    )
    found = [v for v in (up, down) if math.isfinite(v)]
    if not found:
        return common(
            value=math.nan,
            increase=up,
            decrease=down,
            reason="no difference within [0, 1] is detected with this power",
        )
    return common(value=max(found), increase=up, decrease=down)


def observed_mde(
    a: npt.NDArray[np.float64],
    b: npt.NDArray[np.float64],
    clusters: npt.ArrayLike | None,
    df: float,
    alpha: float,
) -> PairedMde:
    """`paired_mde` from the two runs' observed item means (the comparison's own MDE).

    ``sd_a² + sd_b² − 2·r·sd_a·sd_b`` is the sample variance of the differences, and the
    design effect is the clustered over the unclustered variance of their mean. The value is
    solved with that variance taken under the alternative (`paired_mde` with the runs'
    means): at the observed spread it would be the MDE at the comparison's own SE, which has
    less power than claimed near 0 or 1 (docs/design/mde.md).
    """
    n = len(a)
    sd_a = float(np.std(a, ddof=1)) if n >= 2 else math.nan
    sd_b = float(np.std(b, ddof=1)) if n >= 2 else math.nan
    r = float(np.corrcoef(a, b)[0, 1]) if n >= 2 and sd_a > 0 and sd_b > 0 else math.nan
    d = b - a
    deff = 1.0
    if clusters is not None and n >= 2:
        v_cl, _ = cluster_variance(d, cluster_codes(clusters, n))
        v_iid = float(np.var(d, ddof=1)) / n
        deff = v_cl / v_iid if v_iid > 0 and math.isfinite(v_cl) else 1.0
    return paired_mde(
        sd_baseline=sd_a,
        sd_candidate=sd_b,
        correlation=r,
        n_items=n,
        df=df,
        correlation_source="observed",
        design_effect=deff,
        alpha=alpha,
        power=MDE_POWER,
        mean_baseline=float(np.mean(a)) if n else math.nan,
        mean_candidate=float(np.mean(b)) if n else math.nan,
    )


def pilot_mde(
    item_means: npt.NDArray[np.float64],
    var_between: float,
    *,
    n_units: int,
    design_effect: float,
    model_corr: float,
    alpha: float,
) -> PairedMde:
    """The MDE of comparing this run with a second model, from one run (`paired_mde`).

    The second model is assumed to have this run's item-mean spread ``s`` and true item
    scores correlating `model_corr` with this run's. Attempt noise is independent between
    models, so their item means correlate ``r = model_corr · rel`` with
    ``rel = Var(x)/s²`` the share of the item-mean variance that is true-score variance (the
    reliability of the K-epoch item mean, ICC(1,K)). Then ``Var(d_i) = 2s²(1 − r)``, which is
    Miller's ``ω² + (σ_A² + σ_B²)/K`` with ``ω² = 2·Var(x)(1 − model_corr)`` and
    ``σ_A² = σ_B² = E[σ²]`` whenever epochs are balanced. `compare` uses the same formula with
    the observed SDs and correlation, so ``score --model-corr ρ`` and `compare` agree when
    the second run has this run's spread and their observed item-mean correlation is
    ``ρ · rel``. The second model's mean is this run's ± δ, its variance taken there
    (`paired_mde`, variance under the alternative).
    """
    n = len(item_means)
    sd = float(np.std(item_means, ddof=1)) if n >= 2 else math.nan
    rel = min(1.0, var_between / sd**2) if sd > 0 and math.isfinite(var_between) else math.nan
    r = model_corr * rel if math.isfinite(rel) else (0.0 if sd == 0 else math.nan)
    return paired_mde(
        sd_baseline=sd,
        sd_candidate=sd,
        correlation=r,
        n_items=n,
        df=float(n_units - 1),
        correlation_source="assumed",
        true_score_correlation=model_corr,
        design_effect=design_effect,
        alpha=alpha,
        mean_baseline=float(np.mean(item_means)) if n else math.nan,
        mean_candidate=float(np.mean(item_means)) if n else math.nan,
    )
