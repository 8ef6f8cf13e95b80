"""Sequential paired comparison over items: early verdicts with a known error rate.

A candidate model is compared with a stored baseline run (item means over its epochs) the
way the full fixed design would compare them: the paired t on item-mean differences, whose
estimand is the mean difference over the population of items the suite was drawn from
(docs/design/sequential.md). The sequential design reaches that claim with fewer calls:

1. **Order.** Items are taken in a stratified random order (`stratified_order`, from an
   explicit `np.random.Generator`), so every prefix of the order is a random sample of the
   suite with each stratum in proportion.
2. **Rounds.** The order is cut into K groups (looks at ``t_k = n_k / N`` of the items).
   Each group's items get `first_epochs` attempts; the items whose outcomes are mixed get
   the rest of the full run's `epochs` (epochs where they matter). An item solved or failed
   every time costs `first_epochs` calls, not `epochs`.
3. **Unbiased per item.** Extending only mixed items makes the plain mean biased; the item's
   estimate is the Rao-Blackwell unbiased estimator of its solve rate under that two-stage
   plan (`two_stage_estimate`, Girshick, Mosteller & Savage 1946), so each item's difference
   ``d_j = p_hat_j - ybar_B,j`` has expectation ``p_j - ybar_B,j`` exactly, and the ``d_j``
   of a random prefix are independent draws: the paired t stays valid for the population mean.
4. **Looks.** After each group the repeated confidence interval ``est +- c_k se`` (Jennison
   & Turnbull 2000, ch. 9), with ``c_k`` the group-sequential boundary (`_spending`; turned
   into a t critical value at the same nominal level), covers the difference at every look
   at once with probability 1 - alpha. The run stops at the first look whose interval
   excludes 0 (``better`` / ``worse``), lies inside +-margin
   (``no_difference_beyond_margin``), or lies above -margin when non-inferiority is the
   question (``non_inferior``); or when a decisive verdict at the last look has become
   improbable under the current trend (``futile``, non-binding: it never adds error).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from scipy import stats

from evalsuite.analyse._paired import constant_difference_bounds
from evalsuite.analyse._spending import gs_boundaries, mixture_cs_boundary
from evalsuite.analyse._stop_if_agree import StopIfAgree
from evalsuite.errors import UsageError

__all__ = [
    "BOUNDARIES",
    "POPULATION_ESTIMAND",
    "SequentialComparison",
    "SequentialDesign",
    "SequentialLook",
    "SequentialVerdict",
    "stratified_order",
    "two_stage_estimate",
]

SequentialVerdict = Literal[
    "better", "worse", "no_difference_beyond_margin", "non_inferior", "futile", "undecided"
]
Boundary = Literal["pocock", "obrien_fleming", "mixture_cs"]
BOUNDARIES: tuple[Boundary, ...] = ("pocock", "obrien_fleming", "mixture_cs")

POPULATION_ESTIMAND = "item_population"
"""The mean difference over the population of items the suite's items were drawn from."""

_METHODS = {
    "pocock": "group_sequential_lan_demets_pocock",
    "obrien_fleming": "group_sequential_lan_demets_obrien_fleming",
    "mixture_cs": "asymptotic_cs_normal_mixture",
}


def stratified_order(
    strata: Sequence[str] | None, n_items: int, rng: np.random.Generator
) -> npt.NDArray[np.int64]:
    """A random order of the items in which every prefix holds each stratum in proportion.

    Within each stratum the items are shuffled; the r-th item (0-based) of a stratum of
    ``n_h`` items gets the key ``(r + U) / n_h`` with U uniform on [0, 1), and the order is
    by key. Without strata: a plain random permutation.
    """
    if strata is None:
        return rng.permutation(n_items).astype(np.int64)
    if len(strata) != n_items:
        raise UsageError("stratified_order: one stratum per item")
    labels = np.asarray(strata, dtype=object)
    keys = np.empty(n_items)
    for h in sorted(set(labels.tolist())):
        members = np.flatnonzero(labels == h)
        shuffled = rng.permutation(members)
        keys[shuffled] = (np.arange(members.size) + rng.random(members.size)) / members.size
    return np.argsort(keys, kind="stable").astype(np.int64)


