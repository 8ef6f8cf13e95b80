"""Paired tests on item-level differences: t (clustered), sign-flip permutation, McNemar mid-p."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from evalsuite.analyse import _dist
from evalsuite.analyse._intervals import check_level, cluster_codes, cluster_variance, t_interval
from evalsuite.analyse._mde import observed_mde
from evalsuite.analyse._power import MDE_POWER, mde_from_se
from evalsuite.analyse._table import Interval, IntervalFields
from evalsuite.errors import UsageError

__all__ = [
    "EXACT_PERMUTATION_MAX",
    "MDE_POWER",
    "PairedDiff",
    "constant_difference_bounds",
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
        """The interval of `diff` at `level`.

        The t interval, or `constant_difference_bounds` when every unit carries the same
        difference.
        """
        check_level(level)
        if self.se == 0.0 and self.n_clusters >= 2:
            return Interval(
                *constant_difference_bounds(self.diff, self.n_clusters, (1 - level) / 2)
            )
        return t_interval(self.diff, self.se, self.df, level, bounds=(-1.0, 1.0))


def paired_difference(
    d: npt.ArrayLike,
    *,
    clusters: npt.ArrayLike | None = None,
    level: float = 0.95,
    alpha: float = 0.05,
    means: tuple[npt.ArrayLike, npt.ArrayLike] | None = None,
) -> PairedDiff:
    """Paired t inference on per-item differences ``d_i = ȳ_cand,i − ȳ_base,i``.

    Args:
        d: one difference per paired item, each in [−1, 1].
        clusters: cluster key per item (None: unclustered).
        level: confidence level of the interval.
        alpha: level of the MDE (power 0.8, two-sided).
        means: the (baseline, candidate) item means behind `d`: the MDE is then solved with
            the variance of the differences under the alternative (`_mde.observed_mde`);
            None: at this SE (the variance held at the observed one).

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
    if se == 0.0:
        return PairedDiff(
            diff,
            se,
            Interval(*constant_difference_bounds(diff, n_clusters, (1 - level) / 2)),
            level,
            df,
            zero_variance_p(diff, n_clusters),
            n,
            n_clusters,
            method,
            math.nan,
            alpha,
            "the paired differences have no variance, so the t p-value is undefined: p is the "
            f"exact sign-flip p-value over {n_clusters} units"
            + (" (no difference: 1)" if abs(diff) < ZERO_DIFF else f" (2 × 0.5^{n_clusters})")
            + "; the interval is the exact bound for units that all showed the same difference "
            "(Clopper–Pearson on none of them differing), and the MDE is undefined",
            "exact_sign_flip",
        )
    ci = t_interval(diff, se, df, level, bounds=(-1.0, 1.0))
    if means is None:
        mde = mde_from_se(se, df, alpha=alpha, power=MDE_POWER)
    else:
        a, b = (np.asarray(m, dtype=np.float64) for m in means)
        mde = observed_mde(a, b, clusters, df, alpha).value
    p = 2.0 * _dist.t_sf(abs(diff / se), df)
    return PairedDiff(diff, se, ci, level, df, p, n, n_clusters, method, mde, alpha, "")


