"""Data-generating processes with known truth for the calibration harness.

Vectorised over replicates: every function returns arrays with a leading replicate axis.
The skewed difficulty Beta(3, 0.5) (mean 6/7 ≈ 0.857) puts most items near 1, where the t
interval on item means fails first (docs/design/intervals.md).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
A, B = 3.0, 0.5
TRUTH = A / (A + B)


def item_probs(
    rng: np.random.Generator, reps: int, n: int, a: float = A, b: float = B
) -> FloatArray:
    """True per-item success probabilities x_i ~ Beta(a, b), shape (reps, n)."""
    return rng.beta(a, b, size=(reps, n))


def clustered_probs(
    rng: np.random.Generator, reps: int, clusters: int, size: int, kappa: float = 4.0
) -> FloatArray:
    """x for `clusters` × `size` items sharing a cluster level μ_c ~ Beta(3, 0.5).

    ``x_i | μ_c ~ Beta(κμ_c, κ(1 − μ_c))``, so ``E[x] = E[μ] = 6/7`` exactly, and items of
    a cluster are correlated (ICC of x within clusters ≈ 1/(κ + 1) of the spread).
    """
    mu = np.clip(rng.beta(A, B, size=(reps, clusters, 1)), 1e-6, 1 - 1e-6)
    x = rng.beta(kappa * mu, kappa * (1 - mu), size=(reps, clusters, size))
    return x.reshape(reps, clusters * size)


def epoch_scores(rng: np.random.Generator, x: FloatArray, k: int) -> npt.NDArray[np.int64]:
    """Successes out of k independent epochs per item (same shape as x)."""
    return rng.binomial(k, x)


def shift(x: FloatArray, delta: float, mean: float = TRUTH) -> FloatArray:
    """A candidate whose expected score is higher by exactly `delta`: failures shrink.

    ``x' = x + δ(1 − x)/(1 − E[x])`` keeps x' in [0, 1] for δ ≤ 1 − E[x].
    """
    return x + delta * (1.0 - x) / (1.0 - mean)