@functools.cache
def _rb_table(e1: int, e2: int) -> tuple[float, ...]:
    """Unbiased estimates of p for an extended item, by total successes 0..e1+e2.

    The two-stage plan is stop-if-agree with a pilot of e1 and a horizon of e1 + e2
    (`StopIfAgree.p_table`, which the stop-if-agree study also uses; NaN: impossible totals).
    """
    return tuple(StopIfAgree(e1, e1 + e2).p_table.tolist())


def two_stage_estimate(first: int, e1: int, second: int, e2: int) -> float:
    """Unbiased estimate of an item's solve rate under the two-stage epoch plan.

    The plan: `e1` attempts; if they are mixed (``0 < first < e1`` successes), `e2` more.
    An item not extended is estimated by its mean (0 or 1, or ``first / e1`` when e1 = 1 or
    ``e2 = 0``); an extended one by ``E[X_1 | total, first stage mixed]`` =
    ``sum_{s=1}^{e1-1} C(e1-1, s-1) C(e2, T-s) / sum_{s=1}^{e1-1} C(e1, s) C(e2, T-s)``
    with T = first + second (Rao-Blackwell on the first attempt; Girshick, Mosteller &
    Savage 1946). Its expectation is exactly p whatever p.
    """
    if e1 < 1 or e2 < 0 or not 0 <= first <= e1 or not 0 <= second <= e2:
        raise UsageError("two_stage_estimate: counts out of range")
    mixed = 0 < first < e1
    if not mixed or e2 == 0:
        if second:
            raise UsageError("two_stage_estimate: only a mixed first stage is extended")
        return first / e1
    return _rb_table(e1, e2)[first + second]


