"""Per-item statistics over the models that ran a suite version: pure pandas and numpy.

Input is one long table of attempts (the store's attempt columns plus ``model``); output is
one row per item: difficulty with a Wilson interval over models, item-rest correlation with a
Fisher-z interval, within-model flakiness against each model's own run-to-run noise, flips of
deterministic agents at a fixed seed, harness-error and limit rates. Methods and sources:
docs/design/items.md. No database is loaded here.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.stats import binom, norm

__all__ = [
    "ITEM_COLUMNS",
    "benjamini_hochberg",
    "cell_table",
    "item_table",
    "poisson_binomial_sf",
    "wilson",
]

ITEM_COLUMNS = (
    "model", "item_id", "stratum", "epoch", "seed", "outcome", "score",
)  # fmt: skip
"""The attempt columns the item analysis reads (``model`` added from each run's record)."""

FloatArray = npt.NDArray[np.float64]


def wilson(p: FloatArray, n: FloatArray, level: float) -> tuple[FloatArray, FloatArray]:
    """Wilson score interval of proportions `p` from `n` units (NaN where ``n == 0``).

    For a mean of values in [0, 1] the variance is at most ``p (1 - p) / n``, so with
    fractional per-model solve rates the interval is conservative (docs/design/items.md).
    """
    z = float(norm.ppf(0.5 + level / 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        denom = 1 + z**2 / n
        centre = (p + z**2 / (2 * n)) / denom
        half = z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / denom
    lo = np.where(n > 0, np.clip(centre - half, 0.0, 1.0), np.nan)
    hi = np.where(n > 0, np.clip(centre + half, 0.0, 1.0), np.nan)
    return lo, hi


def benjamini_hochberg(p: FloatArray) -> FloatArray:
    """Benjamini-Hochberg adjusted p-values (NaN stays NaN and is not counted)."""
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    values = p[ok]
    if values.size == 0:
        return out
    order = np.argsort(values)
    ranked = values[order] * values.size / np.arange(1, values.size + 1)
    adjusted = np.minimum.accumulate(ranked[::-1])[::-1]
    result = np.empty_like(values)
    result[order] = np.minimum(adjusted, 1.0)
    out[ok] = result
    return out


def poisson_binomial_sf(x: int, probs: FloatArray) -> float:
    """P(X >= x) for X a sum of independent Bernoulli(probs) (exact, by convolution)."""
    dist = np.zeros(len(probs) + 1)
    dist[0] = 1.0
    for q in probs:
        dist[1:] = dist[1:] * (1 - q) + dist[:-1] * q
        dist[0] *= 1 - q
    return float(min(1.0, dist[x:].sum()))


def cell_table(attempts: pd.DataFrame, deterministic: Collection[str]) -> pd.DataFrame:
    """One row per (model, item): counts, summed scores, epoch variance, flips.

    Columns: ``model``, ``item_id``, ``stratum``, ``planned`` (attempts), ``errors``
    (harness errors), ``limits``, ``n`` (scored attempts: scored and limit), ``k`` (sum of
    their scores), ``mean`` (``k / n``, NaN when ``n == 0``), ``var`` (population variance of
    the scores across attempts, NaN when ``n < 2``), ``flip`` (the scores differ across
    attempts; NaN when ``n < 2``), ``seed_flip`` (a deterministic model's scores differ at one
    seed: True/False, NaN for other models or without two attempts at one seed).
    """
    frame = attempts.loc[:, list(ITEM_COLUMNS)].copy()
    for name in ("model", "item_id", "stratum", "outcome"):
        frame[name] = frame[name].astype(str)
    frame["is_error"] = frame["outcome"].eq("harness_error")
    frame["is_limit"] = frame["outcome"].eq("limit")
    scored = frame.loc[~frame["is_error"]].copy()
    scored["score"] = scored["score"].astype(float)
    keys = ["model", "item_id"]
    base = frame.groupby(keys, sort=True, observed=True).agg(
        stratum=("stratum", "first"),
        planned=("outcome", "size"),
        errors=("is_error", "sum"),
        limits=("is_limit", "sum"),
    )
    scored["square"] = scored["score"] ** 2
    grouped = scored.groupby(keys, sort=True, observed=True)
    stats = grouped["score"].agg(n="size", k="sum", lo="min", hi="max")
    stats["k2"] = grouped["square"].sum()
    # population variance across attempts; the difference of two means rounds to a hair below
    # 0 when every score is equal, where the variance is exactly 0
    raw = stats["k2"] / stats["n"] - (stats["k"] / stats["n"]) ** 2
    stats["var"] = raw.where(stats["hi"] > stats["lo"], 0.0)
    stats = stats.drop(columns="k2")
    cells = base.join(stats, how="left")
    cells["n"] = cells["n"].fillna(0).astype(int)
    cells["k"] = cells["k"].fillna(0.0)
    cells["mean"] = np.where(cells["n"] > 0, cells["k"] / cells["n"].clip(lower=1), np.nan)
    multi = cells["n"] >= 2
    cells["var"] = cells["var"].where(multi)
    cells["flip"] = (cells["hi"] > cells["lo"]).astype(float).where(multi)
    cells["seed_flip"] = np.nan
    det = scored.loc[scored["model"].isin(set(deterministic))].copy()
    if not det.empty:
        det["seed_key"] = det["seed"].astype(object).where(det["seed"].notna(), "none").astype(str)
        per_seed = det.groupby([*keys, "seed_key"], sort=False, observed=True)["score"].agg(
            n="size", lo="min", hi="max"
        )
        per_seed = per_seed.loc[per_seed["n"] >= 2]
        if not per_seed.empty:
            flips = (per_seed["hi"] > per_seed["lo"]).groupby(level=[0, 1], observed=True).any()
            cells.loc[flips.index, "seed_flip"] = flips.astype(float)
    return cells.drop(columns=["lo", "hi"]).reset_index()


def _item_rest(means: pd.DataFrame, level: float) -> pd.DataFrame:
    """Item-rest correlation per item across models (rest: the model's mean on other items)."""
    x = means.to_numpy(dtype=float)  # models x items, NaN where not run
    have = ~np.isnan(x)
    total = np.where(have, x, 0.0).sum(axis=1)
    count = have.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rest = (total[:, None] - np.where(have, x, 0.0)) / (count[:, None] - have)
    rest = np.where(have, rest, np.nan)
    r = np.full(x.shape[1], np.nan)
    n = have.sum(axis=0)
    for j in range(x.shape[1]):
        mask = have[:, j] & ~np.isnan(rest[:, j])
        if mask.sum() < 3:
            continue
        xi, ri = x[mask, j], rest[mask, j]
        if np.ptp(xi) == 0 or np.ptp(ri) == 0:
            continue
        r[j] = float(np.corrcoef(xi, ri)[0, 1])
        n[j] = int(mask.sum())
    z = float(norm.ppf(0.5 + level / 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        zr = np.arctanh(np.clip(r, -0.999999, 0.999999))
        se = np.where(n > 3, 1 / np.sqrt(np.maximum(n - 3, 1)), np.nan)
    lo, hi = np.tanh(zr - z * se), np.tanh(zr + z * se)
    return pd.DataFrame(
        {"item_rest_r": r, "item_rest_ci_lo": lo, "item_rest_ci_hi": hi, "item_rest_n": n},
        index=means.columns,
    )


def item_table(cells: pd.DataFrame, *, level: float) -> pd.DataFrame:
    """One row per item (index: item id) from `cell_table`'s cells; see docs/design/items.md.

    Columns: ``stratum``, ``models`` (models with a scored attempt), ``solve_rate`` (mean over
    models of each model's mean score on the item), ``solve_ci_lo/hi`` (Wilson, models as
    units), ``harness_error_rate`` (of planned attempts), ``limit_rate`` (of scored
    attempts), item-rest correlation, flakiness (``flip_models``, ``flip_expected``,
    ``within_var``, ``noise_var``, ``flaky_p``, ``flaky_q``), ``error_q`` (harness errors
    above the version's rate, BH-adjusted) and ``seed_flip_models`` (deterministic agents that
    flipped at one seed).
    """
    by_item = cells.groupby("item_id", sort=True)
    items = pd.DataFrame(
        {
            "stratum": by_item["stratum"].first(),
            "planned": by_item["planned"].sum(),
            "errors": by_item["errors"].sum(),
            "limits": by_item["limits"].sum(),
            "scored": by_item["n"].sum(),
        }
    )
    scored_cells = cells.loc[cells["n"] > 0]
    means = scored_cells.pivot(index="model", columns="item_id", values="mean")
    means = means.reindex(columns=items.index)
    items["models"] = means.notna().sum(axis=0).astype(int)
    items["solve_rate"] = means.mean(axis=0, skipna=True)
    lo, hi = wilson(items["solve_rate"].to_numpy(float), items["models"].to_numpy(float), level)
    items["solve_ci_lo"], items["solve_ci_hi"] = lo, hi
    with np.errstate(divide="ignore", invalid="ignore"):
        items["harness_error_rate"] = items["errors"] / items["planned"]
        items["limit_rate"] = np.where(
            items["scored"] > 0, items["limits"] / items["scored"].clip(lower=1), np.nan
        )
    items = items.join(_item_rest(means, level))
    items = items.join(_flakiness(cells))
    items["error_q"] = _error_excess(items)
    det = cells.loc[cells["seed_flip"].notna()]
    items["seed_flip_models"] = (
        det.loc[det["seed_flip"] > 0].groupby("item_id")["model"].apply(lambda s: sorted(s))
    ).reindex(items.index)
    items["seed_flip_models"] = items["seed_flip_models"].apply(
        lambda v: v if isinstance(v, list) else []
    )
    return items


def _flakiness(cells: pd.DataFrame) -> pd.DataFrame:
    """Flips and epoch variance of each item against each model's own run-to-run noise.

    A model's noise is its flip rate and mean epoch variance over all items it ran at least
    twice; an item flips in ``X`` models where ``sum(q_m)`` are expected, and ``flaky_p`` is
    the exact Poisson-binomial tail ``P(X >= x)``, BH-adjusted over items as ``flaky_q``.
    """
    multi = cells.loc[cells["flip"].notna()]
    out = pd.DataFrame(
        index=pd.Index(sorted(cells["item_id"].unique()), name="item_id"),
        data={
            "flip_models": 0,
            "multi_epoch_models": 0,
            "flip_expected": np.nan,
            "within_var": np.nan,
            "noise_var": np.nan,
            "flaky_p": np.nan,
        },
    )
    if multi.empty:
        out["flaky_q"] = np.nan
        return out
    rate = multi.groupby("model")["flip"].mean()
    noise = multi.groupby("model")["var"].mean()
    multi = multi.assign(q=multi["model"].map(rate), noise=multi["model"].map(noise))
    grouped = multi.groupby("item_id")
    out["flip_models"] = grouped["flip"].sum().reindex(out.index).fillna(0).astype(int)
    out["multi_epoch_models"] = grouped["flip"].size().reindex(out.index).fillna(0).astype(int)
    out["flip_expected"] = grouped["q"].sum().reindex(out.index)
    out["within_var"] = grouped["var"].mean().reindex(out.index)
    out["noise_var"] = grouped["noise"].mean().reindex(out.index)
    pvals = {
        item: poisson_binomial_sf(int(g["flip"].sum()), g["q"].to_numpy(float))
        for item, g in grouped
    }
    out["flaky_p"] = pd.Series(pvals).reindex(out.index)
    out["flaky_q"] = benjamini_hochberg(out["flaky_p"].to_numpy(float))
    return out


def _error_excess(items: pd.DataFrame) -> FloatArray:
    """BH-adjusted one-sided binomial p-values of each item's harness errors above the rate."""
    planned = items["planned"].to_numpy(float)
    errors = items["errors"].to_numpy(float)
    total = planned.sum()
    rate = errors.sum() / total if total else 0.0
    p = np.full(len(items), np.nan)
    has = errors > 0
    if rate <= 0 or not has.any():
        return p
    if rate >= 1:
        return np.where(has, 1.0, np.nan)
    p[has] = binom.sf(errors[has] - 1, planned[has], rate)
    return benjamini_hochberg(p)
