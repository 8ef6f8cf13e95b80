"""Paired tests on item-level differences: t (clustered), sign-flip permutation, McNemar mid-p."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats
from statsmodels.stats.multitest import multipletests

from evalsuite.analyse._intervals import check_level, cluster_codes, cluster_variance, t_interval
from evalsuite.analyse._power import MDE_POWER, mde_from_se
from evalsuite.analyse._table import Interval, IntervalFields, Table
from evalsuite.errors import UsageError

__all__ = [
    "EXACT_PERMUTATION_MAX",
    "MDE_POWER",
    "PairedDiff",
    "holm_adjust",
    "mcnemar_midp",
    "paired_difference",
    "sign_flip_p",
    "zero_variance_p",
]

EXACT_PERMUTATION_MAX = 20
"""Up to this many units the sign-flip test enumerates all 2^n sign patterns."""
ZERO_DIFF = 1e-12
"""A mean difference smaller than this in absolute value is no difference (float rounding)."""


@dataclass(frozen=True, slots=True)
class PairedDiff(IntervalFields):
    """Mean paired difference (candidate − baseline) of item means, with its t inference.

    Attributes:
        diff: mean of the per-item differences d_i.
        se: SE of `diff`: ``sd(d)/√n``, or cluster-robust with C/(C−1) when clustered.
        ci: two-sided interval at `level` on `df` degrees of freedom.
        level: confidence level of `ci`.
        df: ``n − 1``, or ``C − 1`` when clustered.
        p_value: two-sided p-value for ``H0: mean difference = 0``: the paired t's, or the
            exact sign-flip p-value when the t is undefined (`p_method` says which).
        n_items: paired items.
        n_clusters: independent units (items when unclustered).
        method: ``paired_t`` or ``cluster_paired_t``.
        mde: difference detectable with power 0.8 at `alpha` (noncentral t, this SE and df).
        alpha: significance level of the MDE.
        note: why a figure is undefined, when one is.
        p_method: ``t`` (paired t) or ``exact_sign_flip`` (the differences have no variance,
            or there is one unit: see `zero_variance_p`).
    """

    diff: float
    se: float
    ci: Interval
    level: float
    df: float
    p_value: float
    n_items: int
    n_clusters: int
    method: str
    mde: float
    alpha: float
    note: str
    p_method: str = "t"

    def conf_int(self, level: float = 0.95) -> Interval:
        """The t interval of `diff` at `level`."""
        check_level(level)
        return t_interval(self.diff, self.se, self.df, level, bounds=(-1.0, 1.0))

    def summary(self) -> Table:
        """One row: difference, se, interval, p, n, MDE."""
        return Table.build(
            "Paired difference (candidate − baseline)",
            ["diff", "se", f"{self.level:.0%} CI", "p", "n items", "MDE", "method"],
            [[self.diff, self.se, self.ci, self.p_value, self.n_items, self.mde, self.method]],
            [self.note] if self.note else [],
        )


def paired_difference(
    d: npt.ArrayLike,
    *,
    clusters: npt.ArrayLike | None = None,
    level: float = 0.95,
    alpha: float = 0.05,
) -> PairedDiff:
    """Paired t inference on per-item differences ``d_i = ȳ_cand,i − ȳ_base,i``.

    Args:
        d: one difference per paired item, each in [−1, 1].
        clusters: cluster key per item (None: unclustered).
        level: confidence level of the interval.
        alpha: level of the MDE (power 0.8, two-sided).

    Returns:
        The `PairedDiff`.

    Notes:
        ``t = d̄/SE`` on ``t_{n−1}``; with clusters the SE is cluster-robust (equivalently:
        sum d within clusters) on ``t_{C−1}``, the same as statsmodels
        ``OLS(d, 1).fit(cov_type="cluster", use_t=True)``. Valid for any number of epochs,
        because the unit is the item (docs/methods.md, "Paired comparisons"). The SE, interval
        and MDE are undefined (NaN, reason in ``note``) with fewer than two units. When the t
        p-value is undefined (no variance of d, or one unit) ``p_value`` is the exact
        sign-flip p-value (`zero_variance_p`) and ``p_method`` says so: a difference is never
        left without a p-value it has.

    References:
        Miller (2024), arXiv:2411.00640, section on paired differences. Student (1908),
        Biometrika 6:1.
    """
    check_level(level)
    values = np.asarray(d, dtype=np.float64)
    if values.ndim != 1 or not np.all(np.abs(values) <= 1.0):
        raise UsageError("'d' must be a 1-d array of differences in [-1, 1]")
    n = len(values)
    codes = cluster_codes(clusters, n)
    var, n_clusters = cluster_variance(values, codes)
    method = "paired_t" if clusters is None else "cluster_paired_t"
    diff = float(values.mean()) if n else math.nan
    df = float(n_clusters - 1)
    if not math.isfinite(var):
        exact = zero_variance_p(diff, n_clusters)
        return PairedDiff(
            diff,
            math.nan,
            Interval(math.nan, math.nan),
            level,
            df,
            exact,
            n,
            n_clusters,
            method,
            math.nan,
            alpha,
            f"{n_clusters} unit(s): a paired t needs at least two"
            + ("; p is the exact sign-flip p-value over one unit (1)" if n_clusters else ""),
            "exact_sign_flip" if n_clusters else "undefined",
        )
    se = math.sqrt(var)
    ci = t_interval(diff, se, df, level, bounds=(-1.0, 1.0))
    mde = mde_from_se(se, df, alpha=alpha, power=MDE_POWER)
    if se == 0.0:
        return PairedDiff(
            diff,
            se,
            ci,
            level,
            df,
            zero_variance_p(diff, n_clusters),
            n,
            n_clusters,
            method,
            mde,
            alpha,
            "the paired differences have no variance, so the t p-value is undefined: p is the "
            f"exact sign-flip p-value over {n_clusters} units"
            + (" (no difference: 1)" if abs(diff) < ZERO_DIFF else f" (2 × 0.5^{n_clusters})"),
            "exact_sign_flip",
        )
    p = float(2.0 * stats.t.sf(abs(diff / se), df))
    return PairedDiff(diff, se, ci, level, df, p, n, n_clusters, method, mde, alpha, "")


def zero_variance_p(diff: float, units: int) -> float:
    """Exact two-sided sign-flip p-value when every unit carries the same difference.

    With no variance between units (every item difference equal, or every cluster's total
    proportional to its size), the observed sum is the most extreme of the ``2^C`` sign
    patterns: ``p = 2 · 0.5^C`` (at most 1) when the difference is not 0, and ``p = 1`` when
    it is. This is what `sign_flip_p` returns on such data, in closed form for any C, so a
    stratum whose items all improved by the same amount keeps a p-value (and its place in the
    Holm family) instead of a NaN.

    Args:
        diff: the mean difference.
        units: independent units C (clusters, or items when unclustered).

    Returns:
        The p-value; NaN when there is no unit.

    References:
        Fisher (1935), The Design of Experiments, ch. 3 (the randomisation test of paired
        differences).
    """
    if units < 1 or not math.isfinite(diff):
        return math.nan
    if abs(diff) < ZERO_DIFF:
        return 1.0
    return min(1.0, math.ldexp(1.0, 1 - units))


def _exact_sign_flip(totals: npt.NDArray[np.float64]) -> float:
    """Exact two-sided sign-flip p over all 2^n patterns, with scipy's rule and tie tolerance."""
    # every one of the 2^n signed sums, built by doubling (20 units: 1M sums, ~20 ms)
    sums = np.zeros(1)
    for value in totals:
        sums = np.concatenate([sums + value, sums - value])
    observed = float(totals.sum())
    gamma = abs(observed) * 100 * np.finfo(np.float64).eps  # scipy's tie tolerance
    greater = float(np.mean(sums >= observed - gamma))
    less = float(np.mean(sums <= observed + gamma))
    return min(1.0, 2.0 * min(greater, less))