@dataclass(frozen=True, slots=True)
class SequentialDesign:
    """The sequential comparison's rule, fixed before the first call.

    Attributes:
        alpha: the error rate of the verdicts (two-sided; the repeated intervals' 1 - level).
        looks: K, the number of looks (groups of items).
        boundary: the boundary of ``better`` / ``worse``: ``pocock`` or ``obrien_fleming``
            (Lan-DeMets spending) or ``mixture_cs`` (an anytime-valid asymptotic confidence
            sequence). Pocock stops clear differences soonest (measured:
            docs/design/sequential.md).
        margin_boundary: the boundary of the margin claims (``no_difference_beyond_margin``,
            ``non_inferior``), spent separately at 2 alpha (two one-sided tests at alpha):
            O'Brien-Fleming keeps the last look's interval narrowest, where equivalence is
            mostly shown.
        margin: a difference inside +-margin is "no difference"; -margin is the
            non-inferiority bound.
        epochs: E, the epochs of the full fixed run the comparison stands for.
        first_epochs: attempts every item gets before it is extended (E when 0 or >= E:
            no epoch saving).
        noninferiority: stop with ``non_inferior`` once the interval lies above -margin.
        futility: stop as ``futile`` when the probability of a decisive verdict at the last
            look, under the current estimate, is below this (None: never).
        futility_from: the earliest information fraction at which futility may stop.
        seed: the seed of the item order (recorded).
        reserve: the share of alpha the better / worse boundaries hold back (default 0.1:
            they spend 0.9 alpha). The group-sequential t (Z boundaries turned into t
            critical values at the same nominal level) is an approximation, and item
            differences of solve rates are far from normal at a first look of 20-60 items:
            spending all of alpha gave a type-I error of 0.046-0.051 (Monte-Carlo error
            0.0015) on the simulated suites, so about alpha, not below it. The reserve keeps
            it below alpha (docs/design/sequential.md, "Type-I error").
    """

    alpha: float = 0.05
    looks: int = 5
    boundary: Boundary = "pocock"
    margin_boundary: Boundary = "obrien_fleming"
    margin: float = 0.02
    epochs: int = 5
    first_epochs: int = 3
    noninferiority: bool = False
    futility: float | None = 0.01
    futility_from: float = 0.6
    seed: int = 0
    reserve: float = 0.1

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise UsageError(f"alpha must be in (0, 1) (got {self.alpha})")
        if self.looks < 1:
            raise UsageError(f"looks must be at least 1 (got {self.looks})")
        if self.boundary not in BOUNDARIES or self.margin_boundary not in BOUNDARIES:
            raise UsageError(f"boundaries must be one of {', '.join(BOUNDARIES)}")
        if not 0 <= self.margin < 1:
            raise UsageError(f"margin must be in [0, 1) (got {self.margin})")
        if self.epochs < 1 or self.first_epochs < 0:
            raise UsageError("epochs must be at least 1 and first_epochs at least 0")
        if not 0 <= self.reserve < 1:
            raise UsageError(f"reserve must be in [0, 1) (got {self.reserve})")
        if self.futility is not None and not 0 < self.futility < 1:
            raise UsageError(f"futility must be in (0, 1) (got {self.futility})")

    @property
    def stage_one(self) -> int:
        """Attempts every item gets first (e1)."""
        if self.first_epochs <= 0 or self.first_epochs >= self.epochs:
            return self.epochs
        return self.first_epochs

    @property
    def method(self) -> str:
        """The method every output names: the boundary and the epoch plan."""
        epochs = (
            f"+two_stage_epochs_{self.stage_one}_{self.epochs}"
            if self.stage_one < self.epochs
            else f"+fixed_epochs_{self.epochs}"
        )
        margin = (
            ""
            if self.margin_boundary == self.boundary
            else f"+margin_{_METHODS[self.margin_boundary]}"
        )
        return _METHODS[self.boundary] + margin + epochs + "+paired_t"

    def look_sizes(self, n_items: int) -> npt.NDArray[np.int64]:
        """Items seen at each look: ``round(N k / K)``, distinct, the last N."""
        sizes = np.unique(np.round(np.arange(1, self.looks + 1) * n_items / self.looks))
        sizes = sizes[sizes >= 2]
        if sizes.size == 0 or sizes[-1] != n_items:
            sizes = np.append(sizes, n_items)
        return sizes.astype(np.int64)

    def critical_z(self, n_items: int) -> npt.NDArray[np.float64]:
        """The Z boundary of each look for better / worse (two-sided alpha)."""
        sizes = tuple(self.look_sizes(n_items).tolist())
        return _critical_z(self.boundary, sizes, n_items, self.spent_alpha)

    @property
    def spent_alpha(self) -> float:
        """The alpha the better / worse boundaries spend: ``alpha (1 - reserve)``."""
        return self.alpha * (1 - self.reserve)

    def equivalence_z(self, n_items: int) -> npt.NDArray[np.float64]:
        """The Z boundary of each look for the margin claims: two one-sided tests at alpha.

        The repeated interval at ``1 - 2 alpha`` lies inside +-margin exactly when both
        one-sided group-sequential tests of ``|difference| >= margin`` reject at alpha
        (Schuirmann's TOST, made sequential as in Jennison & Turnbull 2000, ch. 6 and 9).
        """
        sizes = tuple(self.look_sizes(n_items).tolist())
        return _critical_z(self.margin_boundary, sizes, n_items, min(2 * self.alpha, 0.5))

    def to_dict(self) -> dict[str, Any]:
        """The rule as recorded with the run."""
        return {
            "method": self.method,
            "alpha": self.alpha,
            "reserve": self.reserve,
            "spent_alpha": self.spent_alpha,
            "looks": self.looks,
            "boundary": self.boundary,
            "margin_boundary": self.margin_boundary,
            "margin": self.margin,
            "epochs": self.epochs,
            "first_epochs": self.stage_one,
            "noninferiority": self.noninferiority,
            "futility": self.futility,
            "futility_from": self.futility_from,
            "seed": self.seed,
            "estimand": POPULATION_ESTIMAND,
        }


@functools.cache
def _critical_z(
    boundary: Boundary, sizes: tuple[int, ...], n_items: int, alpha: float
) -> npt.NDArray[np.float64]:
    times = np.asarray(sizes, dtype=float) / n_items
    if boundary == "mixture_cs":
        return mixture_cs_boundary(np.asarray(sizes, dtype=float), n_items, alpha)
    return gs_boundaries(times.tolist(), alpha, boundary)


@functools.cache
def _t_critical(z: float, df: int) -> float:
    """The t critical value at the nominal two-sided level of Z boundary `z`."""
    if not math.isfinite(z):
        return math.inf
    return float(stats.t.isf(stats.norm.sf(z), df))


