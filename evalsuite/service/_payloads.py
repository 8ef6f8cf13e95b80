"""The numbers behind `score --json`, `compare --json` and every report: built in one place.

The service layer reads the store and calls the analyses; `score_view` and `comparison_view`
(`evalsuite.service._views`) turn these payloads into what every renderer shows
(docs/design/result-model.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalsuite._core.layout import Layout
from evalsuite.analyse import (
    Gate,
    ItemTable,
    compare_runs,
    score_run,
    secondary_estimates,
    weighted_difference,
)
from evalsuite.errors import IncomparableRunsError, InvalidRunError, UsageError
from evalsuite.service._adaptive import adaptive_block, adaptive_summary, fixed_interval_note
from evalsuite.service._audit import audit_fields
from evalsuite.service._completeness import Completeness, run_completeness
from evalsuite.service._views import NO_WEIGHTS
from evalsuite.store import RunRecord, Store, run_health

COMPARE_COLUMNS = (
    "run_id", "item_id", "item_hash", "stratum", "cluster", "epoch", "outcome", "limit_type",
    "score",
)  # fmt: skip
"""The attempt columns a comparison reads (docs/design/analysis-scale.md)."""
MIN_COMMON_SHARE = 0.8
"""Runs of two versions of one suite are compared only when at least this share of the larger
run's items is common to both versions, unchanged (docs/design/triage-and-diff.md)."""

__all__ = [
    "AnalysisOptions",
    "Completeness",
    "check_comparable",
    "compare_payload",
    "run_completeness",
    "run_facts",
    "score_payload",
]


@dataclass(frozen=True, slots=True)
class AnalysisOptions:
    """How the numbers are computed; recorded in every output that uses them."""

    level: float = 0.95
    """Confidence level of every interval."""
    alpha: float = 0.05
    """Significance level of comparisons, their MDE and gates."""
    seed: int = 0
    """Seed of the bootstrap and permutation draws."""
    margin: float | None = None
    """Non-inferiority margin of a gate (None: no gate)."""
    model_corr: float = 0.9
    """Assumed correlation of a second model's true item scores, for one run's pilot MDE."""


def run_facts(run: RunRecord) -> dict[str, Any]:
    """The run fields every analysis output starts with (the `score --json` contract)."""
    return {
        "run_id": run.run_id,
        "suite": run.suite,
        "version": run.version,
        "manifest_hash": run.manifest_hash,
        "split": run.split,
        "model": run.model,
        "epochs": run.epochs,
        "valid": bool(run.valid),
        "status": run.status,
        "source": run.source,
    }


def score_payload(
    store: Store,
    run_id: str,
    options: AnalysisOptions,
    *,
    layout: Layout | None = None,
    attempts: pd.DataFrame | None = None,
    table: ItemTable | None = None,
) -> dict[str, Any]:
    """The `score --json` payload of one stored run (flagged when the run is partial).

    `attempts`: the run's attempts when the caller has read them already
    (`Store.attempt_columns`); None: read here, once, for every figure. `table`: their
    `item_table` with the run's planned attempts, when the caller has built it (a report
    shares it with its comparisons); None: built here.
    """
    run = store.get_run(run_id)
    frame = store.attempt_columns(run.run_id) if attempts is None else attempts
    result = score_run(
        frame,
        weights=run.weights or None,
        planned=run.planned,
        level=options.level,
        alpha=options.alpha,
        model_corr=options.model_corr,
        rng=np.random.default_rng(options.seed),
        table=table,
    )
    payload = run_facts(run) | result.to_dict()
    payload["run_id"] = run.run_id
    # `epochs` is the contract's planned epochs per item (the run's), not the most attempts
    # an item has stored; `epochs_usable` is the most usable epochs any item has
    payload["epochs"] = run.epochs
    health = run_health(
        frame, planned=run.planned, threshold=run.error_threshold, source=run.source
    )
    payload["harness"] |= {
        "errors_by_kind": health.errors_by_kind,
        "valid": health.valid,
        "threshold": health.threshold,
        "retried": health.retried,
        "top_errors": [g.to_dict() for g in health.top_errors or ()],
    }
    payload["analysis_seed"] = options.seed
    payload["alpha"] = options.alpha
    payload["weights"] = dict(run.weights or {})
    payload["error_threshold"] = run.error_threshold
    completeness = run_completeness(run, layout)
    payload |= completeness.to_dict()
    if completeness.partial:
        payload["notes"] = [completeness.describe(run), *payload["notes"]]
    payload["audit"] = audit_fields(layout, run.suite, run.version)
    if payload["audit"]["marker"]:
        payload["notes"] = [_audit_note(run, payload["audit"]), *payload["notes"]]
    _add_adaptive(payload, store, layout, run)
    # the task's other scores (docs/design/scorers.md), with the primary's interval rule
    payload["secondary"] = [
        s.to_dict()
        for s in secondary_estimates(
            frame,
            planned=run.planned,
            level=options.level,
            rng=np.random.default_rng(options.seed),
        )
    ]
    return payload


