"""The `compare` use case: a paired comparison of two stored runs, as a typed result.

`compare(store, baseline, candidate, options)` checks that the runs can be paired, reads their
attempts, calls the analyses and returns a `ComparisonResult`; `comparison_view` words it for
every renderer, and `ComparisonResult.to_dict` writes the ``compare --json`` payload (the CLI
contract, docs/cli.md) for the renderers and files only (docs/design/result-model.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evalsuite._core.jsonout import JsonObject
from evalsuite._core.layout import Layout
from evalsuite.analyse import (
    Comparison,
    Gate,
    GateResult,
    ItemTable,
    WeightedDiff,
    compare_runs,
    weighted_difference,
)
from evalsuite.errors import IncomparableRunsError, UsageError
from evalsuite.service._adaptive import adaptive_block, adaptive_summary, fixed_interval_note
from evalsuite.service._audit import audit_info
from evalsuite.service._completeness import run_completeness
from evalsuite.service._payloads import (
    COMPARE_COLUMNS,
    MIN_COMMON_SHARE,
    AnalysisOptions,
    check_comparable,
    is_cross_version,
    unread_adaptive_note,
)
from evalsuite.service._results import NO_WEIGHTS, AuditInfo, RunFacts
from evalsuite.store import RunRecord, Store

__all__ = [
    "CommonItems",
    "ComparisonResult",
    "common_item_attempts",
    "compare",
    "compare_payload",
]


@dataclass(frozen=True, slots=True)
class CommonItems:
    """Runs of two versions of one suite are compared on the items both hold unchanged.

    Attributes:
        cross_version: the runs are of two versions (False: one version, every field else
            empty).
        versions: (baseline's, candidate's) version.
        n_common: items in both versions with the same content hash: the items compared.
        n_items: (baseline's, candidate's) items.
        share: `n_common` over the larger run's items.
        min_share: the share required (``--min-common-share``).
        only_baseline, only_candidate, changed: the items left out, by why.
        note: the caveat every output shows.
        scores: each model's (name, mean) on the common items.
    """

    cross_version: bool = False
    versions: tuple[str, str] = ("", "")
    n_common: int = 0
    n_items: tuple[int, int] = (0, 0)
    share: float = 0.0
    min_share: float = MIN_COMMON_SHARE
    only_baseline: int = 0
    only_candidate: int = 0
    changed: int = 0
    note: str = ""
    scores: tuple[tuple[str, float], tuple[str, float]] | None = None

    def to_dict(self) -> JsonObject:
        """``compare --json``'s ``common_items`` (only ``cross_version`` for one version)."""
        if not self.cross_version:
            return {"cross_version": False}
        out: JsonObject = {
            "cross_version": True,
            "versions": {"baseline": self.versions[0], "candidate": self.versions[1]},
            "n_common": self.n_common,
            "n_items": {"baseline": self.n_items[0], "candidate": self.n_items[1]},
            "share": self.share,
            "min_share": self.min_share,
            "only_baseline": self.only_baseline,
            "only_candidate": self.only_candidate,
            "changed": self.changed,
            "note": self.note,
        }
        if self.scores is not None:
            (bm, bv), (cm, cv) = self.scores
            out["scores"] = {
                "baseline": {"model": bm, "mean": bv},
                "candidate": {"model": cm, "mean": cv},
            }
        return out