@dataclass(frozen=True, slots=True)
class SequentialLook:
    """One look: items and calls so far, the estimate and its repeated interval."""

    index: int
    items: int
    calls: int
    estimate: float
    se: float
    z_boundary: float
    lower: float
    upper: float
    margin_lower: float
    """The lower end of the repeated interval at 1 - 2 alpha (the margin claims)."""
    margin_upper: float

    def to_dict(self) -> dict[str, Any]:
        """JSON fields."""
        return {
            "look": self.index,
            "items": self.items,
            "calls": self.calls,
            "estimate": self.estimate,
            "se": self.se,
            "z_boundary": self.z_boundary,
            "ci": [self.lower, self.upper],
            "margin_ci": [self.margin_lower, self.margin_upper],
        }


@dataclass(slots=True)
class SequentialComparison:
    """A sequential comparison of a candidate with a stored baseline run, round by round.

    Use::

        seq = SequentialComparison(baseline_means, design, rng=np.random.default_rng(seed))
        while (requests := seq.next_round()) is not None:
            seq.observe([[score(item) for _ in range(n)] for item, n in requests])

    Each request is (item index in suite order, attempts to make now). A score of None is a
    harness error: excluded, as in a fixed run (the item's estimate uses the scored ones).

    Attributes:
        baseline: the stored run's item means, in suite order.
        design: the rule.
        rng: the generator of the item order (its seed is `design.seed` when not given).
        strata: the stratum of each item (the order is stratified by it), or None.
        weights: deployment weights per item (default equal); the estimate is the weighted
            mean of the differences over the items seen.
    """

    baseline: npt.NDArray[np.float64]
    design: SequentialDesign
    rng: np.random.Generator | None = None
    strata: Sequence[str] | None = None
    weights: npt.NDArray[np.float64] | None = None
    looks: list[SequentialLook] = field(default_factory=list)
    verdict: SequentialVerdict | None = None
    stop_reason: str | None = None
    calls: int = 0
    order: npt.NDArray[np.int64] = field(init=False)
    _first: npt.NDArray[np.int64] = field(init=False, repr=False)
    _first_n: npt.NDArray[np.int64] = field(init=False, repr=False)
    _second: npt.NDArray[np.int64] = field(init=False, repr=False)
    _second_n: npt.NDArray[np.int64] = field(init=False, repr=False)
    _sizes: npt.NDArray[np.int64] = field(init=False, repr=False)
    _z: npt.NDArray[np.float64] = field(init=False, repr=False)
    _z_eq: npt.NDArray[np.float64] = field(init=False, repr=False)
    _stage: int = field(init=False, default=0, repr=False)
    _pending: list[tuple[int, int]] | None = field(init=False, default=None, repr=False)
    _pending_stage: int = field(init=False, default=0, repr=False)

    def __post_init__(self) -> None:
        base = np.asarray(self.baseline, dtype=float)
        if base.ndim != 1 or base.size < 2:
            raise UsageError("a sequential comparison needs at least two items")
        if not np.isfinite(base).all() or (base < 0).any() or (base > 1).any():
            raise UsageError("the baseline's item means must lie in [0, 1]")
        self.baseline = base
        n = base.size
        w = np.full(n, 1 / n) if self.weights is None else np.asarray(self.weights, float)
        if w.shape != base.shape or (w <= 0).any():
            raise UsageError("one positive weight per item")
        self.weights = w / w.sum()
        rng = self.rng if self.rng is not None else np.random.default_rng(self.design.seed)
        self.order = stratified_order(self.strata, n, rng)
        self._first = np.zeros(n, dtype=np.int64)
        self._first_n = np.zeros(n, dtype=np.int64)
        self._second = np.zeros(n, dtype=np.int64)
        self._second_n = np.zeros(n, dtype=np.int64)
        self._sizes = self.design.look_sizes(n)
        self._z = self.design.critical_z(n)
        self._z_eq = self.design.equivalence_z(n)

    @property
    def n_items(self) -> int:
        """Items in the suite."""
        return int(self.baseline.size)

    @property
    def budget(self) -> int:
        """The full fixed run's calls: epochs x items."""
        return self.design.epochs * self.n_items

    @property
    def method(self) -> str:
        """The design's method name."""
        return self.design.method

    def _group(self, k: int) -> npt.NDArray[np.int64]:
        start = 0 if k == 0 else int(self._sizes[k - 1])
        return self.order[start : int(self._sizes[k])]

    def next_round(self) -> list[tuple[int, int]] | None:
        """The next round's requests (item, attempts), or None once the run has stopped."""
        if self.verdict is not None:
            return None
        if self._pending is not None:
            raise UsageError("observe the planned round before planning the next one")
        k = len(self.looks)
        group = self._group(k)
        e1, e = self.design.stage_one, self.design.epochs
        if self._stage == 0:
            self._pending = [(int(j), e1) for j in group]
            self._pending_stage = 0
            return list(self._pending)
        mixed = [int(j) for j in group if 0 < self._first[j] < self._first_n[j] and e1 < e]
        self._pending = [(j, e - e1) for j in mixed]
        self._pending_stage = 1
        if not self._pending:
            self._pending = None
            self._look()
            return self.next_round()
        return list(self._pending)

    def observe(self, scores: Sequence[Sequence[float | None]]) -> SequentialLook | None:
        """Record the planned round's scores (one list per request); the look, if one was made."""
        if self._pending is None:
            raise UsageError("no round is planned")
        if len(scores) != len(self._pending):
            raise UsageError("one list of scores per request of the round")
        for (item, n), got in zip(self._pending, scores, strict=True):
            if len(got) != n:
                raise UsageError(f"item {item}: {n} scores expected, got {len(got)}")
            kept = [float(s) for s in got if s is not None]
            if any(s not in (0.0, 1.0) for s in kept):
                raise UsageError("the sequential comparison takes binary scores (0 or 1)")
            self.calls += n
            if self._pending_stage == 0:
                self._first[item] += int(sum(kept))
                self._first_n[item] += len(kept)
            else:
                self._second[item] += int(sum(kept))
                self._second_n[item] += len(kept)
        self._pending = None
        if self._pending_stage == 0 and self.design.stage_one < self.design.epochs:
            self._stage = 1
            return None
        return self._look()

    def item_estimates(self) -> npt.NDArray[np.float64]:
        """Each seen item's unbiased solve-rate estimate (NaN for items not yet scored)."""
        out = np.full(self.n_items, math.nan)
        for j in np.flatnonzero(self._first_n > 0).tolist():
            e1 = int(self._first_n[j])
            extended = self._second_n[j] > 0
            if extended:
                out[j] = two_stage_estimate(
                    int(self._first[j]), e1, int(self._second[j]), int(self._second_n[j])
                )
            else:
                out[j] = self._first[j] / e1
        return out

    def _look(self) -> SequentialLook:
        k = len(self.looks)
        self._stage = 0
        est_items = self.item_estimates()
        seen = np.isfinite(est_items)
        d = est_items[seen] - self.baseline[seen]
        weights = np.asarray(self.weights, dtype=float)
        w = weights[seen] / weights[seen].sum()
        n = int(d.size)
        estimate = float(w @ d)
        se = (
            math.sqrt(n / (n - 1) * float(np.sum(w**2 * (d - estimate) ** 2)))
            if n > 1
            else math.inf
        )
        z = float(self._z[k])
        z_eq = float(self._z_eq[k])
        if se > 0 or not math.isfinite(se):
            half = _t_critical(z, max(n - 1, 1)) * se
            half_eq = _t_critical(z_eq, max(n - 1, 1)) * se
            bounds = (estimate - half, estimate + half)
            bounds_eq = (estimate - half_eq, estimate + half_eq)
        else:
            # every difference equal: the fixed paired t's zero-variance bounds at the look's
            # nominal level, never the point (docs/methods.md, section 6, "Zero variance")
            bounds = constant_difference_bounds(estimate, n, float(stats.norm.sf(z)))
            bounds_eq = constant_difference_bounds(estimate, n, float(stats.norm.sf(z_eq)))
        look = SequentialLook(k + 1, n, self.calls, estimate, se, z, *bounds, *bounds_eq)
        self.looks.append(look)
        self._decide(look, last=k + 1 == self._sizes.size)
        return look

    def _decide(self, look: SequentialLook, *, last: bool) -> None:
        m = self.design.margin
        verdict: SequentialVerdict | None = None
        if math.isfinite(look.se):
            if look.lower > 0:
                verdict = "better"
            elif look.upper < 0:
                verdict = "worse"
            elif -m < look.margin_lower and look.margin_upper < m:
                verdict = "no_difference_beyond_margin"
            elif self.design.noninferiority and look.margin_lower > -m:
                verdict = "non_inferior"
            elif not last and self._futile(look):
                verdict = "futile"
        if verdict is None and last:
            verdict = "undecided"
        if verdict is not None:
            self.verdict = verdict
            self.stop_reason = (
                f"look {look.index} of {self._sizes.size} ({look.items} of {self.n_items} "
                f"items, {look.calls} of {self.budget} calls): difference "
                f"{look.estimate:+.3f}, repeated {1 - self.design.spent_alpha:.1%} interval "
                f"[{look.lower:+.3f}, {look.upper:+.3f}], margin {m:g}: {verdict}"
            )

    def _futile(self, look: SequentialLook) -> bool:
        """A decisive verdict at the last look is improbable under the current estimate.

        The last look's estimate is projected as ``N(est, (1 - t) se_K^2)`` with
        ``se_K = se sqrt(t)`` (t the share of items seen); futile when the chance that it
        excludes 0 or lies inside the margin, at the last boundary, is below `futility`.
        """
        d = self.design
        t = look.items / self.n_items
        if d.futility is None or t < d.futility_from or t >= 1 or not look.se > 0:
            return False
        se_k = look.se * math.sqrt(t)
        sd = se_k * math.sqrt(1 - t)
        c = _t_critical(float(self._z[-1]), self.n_items - 1) * se_k
        c_eq = _t_critical(float(self._z_eq[-1]), self.n_items - 1) * se_k
        p_reject = float(
            stats.norm.sf((c - look.estimate) / sd) + stats.norm.cdf((-c - look.estimate) / sd)
        )
        reach = d.margin - c_eq
        p_equiv = (
            float(
                stats.norm.cdf((reach - look.estimate) / sd)
                - stats.norm.cdf((-reach - look.estimate) / sd)
            )
            if reach > 0
            else 0.0
        )
        return p_reject + p_equiv < d.futility

    def candidate_score(self) -> tuple[float, float, float] | None:
        """The candidate's score over the items seen, with its repeated interval.

        (estimate, lower, upper) at the last look: the weighted mean of the items' unbiased
        estimates, ``+- c_k se`` with the look's better/worse boundary, for the item
        population's mean score. None before the first look.
        """
        if not self.looks:
            return None
        last = self.looks[-1]
        est_items = self.item_estimates()
        seen = np.isfinite(est_items)
        x = est_items[seen]
        weights = np.asarray(self.weights, dtype=float)
        w = weights[seen] / weights[seen].sum()
        n = int(x.size)
        estimate = float(w @ x)
        if n < 2:
            return estimate, math.nan, math.nan
        se = math.sqrt(n / (n - 1) * float(np.sum(w**2 * (x - estimate) ** 2)))
        half = _t_critical(last.z_boundary, n - 1) * se
        return estimate, max(0.0, estimate - half), min(1.0, estimate + half)

    def to_dict(self) -> dict[str, Any]:
        """The comparison's JSON block: method, estimand, verdict, looks, calls."""
        last = self.looks[-1] if self.looks else None
        return {
            "method": self.method,
            "estimand": POPULATION_ESTIMAND,
            "estimand_text": (
                "mean paired difference over the population of items the suite was drawn "
                "from (the claim of the full fixed run's paired t)"
            ),
            "design": self.design.to_dict(),
            "verdict": self.verdict,
            "stop_reason": self.stop_reason,
            "estimate": None if last is None else last.estimate,
            "ci": None if last is None else [last.lower, last.upper],
            "level": 1 - self.design.spent_alpha,
            "alpha": self.design.alpha,
            "calls": self.calls,
            "budget": self.budget,
            "looks": [look.to_dict() for look in self.looks],
        }