def sign_flip_p(
    d: npt.NDArray[np.float64],
    clusters: npt.ArrayLike | None,
    *,
    n_resamples: int,
    rng: np.random.Generator,
) -> tuple[float, bool]:
    """Two-sided sign-flip permutation p-value of ``H0: d symmetric about 0``; and exactness.

    Signs are flipped per item, or per cluster on the cluster sums of d when clustered
    (resampling at the cluster level, as in Cameron & Miller 2015); the statistic is the sum
    (equivalently the mean). With at most
    `EXACT_PERMUTATION_MAX` units all 2^n patterns are enumerated (exact); otherwise
    ``scipy.stats.permutation_test(permutation_type="samples")`` draws `n_resamples` patterns
    from `rng`. The exact branch is our own enumeration because scipy's takes ~5 s at n = 20;
    it returns scipy's exact p-value (same two-sided rule ``2·min(P(T ≥ t), P(T ≤ t))`` and
    tie tolerance), which the tests check.
    """
    codes = cluster_codes(clusters, len(d))
    values = np.asarray(d, dtype=np.float64)
    totals = (
        np.bincount(codes, weights=values).astype(np.float64) if clusters is not None else values
    )
    if len(totals) == 0:
        return math.nan, False
    if len(totals) <= EXACT_PERMUTATION_MAX:
        return _exact_sign_flip(totals), True
    if _streams_like_scipy(rng):
        null = _sign_flip_null(totals, n_resamples, rng)
        observed = float(np.sum(totals))
        gamma = abs(observed * np.finfo(np.float64).eps * 100)  # scipy's tie tolerance
        less = (np.count_nonzero(null <= observed + gamma) + 1.0) / (n_resamples + 1.0)
        greater = (np.count_nonzero(null >= observed - gamma) + 1.0) / (n_resamples + 1.0)
        return min(1.0, 2.0 * min(less, greater)), False
    result = stats.permutation_test(
        (totals,),
        lambda x, axis: np.sum(x, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=n_resamples,
        alternative="two-sided",
        rng=rng,
        batch=SCIPY_BATCH,
    )
    return min(1.0, float(result.pvalue)), False


SCIPY_BATCH = 1000
"""Sign patterns per batch of ``scipy.stats.permutation_test`` (its default, all at once, is
3x slower at 3000 items); the batch sets how many random numbers are drawn, so the
column-wise path below draws the same."""
_ROWS_PER_CHUNK = 64
"""Sign patterns computed at once by `_sign_flip_null` (memory: 64 × units × 4 bytes)."""


_COMMON_VALUES = 16
"""Distinct values whose pattern sums are counted by popcount; the rest use byte tables."""


def _bytes(bits: npt.NDArray[np.uint8], n_words: int) -> npt.NDArray[np.uint8]:
    """0/1 matrix (patterns × items) packed 8 items to a byte, padded to 64-bit words."""
    packed = np.packbits(bits, axis=1, bitorder="little")  # the last byte zero-filled
    out = np.zeros((bits.shape[0], n_words * 8), dtype=np.uint8)
    out[:, : packed.shape[1]] = packed
    return out


def _kept_sum(
    totals: npt.NDArray[np.float64],
) -> Callable[[npt.NDArray[np.uint8]], npt.NDArray[np.float64]]:
    """``0/1 matrix (patterns × items) -> Σ x_i over the items whose bit is 1``, per pattern.

    The most frequent values (item means of 0/1 scores over K epochs take few: multiples of
    1/K) count their set bits with a popcount over 64-bit words and weight the counts; the
    items with rarer values look each byte of their packed bits up in a table of the sums
    of its 8 items' values over all 256 patterns.
    """
    n = len(totals)
    values, inverse, counts = np.unique(totals, return_inverse=True, return_counts=True)
    common = np.argsort(-counts, kind="stable")[:_COMMON_VALUES]
    if counts[common].sum() * 2 < n:  # mostly distinct values: every item by table
        common = common[:0]
    n_words = -(-n // 64)
    member = np.zeros((len(common), n_words * 64), dtype=np.uint8)
    slot = np.full(len(values), -1)
    slot[common] = np.arange(len(common))
    rows = slot[inverse]
    member[rows[rows >= 0], np.flatnonzero(rows >= 0)] = 1
    masks = np.packbits(member, axis=1, bitorder="little").view(np.uint64)
    weights = values[common]
    rare = np.flatnonzero(rows < 0)
    rare_words = -(-len(rare) // 64)
    padded = np.zeros(rare_words * 64)
    padded[: len(rare)] = totals[rare]
    bits = ((np.arange(256)[:, None] >> np.arange(8)[None, :]) & 1).astype(np.float64)
    table = (bits @ padded.reshape(-1, 8).T).T.ravel()  # [byte position, bit pattern]
    base = np.arange(rare_words * 8, dtype=np.intp) * 256

    def kept(low: npt.NDArray[np.uint8]) -> npt.NDArray[np.float64]:
        out = np.zeros(len(low))
        if len(masks):
            words = _bytes(low, n_words).view(np.uint64)
            tallies = np.stack(
                [np.bitwise_count(words & m).sum(axis=1, dtype=np.int64) for m in masks], axis=1
            )
            out += tallies.astype(np.float64) @ weights
        if len(rare):
            subset = low if len(rare) == n else low[:, rare]
            out += table[_bytes(subset, rare_words).astype(np.intp) + base].sum(axis=1)
        return out

    return kept


def _streams_like_scipy(rng: np.random.Generator) -> bool:
    """Whether `_sign_flip_null` reproduces scipy's draws from `rng` (PCG64, little-endian)."""
    return (
        type(rng.bit_generator) is np.random.PCG64
        and sys.byteorder == "little"
        and hasattr(rng, "permuted")
    )


def _sign_flip_null(
    totals: npt.NDArray[np.float64], n_resamples: int, rng: np.random.Generator
) -> npt.NDArray[np.float64]:
    """The sign-flip null distribution scipy's ``permutation_test`` draws, without its memory.

    scipy (``permutation_type="samples"``, one sample) pairs each value x_i with −x_i and
    permutes every pair with ``rng.permuted`` over ``(batch, n, 2)`` index arrays: one
    Fisher–Yates step per pair, i.e. one 32-bit draw whose lowest bit keeps (1) or swaps (0)
    the pair. At 100,000 items that is 1.6 GB of indices per batch and 7 GB in all. The same
    32-bit draws are taken here straight from the bit generator (PCG64 hands out the low,
    then the high half of each 64-bit output, and buffers a spare half between calls),
    64 patterns at a time, and each pattern's sum is built from packed bits (`_kept_sum`).
    The generator is left exactly where scipy leaves it (whole batches are drawn), and the
    sums differ from scipy's only by rounding, which its tie tolerance absorbs
    (tests/analyse/test_scale_parity.py checks the p-values are equal).
    """
    n = len(totals)
    batch = min(SCIPY_BATCH, n_resamples)
    drawn = -(-n_resamples // batch) * batch  # scipy permutes whole batches
    kept_sum = _kept_sum(totals)
    total = float(np.sum(totals))
    generator = rng.bit_generator
    state = generator.state
    carry: list[int] = []
    if state.get("has_uint32"):
        carry = [int(state["uinteger"])]
        generator.state = {**state, "has_uint32": 0, "uinteger": 0}
    null = np.empty(n_resamples)
    for start in range(0, drawn, _ROWS_PER_CHUNK):
        rows = min(_ROWS_PER_CHUNK, drawn - start)
        need = rows * n - len(carry)
        raw = generator.random_raw((need + 1) // 2).view(np.uint32)
        words = np.concatenate([np.array(carry, dtype=np.uint32), raw]) if carry else raw
        carry = [int(words[-1])] if need % 2 else []
        keep = min(rows, n_resamples - start)
        if keep <= 0:
            continue
        low = words[: keep * n].astype(np.uint8)  # the lowest bit of each 32-bit draw
        low &= 1
        null[start : start + keep] = 2.0 * kept_sum(low.reshape(keep, n)) - total
    if carry:
        generator.state = {**generator.state, "has_uint32": 1, "uinteger": carry[0]}
    return null


def mcnemar_midp(b: int, c: int) -> float:
    """McNemar mid-p for b and c discordant pairs: ``2·F(min; b+c, ½) − f(min; b+c, ½)``.

    1 when there are no discordant pairs. statsmodels' ``mcnemar`` has no mid-p option.

    References:
        Fagerland, Lydersen & Laake (2013), BMC Med. Res. Methodol. 13:91.
    """
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    return float(min(1.0, 2.0 * stats.binom.cdf(k, n, 0.5) - stats.binom.pmf(k, n, 0.5)))


def holm_adjust(pvals: list[float], alpha: float) -> npt.NDArray[np.float64]:
    """Holm-adjusted p-values over every stratum.

    Every stratum with a paired item has a p-value (`paired_difference` falls back to the
    exact sign-flip p-value when the t is undefined), so the family is every stratum: a
    stratum is never dropped from the adjustment, which would make the others' adjustment
    too lenient. A NaN (a stratum with no item, which pairing cannot produce) stays NaN and
    is adjusted as if it were 1, never left out.
    """
    p = np.asarray(pvals, dtype=np.float64)
    if len(p) == 0:
        return p
    adjusted = multipletests(np.where(np.isfinite(p), p, 1.0), alpha=alpha, method="holm")[1]
    return np.where(np.isfinite(p), np.asarray(adjusted, dtype=np.float64), math.nan)
