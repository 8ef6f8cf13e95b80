"""Paired comparison of two runs on the same frozen items, with an optional regression gate."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from evalsuite.analyse import _dist
from evalsuite.analyse._attempts import ItemTable, item_table
from evalsuite.analyse._intervals import check_level
from evalsuite.analyse._mde import PairedMde, observed_mde
from evalsuite.analyse._paired import (
    MDE_POWER,
    PairedDiff,
    constant_difference_bounds,
    holm_adjust,
    mcnemar_midp,
    paired_difference,
    sign_flip_p,
)
from evalsuite.analyse._table import Interval
from evalsuite.errors import IncomparableRunsError, UsageError

__all__ = ["Comparison", "Gate", "GateResult", "StratumDiff", "compare_runs"]

Verdict = Literal["candidate_better", "baseline_better", "no_detectable_difference"]
GateStatus = Literal["PASS", "FAIL", "INCONCLUSIVE"]


@dataclass(frozen=True, slots=True)
class Gate:
    """A pre-registered regression gate. Only ``noninferior`` exists: δ > −margin."""

    margin: float
    kind: Literal["noninferior"] = "noninferior"

    def __post_init__(self) -> None:
        if not (math.isfinite(self.margin) and self.margin > 0):
            raise UsageError(f"gate 'margin' must be a finite number > 0 (got {self.margin!r})")


@dataclass(frozen=True, slots=True)
class GateResult:
    """The outcome of a non-inferiority gate (docs/methods.md, "Regression gates").

    ``passed`` iff the one-sided (1−α) lower bound ``L = d̄ − t_{1−α,df}·SE`` is above
    ``−margin``. ``status``: PASS when passed; FAIL when the one-sided upper bound
    ``d̄ + t_{1−α,df}·SE`` is below −margin (significantly worse than the margin);
    INCONCLUSIVE otherwise, including when the SE is undefined.

    The bounds are those of a difference of two scores in [0, 1], so they lie in [−1, 1]:
    a t bound beyond is shown at −1 or 1 (``clipped``; the t's own bounds in
    ``unclipped_bounds``). Intersecting a confidence set with the range the parameter cannot
    leave keeps its coverage, and the verdict is the same for every margin below 1
    (docs/design/intervals.md, "Bounds of a difference").
    """

    kind: str
    margin: float
    alpha: float
    lower_bound: float
    upper_bound: float
    passed: bool
    status: GateStatus
    unclipped_bounds: tuple[float, float] = (math.nan, math.nan)

    @property
    def clipped(self) -> bool:
        """True when a t bound lay outside [−1, 1] and is shown at its end."""
        return (self.lower_bound, self.upper_bound) != self.unclipped_bounds and all(
            math.isfinite(b) for b in self.unclipped_bounds
        )

    def clip_note(self) -> str:
        """The sentence saying a bound was bounded ('' when none was)."""
        if not self.clipped:
            return ""
        low, high = self.unclipped_bounds
        return (
            f"the gate's one-sided bounds of the t ({low:+.3f}, {high:+.3f}) reach beyond "
            f"[-1, 1], the range of a difference of two scores in [0, 1]; they are shown "
            f"bounded to it ({self.lower_bound:+.3f}, {self.upper_bound:+.3f}), which keeps "
            "their coverage and the verdict"
        )

    def to_dict(self) -> dict[str, Any]:
        """The ``gate`` block of ``compare --json``: kind, margin, passed, status, bounds, alpha."""
        return {
            "kind": self.kind,
            "margin": self.margin,
            "passed": self.passed,
            "status": self.status,
            "lower_bound": self.lower_bound,
            "upper_bound": self.upper_bound,
            "alpha": self.alpha,
            "clipped": self.clipped,
            "unclipped_bounds": list(self.unclipped_bounds),
        }


def _gate(gate: Gate, test: PairedDiff, alpha: float) -> GateResult:
    """Non-inferiority: one-sided (1−α) bounds ``d̄ ∓ t_{1−α,df}·SE`` against −margin.

    When every unit showed the same difference (SE 0) the bounds are
    `constant_difference_bounds` at α, never the point ``d̄`` itself.
    """
    if test.se == 0.0 and test.n_clusters >= 2:
        return gate_from_bounds(
            gate, *constant_difference_bounds(test.diff, test.n_clusters, alpha), alpha
        )
    return judge_gate(gate, test.diff, test.se, test.df, alpha)


def judge_gate(gate: Gate, diff: float, se: float, df: float, alpha: float) -> GateResult:
    """The non-inferiority rule on any difference with a t inference (`GateResult`).

    A zero SE gives no bound (INCONCLUSIVE): the caller that knows the units gives
    `gate_from_bounds` their exact bounds instead.
    """
    if math.isfinite(se) and se > 0 and df >= 1:
        q = _dist.t_isf(alpha, df)
        low, high = diff - q * se, diff + q * se
    else:
        low = high = math.nan
    return gate_from_bounds(gate, low, high, alpha)


def gate_from_bounds(gate: Gate, low: float, high: float, alpha: float) -> GateResult:
    """The gate's verdict from one-sided (1−α) bounds of the difference.

    PASS when the lower bound `low` is above −margin, FAIL when the upper bound `high` is
    below it, else INCONCLUSIVE (NaN bounds included). Bounds beyond [−1, 1] are bounded to
    it and the result says so (`GateResult.clipped`).
    """
    raw = (low, high)
    low, high = max(low, -1.0), min(high, 1.0)  # NaN stays NaN (max/min keep the first)
    passed = bool(low > -gate.margin)
    status: GateStatus = "PASS" if passed else ("FAIL" if high < -gate.margin else "INCONCLUSIVE")
    return GateResult(gate.kind, gate.margin, alpha, low, high, passed, status, raw)


@dataclass(frozen=True, slots=True)
class StratumDiff:
    """The paired difference within one stratum, with its Holm-adjusted p-value."""

    stratum: str
    test: PairedDiff
    p_holm: float
    mde_detail: PairedMde | None = None
    """The stratum's MDE with its assumptions (what the weighted MDE combines)."""

    def to_dict(self) -> dict[str, Any]:
        """A ``compare --json`` stratum: stratum, diff, se, ci, p_value, p_holm, n_items, ..."""
        return {"stratum": self.stratum, **self.test.to_dict(), "p_holm": self.p_holm}


