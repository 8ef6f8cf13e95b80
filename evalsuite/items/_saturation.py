"""Saturation watch: does a stratum still separate the models that ran it?

A stratum is **saturated** when the best model's score on it exceeds a threshold (default
0.9), and **does not separate** the models when a test of equal scores across models does not
reject at level alpha (``1 - --level``): the generalised Cochran-Mantel-Haenszel "mean score"
statistic with the items as strata (`separation_test`; Cochran's Q when every model made one
0/1 attempt per item). When the models are interchangeable on every item, the stratum is
called separating with probability alpha at most (asymptotically; a seeded simulation in
tests/items/test_saturation.py checks it). The spread of the models' scores and its noise
floor (the root mean square over models of the standard error of a model's stratum score
from run-to-run noise) are reported beside it, as descriptions. See docs/design/items.md.
Pure pandas and numpy: no database.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.stats import chi2

__all__ = ["DEFAULT_SATURATION", "SEPARATION_METHOD", "separation_test", "stratum_watch"]

SEPARATION_METHOD = "generalised_cmh_mean_score_items_as_strata"
"""The test behind ``no_separation`` (``strata[].separation.method`` of ``items --json``)."""

FloatArray = npt.NDArray[np.float64]

DEFAULT_SATURATION = 0.9
"""Best-model score above which a stratum is called saturated."""


def _noise_se2(cells: pd.DataFrame) -> float | None:
    """Squared standard error of one model's stratum score from epoch noise (None: unknown).

    The score is the mean over the stratum's items of the model's item means; an item mean of
    ``n`` attempts with sample variance ``s²`` varies by ``s² / n`` between repeated runs.
    """
    ok = cells.loc[cells["n"] >= 2]
    if ok.empty:
        return None
    # population variance v over n attempts: sample variance v n / (n - 1), so s²/n = v/(n-1)
    per_item = ok["var"] / (ok["n"] - 1)
    # items run once contribute no estimate; scale the known part to all items of the stratum
    return float(per_item.mean() / len(cells))


def separation_test(n: FloatArray, k: FloatArray, ss: FloatArray) -> tuple[float, int, float]:
    """Test of equal scores across models, the items as strata: (statistic, df, p-value).

    The generalised Cochran-Mantel-Haenszel "mean score" statistic (Landis, Heyman and Koch
    1978) with each attempt's score as its response. Arrays are items x models: `n` scored
    attempts, `k` the sum and `ss` the sum of squares of their scores (0 where a model did
    not score the item). Under the null hypothesis that the models are interchangeable on
    every item, each item's attempts are allotted to the models at random, so a model's
    total on the item has mean ``n_im * xbar_i`` and the totals have covariance
    ``s2_i * N_i / (N_i - 1) * (diag(n_i) - n_i n_i' / N_i)`` (``s2_i`` the population
    variance of the item's ``N_i`` scores). Summed over items, the deviations ``G`` give
    ``Q = G' V+ G``, chi-square with ``rank(V)`` degrees of freedom (at most models - 1).
    With one 0/1 attempt per model and item this is Cochran's Q. Items whose scores are all
    equal carry no information; when no item varies, Q = 0 with 0 df and p = 1.
    """
    big_n = n.sum(axis=1)
    use = big_n >= 2
    n, k, ss, big_n = n[use], k[use], ss[use], big_n[use]
    xbar = k.sum(axis=1) / big_n
    s2 = np.maximum(ss.sum(axis=1) / big_n - xbar**2, 0.0)
    factor = s2 * big_n / (big_n - 1)
    deviation = (k - n * xbar[:, None]).sum(axis=0)
    cov = np.diag((n * factor[:, None]).sum(axis=0)) - (n * (factor / big_n)[:, None]).T @ n
    df = int(np.linalg.matrix_rank(cov, tol=1e-10 * max(float(np.abs(cov).max()), 1e-300)))
    if df == 0:
        return 0.0, 0, 1.0
    stat = float(deviation @ np.linalg.pinv(cov, rcond=1e-10, hermitian=True) @ deviation)
    return stat, df, float(chi2.sf(stat, df))


def _test_cells(group: pd.DataFrame) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(n, k, sum of squares) items x models of a stratum's cells."""
    ss = np.where(
        group["n"] >= 2, group["n"] * (group["var"] + group["mean"] ** 2), group["k"] ** 2
    )
    frame = group.assign(ss=ss)
    wide = frame.pivot_table(
        index="item_id", columns="model", values=["n", "k", "ss"], aggfunc="sum", fill_value=0
    )
    return (
        wide["n"].to_numpy(float),
        wide["k"].to_numpy(float),
        wide["ss"].to_numpy(float),
    )


def stratum_watch(
    cells: pd.DataFrame, threshold: float = DEFAULT_SATURATION, alpha: float = 0.05
) -> list[dict[str, Any]]:
    """One entry per stratum: models' scores, best, spread, noise floor and the verdicts.

    Args:
        cells: `evalsuite.items._stats.cell_table` rows (model x item).
        threshold: Best-model score above which the stratum is saturated.
        alpha: Level of the test of equal scores across models (`separation_test`): a
            stratum that does not reject at it is watched as not separating the models.
    """
    out = []
    scored = cells.loc[cells["n"] > 0]
    for stratum, group in scored.groupby("stratum", sort=True):
        scores = group.groupby("model")["mean"].mean().sort_values(ascending=False)
        noises = [s for s in (_noise_se2(g) for _, g in group.groupby("model")) if s is not None]
        noise = math.sqrt(float(np.mean(noises))) if noises else None
        spread = float(scores.std(ddof=1)) if len(scores) >= 2 else None
        best_model, best = str(scores.index[0]), float(scores.iloc[0])
        saturated = best > threshold
        test: dict[str, Any] | None = None
        no_sep = None
        if len(scores) >= 2:
            stat, df, p_value = separation_test(*_test_cells(group))
            no_sep = bool(p_value >= alpha)
            test = {
                "method": SEPARATION_METHOD,
                "statistic": stat,
                "df": df,
                "p_value": p_value,
                "alpha": alpha,
                "null": "the models are interchangeable on every item of the stratum",
            }
        reasons = []
        if saturated:
            reasons.append(
                f"the best model ({best_model}) scores {best:.3f} > {threshold:g}: the "
                "stratum has little room left above it"
            )
        if no_sep and test is not None:
            reasons.append(
                f"the {len(scores)} models' scores do not differ detectably: test of equal "
                f"scores across models (generalised CMH, items as strata) p = "
                f"{test['p_value']:.3g} >= alpha {alpha:g} (spread {spread:.4f} sd across "
                "models"
                + (f", noise floor {noise:.4f}" if noise is not None else "")
                + "): the stratum may no longer separate them, or has too few items and "
                "attempts to show it"
            )
        out.append(
            {
                "stratum": str(stratum),
                "items": int(group["item_id"].nunique()),
                "models": len(scores),
                "scores": {str(m): float(v) for m, v in scores.items()},
                "best_model": best_model,
                "best_score": best,
                "threshold": threshold,
                "spread": spread,
                "noise_floor": noise,
                "saturated": saturated,
                "no_separation": no_sep,
                "separation": test,
                "watch": bool(saturated or no_sep),
                "reasons": reasons,
                "noise_floor_note": None
                if noise is not None
                else "unknown: no model ran an item of this stratum twice (run with --epochs 2 "
                "or more to estimate the run-to-run noise)",
            }
        )
    return out
