"""The betting confidence sequence (evalsuite/analyse/_confseq.py, docs/design/adaptive.md)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest

from evalsuite.analyse._confseq import BETTING_METHOD, BettingCS, hoeffding_interval
from evalsuite.errors import UsageError


def _reference_hedged(x: Sequence[float], m: float, alpha: float, c: float = 0.5) -> float:
    """Waudby-Smith & Ramdas (2024), hedged capital for [0, 1] data, written out by hand."""
    mu_hat, ss, total = 0.5, 0.25, 0.0
    up = down = 1.0
    best = 0.0
    for t, xi in enumerate(x, start=1):
        lam = math.sqrt(2 * math.log(2 / alpha) / (ss / t * t * math.log(1 + t)))
        up *= 1 + min(lam, c / m) * (xi - m)
        down *= 1 - min(lam, c / (1 - m)) * (xi - m)
        best = max(best, 0.5 * up + 0.5 * down)
        total += xi
        ss += (xi - mu_hat) ** 2
        mu_hat = (0.5 + total) / (t + 1)
    return best


def test_agrees_with_the_papers_formula_on_a_worked_example() -> None:
    x = [1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1] * 3
    cs = BettingCS(alpha=0.05, grid=401)
    cs.update(x, 0.0, 1.0)
    lower, upper = cs.interval()
    step = 1 / 400
    # every grid point the hand-written capital never drives to 1/alpha is kept, and only those
    kept = [m for m in np.linspace(0, 1, 401)[1:-1] if _reference_hedged(x, m, 0.05) < 20]
    assert lower == pytest.approx(max(0.0, min(kept) - step))
    assert upper == pytest.approx(min(1.0, max(kept) + step))
    assert lower < np.mean(x) < upper
    assert cs.method == BETTING_METHOD


def test_batches_give_the_same_interval_as_one_at_a_time() -> None:
    rng = np.random.default_rng(3)
    x = rng.random(300)
    whole = BettingCS()
    whole.update(x, 0.0, 1.0)
    pieces = BettingCS()
    for chunk in np.array_split(x, 7):
        pieces.update(chunk, 0.0, 1.0)
    assert whole.interval() == pieces.interval()


def _per_observation(
    cs: BettingCS, x: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The sequence's definition one observation at a time, on every grid point.

    Returns (excluded, log capital up, log capital down) after `x`, for a fresh `cs`'s
    settings: the bet of each observation from the running moments before it, then every
    grid point's two log capitals advanced by it and compared with log(1/alpha).
    """
    m = np.linspace(cs.low, cs.high, cs.grid)
    mid = (cs.low + cs.high) / 2
    n, total, mu_hat, ss = 0, 0.0, mid, ((cs.high - cs.low) / 2) ** 2
    up_cap, down_cap = np.zeros(cs.grid), np.zeros(cs.grid)
    excluded = np.zeros(cs.grid, dtype=bool)
    z, tol = math.log(2 / cs.alpha), 1e-9
    for xi, li, hj in zip(x.tolist(), lo.tolist(), hi.tolist(), strict=True):
        t = n + 1
        s2 = ss / t
        if cs.bets == "target":
            assert cs.target is not None
            lam = cs.target / s2
        else:
            lam = math.sqrt(2 * z / (s2 * t * math.log(1 + t)))
        n, total = t, total + xi
        ss += (xi - mu_hat) ** 2
        mu_hat = (mid + total) / (t + 1)
        outside = (m < li - tol) | (m > hj + tol)
        with np.errstate(divide="ignore", invalid="ignore"):
            up = np.where(m > li, np.minimum(lam, cs.c / (m - li)), lam)
            down = np.where(m < hj, np.minimum(lam, cs.c / (hj - m)), lam)
            log_up = np.log(np.maximum(1 + up * (xi - m), 0.0))
            log_down = np.log(np.maximum(1 - down * (xi - m), 0.0))
        up_cap = up_cap + np.where(outside, 0.0, log_up)
        down_cap = down_cap + np.where(outside, 0.0, log_down)
        capital = np.logaddexp(math.log(cs.theta) + up_cap, math.log(1 - cs.theta) + down_cap)
        excluded |= outside | (capital >= math.log(1 / cs.alpha))
    return excluded, up_cap, down_cap


@pytest.mark.parametrize(
    ("bets", "batches"),
    [("plugin", [1, 5, 40, 3000, 2]), ("target", [7, 700]), ("plugin", [600])],
)
def test_update_is_the_per_observation_definition_bit_for_bit(
    bets: str, batches: list[int]
) -> None:
    # Batches large enough to be worked on in several chunks (3,000 x 2,001 cells), ranges
    # declared per observation as an adaptive run's pseudo-outcomes have them, and a mean
    # near a bound. Every grid point's exclusion, and the log capital of every point still
    # kept, must be exactly the per-observation loop's: no rounding of its own.
    rng = np.random.default_rng(len(batches))
    k = sum(batches)
    lo = -rng.uniform(0.0, 0.5, k)
    hi = 1 + rng.uniform(0.0, 0.5, k)
    x = np.clip(rng.binomial(1, 0.93, k) + rng.normal(0, 0.2, k), lo, hi)
    kw = {"bets": bets, "target": 0.05, "c": 0.9} if bets == "target" else {}
    cs = BettingCS(low=-0.5, high=1.5, **kw)  # type: ignore[arg-type]
    done = 0
    for size in batches:
        cs.update(x[done : done + size], lo[done : done + size], hi[done : done + size])
        done += size
    excluded, up_cap, down_cap = _per_observation(cs, x, lo, hi)
    assert 0 < excluded.sum() < cs.grid - 10  # the test excludes some points and keeps many
    assert np.array_equal(cs._excluded, excluded)
    assert np.array_equal(cs._log_up[~excluded], up_cap[~excluded])
    assert np.array_equal(cs._log_down[~excluded], down_cap[~excluded])
    assert cs.n == k
    assert cs.mean == pytest.approx(float(np.mean(x)), rel=1e-12)