def _comparable_with(run: RunRecord, others: Sequence[RunRecord]) -> str:
    """Stored runs `run` can be compared with: same manifest and split, complete, no --limit."""
    matches = [
        r.run_id
        for r in others
        if r.run_id != run.run_id
        and r.manifest_hash == run.manifest_hash
        and r.split == run.split
        and r.status == "complete"
        and not run_completeness(r, None).partial
    ]
    where = f"{run.suite}@{run.version} {run.split}"
    if not matches:
        return f"{run.run_id} ({where}): no other stored run"
    shown = ", ".join(matches[-5:]) + (
        f" (and {len(matches) - 5} older)" if len(matches) > 5 else ""
    )
    return f"{run.run_id} ({where}): {shown}"


def describe_unfinished(run: RunRecord) -> str:
    """E.g. ``run X is still running (not complete): 57 of 120 attempts stored so far``.

    A run is complete only when every planned attempt has an outcome (docs/design/outcomes.md)
    and, for a sharded run, every shard has finished (docs/design/sharded-runs.md).
    """
    state = (
        "was interrupted and is not complete"
        if run.status == "interrupted"
        else "is still running (not complete)"
    )
    return f"run {run.run_id} {state}: its {run.planned} planned attempts have not all run"


def check_comparable(
    base: RunRecord,
    cand: RunRecord,
    *,
    allow_invalid: bool,
    allow_partial: bool = False,
    layout: Layout | None = None,
    others: Sequence[RunRecord] = (),
    across_versions: bool = False,
) -> list[str]:
    """Refuse runs that cannot be paired; return notes for runs paired by shared item ids.

    Args:
        base: The baseline run.
        cand: The candidate run.
        allow_invalid: Compare invalid runs too.
        allow_partial: Compare partial (``--limit``) runs, and runs not complete (still
            running, or interrupted), too.
        layout: The project, to count a partial run's split (optional).
        others: The store's runs, to name in a refusal the runs each one can be compared with.
        across_versions: Runs of two versions of one suite may be paired (on their common
            items, `common_item_attempts`); other different manifests are still refused.

    Raises:
        IncomparableRunsError: the same run twice, or different manifests or splits (exit 2,
            a usage error).
        InvalidRunError: an invalid run without `allow_invalid` (exit 5).
        UsageError: a partial run (``--limit``), or a run still running or interrupted, without
            `allow_partial` (exit 2).
    """
    if base.run_id == cand.run_id:
        raise IncomparableRunsError(
            f"BASELINE and CANDIDATE are the same run {base.run_id}: a run paired with itself "
            "differs by exactly 0 on every item, which says nothing about either. Name two "
            "runs (`evalsuite runs` lists them): two models on one suite version, or two "
            "runs of one model to see run-to-run noise"
        )
    notes = []
    if base.manifest_hash and cand.manifest_hash:
        hint = (
            " Only runs of the same suite version (same manifest hash) and split can be "
            "paired; complete runs in the store (no --limit) each can be compared with: "
            f"{_comparable_with(base, others)}; {_comparable_with(cand, others)}."
        )
        if base.manifest_hash != cand.manifest_hash and not (
            across_versions and is_cross_version(base, cand)
        ):
            raise IncomparableRunsError(
                f"runs {base.run_id} ({base.suite}@{base.version}, {base.manifest_hash[:19]}…) "
                f"and {cand.run_id} ({cand.suite}@{cand.version}, {cand.manifest_hash[:19]}…) "
                "ran on different manifests: their items differ, so a paired comparison means "
                "nothing. Run both models on the same suite version." + hint
            )
        if base.split != cand.split:
            raise IncomparableRunsError(
                f"run {base.run_id} is on the {base.split} split and {cand.run_id} on the "
                f"{cand.split} split: they share no item." + hint
            )
    else:
        notes.append("at least one run was ingested without a manifest: paired on shared item ids")
    unfinished = [r for r in (base, cand) if r.status != "complete"]
    if unfinished and not allow_partial:
        raise UsageError(
            "; ".join(describe_unfinished(r) for r in unfinished)
            + ". Its attempts so far are not the run: a comparison would pair a subset of the "
            "items chosen by what happened to finish first. Complete it first (`evalsuite run "
            "--resume RUN`; a sharded run: rerun its unfinished shards, `--resume RUN --shard "
            "I/N`), or pass --allow-partial to compare the attempts stored so far (the output "
            "is then marked)."
        )
    if unfinished:
        notes.append(
            "compared with --allow-partial: "
            + "; ".join(describe_unfinished(r) for r in unfinished)
        )
    partial = [(r, c) for r in (base, cand) if (c := run_completeness(r, layout)).partial]
    if partial and not allow_partial:
        described = "; ".join(c.describe(r) for r, c in partial)
        raise UsageError(
            f"{described}. A comparison of partial runs is a comparison on a subset of the "
            "suite, not of the models. Compare complete runs, or pass --allow-partial to "
            "compare the shared items anyway (the output is then marked partial)."
        )
    if partial:
        notes.append(
            "compared with --allow-partial: " + "; ".join(c.describe(r) for r, c in partial)
        )
    invalid = [r.run_id for r in (base, cand) if r.valid is False]
    if invalid and not allow_invalid:
        raise InvalidRunError(
            f"run(s) {invalid} are invalid (too many harness errors): their scores measure the "
            "harness, not the model. Fix the harness and rerun, or pass --allow-invalid to "
            "compare anyway (the output is then marked invalid)."
        )
    if invalid:
        notes.append(f"compared with --allow-invalid: run(s) {', '.join(invalid)} are INVALID")
    return notes


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
) -> dict[str, Any]:
    """The `compare --json` payload of two stored runs.

    `attempts`: (baseline, candidate) attempts already read (`Store.attempt_columns`);
    None: read here, only the columns a comparison needs. `tables`: their `item_table`s
    when the caller has built them (used only when the runs are compared whole, not on the
    common items of two versions). Runs of two versions of one suite
    are compared on the items both versions hold unchanged (``common_items``), refused when
    those are fewer than `min_common_share` of the larger run's items
    (docs/design/triage-and-diff.md).
    """
    base = store.get_run(baseline)
    cand = store.get_run(candidate)
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
    common: dict[str, Any] = {"cross_version": False}
    if is_cross_version(base, cand):
        attempts, common = common_item_attempts(base, cand, attempts, min_share=min_common_share)
        notes = [common["note"], *notes]
        tables = None  # the tables of the whole runs, not of their common items
    result = compare_runs(
        *attempts,
        tables=tables,
        level=options.level,
        alpha=options.alpha,
        gate=Gate(margin=options.margin) if options.margin is not None else None,
        rng=np.random.default_rng(options.seed),
    )
    payload = result.to_dict()
    weights = dict(base.weights or {})
    if weights and weights == dict(cand.weights or {}):
        payload["weighted"] = weighted_difference(
            result.strata,
            weights,
            level=options.level,
            alpha=options.alpha,
            gate=Gate(margin=options.margin) if options.margin is not None else None,
        ).to_dict()
    else:
        # no deployment weights (or the two runs disagree on them): no weighted comparison
        payload["weighted"] = {
            "weights": {},
            "reason": "the runs' deployment weights differ"
            if weights or cand.weights
            else NO_WEIGHTS,
        }
    if common["cross_version"]:
        common["scores"] = {
            "baseline": {"model": base.model, "mean": payload.get("baseline_mean")},
            "candidate": {"model": cand.model, "mean": payload.get("candidate_mean")},
        }
    payload["common_items"] = common
    payload["baseline"] = base.run_id
    payload["candidate"] = cand.run_id
    payload["level"] = options.level
    payload["alpha"] = options.alpha
    payload["analysis_seed"] = options.seed
    payload["invalid_runs"] = [r.run_id for r in (base, cand) if r.valid is False]
    completeness = {r.run_id: run_completeness(r, layout) for r in (base, cand)}
    payload["partial_runs"] = [rid for rid, c in completeness.items() if c.partial]
    payload["runs"] = {
        "baseline": run_facts(base) | completeness[base.run_id].to_dict(),
        "candidate": run_facts(cand) | completeness[cand.run_id].to_dict(),
    }
    payload["audit"] = {
        "baseline": audit_fields(layout, base.suite, base.version),
        "candidate": audit_fields(layout, cand.suite, cand.version),
    }
    marked = [(r, payload["audit"][k]) for r, k in ((base, "baseline"), (cand, "candidate"))]
    notes = [_audit_note(r, a) for r, a in marked if a["marker"]] + notes
    roles = (("baseline", base), ("candidate", cand))
    if any(r.spec.get("adaptive") for _, r in roles):
        # an adaptive run's attempts were planned from the data: the paired t is secondary
        blocks: dict[str, dict[str, Any] | None] = {}
        for role, r in roles:
            summary = adaptive_summary(store, layout, r)
            blocks[role] = adaptive_block(summary) if summary else None
            if r.spec.get("adaptive"):
                block = blocks[role]
                notes.append(
                    f"{role} {fixed_interval_note(block, 'the paired t')}"
                    if block
                    else _unread_note(role, r)
                )
        payload["adaptive"] = blocks
    payload["notes"] = notes + list(payload.get("notes", []))
    return payload


