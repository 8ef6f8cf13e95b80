"""Means of item values with design-based intervals: unweighted, per stratum, post-stratified.

All three share `choose_interval`, so the method decision lives in one place.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from evalsuite.analyse._attempts import ItemTable
from evalsuite.analyse._bootstrap import cluster_bca
from evalsuite.analyse._intervals import (
    Estimate,
    IntervalMethod,
    Moments,
    check_level,
    choose_interval,
    cluster_codes,
    cluster_variance,
)
from evalsuite.analyse._table import Interval
from evalsuite.errors import UsageError

__all__ = ["StratumEstimate", "estimate_mean", "stratified_estimates", "stratified_mean"]

FloatArray = npt.NDArray[np.float64]
WEIGHT_TOLERANCE = 1e-6


def _trials(trials: npt.ArrayLike | None, n: int) -> FloatArray:
    """Observations behind each value, checked (None: one per value)."""
    if trials is None:
        return np.ones(n, dtype=np.float64)
    t = np.asarray(trials, dtype=np.float64)
    if t.shape != (n,) or not np.all(np.isfinite(t) & (t >= 1)):
        raise UsageError("'trials' must give one count >= 1 per value (usable attempts per item)")
    return t


def _moments(
    values: FloatArray,
    codes: npt.NDArray[np.intp],
    n_excluded: int,
    clustered: bool,
    trials: FloatArray,
) -> Moments:
    """Mean and clustered variance of item values (df = C − 1), before an interval is chosen."""
    var, n_clusters = cluster_variance(values, codes)
    n = len(values)
    return Moments(
        mean=float(values.mean()) if n else math.nan,
        var=var,
        df=float(n_clusters - 1),
        units=n_clusters,
        n_items=n,
        n_excluded=n_excluded,
        variance="cluster" if clustered else "iid",
        constant=bool(n and np.ptp(values) == 0.0),
        cp_trials=float(n_clusters),
        n_trials=float(trials.sum()),
    )


def estimate_mean(
    values: npt.ArrayLike,
    *,
    clusters: npt.ArrayLike | None = None,
    level: float = 0.95,
    interval: IntervalMethod = "auto",
    n_excluded: int = 0,
    trials: npt.ArrayLike | None = None,
    rng: np.random.Generator,
) -> Estimate:
    """Mean of item-level values with a design-based interval (the score's estimator).

    The estimand is the super-population mean score: items are a sample from a universe of
    tasks, so between-item variance is sampling error (docs/methods.md, "The unit of
    analysis"). Each value is one item's mean over its usable epochs (or a per-item pass^k
    estimate); attempts are never pooled.

    Args:
        values: one number in [0, 1] per item.
        clusters: cluster key per item (None: every item its own cluster).
        level: confidence level.
        interval: ``auto`` (the default: Wilson with n_eff), ``wilson_neff``, ``t``,
            ``switch`` (the t-above-50-items rule of thumb) or ``bootstrap``; see
            `choose_interval`.
        n_excluded: items dropped upstream (all epochs harness errors), carried to the result.
        trials: observations behind each value, i.e. its usable attempts (None: one each).
            They set the Korn–Graubard reference degrees of freedom (total − 1) and cap n_eff.
        rng: generator for the bootstrap (drawn from only when the bootstrap runs).

    Returns:
        The `Estimate`; ``method`` names the interval used and ``note`` says why.

    Notes:
        Variance: cluster-robust with C/(C−1) (equal to s²/n when unclustered), on
        ``C − 1`` degrees of freedom. ``auto`` applies Wilson with ``n_eff = p(1−p)/Var``
        (at most N, the total of `trials`) on ``n_eff · (t_{N−1}/t_{C−1})²`` trials (Korn &
        Graubard 1998). Data with no variation get Clopper–Pearson on C units (all 0, all 1,
        or every value equal). Undefined (NaN interval, reason in ``note``) with no items or
        one unit. Calibration: docs/design/intervals.md.

    References:
        Miller (2024), arXiv:2411.00640. Brown, Cai & DasGupta (2001), Stat. Sci. 16:101.
        Korn & Graubard (1998), Survey Methodology 24:193.
    """
    check_level(level)
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1 or (len(v) and not np.all((v >= 0.0) & (v <= 1.0))):
        raise UsageError("'values' must be a 1-d array of numbers in [0, 1]")
    codes = cluster_codes(clusters, len(v))
    m = _moments(v, codes, n_excluded, clusters is not None, _trials(trials, len(v)))
    zeros = np.zeros(len(v), dtype=np.intp)

    def boot(lvl: float) -> tuple[Interval, float]:
        return cluster_bca(v, codes, zeros, [1.0], lvl, rng)

    return choose_interval(m, level=level, interval=interval, boot=boot)


@dataclass(frozen=True, slots=True)
class StratumEstimate:
    """The estimate of one stratum, with the deployment weight it gets in `weighted`."""

    stratum: str
    weight: float
    estimate: Estimate

    def conf_int(self, level: float = 0.95) -> Interval:
        """The stratum's interval at `level`."""
        return self.estimate.conf_int(level)

    def to_dict(self) -> dict[str, Any]:
        """A ``score --json`` stratum: the estimate's fields plus ``stratum`` and ``weight``."""
        return {"stratum": self.stratum, "weight": self.weight, **self.estimate.to_dict()}

    def to_frame(self) -> pd.DataFrame:
        """One row."""
        frame = self.estimate.to_frame()
        frame.insert(0, "weight", self.weight)
        frame.insert(0, "stratum", self.stratum)
        return frame


def _resolve_weights(
    weights: Mapping[str, float] | None, strata: Sequence[str], counts: Mapping[str, int]
) -> tuple[dict[str, float], str]:
    """Deployment weights checked (cover every stratum, ≥ 0, sum to 1), or item shares."""
    if not weights:
        n_total = sum(counts.values())
        return {
            h: counts.get(h, 0) / n_total for h in strata
        }, "item shares (no deployment weights)"
    unknown = sorted(set(strata) - set(weights))
    if unknown:
        raise UsageError(f"'weights' has no deployment share for stratum/strata {unknown}")
    if any(not (math.isfinite(w) and w >= 0) for w in weights.values()):
        raise UsageError("'weights' must be finite and non-negative")
    total = float(sum(weights.values()))
    if abs(total - 1.0) > WEIGHT_TOLERANCE:
        raise UsageError(f"'weights' must sum to 1 (got {total:.6g})")
    return {str(h): float(w) for h, w in weights.items()}, "deployment weights"


def stratum_cluster_codes(
    strata: npt.NDArray[np.str_],
    inverse: npt.NDArray[np.intp],
    names: list[str],
    clusters: npt.ArrayLike | None,
) -> npt.NDArray[np.intp]:
    r"""Codes of the (stratum, cluster) units: `cluster_codes` of ``f"{stratum}\x1f{cluster}"``.

    Those codes are the ranks of the key texts. Unclustered (every item its own unit, the
    key's cluster part the item's position), the ranks follow without building a text per
    item: no two strata's keys interleave (a stratum's key starts with ``stratum + "\x1f"``,
    and when no stratum holds ``"\x1f"`` neither of two such prefixes starts the other), so
    the keys sort by the rank of that prefix, then by the position's decimal text. A stratum
    holding ``"\x1f"``, or clusters, take the texts (docs/design/analysis-scale.md).
    """
    n = len(strata)
    if clusters is not None or any("\x1f" in h for h in names):
        keys = np.arange(n) if clusters is None else np.asarray(clusters, dtype=object)
        return cluster_codes([f"{s}\x1f{c}" for s, c in zip(strata, keys, strict=True)], n)
    prefix = [h + "\x1f" for h in names]
    prefix_rank = np.empty(len(names), dtype=np.intp)
    prefix_rank[sorted(range(len(names)), key=prefix.__getitem__)] = np.arange(len(names))
    digits_rank = np.empty(n, dtype=np.intp)
    digits_rank[np.argsort(np.arange(n).astype(str), kind="stable")] = np.arange(n)
    order = np.lexsort((digits_rank, prefix_rank[inverse])) if n else np.zeros(0, np.intp)
    codes = np.empty(n, dtype=np.intp)
    codes[order] = np.arange(n)
    return codes


def stratified_mean(  # noqa: PLR0913 - estimate_mean's arguments plus strata and weights
    values: npt.ArrayLike,
    strata: npt.ArrayLike,
    *,
    weights: Mapping[str, float] | None,
    clusters: npt.ArrayLike | None = None,
    level: float = 0.95,
    interval: IntervalMethod = "auto",
    trials: npt.ArrayLike | None = None,
    rng: np.random.Generator,
) -> tuple[Estimate, tuple[StratumEstimate, ...]]:
    """The post-stratified mean ``Σ_h W_h ȳ_h`` of item values and each stratum's estimate.

    Args:
        values: one number in [0, 1] per item (item means).
        strata: stratum of each item.
        weights: deployment share W_h per stratum (must cover every stratum, sum to 1);
            None or empty: the item shares n_h/n (then the mean equals the unweighted one).
        clusters: cluster key per item (None: every item its own cluster).
        level: confidence level.
        interval: as in `estimate_mean`.
        trials: usable attempts behind each value, as in `estimate_mean` (None: one each).
        rng: generator for the bootstrap.

    Returns:
        The weighted `Estimate` (``variance="stratified"``) and one `StratumEstimate` per
        stratum in `strata` or `weights`, sorted by name.

    Notes:
        Variance ``Σ_h W_h² Var(ȳ_h)``, with ``Var(ȳ_h)`` the clustered variance of the
        stratum mean (``S_h²/n_h`` when unclustered; Cochran 1977, ch. 5; conditional on the
        observed n_h as in Holt & Smith 1979), on ``Σ_h (C_h − 1)`` degrees of freedom.
        Clusters are taken within strata (a cluster spanning strata is split and the
        covariance between its parts ignored). A stratum with fewer than two units has no
        variance of its own: its term is imputed from the unstratified variance scaled to its
        number of units, ``Var(ȳ) · U/U_h``, and the note names those strata. When every
        stratum is constant inside itself the stratified variance is 0 although the
        strata differ; that case, like all-0 and all-1 data, gets Clopper–Pearson on the
        Kish effective n of the item weights (at most the number of units), never a NaN.
        Undefined (NaN, reason in ``note``) when a stratum with positive weight has no item.

    Raises:
        UsageError: weights miss a stratum, are negative, or do not sum to 1.
    """
    check_level(level)
    v = np.asarray(values, dtype=np.float64)
    strata_arr = np.asarray(strata, dtype=object).astype(str)
    if strata_arr.shape != v.shape:
        raise UsageError("'strata' must have one entry per value")
    unique, s_inv = np.unique(strata_arr, return_inverse=True)  # by code point, as sorted()
    names = [str(h) for h in unique]
    n_obs = _trials(trials, len(v))
    counts = dict(zip(names, np.bincount(s_inv, minlength=len(names)).tolist(), strict=True))
    w, source = _resolve_weights(weights, names, counts)
    codes = stratum_cluster_codes(strata_arr, s_inv, names, clusters)
    per: list[StratumEstimate] = []
    notes = [f"weights: {source}"]
    mean = var = df = 0.0
    units = 0
    singletons: list[str] = []
    missing: list[str] = []
    overall_var, overall_units = cluster_variance(v, codes)
    for h in sorted(set(w) | set(names)):
        in_h = strata_arr == h
        est = estimate_mean(
            v[in_h],
            clusters=None if clusters is None else codes[in_h],
            level=level,
            interval=interval,
            trials=n_obs[in_h],
            rng=rng,
        )
        per.append(StratumEstimate(h, w.get(h, 0.0), est))
        if w.get(h, 0.0) == 0.0:
            continue
        if est.n_items == 0:
            missing.append(h)
            continue
        var_h, units_h = cluster_variance(v[in_h], codes[in_h])
        if units_h < 2:
            singletons.append(h)
            var_h = overall_var * overall_units / max(units_h, 1)
        mean += w[h] * est.mean
        var += w[h] ** 2 * var_h
        df += max(units_h - 1, 0)
        units += units_h
    if singletons:
        notes.append(
            f"stratum/strata {singletons} have one unit: variance imputed from the "
            "pooled item variance"
        )
    item_w = np.array([w.get(h, 0.0) / max(counts.get(h, 1), 1) for h in names], dtype=float)[s_inv]
    kish = float(item_w.sum() ** 2 / np.sum(item_w**2)) if np.any(item_w > 0) else math.nan
    weighted_strata = np.isin(strata_arr, [h for h in w if w[h] > 0])
    m = Moments(
        mean=mean,
        var=var if units >= 2 else math.nan,
        df=df if df >= 1 else math.nan,
        units=units,
        n_items=len(v),
        n_excluded=0,
        variance="stratified",
        constant=bool(len(v) and np.ptp(v) == 0.0),
        cp_trials=min(kish, float(units)),
        n_trials=float(n_obs[weighted_strata].sum()),
    )
    if missing:
        notes.append(f"stratum/strata {missing} have positive weight but no scored item")
        est = Estimate(
            math.nan,
            math.nan,
            Interval(math.nan, math.nan),
            level,
            m.n_items,
            units,
            df,
            math.nan,
            "undefined",
            "stratified",
            0,
            "",
            m.n_trials,
        )
        return replace(est, note="; ".join(notes)), tuple(per)
    order = [h for h in sorted(w) if w[h] > 0]
    used = np.isin(strata_arr, order)
    s_codes = np.array([order.index(h) if h in order else -1 for h in names], dtype=np.intp)[
        s_inv[used]
    ]

    def boot(lvl: float) -> tuple[Interval, float]:
        return cluster_bca(v[used], codes[used], s_codes, [w[h] for h in order], lvl, rng)

    est = choose_interval(m, level=level, interval=interval, boot=boot)
    return replace(est, note="; ".join([est.note, *notes])), tuple(per)


def stratified_estimates(
    it: ItemTable,
    weights: Mapping[str, float] | None,
    *,
    level: float,
    interval: IntervalMethod,
    rng: np.random.Generator,
) -> tuple[Estimate, tuple[StratumEstimate, ...]]:
    """`stratified_mean` of a run, with its excluded items counted per stratum.

    A stratum whose every item was excluded (all epochs harness errors) still gets a row
    (undefined, ``n_items = 0``); with deployment weights it must have one, and a positive
    weight then makes the weighted mean undefined rather than silently renormalised.
    """
    excluded = it.excluded_by_stratum
    if weights:
        unknown = sorted(set(excluded) - set(weights))
        if unknown:
            raise UsageError(f"'weights' has no deployment share for stratum/strata {unknown}")
    weighted, per = stratified_mean(
        it.mean,
        it.stratum,
        weights=weights,
        clusters=it.cluster if it.clustered else None,
        level=level,
        interval=interval,
        trials=it.n_epochs,
        rng=rng,
    )
    listed = {s.stratum for s in per}
    empty = np.zeros(0)
    extra = [
        StratumEstimate(h, 0.0, estimate_mean(empty, level=level, interval=interval, rng=rng))
        for h in sorted(set(excluded) - listed)
    ]
    per_all = sorted([*per, *extra], key=lambda s: s.stratum)
    per_out = tuple(
        replace(s, estimate=replace(s.estimate, n_excluded=excluded.get(s.stratum, 0)))
        for s in per_all
    )
    return replace(weighted, n_excluded=sum(excluded.values())), per_out
