"""Anytime-valid confidence sequences for adaptive runs (docs/design/adaptive.md).

`BettingCS` is the hedged betting confidence sequence of Waudby-Smith & Ramdas (2024),
"Estimating means of bounded random variables by betting", JRSS-B 86(1):1-27, section 4
(hedged capital process, predictable plug-in bets), generalised to observations whose
range ``[lo_t, hi_t]`` is known before each one is drawn. Its intervals hold, with
probability at least ``1 - alpha``, at every time at once, so they stay valid whenever a
run stops, however the stopping time was chosen.

`hoeffding_interval` is the fixed-sample interval the paired verdict uses for a stored
run that is not re-run (Hoeffding 1963, Theorem 2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from evalsuite.errors import UsageError

__all__ = [
    "BETTING_METHOD",
    "BET_RULES",
    "HOEFFDING_METHOD",
    "TARGET_METHOD",
    "BettingCS",
    "hoeffding_interval",
]

BETTING_METHOD = "betting_cs_hedged"
"""The method name every adaptive output carries: Waudby-Smith & Ramdas (2024) hedged
betting confidence sequence, predictable plug-in bets, running intersection."""

TARGET_METHOD = "betting_cs_hedged_target"
"""The same confidence sequence with bets tuned to reach a target half-width H soonest:
``lam_t = H / s2_{t-1}``. This is the fixed-size plug-in ``sqrt(2 log(2/alpha) / (s2 n))``
Waudby-Smith & Ramdas (2024) give for confidence intervals, with n set to the sample size at
which an interval of variance s2 is +-H wide, ``n = 2 s2 log(2/alpha) / H^2``. Any
predictable bet keeps the sequence valid at every time; this one makes it narrowest near H."""

BET_RULES = ("plugin", "target")
"""The bets `BettingCS` can place: the plug-in schedule, or tuned to a target half-width."""

_CHUNK_CELLS = 1 << 16
"""About how many (observation, grid point) cells `BettingCS.update` works on at a time."""

HOEFFDING_METHOD = "hoeffding_fixed"
"""Fixed-sample Hoeffding interval for the weighted mean of independent bounded attempts."""


def _check_alpha(alpha: float) -> None:
    if not 0 < alpha < 1:
        raise UsageError(f"alpha must be in (0, 1), e.g. 0.05 (got {alpha})")


@dataclass(slots=True)
class BettingCS:
    """A hedged betting confidence sequence for a mean known to lie in [`low`, `high`].

    Feed observations with `update` (a batch at a time, in draw order); `interval` is the
    running intersection of every interval so far. Observation ``x_t`` must satisfy
    ``E[x_t | past] = mu`` (the same unknown mean for every t) and lie in a range
    ``[lo_t, hi_t]`` fixed before it was drawn. For each candidate mean ``m`` on a grid of
    `grid` points the capital process is

        K_t(m) = max(theta * prod(1 + l+_i (x_i - m)), (1 - theta) * prod(1 - l-_i (x_i - m)))

    with ``l+_i = min(lam_i, c / (m - lo_i))``, ``l-_i = min(lam_i, c / (hi_i - m))`` and the
    predictable plug-in ``lam_i = sqrt(2 log(2/alpha) / (s2_{i-1} i log(1 + i)))``, where
    ``s2`` is the regularised running variance (Waudby-Smith & Ramdas 2024, eq. 26-27).
    ``m`` is excluded once ``K_t(m) >= 1/alpha`` (Ville's inequality); a grid point outside
    ``[lo_t, hi_t]`` is excluded at once (the conditional mean lies inside the range). The
    reported interval is widened by one grid step on each side, so that a true mean between
    grid points is never cut off.

    Attributes:
        alpha: 1 - confidence level.
        low, high: bounds the mean is known to lie in (a score: 0 and 1).
        grid: number of candidate means.
        theta: weight of the upward bet in the hedge (1/2: symmetric).
        c: truncation of the bets (1/2 in the paper's experiments; any c < 1 keeps every
            factor ``1 + l (x - m) >= 1 - c`` positive).
        bets: ``plugin`` (the schedule above) or ``target`` (``lam_i = target / s2_{i-1}``,
            `TARGET_METHOD`).
        target: the half-width the ``target`` bets aim at.
    """

    alpha: float = 0.05
    low: float = 0.0
    high: float = 1.0
    grid: int = 2001
    theta: float = 0.5
    c: float = 0.5
    bets: str = "plugin"
    target: float | None = None
    n: int = 0
    _m: npt.NDArray[np.float64] = field(init=False, repr=False)
    _log_up: npt.NDArray[np.float64] = field(init=False, repr=False)
    _log_down: npt.NDArray[np.float64] = field(init=False, repr=False)
    _excluded: npt.NDArray[np.bool_] = field(init=False, repr=False)
    _sum: float = field(init=False, default=0.0)
    _mu_hat: float = field(init=False, default=0.5)
    _ss: float = field(init=False, default=0.25)

    def __post_init__(self) -> None:
        _check_alpha(self.alpha)
        if not self.low < self.high:
            raise UsageError(f"BettingCS needs low < high (got {self.low}, {self.high})")
        if self.grid < 3:
            raise UsageError(f"BettingCS needs a grid of at least 3 points (got {self.grid})")
        if not 0 < self.theta < 1 or not 0 < self.c < 1:
            raise UsageError("BettingCS needs theta and c in (0, 1)")
        if self.bets not in BET_RULES:
            raise UsageError(
                f"BettingCS bets must be one of {', '.join(BET_RULES)} (got {self.bets})"
            )
        if self.bets == "target" and not (self.target is not None and self.target > 0):
            raise UsageError("BettingCS bets 'target' need the target half-width (> 0)")
        self._m = np.linspace(self.low, self.high, self.grid)
        self._log_up = np.zeros(self.grid)
        self._log_down = np.zeros(self.grid)
        self._excluded = np.zeros(self.grid, dtype=bool)
        self._mu_hat = (self.low + self.high) / 2
        self._ss = ((self.high - self.low) / 2) ** 2

    @property
    def method(self) -> str:
        """`BETTING_METHOD` (plug-in bets) or `TARGET_METHOD` (bets tuned to `target`)."""
        return BETTING_METHOD if self.bets == "plugin" else TARGET_METHOD

    def update(
        self,
        x: npt.ArrayLike,
        lo: npt.ArrayLike,
        hi: npt.ArrayLike,
    ) -> None:
        """Add observations `x` (in draw order) with their predictable ranges `lo`..`hi`.

        Raises:
            UsageError: shapes differ, a value is not finite, or an `x` outside its range.
        """
        xs = np.atleast_1d(np.asarray(x, dtype=float))
        los = np.broadcast_to(np.asarray(lo, dtype=float), xs.shape)
        his = np.broadcast_to(np.asarray(hi, dtype=float), xs.shape)
        if not (np.isfinite(xs).all() and np.isfinite(los).all() and np.isfinite(his).all()):
            raise UsageError("confidence sequence: observations and ranges must be finite")
        tol = 1e-9
        if (xs < los - tol).any() or (xs > his + tol).any():
            raise UsageError(
                "confidence sequence: an observation lies outside the range declared for it "
                "before it was drawn; the range must bound every possible observation"
            )
        lams = self._bets(xs)
        # Only grid points not yet excluded are worked on: exclusion is for good (the running
        # intersection), and what an excluded point's capital does later changes no output.
        # Rows go in chunks of about _CHUNK_CELLS cells, so a large batch never builds whole
        # (batch x grid) arrays, and a point excluded in one chunk is dropped from the next.
        # Each point's log capital is one running sum, observation after observation (a
        # cumulative sum carried across chunks and batches), so every number is the one the
        # definition gives one observation at a time, however the data are batched
        # (tests/analyse/test_confseq.py checks this bit for bit).
        cols = np.flatnonzero(~self._excluded)
        acc_up = self._log_up[cols]
        acc_down = self._log_down[cols]
        threshold = math.log(1 / self.alpha)
        log_theta, log_rest = math.log(self.theta), math.log(1 - self.theta)
        start = 0
        while start < xs.size and cols.size:
            stop = start + max(1, _CHUNK_CELLS // cols.size)
            li = los[start:stop, None]
            hj = his[start:stop, None]
            # a grid point outside the range of any observation is excluded (the conditional
            # mean lies inside every range); the points left are inside every range here
            grid = self._m[cols]
            outside = (grid < li.max() - tol) | (grid > hj.min() + tol)
            if outside.any():
                self._excluded[cols[outside]] = True
                inside = ~outside
                cols, grid = cols[inside], grid[inside]
                acc_up, acc_down = acc_up[inside], acc_down[inside]
            m = grid[None, :]
            lam = lams[start:stop, None]
            diff = xs[start:stop, None] - m
            with np.errstate(divide="ignore", invalid="ignore"):
                up = np.where(m > li, np.minimum(lam, self.c / (m - li)), lam)
                down = np.where(m < hj, np.minimum(lam, self.c / (hj - m)), lam)
                log_up = np.log(np.maximum(1 + up * diff, 0.0))
                log_down = np.log(np.maximum(1 - down * diff, 0.0))
            log_up[0] += acc_up  # the running sums carry on from the capital so far
            log_down[0] += acc_down
            path_up = np.cumsum(log_up, axis=0)
            path_down = np.cumsum(log_down, axis=0)
            capital = np.logaddexp(log_theta + path_up, log_rest + path_down)
            out = (capital >= threshold).any(axis=0)
            self._excluded[cols[out]] = True
            keep = ~out
            cols, acc_up, acc_down = cols[keep], path_up[-1][keep], path_down[-1][keep]
            start = stop
        self._log_up[cols] = acc_up
        self._log_down[cols] = acc_down

    def _bets(self, xs: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """The predictable bets of observations `xs` (in draw order), and the running moments.

        ``lam_i`` uses the regularised variance of the observations before i; the running
        sum, sum of squares and mean are then advanced over `xs`. Sequential sums are
        cumulative sums (the same additions in the same order), and squares and logarithms
        are taken by Python's own ``**`` and `math.log`, so the bets are bit for bit those of
        the one-observation-at-a-time loop.
        """
        k = xs.size
        if k == 0:
            return np.empty(0)
        t = np.arange(self.n + 1, self.n + k + 1)
        mid = (self.low + self.high) / 2
        sums = np.cumsum(np.concatenate(([self._sum], xs)))
        mu_after = (mid + sums[1:]) / (t + 1)
        mu_before = np.concatenate(([self._mu_hat], mu_after[:-1]))
        squares = [d**2 for d in (xs - mu_before).tolist()]
        ss = np.cumsum(np.concatenate(([self._ss], squares)))
        s2 = ss[:-1] / t  # regularised variance of the first t-1 observations
        lams: npt.NDArray[np.float64]
        if self.bets == "target" and self.target is not None:
            lams = self.target / s2
        else:
            z = math.log(2 / self.alpha)
            logs = np.array([math.log(1 + i) for i in t.tolist()])
            lams = np.sqrt(2 * z / (s2 * t * logs))
        self.n += k
        self._sum = float(sums[-1])
        self._ss = float(ss[-1])
        self._mu_hat = float(mu_after[-1])
        return lams

    def interval(self) -> tuple[float, float]:
        """The running intersection so far, widened by one grid step (clipped to the bounds).

        Before any observation it is [`low`, `high`]. If every grid point is excluded (an
        event of probability at most alpha) the interval is empty: (nan, nan).
        """
        kept = np.flatnonzero(~self._excluded)
        if kept.size == 0:
            return (math.nan, math.nan)
        step = (self.high - self.low) / (self.grid - 1)
        lower = max(self.low, float(self._m[kept[0]]) - step)
        upper = min(self.high, float(self._m[kept[-1]]) + step)
        return (lower, upper)

    @property
    def mean(self) -> float:
        """Mean of the observations so far (NaN before the first)."""
        return self._sum / self.n if self.n else math.nan


def hoeffding_interval(
    item_means: npt.ArrayLike,
    epochs: npt.ArrayLike,
    weights: npt.ArrayLike,
    *,
    alpha: float,
) -> tuple[float, float, float]:
    """(estimate, lower, upper): a fixed-sample interval for ``sum_i w_i p_i``.

    Each item i has `epochs` independent attempts in [0, 1] with mean p_i; the estimate
    ``sum_i w_i ybar_i`` is a sum of independent terms ``(w_i/k_i) y_ij`` each in an interval
    of width ``w_i/k_i``, so by Hoeffding's inequality (1963, Theorem 2) the two-sided
    half-width is ``sqrt(log(2/alpha) / 2 * sum_i w_i^2 / k_i)``. Conservative (it assumes
    the largest variance a [0, 1] attempt can have); the interval is clipped to [0, 1],
    where the mean lies.

    Raises:
        UsageError: lengths differ, an item without attempts, weights that do not sum to 1.
    """
    _check_alpha(alpha)
    y = np.asarray(item_means, dtype=float)
    k = np.asarray(epochs, dtype=float)
    w = np.asarray(weights, dtype=float)
    if not y.shape == k.shape == w.shape or y.ndim != 1 or y.size == 0:
        raise UsageError("hoeffding_interval: one mean, epoch count and weight per item")
    if (k < 1).any():
        raise UsageError("hoeffding_interval: every item needs at least one attempt")
    if (w < 0).any() or not math.isclose(float(w.sum()), 1.0, rel_tol=1e-9):
        raise UsageError("hoeffding_interval: weights must be non-negative and sum to 1")
    estimate = float(w @ y)
    half = math.sqrt(math.log(2 / alpha) / 2 * float(np.sum(w**2 / k)))
    return estimate, max(0.0, estimate - half), min(1.0, estimate + half)
