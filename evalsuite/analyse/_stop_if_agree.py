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
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt
from scipy import stats

from evalsuite.errors import UsageError

__all__ = [
    "AgreeOutcome",
    "BestCase",
    "StopIfAgree",
    "best_case",
    "plan_design",
    "plan_horizon",
    "stop_if_agree_run",
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


Draw = Callable[[IntArray], FloatArray]
"""Runs ``counts[j]`` more attempts of item j; returns each item's number of successes."""

_GRID = np.linspace(0.0, 1.0, 101)


def _pilot_prior(first: IntArray, k: int, iterations: int = 200) -> FloatArray:
    """The solve rates' distribution on a grid, fitted to the pilot counts (NPMLE by EM)."""
    lik = np.array([math.comb(k, s) * _GRID**s * (1 - _GRID) ** (k - s) for s in range(k + 1)])
    counts = np.bincount(first, minlength=k + 1).astype(float)
    prior = np.full(_GRID.size, 1 / _GRID.size)
    for _ in range(iterations):
        post = lik * prior
        post /= np.maximum(post.sum(axis=1, keepdims=True), 1e-300)
        prior = counts @ post / counts.sum()
    return np.asarray(prior, dtype=float)


def _posterior_mass(first: IntArray, k: int, per_item: FloatArray) -> FloatArray:
    """``sum_j per_item_j P(p = grid | pilot count_j)`` under the pilot's fitted prior."""
    prior = _pilot_prior(first, k)
    lik = np.array([math.comb(k, c) * _GRID**c * (1 - _GRID) ** (k - c) for c in range(k + 1)])
    post = lik * prior
    post /= np.maximum(post.sum(axis=1, keepdims=True), 1e-300)
    return np.asarray(np.bincount(first, weights=per_item, minlength=k + 1) @ post, dtype=float)


def plan_horizon(
    first: npt.ArrayLike,
    k: int,
    weights: npt.ArrayLike,
    target_variance: float,
    max_horizon: int,
) -> int:
    """The horizon the pilot asks for: the smallest whose predicted variance is on target.

    The item rates' distribution is fitted to the pilot counts (a grid NPMLE); each item's
    expected variance at a horizon is the exact `StopIfAgree.variance` averaged over its
    posterior given its own pilot count, weighted by ``w_j^2``. One horizon for every item:
    it depends on an item's own pilot only through the suite's histogram of pilot counts
    (as the wired design's plan does through the pilot variances). `max_horizon` when none
    up to it is on target.
    """
    s = np.asarray(first, dtype=np.int64)
    mass = _posterior_mass(s, k, np.asarray(weights, dtype=float) ** 2)
    for horizon in range(k, max_horizon + 1):
        if float(mass @ StopIfAgree(k, horizon).variance(_GRID)) <= target_variance:
            return horizon
    return max_horizon


def plan_design(
    first: npt.ArrayLike,
    pilot: int,
    weights: npt.ArrayLike,
    target_variance: float,
    max_horizon: int,
) -> tuple[int, int]:
    """(k, horizon) with the fewest predicted calls whose predicted variance is on target.

    `first`: each item's successes in `pilot` attempts. The prior fitted to them stands in
    for the known rates of `best_case` (``k >= pilot``; pure plans, no mixtures). Falls back
    to the fixed design with `max_horizon` epochs when no plan is on target.
    """
    s = np.asarray(first, dtype=np.int64)
    w = np.asarray(weights, dtype=float)
    var_mass = _posterior_mass(s, pilot, w**2)
    call_mass = _posterior_mass(s, pilot, np.ones(w.size))
    best: tuple[float, int, int] | None = None
    for k in range(max(pilot, 2), max_horizon + 1):
        for horizon in range(k, max_horizon + 1):
            plan = StopIfAgree(k, horizon)
            if float(var_mass @ plan.variance(_GRID)) <= target_variance:
                calls = float(call_mass @ plan.expected_calls(_GRID))
                if best is None or calls < best[0]:
                    best = (calls, k, horizon)
                break
    return (best[1], best[2]) if best is not None else (max_horizon, max_horizon)


@dataclass(frozen=True, slots=True)
class AgreeOutcome:
    """One stop-if-agree run: estimate, half-width, calls, the pilot and the horizon."""

    estimate: float
    halfwidth: float
    calls: int
    k: int
    horizon: int
    reached: bool


def stop_if_agree_run(
    weights: npt.ArrayLike,
    halfwidth: float,
    draw: Draw,
    *,
    k: int | None = 3,
    alpha: float = 0.05,
    reserve: float = 0.1,
) -> AgreeOutcome:
    """Run the stop-if-agree design for a target half-width (simulations, the benchmark).

    1. The pilot: `k` attempts on every item. ``k=None`` plans it from the target: 2
       attempts on every item, a prior fitted to their counts, and `plan_design`'s (k,
       horizon) under it (the known-rate best case with the prior for the rates); then
       ``k - 2`` more on every item.
    2. The horizon: `plan_horizon` from the k-pilot's counts, at most ``k + ceil(3 E_hat)``
       with ``E_hat = z^2 sum_j w_j^2 s_j^2 / H^2`` the fixed epochs the pilot's item
       variances ask for (as the wired design's plan).
    3. The items whose pilot was mixed run to the horizon.

    The estimate is ``sum_j w_j p_hat_j`` and the interval
    ``+- z sqrt(max(0, sum_j w_j^2 (p_hat_j^2 - p2_hat_j)))`` (an unbiased variance
    estimate), ``z`` the normal quantile at ``1 - alpha (1 - reserve) / 2``. One plan, no
    second top-up: a further extension chosen from the outcomes would change the design the
    estimators are unbiased for. `reached` says whether the interval is +-H.
    docs/design/sequential.md, "Why the call-ratio acceptance cannot be met from the run's
    own outcomes".
    """
    w = np.asarray(weights, dtype=float)
    w = w / w.sum()
    n = w.size
    z = float(stats.norm.isf(alpha * (1 - reserve) / 2))
    start = 2 if k is None else k
    first = np.asarray(draw(np.full(n, start, dtype=np.int64)), dtype=np.int64)
    e_hat = _fixed_epochs(first, start, w, halfwidth / z)
    if k is None:
        cap = start + math.ceil(3 * e_hat)
        k, _ = plan_design(first, start, w, (halfwidth / z) ** 2, cap)
        if k > start:
            first = first + np.asarray(draw(np.full(n, k - start, dtype=np.int64)), dtype=np.int64)
        e_hat = _fixed_epochs(first, k, w, halfwidth / z)
    horizon = plan_horizon(first, k, w, (halfwidth / z) ** 2, k + math.ceil(3 * e_hat))
    mixed = (first > 0) & (first < k)
    more = np.where(mixed, horizon - k, 0).astype(np.int64)
    total = first + np.asarray(draw(more), dtype=np.int64)
    p_hat, p2_hat = StopIfAgree(k, horizon).estimate(first, total)
    var = max(float(np.sum(w**2 * (p_hat**2 - p2_hat))), 0.0)
    half = z * math.sqrt(var)
    return AgreeOutcome(
        float(w @ p_hat), half, int(n * k + more.sum()), k, horizon, half <= halfwidth
    )


def _fixed_epochs(first: IntArray, k: int, w: FloatArray, sd: float) -> float:
    """Epochs a fixed design needs by the pilot's item variances: ``sum w^2 s^2 / sd^2``."""
    var = first * (k - first) / (k * (k - 1))  # unbiased s_j^2 of k 0/1 scores
    return max(float(np.sum(w**2 * var)) / sd**2, 1.0)
