"""The `score` use case: one stored run's estimates, health and caveats, as a typed result.

`score(store, run_id, options)` reads the run and its attempts, calls the analyses and
returns a `ScoreResult`; `score_view` words it for every renderer, and `ScoreResult.to_dict`
writes the ``score --json`` payload (the CLI contract, docs/cli.md) for the renderers and
files only (docs/design/result-model.md, "Typed results").
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evalsuite._core.jsonout import JsonObject
from evalsuite._core.layout import Layout
from evalsuite.analyse import (
    Estimate,
    ItemTable,
    RunScore,
    SecondaryEstimate,
    score_run,
    secondary_estimates,
)
from evalsuite.service._adaptive import adaptive_block, adaptive_summary, fixed_interval_note
from evalsuite.service._audit import audit_info
from evalsuite.service._completeness import run_completeness
from evalsuite.service._payloads import AnalysisOptions, unread_adaptive_note
from evalsuite.service._results import AuditInfo, RunFacts
from evalsuite.store import Health, Store, run_health

__all__ = ["ScoreResult", "score", "score_payload"]


@dataclass(frozen=True, slots=True)
class ScoreResult:
    """Everything `evalsuite score RUN` shows of one stored run.

    Attributes:
        run: the run's facts (model, suite, state, completeness).
        estimates: the analysis of its attempts (means with intervals, strata, pass@k,
            reliability; `evalsuite.analyse.RunScore`).
        harness: its health: planned, scored, limits, harness errors, judged against the
            run's threshold, with the top error reasons.
        audit: its suite version's grader audit status.
        weights: the suite's deployment shares (empty: none declared).
        error_threshold: the run's harness-error threshold.
        secondary: the task's declared secondary metrics.
        adaptive: an adaptive run's stored rounds summary with its anytime-valid interval
            (None: a fixed run, or a summary that cannot be read).
        options: how the numbers were computed.
        notes: what a reader must know beside the numbers, each once, most important first.
    """

    run: RunFacts
    estimates: RunScore
    harness: Health
    audit: AuditInfo
    weights: dict[str, float]
    error_threshold: float
    secondary: tuple[SecondaryEstimate, ...]
    options: AnalysisOptions
    notes: tuple[str, ...]
    adaptive: JsonObject | None = field(default=None)

    @property
    def run_id(self) -> str:
        """The stored run."""
        return self.run.run_id

    @property
    def model(self) -> str:
        """The model the run evaluated."""
        return self.run.model

    @property
    def valid(self) -> bool:
        """Harness errors at or below the run's threshold."""
        return self.run.valid

    @property
    def level(self) -> float:
        """The confidence level of every interval."""
        return self.estimates.level

    @property
    def overall(self) -> Estimate:
        """The unweighted score: the mean of item means, with its interval."""
        return self.estimates.overall

    @property
    def weighted(self) -> Estimate:
        """The deployment-weighted score (item shares when the suite declares no weights)."""
        return self.estimates.weighted

    @property
    def mean(self) -> float:
        """The run's score: the mean of its item means (``score --json``'s ``overall.mean``).

        With deployment weights, `weighted_mean` is the score the headline leads with.
        """
        return self.estimates.overall.mean

    @property
    def interval(self) -> tuple[float, float]:
        """The interval of `mean` at `level` (NaN ends when undefined)."""
        ci = self.estimates.overall.ci
        return (ci.low, ci.high)

    @property
    def weighted_mean(self) -> float | None:
        """The deployment-weighted score, or None when the suite declares no weights."""
        return self.estimates.weighted.mean if self.weights else None

    def to_dict(self) -> JsonObject:
        """The ``score --json`` payload (every field of docs/cli.md, names unchanged)."""
        payload: JsonObject = self.run.facts_dict() | self.estimates.to_dict()
        payload["run_id"] = self.run.run_id
        # `epochs` is the contract's planned epochs per item (the run's), not the most attempts
        # an item has stored; `epochs_usable` is the most usable epochs any item has
        payload["epochs"] = self.run.epochs
        h = self.harness
        harness = self.estimates.health.to_dict() | {
            "errors_by_kind": h.errors_by_kind,
            "valid": h.valid,
            "threshold": h.threshold,
            "retried": h.retried,
            "top_errors": [g.to_dict() for g in h.top_errors or ()],
        }
        payload["harness"] = harness
        payload["analysis_seed"] = self.options.seed
        payload["alpha"] = self.options.alpha
        payload["weights"] = dict(self.weights)
        payload["error_threshold"] = self.error_threshold
        payload |= self.run.completeness.to_dict()
        payload["notes"] = list(self.notes)
        payload["audit"] = self.audit.to_dict()
        if self.adaptive is not None:
            payload["adaptive"] = dict(self.adaptive)
        payload["secondary"] = [s.to_dict() for s in self.secondary]
        return payload


