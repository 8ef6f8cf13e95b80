"""Unbiased pass@k and pass^k from n epochs with c successes per item (docs/methods.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from evalsuite.analyse._intervals import Estimate
from evalsuite.analyse._table import Interval
from evalsuite.errors import UsageError

__all__ = ["PassK", "pass_at_k", "pass_hat_k"]

IntArray = npt.NDArray[np.int64]


def _check(n: IntArray, c: IntArray, k: int) -> None:
    if k < 1 or np.any(n < k) or np.any(c < 0) or np.any(c > n):
        raise UsageError(f"pass@k/pass^k need 1 <= k <= n and 0 <= c <= n per item (k={k})")


def pass_at_k(n: npt.ArrayLike, c: npt.ArrayLike, k: int) -> npt.NDArray[np.float64]:
    """Per-item unbiased pass@k: ``1 − C(n−c, k)/C(n, k)``.

    Stable product form of openai/human-eval ``estimate_pass_at_k``: 1 when ``n − c < k``,
    else ``1 − Π_{j=n−c+1}^{n} (1 − k/j)``. Unbiased for ``1 − (1 − p)^k`` when the n epochs
    are i.i.d. Bernoulli(p). Requires ``k <= n`` (raises `UsageError` otherwise).

    References:
        Chen et al. (2021), arXiv:2107.03374.
    """
    n_arr = np.asarray(n, dtype=np.int64)
    c_arr = np.asarray(c, dtype=np.int64)
    _check(n_arr, c_arr, k)
    prod = np.ones(n_arr.shape, dtype=np.float64)
    for m in range(int(c_arr.max(initial=0))):
        active = m < c_arr
        prod = np.where(active, prod * (1.0 - k / np.maximum(n_arr - m, 1)), prod)
    return np.where(n_arr - c_arr < k, 1.0, 1.0 - prod)


def pass_hat_k(n: npt.ArrayLike, c: npt.ArrayLike, k: int) -> npt.NDArray[np.float64]:
    """Per-item unbiased pass^k: ``C(c, k)/C(n, k)``.

    Stable form ``Π_{j=0}^{k−1} (c−j)/(n−j)`` (0 when ``c < k``), the estimator of
    sierra-research/tau-bench ``run.py``. Unbiased for ``p^k`` under i.i.d. epochs; its
    variance is large when k is close to n. Requires ``k <= n``.

    References:
        Yao, Shinn, Razavi & Narasimhan (2024), arXiv:2406.12045.
    """
    n_arr = np.asarray(n, dtype=np.int64)
    c_arr = np.asarray(c, dtype=np.int64)
    _check(n_arr, c_arr, k)
    prod = np.ones(n_arr.shape, dtype=np.float64)
    for j in range(k):
        prod = prod * np.maximum(c_arr - j, 0) / (n_arr - j)
    return prod


@dataclass(frozen=True, slots=True)
class PassK:
    """Benchmark-level pass@k and pass^k for one k: means of the per-item estimates.

    The standard errors and intervals are the item-level ones of `estimate_mean` (clustered
    when the suite declares clusters): the per-item estimate is the item score. Only items
    with at least k usable epochs enter (``pass_hat_k.n_items`` of them); `n_items_short`
    counts the items left out because they had fewer.
    """

    k: int
    pass_at_k: Estimate
    pass_hat_k: Estimate
    n_items_short: int = 0

    def conf_int(self, level: float = 0.95) -> tuple[Interval, Interval]:
        """Intervals of (pass@k, pass^k) at `level`."""
        return self.pass_at_k.conf_int(level), self.pass_hat_k.conf_int(level)

    def to_dict(self) -> dict[str, Any]:
        """``k``, the items used, and the two estimates' value, se and interval."""
        return {
            "k": self.k,
            "n_items": self.pass_hat_k.n_items,
            "n_items_short": self.n_items_short,
            "pass_at_k": self.pass_at_k.mean,
            "pass_at_k_se": self.pass_at_k.se,
            "pass_at_k_ci": [self.pass_at_k.ci.low, self.pass_at_k.ci.high],
            "pass_hat_k": self.pass_hat_k.mean,
            "pass_hat_k_se": self.pass_hat_k.se,
            "pass_hat_k_ci": [self.pass_hat_k.ci.low, self.pass_hat_k.ci.high],
            "method": self.pass_hat_k.method,
        }

    def to_frame(self) -> pd.DataFrame:
        """One row: k and both estimates."""
        d = self.to_dict()
        for key in ("pass_at_k_ci", "pass_hat_k_ci"):
            low, high = d.pop(key)
            d[key + "_low"], d[key + "_high"] = low, high
        return pd.DataFrame([d])
