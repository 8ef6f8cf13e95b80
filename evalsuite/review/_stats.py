"""Failure-mode statistics: rates per run, paired changes between runs, harness re-classification.

The item is the unit, as everywhere in evalsuite (docs/design/intervals.md): a mode's rate in
a run is the mean over items of the share of the item's labelled attempts that carry the
mode, with `evalsuite.analyse.estimate_mean`'s interval (clustered by item; the suite's
clusters when it declares them). A comparison pairs the items labelled in both runs and
takes `paired_difference` of the per-item shares; the modes' p-values are Holm-adjusted
together (statsmodels ``multipletests``). A mode declared a harness fault re-classifies its
labelled attempts as ``harness_error`` in a derived view: the stored outcomes are never
changed (docs/review.md).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from evalsuite.review._labels import AttemptLabel
from evalsuite.review._taxonomy import Taxonomy

if TYPE_CHECKING:
    import pandas as pd

    from evalsuite.store import RunRecord

__all__ = [
    "EXAMPLES",
    "ModeChange",
    "ModeRate",
    "Reclassified",
    "attempt_id",
    "mode_changes",
    "mode_rates",
    "reclassify",
    "scanner_rates",
]

EXAMPLES = 3
"""Example attempts listed per mode."""


def attempt_id(item_id: str, epoch: int) -> str:
    """An attempt's id within its run: ``<item_id>#<epoch>``."""
    return f"{item_id}#{epoch}"


def _interval(value: Any) -> list[float | None]:
    lo, hi = float(value.ci[0]), float(value.ci[1])
    return [lo if math.isfinite(lo) else None, hi if math.isfinite(hi) else None]


@dataclass(frozen=True, slots=True)
class ModeRate:
    """One mode in one run: its rate among the labelled attempts, interval, count, examples."""

    mode: str
    kind: str
    rate: float
    se: float
    ci: tuple[float, float]
    level: float
    count: int
    """Labelled attempts that carry the mode."""
    labelled: int
    """Labelled attempts of the run (the denominator's attempts)."""
    n_items: int
    method: str
    examples: tuple[str, ...]
    """Up to `EXAMPLES` attempt ids (``item#epoch``) that carry the mode."""

    def to_dict(self) -> dict[str, Any]:
        """As plain data (NaN ends as null)."""
        return {
            "mode": self.mode,
            "kind": self.kind,
            "rate": self.rate if math.isfinite(self.rate) else None,
            "se": self.se if math.isfinite(self.se) else None,
            "ci": [x if math.isfinite(x) else None for x in self.ci],
            "level": self.level,
            "count": self.count,
            "labelled": self.labelled,
            "n_items": self.n_items,
            "method": self.method,
            "examples": list(self.examples),
        }


def _by_item(labels: Sequence[AttemptLabel]) -> dict[str, list[AttemptLabel]]:
    grouped: dict[str, list[AttemptLabel]] = defaultdict(list)
    for label in labels:
        grouped[label.item_id].append(label)
    return dict(sorted(grouped.items()))


def _item_shares(grouped: Mapping[str, list[AttemptLabel]], mode: str) -> dict[str, float]:
    return {
        item: sum(mode in x.modes for x in labels) / len(labels) for item, labels in grouped.items()
    }


def mode_rates(
    labels: Sequence[AttemptLabel],
    taxonomy: Taxonomy,
    *,
    clusters: Mapping[str, str] | None = None,
    level: float = 0.95,
    seed: int = 0,
) -> list[ModeRate]:
    """Each taxonomy mode's rate among `labels` (one run's current labels), highest first.

    Args:
        labels: the run's current labels (`load_labels`).
        taxonomy: the modes counted (every mode is listed, a mode no label carries at 0).
        clusters: item -> cluster, when the suite declares clusters (None: items).
        level: confidence level of the intervals.
        seed: seed of the generator `estimate_mean` takes (drawn from only by a bootstrap,
            which the default interval does not use).
    """
    from evalsuite.analyse import estimate_mean

    grouped = _by_item(labels)
    trials = [len(v) for v in grouped.values()]
    cluster_keys = [clusters.get(i, i) for i in grouped] if clusters else None
    out = []
    for mode in taxonomy.modes:
        shares = _item_shares(grouped, mode.name)
        carrying = sorted((x.item_id, x.epoch) for x in labels if mode.name in x.modes)
        estimate = estimate_mean(
            list(shares.values()),
            clusters=cluster_keys,
            trials=trials,
            level=level,
            rng=np.random.default_rng(seed),
        )
        ci = _interval(estimate)
        out.append(
            ModeRate(
                mode=mode.name,
                kind=mode.kind,
                rate=float(estimate.mean) if grouped else math.nan,
                se=float(estimate.se),
                ci=(
                    ci[0] if ci[0] is not None else math.nan,
                    ci[1] if ci[1] is not None else math.nan,
                ),
                level=level,
                count=len(carrying),
                labelled=len(labels),
                n_items=len(grouped),
                method=estimate.method,
                examples=tuple(attempt_id(i, e) for i, e in carrying[:EXAMPLES]),
            )
        )
    return sorted(out, key=lambda r: (-r.count, r.mode))


