"""The negative-discrimination test of `evalsuite items`: one p-value per item, BH over items.

An item is *negatively discriminating* when stronger models fail it more: a wrong key or a
grader bug. Each item gets one one-sided test of "its discrimination is below 0", the
item-rest correlation's (the t test of a correlation, `negative_p_values`), and the p-values are
adjusted over items by Benjamini-Hochberg, as the other flags are (docs/design/items.md). The
2PL slope is not a second test: it is a Bayes modal estimate pulled towards its prior mean
of +1, so its Wald test rarely sees a reversed item (a true slope of −2.5 over 30 models
was estimated at −0.04 ± 0.77), and a second test per item would halve the level of the one
that can.

With few models no reversed item can reach the corrected level. `judgement` says so instead of
leaving a clean list to be read as "no item is reversed": it gives the power of the item-rest
test to flag an item as discriminating as the version's median item, reversed.

Plain numpy and scipy: no database, no store.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.stats import norm
from scipy.stats import t as student_t

from evalsuite.items._stats import benjamini_hochberg

__all__ = ["JUDGE_POWER", "judgement", "negative_p_values"]

FloatArray = npt.NDArray[np.float64]

JUDGE_POWER = 0.8
"""Power below which the flag cannot judge: "too few models to judge"."""


def negative_p_values(r: FloatArray, n: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Each item's one-sided p-value of a discrimination below 0, and its BH q over items.

    Args:
        r: item-rest correlation per item (NaN: undefined).
        n: models behind each correlation.

    The p-value is the t test of a correlation, ``T_{n−2}(r·√(n − 2)/√(1 − r²))``, not the
    Fisher-z approximation ``Φ(atanh(r)·√(n − 3))``: Benjamini-Hochberg reads the extreme
    tail (level ``0.05/J`` for one discovery), where Fisher z is too liberal with few models.
    With 20 items of no discrimination over 6 models (one 0/1 attempt each) it flagged at
    least one item in 7.9% of seeded versions at q < 0.05; the t test in 5.1%.

    Returns:
        ``(p, q)``: the one-sided p per item (NaN with 3 models or fewer, or no
        correlation), and the Benjamini-Hochberg q over the items with a p-value.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        t_r = r * np.sqrt(n - 2) / np.sqrt(np.maximum(1.0 - r**2, 0.0))
        p_t = student_t.cdf(t_r, n - 2)
    p = np.asarray(np.where(np.isfinite(r) & (n > 3), p_t, np.nan), dtype=np.float64)
    return p, benjamini_hochberg(p)


def judgement(r: FloatArray, p: FloatArray, *, models: int, fdr: float) -> dict[str, Any]:
    """Whether the flag can judge at all with this many models, and why.

    The reference is an item as discriminating as the version's median item (its median
    positive item-rest correlation ρ), reversed. A lone such item is flagged when its p-value
    is below the BH threshold of a single discovery, ``fdr / J`` over J tested items; the
    power of the test at that level is ``Φ(atanh(ρ)·√(M − 3) − z_{1 − fdr/J})``. Below
    `JUDGE_POWER` (or with fewer than 4 models, or no positive correlation to mirror) the
    flag cannot judge: a clean list does not mean no item is reversed.

    Returns:
        {``judged``, ``models``, ``items_tested``, ``reference_r``, ``alpha_per_item``,
        ``power``, ``reason``}.
    """
    tested = int(np.isfinite(p).sum())
    positive = r[np.isfinite(r) & (r > 0)]
    reference = float(np.median(positive)) if positive.size else math.nan
    alpha = fdr / max(tested, 1)
    power = math.nan
    if models > 3 and math.isfinite(reference):
        shift = math.atanh(min(reference, 0.999999)) * math.sqrt(models - 3)
        power = float(norm.cdf(shift - norm.isf(alpha)))
    judged = bool(math.isfinite(power) and power >= JUDGE_POWER)
    if judged:
        reason = (
            f"{models} models: a reversed item as discriminating as the median item "
            f"(r = {reference:.2f}) is flagged with probability {power:.2f}"
        )
    elif models <= 3:
        reason = (
            f"too few models to judge: {models} model(s) give no interval of the item-rest "
            "correlation (4 are needed); no item can be flagged negatively discriminating"
        )
    elif not math.isfinite(reference):
        reason = (
            f"too few models to judge: no item has a positive item-rest correlation over "
            f"these {models} models, so no reversed item can be told from the rest"
        )
    else:
        reason = (
            f"too few models to judge: over {models} models a reversed item as discriminating "
            f"as the median item (r = {reference:.2f}) is flagged with probability only "
            f"{power:.2f} (one-sided level {alpha:.2g} per item after the correction over "
            f"{tested} items); no flag is not evidence that no item is reversed"
        )
    return {
        "judged": judged,
        "models": models,
        "items_tested": tested,
        "reference_r": reference,
        "alpha_per_item": alpha,
        "power": power,
        "reason": reason,
    }