@dataclass(frozen=True, slots=True)
class Comparison:
    """Paired comparison of a candidate run against a baseline run on shared items.

    Attributes mirror ``compare --json`` (docs/methods.md, "Outputs"); see `compare_runs`.
    """

    baseline: str
    candidate: str
    test: PairedDiff
    verdict: Verdict
    baseline_mean: float
    candidate_mean: float
    p_value_permutation: float
    permutation_exact: bool
    p_value_mcnemar_midp: float  # NaN unless K = 1 in both runs, binary, unclustered
    n_unpaired_baseline: int
    n_unpaired_candidate: int
    strata: tuple[StratumDiff, ...]
    gate: GateResult | None
    sentence: str
    baseline_hash: str
    candidate_hash: str
    mde_detail: PairedMde | None = None
    """The MDE with its assumptions (observed correlation of the two runs' item means)."""

    @property
    def diff(self) -> float:
        """Candidate − baseline, mean over paired items of item-mean differences."""
        return self.test.diff

    def conf_int(self, level: float = 0.95) -> Interval:
        """The t interval of the difference at `level`."""
        return self.test.conf_int(level)

    def to_dict(self) -> dict[str, Any]:
        """The ``compare --json`` keys plus the supporting figures (NaN kept)."""
        t = self.test
        out: dict[str, Any] = {
            "baseline": self.baseline,
            "candidate": self.candidate,
            "diff": t.diff,
            "se": t.se,
            "ci": [t.ci.low, t.ci.high],
            "level": t.level,
            "p_value": t.p_value,
            "n_items": t.n_items,
            "verdict": self.verdict,
            "mde": t.mde,
            "mde_assumption": None if self.mde_detail is None else self.mde_detail.to_dict(),
            "strata": [s.to_dict() for s in self.strata],
            "alpha": t.alpha,
            "df": t.df,
            "n_clusters": t.n_clusters,
            "method": t.method,
            "baseline_mean": self.baseline_mean,
            "candidate_mean": self.candidate_mean,
            "p_value_permutation": self.p_value_permutation,
            "permutation_exact": self.permutation_exact,
            "p_value_mcnemar_midp": self.p_value_mcnemar_midp,
            "n_unpaired_baseline": self.n_unpaired_baseline,
            "n_unpaired_candidate": self.n_unpaired_candidate,
            "sentence": self.sentence,
            "note": t.note,
            "notes": self.notes(),
            "baseline_hash": self.baseline_hash,
            "candidate_hash": self.candidate_hash,
        }
        if self.gate is not None:
            out["gate"] = self.gate.to_dict()
        return out

    def notes(self) -> list[str]:
        """What a reader must know beside the numbers: dropped items, undefined figures."""
        out = []
        if self.n_unpaired_baseline or self.n_unpaired_candidate:
            out.append(
                f"{self.n_unpaired_baseline} baseline and {self.n_unpaired_candidate} candidate "
                "item(s) had no usable pair (absent, or every epoch a harness error) and were "
                "dropped from both runs"
            )
        if self.test.note:
            out.append(self.test.note)
        t = self.test
        if math.isfinite(t.se) and t.se > 0 and t.df >= 1:
            q = _dist.t_ppf(0.5 + t.level / 2.0, t.df)
            low, high = t.diff - q * t.se, t.diff + q * t.se
            if low < -1.0 or high > 1.0:
                out.append(
                    f"the {t.level:.0%} t interval of the difference ({low:+.3f}, {high:+.3f}) "
                    "reaches beyond [-1, 1], the range of a difference of two scores in "
                    f"[0, 1]; it is shown bounded to it ({t.ci.low:+.3f}, {t.ci.high:+.3f}), "
                    "which keeps its coverage"
                )
        if self.gate is not None and self.gate.clipped:
            out.append(self.gate.clip_note())
        return out

    def to_frame(self) -> pd.DataFrame:
        """One row for all items, then one per stratum (with ``p_holm``)."""
        rows = [{"stratum": "(all)", **self.test.to_frame().iloc[0].to_dict(), "p_holm": math.nan}]
        rows += [
            {"stratum": s.stratum, **s.test.to_frame().iloc[0].to_dict(), "p_holm": s.p_holm}
            for s in self.strata
        ]
        return pd.DataFrame(rows)