@dataclass(frozen=True, slots=True)
class ModeChange:
    """The paired change of one mode's rate from a baseline run to a candidate run."""

    mode: str
    kind: str
    baseline_rate: float
    candidate_rate: float
    difference: float
    ci: tuple[float, float]
    p_value: float
    p_holm: float
    n_items: int
    """Items labelled in both runs (the pairs)."""
    direction: str
    """``fixed`` (the candidate shows it less, Holm p < alpha), ``introduced`` (more), or
    ``no clear change``."""

    def to_dict(self) -> dict[str, Any]:
        """As plain data (NaN as null)."""

        def num(x: float) -> float | None:
            return x if math.isfinite(x) else None

        return {
            "mode": self.mode,
            "kind": self.kind,
            "baseline_rate": num(self.baseline_rate),
            "candidate_rate": num(self.candidate_rate),
            "difference": num(self.difference),
            "ci": [num(self.ci[0]), num(self.ci[1])],
            "p_value": num(self.p_value),
            "p_holm": num(self.p_holm),
            "n_items": self.n_items,
            "direction": self.direction,
        }


def mode_changes(
    baseline: Sequence[AttemptLabel],
    candidate: Sequence[AttemptLabel],
    taxonomy: Taxonomy,
    *,
    clusters: Mapping[str, str] | None = None,
    level: float = 0.95,
    alpha: float = 0.05,
) -> list[ModeChange]:
    """Each mode's paired change (candidate − baseline), paired by item, Holm-adjusted.

    Only items labelled in both runs are paired; each item's value is the share of its
    labelled attempts that carry the mode. Sorted by adjusted p, then mode.
    """
    from statsmodels.stats.multitest import multipletests

    from evalsuite.analyse import paired_difference

    base, cand = _by_item(baseline), _by_item(candidate)
    common = sorted(set(base) & set(cand))
    cluster_keys = [clusters.get(i, i) for i in common] if clusters else None
    rows = []
    for mode in taxonomy.modes:
        a = _item_shares({i: base[i] for i in common}, mode.name)
        b = _item_shares({i: cand[i] for i in common}, mode.name)
        per_item = [b[i] - a[i] for i in common]
        diff = paired_difference(per_item, clusters=cluster_keys, level=level, alpha=alpha)
        rows.append(
            (
                mode,
                float(np.mean(list(a.values()))) if common else math.nan,
                float(np.mean(list(b.values()))) if common else math.nan,
                diff,
            )
        )
    pvals = [r[3].p_value if math.isfinite(r[3].p_value) else 1.0 for r in rows]
    adjusted: list[float] = (
        [float(x) for x in multipletests(pvals, alpha=alpha, method="holm")[1]] if rows else []
    )
    out = []
    for (mode, a_rate, b_rate, diff), p_holm in zip(rows, adjusted, strict=True):
        d = float(diff.diff)
        p_holm = float(p_holm)
        direction = "no clear change"
        if p_holm < alpha and math.isfinite(d) and d != 0:
            direction = "introduced" if d > 0 else "fixed"
        out.append(
            ModeChange(
                mode=mode.name,
                kind=mode.kind,
                baseline_rate=a_rate,
                candidate_rate=b_rate,
                difference=d,
                ci=(float(diff.ci[0]), float(diff.ci[1])),
                p_value=float(diff.p_value),
                p_holm=float(p_holm),
                n_items=len(common),
                direction=direction,
            )
        )
    return sorted(out, key=lambda c: (c.p_holm, c.mode))


