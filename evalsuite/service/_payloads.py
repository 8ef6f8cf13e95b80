"""What `score` and `compare` share: the analysis options and the rules of a comparison.

The use cases themselves (`evalsuite.service._score.score`, `evalsuite.service._compare.compare`)
build typed results from the store; this module holds their options, the check that two
runs can be paired and the run facts every output starts with (docs/design/result-model.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from evalsuite._core.jsonout import JsonObject
from evalsuite._core.layout import Layout
from evalsuite.errors import IncomparableRunsError, InvalidRunError, UsageError
from evalsuite.service._completeness import Completeness, run_completeness
from evalsuite.store import RunRecord

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
    "describe_unfinished",
    "is_cross_version",
    "run_completeness",
    "run_facts",
    "unread_adaptive_note",
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


def run_facts(run: RunRecord) -> JsonObject:
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


def unread_adaptive_note(role: str, run: RunRecord) -> str:
    """The caveat of an adaptive run whose rounds summary cannot be read."""
    return (
        f"{role} run {run.run_id} is an adaptive run whose rounds summary cannot be read: its "
        "fixed-sample intervals are not valid under its stopping rule, and the anytime-valid "
        "interval it stopped on cannot be shown (docs/design/adaptive.md)"
    )


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