@dataclass(frozen=True, slots=True)
class ComparisonResult:
    """Everything `evalsuite compare BASELINE CANDIDATE` shows.

    Attributes:
        baseline_run, candidate_run: the two runs' facts.
        comparison: the paired analysis (`evalsuite.analyse.Comparison`: difference, interval,
            p-values, MDE, strata with Holm's p, the gate when one was asked).
        weighted: the deployment-weighted difference, when both runs carry the suite's
            weights (None otherwise; `weighted_reason` says why).
        weighted_reason: why there is no weighted difference (None when there is one).
        common: the common items of runs of two versions (not cross-version otherwise).
        audits: (baseline's, candidate's) suite audit status.
        adaptive: when either run is adaptive, each run's anytime-valid block (None for a
            fixed run or an unreadable summary); None when neither is adaptive.
        options: how the numbers were computed.
        notes: what a reader must know beside the numbers, most important first.
        gate_source: where the gate was asked (``asked in compare at ...``, ``asked in report
            --margin``); None when not said.
    """

    baseline_run: RunFacts
    candidate_run: RunFacts
    comparison: Comparison
    weighted: WeightedDiff | None
    weighted_reason: str | None
    common: CommonItems
    audits: tuple[AuditInfo, AuditInfo]
    options: AnalysisOptions
    notes: tuple[str, ...]
    adaptive: tuple[JsonObject | None, JsonObject | None] | None = field(default=None)
    gate_source: str | None = None

    @property
    def baseline(self) -> str:
        """The baseline's run id."""
        return self.baseline_run.run_id

    @property
    def candidate(self) -> str:
        """The candidate's run id."""
        return self.candidate_run.run_id

    @property
    def diff(self) -> float:
        """Candidate − baseline: the mean over paired items of item-mean differences."""
        return self.comparison.diff

    @property
    def interval(self) -> tuple[float, float]:
        """The t interval of `diff` at `level` (NaN ends when undefined)."""
        ci = self.comparison.test.ci
        return (ci.low, ci.high)

    @property
    def p_value(self) -> float:
        """The two-sided p-value of the paired test."""
        return self.comparison.test.p_value

    @property
    def verdict(self) -> str:
        """``candidate_better``, ``baseline_better`` or ``no_detectable_difference``."""
        return str(self.comparison.verdict)

    @property
    def level(self) -> float:
        """The confidence level of every interval."""
        return self.options.level

    @property
    def gate(self) -> GateResult | None:
        """The non-inferiority gate's result, when one was asked."""
        return self.comparison.gate

    @property
    def runs(self) -> tuple[RunFacts, RunFacts]:
        """(baseline, candidate)."""
        return (self.baseline_run, self.candidate_run)

    @property
    def invalid_runs(self) -> list[str]:
        """The ids of the invalid runs among the two."""
        return [r.run_id for r in self.runs if r.invalid]

    @property
    def partial_runs(self) -> list[str]:
        """The ids of the partial runs (``run --limit``) among the two."""
        return [r.run_id for r in self.runs if r.partial]

    def to_dict(self) -> JsonObject:
        """The ``compare --json`` payload (every field of docs/cli.md, names unchanged)."""
        payload: JsonObject = self.comparison.to_dict()
        if self.gate_source is not None and self.comparison.gate is not None:
            payload["gate"] = self.comparison.gate.to_dict() | {"source": self.gate_source}
        payload["weighted"] = (
            self.weighted.to_dict()
            if self.weighted is not None
            else {"weights": {}, "reason": self.weighted_reason}
        )
        payload["common_items"] = self.common.to_dict()
        payload["baseline"] = self.baseline
        payload["candidate"] = self.candidate
        payload["level"] = self.options.level
        payload["alpha"] = self.options.alpha
        payload["analysis_seed"] = self.options.seed
        payload["invalid_runs"] = self.invalid_runs
        payload["partial_runs"] = self.partial_runs
        payload["runs"] = {
            "baseline": self.baseline_run.to_dict(),
            "candidate": self.candidate_run.to_dict(),
        }
        payload["audit"] = {
            "baseline": self.audits[0].to_dict(),
            "candidate": self.audits[1].to_dict(),
        }
        if self.adaptive is not None:
            base, cand = self.adaptive
            payload["adaptive"] = {"baseline": base, "candidate": cand}
        payload["notes"] = list(self.notes)
        return payload