def score(
    store: Store,
    run_id: str,
    options: AnalysisOptions | None = None,
    *,
    layout: Layout | None = None,
    attempts: pd.DataFrame | None = None,
    table: ItemTable | None = None,
) -> ScoreResult:
    """Score one stored run (flagged when it is partial, not complete, invalid or unaudited).

    Args:
        store: The results store.
        run_id: The run (a unique prefix of its id, as `Store.get_run` takes it).
        options: Level, alpha, seed and the assumed model correlation of the pilot MDE.
        layout: The project, for the suite's manifest (completeness) and audit status; None:
            neither is known (the run is then marked unaudited).
        attempts: The run's attempts when the caller has read them already
            (`Store.attempt_columns`); None: read here, once, for every figure.
        table: Their `item_table` with the run's planned attempts, when the caller has built
            it (a report shares it with its comparisons); None: built here.

    Raises:
        UnknownRunError: no stored run has that id (a usage error, exit 2).
    """
    options = options or AnalysisOptions()
    record = store.get_run(run_id)
    if layout is not None:  # a score sealed behind a reusable-holdout mechanism's answer
        from evalsuite.service._mechanism import check_sealed

        check_sealed(layout, record)
    frame = store.attempt_columns(record.run_id) if attempts is None else attempts
    estimates = score_run(
        frame,
        weights=record.weights or None,
        planned=record.planned,
        level=options.level,
        alpha=options.alpha,
        model_corr=options.model_corr,
        rng=np.random.default_rng(options.seed),
        table=table,
    )
    health = run_health(
        frame, planned=record.planned, threshold=record.error_threshold, source=record.source
    )
    completeness = run_completeness(record, layout)
    run = RunFacts.of(record, completeness)
    notes = list(estimates.notes)
    if completeness.partial:
        notes.insert(0, completeness.describe(record))
    audit = audit_info(layout, record.suite, record.version)
    if audit.marker:
        notes.insert(0, audit.note(run))
    adaptive: JsonObject | None = None
    if record.spec.get("adaptive"):
        summary = adaptive_summary(store, layout, record)
        if summary is None:
            notes.insert(0, unread_adaptive_note("the", record))
        else:
            adaptive = adaptive_block(summary)
            fixed = (estimates.weighted if record.weights else estimates.overall).method
            notes.insert(0, fixed_interval_note(adaptive, fixed))
    # the task's other scores (docs/design/scorers.md), with the primary's interval rule
    secondary = secondary_estimates(
        frame,
        planned=record.planned,
        level=options.level,
        rng=np.random.default_rng(options.seed),
    )
    return ScoreResult(
        run=run,
        estimates=estimates,
        harness=health,
        audit=audit,
        weights=dict(record.weights or {}),
        error_threshold=record.error_threshold,
        secondary=tuple(secondary),
        options=options,
        notes=tuple(notes),
        adaptive=adaptive,
    )


def score_payload(
    store: Store,
    run_id: str,
    options: AnalysisOptions,
    *,
    layout: Layout | None = None,
    attempts: pd.DataFrame | None = None,
    table: ItemTable | None = None,
) -> JsonObject:
    """The ``score --json`` payload of one stored run: ``score(...).to_dict()``.

    A bridge for callers that still want the JSON form; new code takes the `ScoreResult`.
    """
    return score(store, run_id, options, layout=layout, attempts=attempts, table=table).to_dict()
