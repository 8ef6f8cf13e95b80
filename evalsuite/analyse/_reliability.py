"""Reliability of one run: attempt noise against item signal (docs/methods.md, "Reliability")."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import pandas as pd

from evalsuite.analyse import _dist
from evalsuite.analyse._attempts import ItemTable, item_table
from evalsuite.analyse._intervals import check_level, cluster_codes, cluster_variance
from evalsuite.analyse._mde import PairedMde, pilot_mde
from evalsuite.analyse._power import MDE_POWER, VarianceComponents
from evalsuite.analyse._table import Interval
from evalsuite.errors import UsageError

__all__ = ["Reliability", "reliability", "reliability_from_items"]


@dataclass(frozen=True, slots=True)
class Reliability:
    """Variance components, ICCs, flip rate, noise floor, cost-optimal K and a pilot MDE.

    Attributes:
        n_items: items with at least one usable epoch.
        n_attempts: usable attempts (``scored`` and ``limit``).
        epochs: ANOVA mean epochs per item ``K0 = (N − ΣK_i²/N)/(n − 1)`` (= K if balanced).
        var_between: ``Var(x)``, between-item variance of true scores, ``(MSB − MSW)/K0``
            truncated at 0.
        var_within: ``E[σ²]`` = MSW, pooled within-item (attempt) variance.
        icc1: ``(MSB − MSW)/(MSB + (K0 − 1)MSW)``, reliability of a single attempt.
        icc1k: ``(MSB − MSW)/MSB``, reliability of the K-epoch item mean (Spearman–Brown).
        flip_rate: share of items (with ≥ 2 usable epochs) whose epochs do not all agree.
        test_retest: `icc1k` for a single run, or the correlation of item means between
            this run and `retest`; `test_retest_kind` names which.
        test_retest_kind: ``icc1k_single_run`` or ``item_means_retest_r``.
        noise_floor: SD of the difference between the means of two independent runs of the
            same model on the same items: ``√(2·MSW·Σ_i 1/K_i)/n``.
        noise_floor_half_width: ``z_{(1+level)/2} · noise_floor``: two reruns differ by more
            than this with probability 1 − level.
        level: level of `noise_floor_half_width` and `conf_int`.
        k_optimal: Cochran's ``K* = √((E[σ²]/Var(x)) · cost_ratio)``.
        k_recommended: the integer K ≥ 1 next to K* with the smaller cost × variance.
        cost_ratio: ``c_item/c_run``, cost of adding an item over cost of one more epoch.
        mde: pilot paired-comparison MDE at this n and K (power 0.8, two-sided `alpha`):
            `mde_detail` holds it with every assumption (`pilot_mde`).
        components: the same pilot assumption as variance components (for `items_needed`
            and `epochs_needed`): ``ω² = 2·Var(x)·(1 − model_corr)``,
            ``σ_A² = σ_B² = E[σ²]``, design effect of this run's clusters.
        model_corr: assumed correlation of the two models' true item scores.
        alpha: significance level of `mde`.
        mde_detail: the `PairedMde` behind `mde` (None when not estimable).
        retest_diff: retest mean − this mean over shared items (NaN without a retest).
        ms_between: MSB; ms_within: MSW; df_between: n − 1; df_within: N − n.
        reason: why the figures are undefined, when they are.
    """

    n_items: int
    n_attempts: int
    epochs: float
    var_between: float
    var_within: float
    icc1: float
    icc1k: float
    flip_rate: float
    test_retest: float
    test_retest_kind: str
    noise_floor: float
    noise_floor_half_width: float
    level: float
    k_optimal: float
    k_recommended: int | None
    cost_ratio: float
    mde: float
    components: VarianceComponents | None
    model_corr: float
    alpha: float
    retest_diff: float
    ms_between: float
    ms_within: float
    df_between: int
    df_within: int
    reason: str
    mde_detail: PairedMde | None = None

    def conf_int(self, level: float = 0.95) -> Interval:
        """F-based interval of ICC(1,K), the reliability of the K-epoch item mean.

        ``F = MSB/MSW``; ``[1 − F_{1−α/2}(df_b, df_w)/F, 1 − 1/(F·F_{1−α/2}(df_w, df_b))]``
        (McGraw & Wong 1996, case 1; exact for balanced normal data, approximate for 0/1
        scores and unbalanced K).
        """
        check_level(level)
        if not (self.ms_within > 0 and math.isfinite(self.ms_between) and self.df_within > 0):
            return Interval(math.nan, math.nan)
        from scipy import stats  # the F quantiles (about 1 s to import: only when asked)

        f = self.ms_between / self.ms_within
        q = 0.5 + level / 2
        f_low = f / float(stats.f.ppf(q, self.df_between, self.df_within))
        f_high = f * float(stats.f.ppf(q, self.df_within, self.df_between))
        return Interval(1.0 - 1.0 / f_low, 1.0 - 1.0 / f_high)

    def to_dict(self) -> dict[str, Any]:
        """The ``reliability`` block of ``score --json``: flip_rate, test_retest, noise_floor..."""
        skip = {"components", "mde_detail"}
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in skip}
        c, detail = self.components, self.mde_detail
        assumption: dict[str, Any] = {} if detail is None else detail.to_dict()
        if c is not None:
            assumption |= {
                "omega2": c.omega2,
                "sigma2_baseline": c.sigma2_baseline,
                "sigma2_candidate": c.sigma2_candidate,
                "design_effect": c.design_effect,
            }
        if assumption:
            assumption |= {"model_corr": self.model_corr, "power": MDE_POWER}
        out["mde_assumption"] = assumption or None
        return out

    def to_frame(self) -> pd.DataFrame:
        """One row of the scalar fields."""
        d = self.to_dict()
        d.pop("mde_assumption")
        return pd.DataFrame([d])


def _k_recommended(k_star: float, vb: float, vw: float, cost_ratio: float) -> int | None:
    """The integer K next to K* minimising ``(c_item/c_run + K)·(Var(x) + E[σ²]/K)``."""
    if not math.isfinite(k_star):
        return None
    options = {max(1, math.floor(k_star)), max(1, math.ceil(k_star))}
    return min(sorted(options), key=lambda k: (cost_ratio + k) * (vb + vw / k))


def reliability_from_items(
    it: ItemTable,
    *,
    level: float,
    cost_ratio: float,
    model_corr: float,
    alpha: float,
    retest: ItemTable | None,
) -> Reliability:
    """`reliability` on an already-aggregated run (used by `score_run`)."""
    n, k_i = it.n_items, it.n_epochs.astype(np.float64)
    big_n = int(k_i.sum())
    y = it.attempt_score
    resid = y - it.mean[it.attempt_item]
    df_b, df_w = n - 1, big_n - n
    grand = float(y.mean()) if big_n else math.nan
    msb = float(np.sum(k_i * (it.mean - grand) ** 2)) / df_b if df_b > 0 else math.nan
    msw = float(np.sum(resid**2)) / df_w if df_w > 0 else math.nan
    k0 = (big_n - float(np.sum(k_i**2)) / big_n) / df_b if df_b > 0 else math.nan
    reason = ""
    if df_b < 1:
        reason = "fewer than two items: between-item variance not estimable"
    elif df_w < 1:
        reason = "one usable epoch per item: within-item variance not estimable"
    vb = max(0.0, (msb - msw) / k0) if math.isfinite(msb - msw) else math.nan
    defined = math.isfinite(msb) and math.isfinite(msw) and msb > 0
    icc1 = (msb - msw) / (msb + (k0 - 1) * msw) if defined else math.nan
    icc1k = (msb - msw) / msb if defined else math.nan
    if not defined and not reason:
        reason = "no variation between item means: ICCs undefined"
    multi = it.n_epochs >= 2
    high, low = np.full(n, -np.inf), np.full(n, np.inf)
    np.maximum.at(high, it.attempt_item, y)
    np.minimum.at(low, it.attempt_item, y)
    flip = float(np.mean(high[multi] > low[multi])) if multi.any() else math.nan
    sum_inv_k = float(np.sum(1.0 / k_i))
    floor = math.sqrt(2.0 * msw * sum_inv_k) / n if math.isfinite(msw) else math.nan
    half = _dist.norm_ppf(0.5 + level / 2) * floor
    k_star = math.sqrt(msw / vb * cost_ratio) if vb > 0 and math.isfinite(msw) else math.nan
    if vb == 0 and not reason:
        reason = "between-item variance estimated at 0: the cost-optimal K is unbounded"
    components, detail = None, None
    if math.isfinite(vb) and math.isfinite(msw) and n >= 2:
        codes = cluster_codes(it.cluster if it.clustered else None, n)
        v_cl, n_units = cluster_variance(it.mean, codes)
        v_iid = float(np.var(it.mean, ddof=1)) / n
        deff = v_cl / v_iid if it.clustered and v_iid > 0 and math.isfinite(v_cl) else 1.0
        components = VarianceComponents(2.0 * vb * (1.0 - model_corr), msw, msw, deff)
        detail = pilot_mde(
            it.mean, vb, n_units=n_units, design_effect=deff, model_corr=model_corr, alpha=alpha
        )
    pilot = detail.value if detail is not None else math.nan
    tr, kind, tr_diff = icc1k, "icc1k_single_run", math.nan
    if retest is not None:
        shared, ia, ib = np.intersect1d(
            it.item_id.astype(str), retest.item_id.astype(str), return_indices=True
        )
        a, b = it.mean[ia], retest.mean[ib]
        kind = "item_means_retest_r"
        ok = len(shared) >= 3 and np.ptp(a) > 0 and np.ptp(b) > 0
        tr = _pearson_r(a, b) if ok else math.nan
        tr_diff = float(np.mean(b - a)) if len(shared) else math.nan
    return Reliability(
        n_items=n,
        n_attempts=big_n,
        epochs=k0,
        var_between=vb,
        var_within=msw,
        icc1=icc1,
        icc1k=icc1k,
        flip_rate=flip,
        test_retest=tr,
        test_retest_kind=kind,
        noise_floor=floor,
        noise_floor_half_width=half,
        level=level,
        k_optimal=k_star,
        k_recommended=_k_recommended(k_star, vb, msw, cost_ratio),
        cost_ratio=cost_ratio,
        mde=pilot,
        components=components,
        model_corr=model_corr,
        alpha=alpha,
        retest_diff=tr_diff,
        ms_between=msb,
        ms_within=msw,
        df_between=max(df_b, 0),
        df_within=max(df_w, 0),
        reason=reason,
        mde_detail=detail,
    )


def _pearson_r(a: Any, b: Any) -> float:
    """Pearson's r of a retest (scipy.stats, imported only then: about 1 s)."""
    from scipy import stats

    return float(stats.pearsonr(a, b).statistic)