def _unread_note(role: str, run: RunRecord) -> str:
    return (
        f"{role} run {run.run_id} is an adaptive run whose rounds summary cannot be read: its "
        "fixed-sample intervals are not valid under its stopping rule, and the anytime-valid "
        "interval it stopped on cannot be shown (docs/design/adaptive.md)"
    )


def _add_adaptive(
    payload: dict[str, Any], store: Store, layout: Layout | None, run: RunRecord
) -> None:
    """An adaptive run's anytime-valid interval (`adaptive`) and the caveat on the fixed one."""
    if not run.spec.get("adaptive"):
        return
    summary = adaptive_summary(store, layout, run)
    if summary is None:
        payload["notes"] = [_unread_note("the", run), *payload["notes"]]
        return
    payload["adaptive"] = adaptive_block(summary)
    fixed = (payload["weighted"] if payload.get("weights") else payload["overall"])["method"]
    payload["notes"] = [fixed_interval_note(payload["adaptive"], fixed), *payload["notes"]]


def is_cross_version(base: RunRecord, cand: RunRecord) -> bool:
    """True for runs of two different frozen versions of one suite (same split)."""
    return bool(
        base.manifest_hash
        and cand.manifest_hash
        and base.suite
        and base.suite == cand.suite
        and base.version != cand.version
        and base.split == cand.split
    )


