"""The "stop-if-agree" design for one item: its exact unbiased estimates, calls and variance.

docs/design/sequential.md, "Why the call-ratio acceptance cannot be met from the run's own
outcomes". Not wired into any command: it is the study behind that section, measured by
``benchmarks/bench_adaptive.py --agree-reps``.

**The design, per item.** A pilot of ``k`` attempts (``k >= 2``). If the ``k`` outcomes all
agree (all solved or all failed) the item stops; otherwise it continues to ``horizon``
attempts in all (``horizon >= k``; ``horizon = k`` is the fixed design with ``k`` epochs).

**Sufficient statistic.** With ``S`` the pilot's successes and ``T`` the successes of all
attempts run, the likelihood is ``p^k`` (stopped at ``S = k``), ``(1 - p)^k`` (stopped at
``S = 0``), or ``p^T (1 - p)^(horizon - T)`` times a count of paths (continued), so the
outcome ``(stopped at 0 | stopped at 1 | continued with T)`` is sufficient. It is also
complete: its ``horizon + 1`` probabilities (two stops, ``T = 1 .. horizon - 1``) are, in the
Bernstein basis of degree ``horizon``, a triangular change of basis, so the only function of
it with expectation 0 for every p is 0. By Lehmann-Scheffe, each unbiased estimator below is
the **unique** unbiased function of the statistic, and it has the least variance of every
unbiased estimator of that quantity under this design, whatever it uses of the item's
outcomes.

**The estimators.** Rao-Blackwell of ``X_1`` (for p) and ``X_1 X_2`` (for ``p^2``): stopped
items give their common outcome (0 or 1) for both; a continued item with ``T`` successes gives
``E[X_1 ... X_m | T, pilot mixed]`` =
``sum_{s=m}^{k-1} C(k-m, s-m) C(horizon-k, T-s) / sum_{s=1}^{k-1} C(k, s) C(horizon-k, T-s)``
for ``m = 1, 2`` (Girshick, Mosteller & Savage 1946; `_sequential.two_stage_estimate` is the
``m = 1`` case). ``p_hat^2 - p2_hat`` is then unbiased for the variance of ``p_hat``.

**Known rates.** `expected_calls` and `variance` are exact (sums over the outcomes), and
`best_case` the cheapest (k, horizon) that reaches a target variance with the true rates
known: no run that estimates them from its own outcomes can do better with this design.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from evalsuite.errors import UsageError

__all__ = [
    "BestCase",
    "StopIfAgree",
    "best_case",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def _c(n: int, r: int) -> int:
    return math.comb(n, r) if 0 <= r <= n else 0


@lru_cache(maxsize=4096)
def _tables(k: int, horizon: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(paths to T with the pilot mixed; those with X_1 = 1; with X_1 = X_2 = 1), T = 0..horizon."""
    rest = horizon - k
    den, one, two = [], [], []
    for total in range(horizon + 1):
        den.append(sum(_c(k, s) * _c(rest, total - s) for s in range(1, k)))
        one.append(sum(_c(k - 1, s - 1) * _c(rest, total - s) for s in range(1, k)))
        two.append(sum(_c(k - 2, s - 2) * _c(rest, total - s) for s in range(2, k)))
    return tuple(den), tuple(one), tuple(two)