_NO_CLUSTER = "item:"  # ItemTable's key for an item without a declared cluster


def _is_set(value: object, unset: object) -> bool:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return False
    if unset == _NO_CLUSTER:
        return not str(value).startswith(_NO_CLUSTER)
    return value != unset


def _set_mask(values: np.ndarray, unset: object) -> np.ndarray:
    """`_is_set` of every value, computed once per distinct value (labels repeat)."""
    codes, uniques = pd.factorize(pd.Series(values, dtype=object), use_na_sentinel=True)
    if unset == _NO_CLUSTER:  # one key per unclustered item: the prefix test column-wise
        texts = pd.Series(uniques, dtype=object).astype(str)  # no None or NaN: factorized out
        known = np.append(~texts.str.startswith(_NO_CLUSTER).to_numpy(dtype=bool), False)
    else:
        known = np.array([_is_set(v, unset) for v in uniques] + [False], dtype=bool)
    return known[np.asarray(codes)]  # code -1 (None or NaN) picks the final False


def _merge(
    name: str, shared: np.ndarray, x: np.ndarray, y: np.ndarray, unset: object
) -> np.ndarray:
    """One label per paired item; a run without the label (`unset`) takes the other run's.

    Raises `IncomparableRunsError` when both runs label an item and the labels differ.
    """
    x_set, y_set = _set_mask(x, unset), _set_mask(y, unset)
    both = np.flatnonzero(x_set & y_set)
    bad = np.zeros(len(x), dtype=bool)
    bad[both] = x[both].astype(str) != y[both].astype(str)
    if bad.any():
        raise IncomparableRunsError(
            f"item {shared[bad][0]!r} has a different {name} in the two runs ({x[bad][0]!r} vs "
            f"{y[bad][0]!r}); they were run on different manifests and cannot be paired: "
            "compare runs of the same suite version and split (`evalsuite runs` lists them)"
        )
    return np.where(x_set, x, y).astype(object)