def test_covers_at_every_time_on_simulated_data() -> None:
    # time-uniform: the fraction of paths that EVER exclude the truth is at most alpha
    rng = np.random.default_rng(20261201)
    misses = 0
    reps = 200
    for _ in range(reps):
        mu = rng.uniform(0.05, 0.95)
        cs = BettingCS(alpha=0.1, grid=501)
        for _ in range(10):
            cs.update(rng.binomial(1, mu, 50).astype(float), 0.0, 1.0)
            lower, upper = cs.interval()
            if not lower <= mu <= upper:
                misses += 1
                break
    assert misses / reps <= 0.1


def test_width_shrinks_like_sqrt_log_n_over_n() -> None:
    # Fed in batches of 1,000 (the same interval as one batch, as
    # test_batches_give_the_same_interval_as_one_at_a_time shows) on a 2,001-point grid; one
    # 16,000 x 4,001 batch cost 15 s of CPU in memory traffic, this about 4 s (0.2 s since
    # BettingCS.update works only on the grid points still kept). The
    # width at n = 16,000 (about 0.02) is still some 40 grid steps. Seed 5 scales to a spread
    # of 1.15; a constant bet (lam = 0.3, whose width stops shrinking) spreads it by 1.67.
    rng = np.random.default_rng(5)
    cs = BettingCS(grid=2001)
    widths = {}
    x = rng.binomial(1, 0.4, 16000).astype(float)
    for start in range(0, 16000, 1000):
        cs.update(x[start : start + 1000], 0.0, 1.0)
        n = start + 1000
        if n in (1000, 4000, 16000):
            lower, upper = cs.interval()
            widths[n] = upper - lower
    # four times the data: width / sqrt(log n / n) stays within a narrow band
    scaled = [widths[n] / math.sqrt(math.log(n) / n) for n in widths]
    assert max(scaled) / min(scaled) < 1.35
    assert widths[16000] < widths[4000] < widths[1000]


def test_predictable_ranges_exclude_impossible_means() -> None:
    cs = BettingCS()
    cs.update([0.7, 0.72], [0.6, 0.6], [0.9, 0.9])  # the mean lies in the declared range
    lower, upper = cs.interval()
    assert lower >= 0.6 - 1e-3
    assert upper <= 0.9 + 1e-3


def test_refuses_an_observation_outside_its_range() -> None:
    with pytest.raises(UsageError, match="outside the range"):
        BettingCS().update([1.5], 0.0, 1.0)


def test_refuses_bad_settings() -> None:
    with pytest.raises(UsageError, match="alpha"):
        BettingCS(alpha=1.5)
    with pytest.raises(UsageError, match="low < high"):
        BettingCS(low=1.0, high=0.0)


def test_hoeffding_interval_formula() -> None:
    est, lo, hi = hoeffding_interval([0.2, 0.8], [4, 4], [0.5, 0.5], alpha=0.05)
    half = math.sqrt(math.log(40) / 2 * (0.25 / 4 * 2))
    assert est == pytest.approx(0.5)
    assert (lo, hi) == pytest.approx((0.5 - half, 0.5 + half))
    with pytest.raises(UsageError, match="sum to 1"):
        hoeffding_interval([0.2], [1], [0.3], alpha=0.05)


def test_target_bets_cover_at_every_time_and_are_narrower_near_the_target() -> None:
    rng = np.random.default_rng(20261202)
    misses = 0
    reps = 200
    for _ in range(reps):
        mu = rng.uniform(0.05, 0.95)
        cs = BettingCS(alpha=0.1, grid=501, bets="target", target=0.05, c=0.9)
        for _ in range(10):
            cs.update(rng.binomial(1, mu, 50).astype(float), 0.0, 1.0)
            lower, upper = cs.interval()
            if not lower <= mu <= upper:
                misses += 1
                break
    assert misses / reps <= 0.1
    x = rng.binomial(1, 0.3, 2000).astype(float)
    plug, tuned = BettingCS(), BettingCS(bets="target", target=0.03, c=0.9)
    plug.update(x, 0.0, 1.0)
    tuned.update(x, 0.0, 1.0)
    assert tuned.method == "betting_cs_hedged_target"
    width = {k: cs.interval()[1] - cs.interval()[0] for k, cs in (("p", plug), ("t", tuned))}
    assert width["t"] < 0.9 * width["p"]


def test_target_bets_need_a_target() -> None:
    with pytest.raises(UsageError, match="need the target half-width"):
        BettingCS(bets="target")
    with pytest.raises(UsageError, match="bets must be one of"):
        BettingCS(bets="kelly")