def constant_difference_bounds(diff: float, units: int, alpha: float) -> tuple[float, float]:
    """Bounds on the mean difference when every one of `units` units showed the difference `diff`.

    A zero standard error would give the zero-width interval ``[diff, diff]``: a claim of
    certainty that two items, or thirty, cannot support (docs/methods.md, §3.2 and §6). Each
    bound here holds with probability at least ``1 − alpha``. Let q be the share of units in
    the population whose difference is not `diff`; none of the `units` observed ones is, so
    Clopper–Pearson's one-sided bound is ``q ≤ q_u = 1 − alpha^(1/units)`` (the "rule of
    three": about ``3/units`` at ``alpha = 0.05``). Differences lie in [−1, 1], so a unit that
    differs moves the mean by at most ``1 + diff`` down or ``1 − diff`` up:
    ``diff − q_u(1 + diff) ≤ δ ≤ diff + q_u(1 − diff)``.

    Args:
        diff: the common difference, in [−1, 1].
        units: independent units (items, or clusters when clustered), at least 1.
        alpha: the error of each bound: ``(1 − level)/2`` for a two-sided interval at
            `level`, α for the one-sided bound of a gate.

    Returns:
        (low, high); both NaN with no unit.

    References:
        Clopper & Pearson (1934), Biometrika 26:404. Hanley & Lippman-Hand (1983), JAMA
        249:1743 (the rule of three).
    """
    if units < 1 or not math.isfinite(diff):
        return math.nan, math.nan
    q = -math.expm1(math.log(alpha) / units)  # 1 − alpha^(1/units), exact for large units
    return max(-1.0, diff - q * (1.0 + diff)), min(1.0, diff + q * (1.0 - diff))


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
    `n_resamples` patterns of independent fair signs are drawn from `rng` as packed random
    bits (`_sign_flip_null`) and p is ``(1 + patterns at least as extreme) / (1 +
    n_resamples)`` per side, as ``scipy.stats.permutation_test(permutation_type="samples")``
    computes it. The exact branch is our own enumeration because scipy's takes ~5 s at n =
    20; it returns scipy's exact p-value (same two-sided rule ``2·min(P(T ≥ t), P(T ≤ t))``
    and tie tolerance), which the tests check. The drawn patterns are not scipy's (its
    draws took 32 random bits and 16 bytes of indices per sign): the p-value agrees with
    scipy's within Monte Carlo error, and is reproducible from the seed
    (docs/design/analysis-scale.md).
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
    null = _sign_flip_null(totals, n_resamples, rng)
    observed = float(np.sum(totals))
    gamma = abs(observed * np.finfo(np.float64).eps * 100)  # scipy's tie tolerance
    less = (np.count_nonzero(null <= observed + gamma) + 1.0) / (n_resamples + 1.0)
    greater = (np.count_nonzero(null >= observed - gamma) + 1.0) / (n_resamples + 1.0)
    return min(1.0, 2.0 * min(less, greater)), False


_CHUNK_BYTES = 2**20
"""Random bytes drawn at once by `_sign_flip_null` (at most 4096 patterns): about 1 MB of
signs, and a few times that in popcounts or table lookups, whatever the number of units."""
_WORD_BITS = 64
_CLASS_MIN = _WORD_BITS
"""A value carried by at least this many units is summed by popcount over its own words;
rarer values by byte tables."""