def compare(  # noqa: PLR0913 - the options of `compare`, and the attempts if read
    store: Store,
    baseline: str,
    candidate: str,
    options: AnalysisOptions | None = None,
    *,
    allow_invalid: bool = False,
    allow_partial: bool = False,
    layout: Layout | None = None,
    attempts: tuple[pd.DataFrame, pd.DataFrame] | None = None,
    tables: tuple[ItemTable, ItemTable] | None = None,
    min_common_share: float = MIN_COMMON_SHARE,
) -> ComparisonResult:
    """The paired comparison of two stored runs (`check_comparable` first).

    `attempts`: (baseline, candidate) attempts already read (`Store.attempt_columns`);
    None: read here, only the columns a comparison needs. `tables`: their `item_table`s
    when the caller has built them (used only when the runs are compared whole, not on the
    common items of two versions). Runs of two versions of one suite are compared on the
    items both versions hold unchanged (`CommonItems`), refused when those are fewer than
    `min_common_share` of the larger run's items (docs/design/triage-and-diff.md).

    Raises:
        UnknownRunError: a run id no stored run has (exit 2).
        IncomparableRunsError: runs that cannot be paired (exit 2).
        InvalidRunError: an invalid run without `allow_invalid` (exit 5).
        UsageError: a partial or unfinished run without `allow_partial` (exit 2).
    """
    options = options or AnalysisOptions()
    base = store.get_run(baseline)
    cand = store.get_run(candidate)
    if layout is not None:  # scores sealed behind a reusable-holdout mechanism's answer
        from evalsuite.service._mechanism import check_sealed

        check_sealed(layout, base)
        check_sealed(layout, cand)
    notes = check_comparable(
        base,
        cand,
        allow_invalid=allow_invalid,
        allow_partial=allow_partial,
        layout=layout,
        others=store.list_runs(),
        across_versions=True,
    )
    if attempts is None:
        store.cache_columns([base.run_id, cand.run_id])  # runs never read: both at once
        attempts = (
            store.attempt_columns(base.run_id, COMPARE_COLUMNS),
            store.attempt_columns(cand.run_id, COMPARE_COLUMNS),
        )
    common = CommonItems()
    if is_cross_version(base, cand):
        attempts, common = common_item_attempts(base, cand, attempts, min_share=min_common_share)
        notes = [common.note, *notes]
        tables = None  # the tables of the whole runs, not of their common items
    gate = Gate(margin=options.margin) if options.margin is not None else None
    result = compare_runs(
        *attempts,
        tables=tables,
        level=options.level,
        alpha=options.alpha,
        gate=gate,
        rng=np.random.default_rng(options.seed),
    )
    weights = dict(base.weights or {})
    weighted: WeightedDiff | None = None
    reason: str | None = None
    if weights and weights == dict(cand.weights or {}):
        weighted = weighted_difference(
            result.strata, weights, level=options.level, alpha=options.alpha, gate=gate
        )
    else:
        # no deployment weights (or the two runs disagree on them): no weighted comparison
        reason = "the runs' deployment weights differ" if weights or cand.weights else NO_WEIGHTS
    if common.cross_version:
        common = _with_scores(common, base, cand, result)
    facts = tuple(RunFacts.of(r, run_completeness(r, layout)) for r in (base, cand))
    audits = (
        audit_info(layout, base.suite, base.version),
        audit_info(layout, cand.suite, cand.version),
    )
    notes = [a.note(r) for r, a in zip(facts, audits, strict=True) if a.marker] + notes
    adaptive: tuple[JsonObject | None, JsonObject | None] | None = None
    roles = (("baseline", base), ("candidate", cand))
    if any(r.spec.get("adaptive") for _, r in roles):
        # an adaptive run's attempts were planned from the data: the paired t is secondary
        blocks: list[JsonObject | None] = []
        for role, r in roles:
            summary = adaptive_summary(store, layout, r)
            block = adaptive_block(summary) if summary else None
            blocks.append(block)
            if r.spec.get("adaptive"):
                notes.append(
                    f"{role} {fixed_interval_note(block, 'the paired t')}"
                    if block
                    else unread_adaptive_note(role, r)
                )
        adaptive = (blocks[0], blocks[1])
    return ComparisonResult(
        baseline_run=facts[0],
        candidate_run=facts[1],
        comparison=result,
        weighted=weighted,
        weighted_reason=reason,
        common=common,
        audits=audits,
        options=options,
        notes=tuple(notes + result.notes()),
        adaptive=adaptive,
    )


def _with_scores(
    common: CommonItems, base: RunRecord, cand: RunRecord, result: Comparison
) -> CommonItems:
    return CommonItems(
        cross_version=common.cross_version,
        versions=common.versions,
        n_common=common.n_common,
        n_items=common.n_items,
        share=common.share,
        min_share=common.min_share,
        only_baseline=common.only_baseline,
        only_candidate=common.only_candidate,
        changed=common.changed,
        note=common.note,
        scores=((base.model, result.baseline_mean), (cand.model, result.candidate_mean)),
    )