def reliability(
    attempts: pd.DataFrame,
    *,
    retest: pd.DataFrame | None = None,
    level: float = 0.95,
    cost_ratio: float = 1.0,
    model_corr: float = 0.9,
    alpha: float = 0.05,
) -> Reliability:
    """Reliability of one run from its repeated epochs (one-way random-effects ANOVA).

    Items are the targets and epochs exchangeable replicates, so the one-way model applies
    (Shrout & Fleiss 1979, case 1). Harness errors are excluded; limits count 0.

    Args:
        attempts: the attempts of one run.
        retest: attempts of an independent rerun of the same suite and model; when given,
            ``test_retest`` is the correlation of item means across the two runs.
        level: level of the rerun half-width and of `Reliability.conf_int`.
        cost_ratio: ``c_item/c_run`` for Cochran's K*; 1 means an item costs one epoch.
        model_corr: assumed correlation ρ of two models' true item scores, for the pilot
            MDE (``ω² = 2·Var(x)(1 − ρ)``; 1 is a same-model rerun).
        alpha: two-sided level of the pilot MDE (power 0.8).

    Returns:
        The `Reliability`; figures that cannot be estimated are NaN with ``reason``.

    Notes:
        ANOVA method of moments, with ``K0`` for unbalanced epochs. For balanced data with
        ``MSB > MSW`` the components equal the REML fit of
        ``smf.mixedlm("score ~ 1", df, groups=df["item_id"])`` (``cov_re``, ``scale``);
        the tests check this. The noise floor treats the items as fixed (a rerun keeps them),
        so only attempt noise differs between reruns: ``Var(s̄₁ − s̄₂) = 2·Σσ_i²/K_i / n²``,
        with σ_i² estimated by the pooled MSW. The pilot MDE assumes both models have this
        run's ``Var(x)`` and ``E[σ²]``; use a previous pair of versions when you have one.
        Undefined with one usable epoch per item (no within variance) or one item.

    References:
        Shrout & Fleiss (1979), Psych. Bull. 86:420. McGraw & Wong (1996), Psych. Methods
        1:30. Cochran (1977), Sampling Techniques, ch. 10. Miller (2024), arXiv:2411.00640.
    """
    check_level(level)
    if not (math.isfinite(cost_ratio) and cost_ratio > 0):
        raise UsageError(f"'cost_ratio' must be a finite number > 0 (got {cost_ratio!r})")
    if not -1.0 <= model_corr <= 1.0:
        raise UsageError(f"'model_corr' must be in [-1, 1] (got {model_corr!r})")
    it = item_table(attempts, what="attempts")
    other = None if retest is None else item_table(retest, what="retest")
    return reliability_from_items(
        it, level=level, cost_ratio=cost_ratio, model_corr=model_corr, alpha=alpha, retest=other
    )