@dataclass(frozen=True, slots=True)
class _SignLayout:
    """Where each unit's sign bit lies in a drawn pattern, and how a pattern is summed.

    A pattern is `n_words` 64-bit words of random bits; bit p of a pattern is bit ``p % 8``
    (lowest first) of its byte ``p // 8``, and a set bit keeps the unit's value, a clear
    bit negates it. Units with value 0 get no bit (their sign changes no sum). Each value
    carried by at least `_CLASS_MIN` units (a *class*: item means of 0/1 scores over K
    epochs are multiples of 1/K, so a few classes hold almost every unit) has its units on
    consecutive bits from a word boundary, so its kept count is the popcount of its words
    (the unused bits of its last word masked off). The other units follow, from a word
    boundary, and are summed by a table of each byte's 256 kept sums.
    """

    n_words: int
    class_starts: npt.NDArray[np.intp]
    """First word of each class."""
    class_last: npt.NDArray[np.intp]
    """Last word of each class."""
    class_masks: npt.NDArray[np.uint64]
    """The bits of each class's last word that hold one of its units."""
    class_values: npt.NDArray[np.float64]
    rare_word: int
    """First word of the rare units (== n_words when there is none)."""
    table: npt.NDArray[np.float64]
    """[byte of the rare part × 256 + byte value]: the sum of the values whose bit is set."""

    @classmethod
    def build(cls, totals: npt.NDArray[np.float64]) -> _SignLayout:
        """The layout of `totals` (one value per unit)."""
        nonzero = totals[totals != 0.0]
        values, inverse, counts = np.unique(nonzero, return_inverse=True, return_counts=True)
        is_class = counts >= _CLASS_MIN
        class_counts = counts[is_class]
        class_words = -(-class_counts // _WORD_BITS)
        class_starts = np.concatenate([[0], np.cumsum(class_words)[:-1]]).astype(np.intp)
        class_last = (class_starts + class_words - 1).astype(np.intp)
        tail_bits = class_counts - (class_words - 1) * _WORD_BITS  # 1..64
        tail = (np.arange(_WORD_BITS)[None, :] < tail_bits[:, None]).astype(np.uint8)
        class_masks = np.packbits(tail, axis=1, bitorder="little").view(np.uint64).ravel()
        rare = nonzero[~is_class[inverse]]  # in the units' order
        rare_word = int(class_words.sum())
        rare_words = -(-len(rare) // _WORD_BITS)
        padded = np.zeros(rare_words * _WORD_BITS)
        padded[: len(rare)] = rare
        bits = ((np.arange(256)[:, None] >> np.arange(8)[None, :]) & 1).astype(np.float64)
        table = (bits @ padded.reshape(-1, 8).T).T.ravel()  # [byte position, byte value]
        return cls(
            n_words=rare_word + rare_words,
            class_starts=class_starts,
            class_last=class_last,
            class_masks=class_masks,
            class_values=values[is_class],
            rare_word=rare_word,
            table=table,
        )

    def kept(self, words: npt.NDArray[np.uint64]) -> npt.NDArray[np.float64]:
        """Per pattern (rows of `words`), the sum of the values whose sign bit is set."""
        out = np.zeros(len(words))
        if len(self.class_values):
            common = words[:, : self.rare_word]
            counts = np.bitwise_count(common)
            counts[:, self.class_last] = np.bitwise_count(
                common[:, self.class_last] & self.class_masks
            )
            per_class = np.add.reduceat(counts, self.class_starts, axis=1, dtype=np.int64)
            out += per_class.astype(np.float64) @ self.class_values
        if self.rare_word < self.n_words:
            rare = np.ascontiguousarray(words[:, self.rare_word :]).view(np.uint8)
            base = np.arange(rare.shape[1], dtype=np.intp) * 256
            out += self.table[rare.astype(np.intp) + base].sum(axis=1)
        return out


def _sign_flip_null(
    totals: npt.NDArray[np.float64], n_resamples: int, rng: np.random.Generator
) -> npt.NDArray[np.float64]:
    """`n_resamples` sums of the `totals` under independent fair random signs, from `rng`.

    Each pattern's signs are random bits from ``rng.bytes`` (one bit per unit, laid out by
    `_SignLayout`: each bit is 0 or 1 with probability 1/2, independently), about 1 MB of
    bits at a time, and its sum is ``2 · (sum of the kept values) − (sum of all values)``: popcounts
    for the values many units share, byte tables for the rest. The same seed gives the same
    draws, so the same p-value. Memory: a few MB at 100,000 units (scipy's
    ``permutation_test`` built 1.6 GB of index arrays per batch of 1000 patterns). Why the
    signs are drawn this way and how it was checked: docs/design/analysis-scale.md.
    """
    layout = _SignLayout.build(totals)
    total = float(np.sum(totals))
    null = np.empty(n_resamples)
    chunk = max(1, min(4096, _CHUNK_BYTES // (8 * max(1, layout.n_words))))
    for start in range(0, n_resamples, chunk):
        rows = min(chunk, n_resamples - start)
        words = np.frombuffer(rng.bytes(rows * layout.n_words * 8), dtype=np.uint64)
        null[start : start + rows] = 2.0 * layout.kept(words.reshape(rows, layout.n_words)) - total
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
    from scipy import stats  # only for the exact binomial (about 1 s to import)

    return float(min(1.0, 2.0 * stats.binom.cdf(k, n, 0.5) - stats.binom.pmf(k, n, 0.5)))


def holm_adjust(pvals: list[float], alpha: float) -> npt.NDArray[np.float64]:
    """Holm-adjusted p-values over every stratum.

    Every stratum with a paired item has a p-value (`paired_difference` falls back to the
    exact sign-flip p-value when the t is undefined), so the family is every stratum: a
    stratum is never dropped from the adjustment, which would make the others' adjustment
    too lenient. A NaN (a stratum with no item, which pairing cannot produce) stays NaN and
    is adjusted as if it were 1, never left out. The adjusted p-values are statsmodels'
    ``multipletests(p, method="holm")[1]``, bit for bit (tests/analyse/test_compare.py).

    References:
        Holm (1979), Scand. J. Stat. 6:65.
    """
    p = np.asarray(pvals, dtype=np.float64)
    if len(p) == 0:
        return p
    del alpha  # Holm's adjusted p-values do not depend on the level (statsmodels' argument)
    filled = np.where(np.isfinite(p), p, 1.0)
    # statsmodels' multipletests(method="holm"), step for step (the same floats): sorted
    # ascending, the j-th smallest times (m - j + 1), running maximum, capped at 1. Written
    # out so that a comparison does not import statsmodels (about 1 s of start-up).
    order = np.argsort(filled)
    adjusted_sorted = np.maximum.accumulate(filled[order] * np.arange(len(p), 0, -1))
    adjusted_sorted[adjusted_sorted > 1] = 1
    adjusted = np.empty_like(adjusted_sorted)
    adjusted[order] = adjusted_sorted
    return np.where(np.isfinite(p), adjusted, math.nan)
