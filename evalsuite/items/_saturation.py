"""Saturation watch: does a stratum still separate the models that ran it?

A stratum is **saturated** when the best model's score on it exceeds a threshold (default
0.9), and **does not separate** the models when the spread of their scores (standard
deviation across models) is below its noise floor: the root mean square, over models, of the
standard error of a model's stratum score from run-to-run (epoch) noise alone, that is how
much the score would move if the same model ran the same items again. Without two scored
attempts of an item by one model the noise floor cannot be estimated and is reported as
unknown. See docs/design/items.md. Pure pandas: no database.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["DEFAULT_SATURATION", "stratum_watch"]

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


def stratum_watch(
    cells: pd.DataFrame, threshold: float = DEFAULT_SATURATION
) -> list[dict[str, Any]]:
    """One entry per stratum: models' scores, best, spread, noise floor and the verdicts.

    Args:
        cells: `evalsuite.items._stats.cell_table` rows (model x item).
        threshold: Best-model score above which the stratum is saturated.
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
        no_sep = None if spread is None or noise is None else spread < noise
        reasons = []
        if saturated:
            reasons.append(
                f"the best model ({best_model}) scores {best:.3f} > {threshold:g}: the "
                "stratum has little room left above it"
            )
        if no_sep:
            reasons.append(
                f"the models' scores spread by {spread:.4f} (sd across {len(scores)} models), "
                f"below the noise floor {noise:.4f} (run-to-run noise of one model's score): "
                "the stratum no longer separates the models"
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
                "watch": bool(saturated or no_sep),
                "reasons": reasons,
                "noise_floor_note": None
                if noise is not None
                else "unknown: no model ran an item of this stratum twice (run with --epochs 2 "
                "or more to estimate the run-to-run noise)",
            }
        )
    return out