def _item_hashes(frame: pd.DataFrame) -> dict[str, str]:
    pairs = frame[["item_id", "item_hash"]].drop_duplicates("item_id")
    return {str(i): str(h) for i, h in zip(pairs["item_id"], pairs["item_hash"], strict=True)}


def common_item_attempts(
    base: RunRecord,
    cand: RunRecord,
    attempts: tuple[pd.DataFrame, pd.DataFrame],
    *,
    min_share: float,
) -> tuple[tuple[pd.DataFrame, pd.DataFrame], dict[str, Any]]:
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
    counts = {
        "only_baseline": len(hb.keys() - hc.keys()),
        "only_candidate": len(hc.keys() - hb.keys()),
        "changed": len(shared) - len(common),
    }
    left_out = (
        f"{counts['only_baseline']} only in {a}, {counts['only_candidate']} only in {b}, "
        f"{counts['changed']} changed"
    )
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
    return frames, {
        "cross_version": True,
        "versions": {"baseline": base.version, "candidate": cand.version},
        "n_common": len(common),
        "n_items": {"baseline": len(hb), "candidate": len(hc)},
        "share": share,
        "min_share": min_share,
        **counts,
        "note": note,
    }


def _audit_note(run: RunRecord, audit: Mapping[str, Any]) -> str:
    """What every output says of a run whose suite version is not audited (or failed)."""
    suite = f"{run.suite}@{run.version}" if run.suite else "no frozen suite (ingested)"
    return (
        f"{audit['marker']}: run {run.run_id} is of {suite}, which "
        f"{audit['detail']}; its numbers are only as good as that suite's graders"
    )