def compare_payload(  # noqa: PLR0913 - the options of `compare`, and the attempts if read
    store: Store,
    baseline: str,
    candidate: str,
    options: AnalysisOptions,
    *,
    allow_invalid: bool,
    allow_partial: bool = False,
    layout: Layout | None = None,
    attempts: tuple[pd.DataFrame, pd.DataFrame] | None = None,
    tables: tuple[ItemTable, ItemTable] | None = None,
    min_common_share: float = MIN_COMMON_SHARE,
) -> JsonObject:
    """The ``compare --json`` payload of two stored runs: ``compare(...).to_dict()``.

    A bridge for callers that still want the JSON form; new code takes the
    `ComparisonResult`.
    """
    return compare(
        store,
        baseline,
        candidate,
        options,
        allow_invalid=allow_invalid,
        allow_partial=allow_partial,
        layout=layout,
        attempts=attempts,
        tables=tables,
        min_common_share=min_common_share,
    ).to_dict()


def _item_hashes(frame: pd.DataFrame) -> dict[str, str]:
    pairs = frame[["item_id", "item_hash"]].drop_duplicates("item_id")
    return {str(i): str(h) for i, h in zip(pairs["item_id"], pairs["item_hash"], strict=True)}


def common_item_attempts(
    base: RunRecord,
    cand: RunRecord,
    attempts: tuple[pd.DataFrame, pd.DataFrame],
    *,
    min_share: float,
) -> tuple[tuple[pd.DataFrame, pd.DataFrame], CommonItems]:
    """The two runs' attempts of the items both versions hold unchanged, and what was done.

    An item is common when both runs have it with the same content hash; an item changed
    between the versions, or held by one only, is left out of both. The share is the common
    items over the larger run's items.

    Raises:
        UsageError: `min_share` outside [0, 1].
        IncomparableRunsError: fewer common items than `min_share` of the larger run (exit 2).
    """
    if not 0.0 <= min_share <= 1.0:
        raise UsageError(f"--min-common-share must be between 0 and 1 (got {min_share!r})")
    hb, hc = _item_hashes(attempts[0]), _item_hashes(attempts[1])
    shared = hb.keys() & hc.keys()
    common = sorted(i for i in shared if hb[i] == hc[i])
    larger = max(len(hb), len(hc))
    share = len(common) / larger if larger else 0.0
    a, b = f"{base.suite}@{base.version}", f"{cand.suite}@{cand.version}"
    only_baseline = len(hb.keys() - hc.keys())
    only_candidate = len(hc.keys() - hb.keys())
    changed = len(shared) - len(common)
    left_out = f"{only_baseline} only in {a}, {only_candidate} only in {b}, {changed} changed"
    if share < min_share:
        raise IncomparableRunsError(
            f"runs {base.run_id} ({a}) and {cand.run_id} ({b}) are of different versions and "
            f"share only {len(common)} unchanged item(s) of {larger} ({share:.0%}; left out: "
            f"{left_out}), below the required {min_share:.0%}: a comparison on so few common "
            f"items says little about either version. Run both models on one version, see "
            f"`evalsuite diff {a} {b}`, or lower --min-common-share."
        )
    keep = set(common)
    frames = (
        attempts[0][attempts[0]["item_id"].astype(str).isin(keep)],
        attempts[1][attempts[1]["item_id"].astype(str).isin(keep)],
    )
    note = (
        f"compared across versions on common items only: {base.run_id} is of {a} and "
        f"{cand.run_id} of {b}; {len(common)} of {larger} items ({share:.0%}; at least "
        f"{min_share:.0%} required) are in both versions unchanged and are the only items "
        f"compared, and every mean here is over them (left out: {left_out})"
    )
    return frames, CommonItems(
        cross_version=True,
        versions=(str(base.version), str(cand.version)),
        n_common=len(common),
        n_items=(len(hb), len(hc)),
        share=share,
        min_share=min_share,
        only_baseline=only_baseline,
        only_candidate=only_candidate,
        changed=changed,
        note=note,
    )