def _pair(
    base: ItemTable, cand: ItemTable
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Indices of the shared items in each run, and their strata and cluster keys.

    An ingested run (no item hash, stratum ``all``, no clusters) takes the other run's labels.
    """
    shared, ib, ic = np.intersect1d(
        base.item_id.astype(str), cand.item_id.astype(str), return_indices=True
    )
    if len(shared) == 0:
        raise IncomparableRunsError(
            f"runs {base.run_id!r} and {cand.run_id!r} share no item with a usable epoch; "
            "compare runs of the same suite version and split (`evalsuite runs` lists them)"
        )
    _merge("item_hash", shared, base.item_hash[ib], cand.item_hash[ic], None)
    strata = _merge("stratum", shared, base.stratum[ib], cand.stratum[ic], "all")
    clusters = _merge("cluster", shared, base.cluster[ib], cand.cluster[ic], _NO_CLUSTER)
    return ib, ic, strata, clusters


def _verdict(test: PairedDiff, perm_p: float, alpha: float) -> Verdict:
    """Paired-t verdict at `alpha`; the sign-flip p decides only when the t p is undefined."""
    p = test.p_value if math.isfinite(test.p_value) else perm_p
    if test.diff == 0 or not (p < alpha):
        return "no_detectable_difference"
    return "candidate_better" if test.diff > 0 else "baseline_better"


def _sentence(test: PairedDiff, verdict: Verdict) -> str:
    """The human sentence of the verdict, with the MDE when nothing was detected."""
    ci = (
        f"{test.ci.low:+.3f} to {test.ci.high:+.3f}"
        if math.isfinite(test.ci.low) and math.isfinite(test.ci.high)
        else "undefined"  # one unit: never "+nan to +nan"
    )
    p = f"{test.p_value:.3g}" if math.isfinite(test.p_value) else "undefined"
    detail = f"{test.diff:+.3f}, {test.level:.0%} CI {ci}, p = {p}, {test.n_items} items"
    if verdict == "candidate_better":
        return f"candidate better ({detail})"
    if verdict == "baseline_better":
        return f"baseline better ({detail})"
    if math.isfinite(test.mde):
        return (
            f"no detectable difference ({detail}): the comparison could detect "
            f"differences of ±{test.mde:.3f} or larger (power {MDE_POWER:.0%} at two-sided "
            f"α = {test.alpha:g})"
        )
    return f"no detectable difference ({detail}); the MDE is undefined: {test.note}"


def compare_runs(  # noqa: PLR0913 - the analysis options of `compare`, and the tables if built
    baseline: pd.DataFrame,
    candidate: pd.DataFrame,
    *,
    level: float = 0.95,
    alpha: float = 0.05,
    gate: Gate | None = None,
    n_resamples: int = 9999,
    rng: np.random.Generator,
    tables: tuple[ItemTable, ItemTable] | None = None,
) -> Comparison:
    """Paired comparison of two runs' item means (candidate − baseline).

    Items are paired by ``item_id``; an item whose every epoch is a harness error in either
    run is dropped from both (counted in ``n_unpaired_*``). The verdict is the two-sided
    paired t at `alpha` (clustered when the suite declares clusters); beside it: a sign-flip
    permutation p-value (exact up to 20 units), McNemar's mid-p when both runs have exactly
    one usable epoch per item with 0/1 scores and no clusters, per-stratum differences with
    Holm-adjusted p-values (``multipletests(method="holm")``), and the MDE (power 0.8 at
    `alpha`, two-sided, noncentral t on the observed df with the variance of the differences
    under the alternative: docs/design/mde.md). A non-inferiority `gate`
    passes iff the one-sided (1−`alpha`) lower bound exceeds −margin.

    Args:
        baseline: attempts of the baseline run.
        candidate: attempts of the candidate run.
        level: confidence level of the intervals.
        alpha: significance level of the verdict, the MDE and the gate.
        gate: a non-inferiority gate, or None.
        n_resamples: sign-flip patterns drawn when the test is not exact.
        rng: generator for the permutation test.
        tables: (baseline, candidate) `item_table` of the two attempts tables when the
            caller has built them already (a report shares its runs' scoring tables,
            docs/design/analysis-scale.md; only their items, means and hashes are used, not
            their health); None: built here.

    Returns:
        The `Comparison`.

    Raises:
        IncomparableRunsError: no shared usable item, or a shared item differs in stratum,
            cluster or content hash (different manifests).
        UsageError: either table breaks the attempts contract, or bad arguments.

    References:
        Miller (2024), arXiv:2411.00640. Holm (1979), Scand. J. Stat. 6:65. Fagerland et al.
        (2013), BMC Med. Res. Methodol. 13:91. Wellek (2010), Testing Statistical
        Hypotheses of Equivalence and Noninferiority.
    """
    check_level(level)
    if not 0 < alpha < 1:
        raise UsageError(f"'alpha' must be strictly between 0 and 1 (got {alpha!r})")
    if tables is None:
        base = item_table(baseline, what="baseline")
        cand = item_table(candidate, what="candidate")
    else:
        base, cand = tables
    ib, ic, strata, keys = _pair(base, cand)
    d = cand.mean[ic] - base.mean[ib]
    clustered = base.clustered or cand.clustered
    clusters = keys if clustered else None
    base_means, cand_means = base.mean[ib], cand.mean[ic]
    test = paired_difference(
        d, clusters=clusters, level=level, alpha=alpha, means=(base_means, cand_means)
    )
    perm_p, exact = sign_flip_p(d, clusters, n_resamples=n_resamples, rng=rng)
    midp = math.nan
    single = np.all(base.n_epochs[ib] == 1) and np.all(cand.n_epochs[ic] == 1)
    if single and base.binary and cand.binary and not clustered:
        b = int(np.sum((base.mean[ib] == 1) & (cand.mean[ic] == 0)))
        c = int(np.sum((base.mean[ib] == 0) & (cand.mean[ic] == 1)))
        midp = mcnemar_midp(b, c)
    strata_names = sorted(set(strata.tolist()))
    per = [
        paired_difference(
            d[strata == h],
            clusters=None if clusters is None else clusters[strata == h],
            level=level,
            alpha=alpha,
            means=(base_means[strata == h], cand_means[strata == h]),
        )
        for h in strata_names
    ]
    holm = holm_adjust([s.p_value for s in per], alpha)
    verdict = _verdict(test, perm_p, alpha)
    return Comparison(
        baseline=base.run_id,
        candidate=cand.run_id,
        test=test,
        verdict=verdict,
        baseline_mean=float(base.mean[ib].mean()),
        candidate_mean=float(cand.mean[ic].mean()),
        p_value_permutation=perm_p,
        permutation_exact=exact,
        p_value_mcnemar_midp=midp,
        n_unpaired_baseline=base.n_items - len(ib),
        n_unpaired_candidate=cand.n_items - len(ic),
        strata=tuple(
            StratumDiff(
                h,
                s,
                float(p),
                observed_mde(
                    base_means[strata == h],
                    cand_means[strata == h],
                    None if clusters is None else clusters[strata == h],
                    s.df,
                    alpha,
                ),
            )
            for h, s, p in zip(strata_names, per, holm, strict=True)
        ),
        gate=None if gate is None else _gate(gate, test, alpha),
        sentence=_sentence(test, verdict),
        baseline_hash=base.input_hash,
        candidate_hash=cand.input_hash,
        mde_detail=observed_mde(base_means, cand_means, clusters, test.df, alpha),
    )