@dataclass(frozen=True, slots=True)
class StopIfAgree:
    """One item's plan: `k` attempts; if they are mixed, continue to `horizon` attempts.

    See the module docstring and docs/design/sequential.md ("Why the call-ratio acceptance
    cannot be met from the run's own outcomes").
    """

    k: int
    horizon: int

    def __post_init__(self) -> None:
        if self.k < 2 or self.horizon < self.k:
            raise UsageError(
                f"stop-if-agree needs a pilot of at least 2 attempts and a horizon no shorter "
                f"than the pilot (got k = {self.k}, horizon = {self.horizon})"
            )

    @property
    def p_table(self) -> FloatArray:
        """Unbiased estimate of p for a continued item, by total successes 0..horizon.

        NaN where a continued item cannot end (T = 0 or T = horizon).
        """
        den, one, _ = _tables(self.k, self.horizon)
        return _ratio(one, den)

    @property
    def p2_table(self) -> FloatArray:
        """Unbiased estimate of p^2 for a continued item, by total successes (NaN: impossible)."""
        den, _, two = _tables(self.k, self.horizon)
        return _ratio(two, den)

    def _check(self, first: IntArray, total: IntArray) -> npt.NDArray[np.bool_]:
        mixed = (first > 0) & (first < self.k)
        bad = (
            (first < 0)
            | (first > self.k)
            | (total < first)
            | (total > first + self.horizon - self.k)
        )
        if (bad | (~mixed & (total != first))).any():
            raise UsageError(
                "stop-if-agree: counts out of range (an item whose pilot agreed is never "
                "continued; a continued one has at most horizon - k more successes)"
            )
        return mixed

    def estimate(self, first: npt.ArrayLike, total: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Per item: (unbiased estimate of p, unbiased estimate of p^2).

        Args:
            first: the pilot's successes (0..k).
            total: the successes of all attempts run (= `first` when the pilot agreed).

        Raises:
            UsageError: counts the design cannot produce.
        """
        s = np.asarray(first, dtype=np.int64)
        t = np.asarray(total, dtype=np.int64)
        mixed = self._check(s, t)
        stopped = s / self.k  # 0 or 1 wherever not mixed
        p_hat = np.where(mixed, self.p_table[np.where(mixed, t, 0)], stopped)
        p2_hat = np.where(mixed, self.p2_table[np.where(mixed, t, 0)], stopped)
        return np.asarray(p_hat, dtype=float), np.asarray(p2_hat, dtype=float)

    def variance_estimate(self, first: npt.ArrayLike, total: npt.ArrayLike) -> FloatArray:
        """Per item: ``p_hat^2 - p2_hat``, unbiased for the variance of ``p_hat``."""
        p_hat, p2_hat = self.estimate(first, total)
        return np.asarray(p_hat**2 - p2_hat, dtype=float)

    def continue_probability(self, p: npt.ArrayLike) -> FloatArray:
        """Chance the pilot is mixed: ``1 - p^k - (1 - p)^k``."""
        q = np.asarray(p, dtype=float)
        return np.asarray(1 - q**self.k - (1 - q) ** self.k, dtype=float)

    def expected_calls(self, p: npt.ArrayLike) -> FloatArray:
        """Exact expected attempts per item: ``k + (horizon - k) (1 - p^k - (1 - p)^k)``."""
        return np.asarray(
            self.k + (self.horizon - self.k) * self.continue_probability(p), dtype=float
        )

    def variance(self, p: npt.ArrayLike) -> FloatArray:
        """Exact variance of the unbiased estimate of p, per solve rate p.

        ``p^k + sum_T den_T (one_T / den_T)^2 p^T (1 - p)^(horizon - T) - p^2`` (the stops at
        0 add nothing to the second moment).
        """
        q = np.asarray(p, dtype=float)
        den, one, _ = _tables(self.k, self.horizon)
        t = np.arange(self.horizon + 1)
        weight = np.array([a * a / b if b else 0.0 for a, b in zip(one, den, strict=True)])
        paths = q[..., None] ** t * (1 - q[..., None]) ** (self.horizon - t)
        second = q**self.k + paths @ weight
        return np.asarray(np.clip(second - q**2, 0.0, None), dtype=float)


def _ratio(num: tuple[int, ...], den: tuple[int, ...]) -> FloatArray:
    return np.array([a / b if b else math.nan for a, b in zip(num, den, strict=True)])


@dataclass(frozen=True, slots=True)
class BestCase:
    """The cheapest stop-if-agree design reaching a target variance, item rates known.

    A random share of the items (drawn independently of every outcome) may follow one plan
    and the rest another: calls and variance are then linear in the share, as for the
    oracle fixed design's fractional epochs. ``k == k2`` and ``horizon == horizon2`` when one
    plan suffices.
    """

    ratio: float
    """Expected calls / the oracle fixed design's (``oracle_epochs`` per item)."""
    k: int
    horizon: int
    share: float
    """Share of the items on (k, horizon); the rest on (k2, horizon2)."""
    k2: int
    horizon2: int
    calls: float
    variance: float


def best_case(
    p: npt.ArrayLike,
    oracle_epochs: float,
    max_k: int | None = None,
    max_horizon: int | None = None,
) -> BestCase:
    """Known rates `p` (equal weights): the cheapest stop-if-agree design as precise as the oracle.

    The oracle fixed design runs `oracle_epochs` on every item: its estimate of the suite's
    mean has variance ``sum_j p_j (1 - p_j) / (N^2 E0)``, with ``N E0`` calls. Every plan
    ``(k, horizon)`` with ``2 <= k <= max_k`` (default ``max(6, ceil(E0))``) and
    ``k <= horizon <= max_horizon`` (default ``4 ceil(E0) + 8``) has exact expected calls
    and variance; the best is the cheapest random mixture of two plans whose variance is no
    larger than the oracle's (the lower convex hull). ``horizon = k`` is the fixed design
    with k epochs, so an integer `oracle_epochs` >= 2 is always within reach at ratio 1.
    docs/design/sequential.md, "Why the call-ratio acceptance cannot be met from the run's
    own outcomes".

    Raises:
        UsageError: no rates, or a non-positive `oracle_epochs`, or no plan reaches it.
    """
    rates = np.asarray(p, dtype=float)
    if rates.size == 0 or not oracle_epochs > 0:
        raise UsageError("best_case needs item rates and a positive number of oracle epochs")
    n = rates.size
    top_k = max_k if max_k is not None else max(6, math.ceil(oracle_epochs))
    top_h = max_horizon if max_horizon is not None else 4 * math.ceil(oracle_epochs) + 8
    target = float(np.sum(rates * (1 - rates))) / (n**2 * oracle_epochs)
    plans, calls_, vars_ = [], [], []
    for k in range(2, top_k + 1):
        for horizon in range(k, max(top_h, k) + 1):
            plan = StopIfAgree(k, horizon)
            plans.append((k, horizon))
            calls_.append(float(np.sum(plan.expected_calls(rates))))
            vars_.append(float(np.sum(plan.variance(rates))) / n**2)
    c, v = np.array(calls_), np.array(vars_)
    tol = target * 1e-12
    below = np.flatnonzero(v <= target + tol)
    if below.size == 0:
        raise UsageError(
            f"no stop-if-agree plan with a horizon up to {top_h} reaches the oracle's "
            "variance: raise max_horizon"
        )
    above = np.flatnonzero(v > target + tol)
    i = int(below[np.argmin(c[below])])
    best = BestCase(
        float(c[i]) / (n * oracle_epochs), *plans[i], 1.0, *plans[i], float(c[i]), float(v[i])
    )
    if above.size:
        a, b = above[:, None], below[None, :]
        share = (target - v[b]) / (v[a] - v[b])  # on the plan above the target
        mixed = c[b] + share * (c[a] - c[b])
        ia, ib = np.unravel_index(int(np.argmin(mixed)), mixed.shape)
        if mixed[ia, ib] < best.calls:
            j, m = int(above[ia]), int(below[ib])
            cost = float(mixed[ia, ib])
            best = BestCase(
                cost / (n * oracle_epochs),
                *plans[j],
                float(share[ia, ib]),
                *plans[m],
                cost,
                target,
            )
    return best
