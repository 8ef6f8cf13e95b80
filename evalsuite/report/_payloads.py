"""The numbers behind `score --json`, `compare --json` and every report: built in one place."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from evalsuite.analyse import Gate, compare_runs, score_run
from evalsuite.errors import IncomparableRunsError, InvalidRunError
from evalsuite.store import RunRecord, Store, run_health

__all__ = ["AnalysisOptions", "check_comparable", "compare_payload", "run_facts", "score_payload"]


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


def run_facts(run: RunRecord) -> dict[str, Any]:
    """The run fields every analysis output starts with (DESIGN.md, `score --json`)."""
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


def score_payload(store: Store, run_id: str, options: AnalysisOptions) -> dict[str, Any]:
    """The `score --json` payload of one stored run."""
    run = store.get_run(run_id)
    result = score_run(
        store.attempts(run.run_id),
        weights=run.weights or None,
        planned=run.planned,
        level=options.level,
        rng=np.random.default_rng(options.seed),
    )
    payload = run_facts(run) | result.to_dict()
    payload["run_id"] = run.run_id
    health = run_health(
        store.attempts(run.run_id), planned=run.planned, threshold=run.error_threshold
    )
    payload["harness"] |= {
        "errors_by_kind": health.errors_by_kind,
        "valid": health.valid,
        "threshold": health.threshold,
        "retried": health.retried,
    }
    payload["analysis_seed"] = options.seed
    payload["error_threshold"] = run.error_threshold
    return payload


def _comparable_with(run: RunRecord, others: Sequence[RunRecord]) -> str:
    """Which stored runs `run` can be compared with: same manifest hash and split."""
    matches = [
        r.run_id
        for r in others
        if r.run_id != run.run_id
        and r.manifest_hash == run.manifest_hash
        and r.split == run.split
        and r.status == "complete"
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
    others: Sequence[RunRecord] = (),
) -> list[str]:
    """Refuse runs that cannot be paired; return notes for runs paired by shared item ids.

    Args:
        base: The baseline run.
        cand: The candidate run.
        allow_invalid: Compare invalid runs too.
        others: The store's runs, to name in a refusal the runs each one can be compared with.

    Raises:
        IncomparableRunsError: different manifests or splits (exit 2, a usage error).
        InvalidRunError: an invalid run without `allow_invalid` (exit 5).
    """
    notes = []
    if base.manifest_hash and cand.manifest_hash:
        hint = (
            " Only runs of the same suite version (same manifest hash) and split can be "
            "paired; comparable complete runs in the store: "
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
    invalid = [r.run_id for r in (base, cand) if r.valid is False]
    if invalid and not allow_invalid:
        raise InvalidRunError(
            f"run(s) {invalid} are invalid (too many harness errors): their scores measure the "
            "harness, not the model. Fix the harness and rerun, or pass --allow-invalid to "
            "compare anyway (the output is then marked invalid)."
        )
    if invalid:
        notes.append(f"compared with --allow-invalid: run(s) {invalid} are INVALID")
    return notes


def compare_payload(
    store: Store,
    baseline: str,
    candidate: str,
    options: AnalysisOptions,
    *,
    allow_invalid: bool,
) -> dict[str, Any]:
    """The `compare --json` payload of two stored runs."""
    base = store.get_run(baseline)
    cand = store.get_run(candidate)
    notes = check_comparable(base, cand, allow_invalid=allow_invalid, others=store.list_runs())
    result = compare_runs(
        store.attempts(base.run_id),
        store.attempts(cand.run_id),
        level=options.level,
        alpha=options.alpha,
        gate=Gate(margin=options.margin) if options.margin is not None else None,
        rng=np.random.default_rng(options.seed),
    )
    payload = result.to_dict()
    payload["baseline"] = base.run_id
    payload["candidate"] = cand.run_id
    payload["level"] = options.level
    payload["alpha"] = options.alpha
    payload["analysis_seed"] = options.seed
    payload["invalid_runs"] = [r.run_id for r in (base, cand) if r.valid is False]
    payload["runs"] = {"baseline": run_facts(base), "candidate": run_facts(cand)}
    payload["notes"] = notes + list(payload.get("notes", []))
    return payload