def scanner_rates(
    findings: Sequence[Mapping[str, Any]], attempts: pd.DataFrame
) -> list[dict[str, Any]]:
    """Per scanner: the attempts it flagged among the run's, with the share and examples."""
    total = len(attempts)
    grouped: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for row in findings:
        grouped[str(row["scanner"])].append((str(row["item_id"]), int(row["epoch"])))
    return [
        {
            "scanner": name,
            "flagged": len(keys),
            "attempts": total,
            "share": len(keys) / total if total else None,
            "examples": [attempt_id(i, e) for i, e in sorted(keys)[:EXAMPLES]],
        }
        for name, keys in sorted(grouped.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    ]


@dataclass(frozen=True, slots=True)
class Reclassified:
    """A run seen with its harness-mode attempts re-classified as harness errors."""

    run_id: str
    attempts: pd.DataFrame
    """The derived attempts table (the stored one is unchanged)."""
    reclassified: tuple[tuple[str, int, str], ...]
    """(item_id, epoch, mode) of each attempt that became a harness error."""
    error_rate_before: float
    error_rate_after: float
    valid_before: bool
    valid_after: bool
    threshold: float
    score_before: float
    score_after: float
    score_ci_after: tuple[float, float]

    def to_dict(self) -> dict[str, Any]:
        """As plain data; ``recomputed`` marks every figure as the re-classified view's."""

        def num(x: float) -> float | None:
            return x if math.isfinite(x) else None

        return {
            "run_id": self.run_id,
            "recomputed": True,
            "reclassified": [
                {"item_id": i, "epoch": e, "reason": f"review: harness mode {m}"}
                for i, e, m in self.reclassified
            ],
            "error_rate_before": num(self.error_rate_before),
            "error_rate_after": num(self.error_rate_after),
            "threshold": self.threshold,
            "valid_before": self.valid_before,
            "valid_after": self.valid_after,
            "score_before": num(self.score_before),
            "score_after": num(self.score_after),
            "score_ci_after": [num(self.score_ci_after[0]), num(self.score_ci_after[1])],
        }


def reclassify(
    run: RunRecord,
    attempts: pd.DataFrame,
    labels: Sequence[AttemptLabel],
    taxonomy: Taxonomy,
    *,
    level: float = 0.95,
    seed: int = 0,
) -> Reclassified:
    """The run with each attempt labelled with a harness mode turned into a harness error.

    The reason recorded is ``review: harness mode <name>`` (the first harness mode of the
    label, in taxonomy order); the score of such an attempt becomes NaN. The run's health
    (error rate against its threshold, so its validity) and its score are recomputed on the
    derived table by the same code as `score` (`run_health`, `score_run`).
    """
    from evalsuite.analyse import score_run
    from evalsuite.store import run_health

    harness = taxonomy.harness_modes()
    chosen: dict[tuple[str, int], str] = {}
    for label in labels:
        modes = [m for m in harness if m in label.modes]
        if modes:
            chosen[label.key] = modes[0]
    view = attempts.copy()
    keys = list(zip(view["item_id"].astype(str), view["epoch"].astype(int), strict=True))
    changed = []
    outcome, score, reason = (view[c].to_numpy(copy=True) for c in ("outcome", "score", "reason"))
    for row, key in enumerate(keys):
        mode = chosen.get(key)
        if mode is None or outcome[row] == "harness_error":
            continue
        outcome[row], score[row] = "harness_error", math.nan
        reason[row] = f"review: harness mode {mode}"
        changed.append((key[0], key[1], mode))
    view["outcome"], view["score"], view["reason"] = outcome, score, reason
    before = run_health(attempts, planned=run.planned, threshold=run.error_threshold)
    after = run_health(view, planned=run.planned, threshold=run.error_threshold)
    rng_a, rng_b = np.random.default_rng(seed), np.random.default_rng(seed)
    score_a = score_run(attempts, planned=run.planned, level=level, rng=rng_a)
    score_b = score_run(view, planned=run.planned, level=level, rng=rng_b)
    ci = _interval(score_b.overall)
    return Reclassified(
        run_id=run.run_id,
        attempts=view,
        reclassified=tuple(sorted(changed)),
        error_rate_before=float(before.error_rate),
        error_rate_after=float(after.error_rate),
        valid_before=bool(before.valid),
        valid_after=bool(after.valid),
        threshold=float(run.error_threshold),
        score_before=float(score_a.overall.mean),
        score_after=float(score_b.overall.mean),
        score_ci_after=(
            ci[0] if ci[0] is not None else math.nan,
            ci[1] if ci[1] is not None else math.nan,
        ),
    )
