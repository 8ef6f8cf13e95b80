"""Cluster (and stratified) BCa bootstrap of a mean of item values (docs/methods.md)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from evalsuite.analyse._table import Interval

__all__ = ["N_RESAMPLES", "cluster_bca"]

N_RESAMPLES = 9999
"""Bootstrap resamples: enough for stable BCa ends (Davison & Hinkley 1997, ch. 5); the
seed comes from the caller's `rng`."""


def cluster_bca(
    values: npt.NDArray[np.float64],
    clusters: npt.NDArray[np.intp],
    strata: npt.NDArray[np.intp],
    weights: Sequence[float],
    level: float,
    rng: np.random.Generator,
) -> tuple[Interval, float]:
    """BCa interval of ``Σ_h W_h · (mean of the items of stratum h)``, resampling clusters.

    Within each stratum, whole clusters (each carrying all of its items, and each item all of
    its epochs, since `values` are item means) are resampled with replacement; strata are
    resampled independently. The statistic is the ratio ``Σ totals / Σ sizes`` per stratum,
    so unequal cluster sizes are handled. With one stratum of weight 1 and every item its own
    cluster this is the ordinary item bootstrap.

    Args:
        values: item values (means) in [0, 1].
        clusters: cluster code of each item.
        strata: stratum code 0..H-1 of each item.
        weights: W_h for each stratum code.
        level: confidence level.
        rng: the generator the resampling draws from.

    Returns:
        The interval and the bootstrap standard error; NaN ends when the BCa interval is
        undefined (a stratum with fewer than two clusters, or degenerate data, where scipy
        warns ``DegenerateDataWarning``); the caller then falls back.

    References:
        Efron (1987), JASA 82:171. Davison & Hinkley (1997), §3.8. Field & Welsh (2007),
        JRSS-B 69:369.
    """
    samples: list[npt.NDArray[np.float64]] = []
    for h in range(len(weights)):
        in_h = strata == h
        codes, inverse = np.unique(clusters[in_h], return_inverse=True)
        totals = np.bincount(inverse, weights=values[in_h], minlength=len(codes))
        sizes = np.bincount(inverse, minlength=len(codes)).astype(np.float64)
        if len(codes) < 2:
            return Interval(math.nan, math.nan), math.nan
        samples.append(np.vstack([totals, sizes]))
    w = np.asarray(weights, dtype=np.float64)

    def statistic(*resampled: npt.NDArray[np.float64], axis: int = -1) -> Any:
        return sum(
            w[h] * s[0].sum(axis=axis) / s[1].sum(axis=axis) for h, s in enumerate(resampled)
        )

    from scipy import stats  # about 1 s to import: only when a bootstrap is drawn

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        result = stats.bootstrap(
            tuple(samples),
            statistic,
            vectorized=True,
            axis=-1,
            confidence_level=level,
            n_resamples=N_RESAMPLES,
            method="BCa",
            rng=rng,
        )
    low = float(result.confidence_interval.low)
    high = float(result.confidence_interval.high)
    return Interval(low, high), float(result.standard_error)
