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
    compare_runs,
    score_run,
    secondary_estimates,
    weighted_difference,
)
from evalsuite.errors import IncomparableRunsError, InvalidRunError, UsageError
from evalsuite.service._audit import audit_fields
from evalsuite.service._completeness import Completeness, run_completeness
from evalsuite.service._views import NO_WEIGHTS
from evalsuite.store import RunRecord, Store, run_health

COMPARE_COLUMNS = (
    "run_id", "item_id", "item_hash", "stratum", "cluster", "epoch", "outcome", "limit_type",
    "score",
)  # fmt: skip
"""The attempt columns a comparison reads (docs/design/analysis-scale.md)."""

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
) -> dict[str, Any]:
    """The `score --json` payload of one stored run (flagged when the run is partial).

    `attempts`: the run's attempts when the caller has read them already
    (`Store.attempt_columns`); None: read here, once, for every figure.
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
    )
    payload = run_facts(run) | result.to_dict()
    payload["run_id"] = run.run_id
    health = run_health(frame, planned=run.planned, threshold=run.error_threshold)
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


def check_comparable(
    base: RunRecord,
    cand: RunRecord,
    *,
    allow_invalid: bool,
    allow_partial: bool = False,
    layout: Layout | None = None,
    others: Sequence[RunRecord] = (),
) -> list[str]:
    """Refuse runs that cannot be paired; return notes for runs paired by shared item ids.

    Args:
        base: The baseline run.
        cand: The candidate run.
        allow_invalid: Compare invalid runs too.
        allow_partial: Compare partial (``--limit``) runs too.
        layout: The project, to count a partial run's split (optional).
        others: The store's runs, to name in a refusal the runs each one can be compared with.

    Raises:
        IncomparableRunsError: different manifests or splits (exit 2, a usage error).
        InvalidRunError: an invalid run without `allow_invalid` (exit 5).
        UsageError: a partial run (``--limit``) without `allow_partial` (exit 2).
    """
    notes = []
    if base.manifest_hash and cand.manifest_hash:
        hint = (
            " Only runs of the same suite version (same manifest hash) and split can be "
            "paired; complete runs in the store (no --limit) each can be compared with: "
            f"{_comparable_with(base, others)}; {_comparable_with(cand, others)}."
        )
        if base.manifest_hash != cand.manifest_hash:
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
) -> dict[str, Any]:
    """The `compare --json` payload of two stored runs.

    `attempts`: (baseline, candidate) attempts already read (`Store.attempt_columns`);
    None: read here, only the columns a comparison needs.
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
    )
    if attempts is None:
        attempts = (
            store.attempt_columns(base.run_id, COMPARE_COLUMNS),
            store.attempt_columns(cand.run_id, COMPARE_COLUMNS),
        )
    result = compare_runs(
        *attempts,
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
    payload["notes"] = notes + list(payload.get("notes", []))
    return payload


def _audit_note(run: RunRecord, audit: Mapping[str, Any]) -> str:
    """What every output says of a run whose suite version is not audited (or failed)."""
    suite = f"{run.suite}@{run.version}" if run.suite else "no frozen suite (ingested)"
    return (
        f"{audit['marker']}: run {run.run_id} is of {suite}, which "
        f"{audit['detail']}; its numbers are only as good as that suite's graders"
    )
