"""Why the runs failed: `review --stats` and the report's "why it failed" section.

Per run the modes' rates, the scanners' findings and checks, the harness re-classification;
per comparison the modes that changed.

Reads the store only (labels, findings, attempts): no inspect, no Scout. Transcripts are
linked by their inspect log folder and sample id; a holdout run keeps no transcripts (its
logs would hold holdout text: docs/design/holdout-governance.md), so its examples are
attempt ids only, never text.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalsuite._core.layout import Layout
from evalsuite.errors import NotFoundError
from evalsuite.review._agreement import scanner_agreement
from evalsuite.review._labels import label_history, load_labels
from evalsuite.review._propose import saturation
from evalsuite.review._stats import mode_changes, mode_rates, reclassify, scanner_rates
from evalsuite.review._taxonomy import Taxonomy, load_taxonomy, suite_taxonomy

if TYPE_CHECKING:
    import pandas as pd

    from evalsuite.store import RunRecord, Store

__all__ = ["TOP_MODES", "StatsOptions", "review_summary", "run_taxonomy_of", "transcript_link"]

TOP_MODES = 5
"""Modes shown per run in the report (all are in ``--stats``)."""


def run_taxonomy_of(layout: Layout, run: RunRecord, path: Path | None = None) -> Taxonomy:
    """The taxonomy of `run`'s suite (or the file `path`).

    Raises:
        NotFoundError: no taxonomy file; a run without a suite and no `path`.
        UsageError: a malformed file.
    """
    if run.suite is None:
        if path is None:
            raise NotFoundError(
                f"run {run.run_id} names no suite (ingested), so it has no suite taxonomy; "
                "name one with --taxonomy FILE"
            )
        return load_taxonomy(path)
    return suite_taxonomy(layout, run.suite, path)


def transcript_link(layout: Layout, run: RunRecord, item_id: str, epoch: int) -> dict[str, Any]:
    """Where an attempt's transcript is: its run's log folder and inspect sample id.

    A holdout run has none (``log`` null, ``reason`` says why); an ingested inspect log is
    named by sample id and epoch.
    """
    if run.split == "holdout":
        return {
            "log": None,
            "reason": "holdout runs keep no transcripts (they would hold holdout text)",
        }
    where = Path(str(run.spec.get("log_dir") or layout.state / "logs" / run.run_id))
    shown = (
        where.relative_to(layout.root).as_posix()
        if where.is_relative_to(layout.root)
        else str(where)
    )
    sample = f"{item_id}::{epoch}" if run.source == "evalsuite" else item_id
    return {"log": shown, "sample_id": sample, "epoch": epoch}


def _clusters(attempts: pd.DataFrame) -> dict[str, str] | None:
    if "cluster" not in attempts or attempts["cluster"].isna().all():
        return None
    pairs = attempts[["item_id", "cluster"]].dropna().drop_duplicates("item_id")
    return {str(i): str(c) for i, c in zip(pairs["item_id"], pairs["cluster"], strict=True)}


def _num(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _run_section(
    store: Store,
    layout: Layout,
    run: RunRecord,
    taxonomy: Taxonomy,
    *,
    level: float,
    seed: int,
) -> dict[str, Any]:
    attempts = store.attempts(run.run_id)
    labels = load_labels(store, run.run_id)
    findings = store.finding_rows(run.run_id)
    scans = store.scan_records(run.run_id)
    rates = mode_rates(labels, taxonomy, clusters=_clusters(attempts), level=level, seed=seed)
    modes = []
    for rate in rates:
        row = rate.to_dict()
        row["examples"] = [
            {"attempt": a}
            | transcript_link(layout, run, a.rsplit("#", 1)[0], int(a.rsplit("#", 1)[1]))
            for a in rate.examples
        ]
        modes.append(row)
    checks = scanner_agreement(
        {run.run_id: labels},
        {run.run_id: findings},
        {run.run_id: {s["scanner"] for s in scans}},
        taxonomy,
    )
    harness_labelled = any(set(x.modes) & set(taxonomy.harness_modes()) for x in labels)
    reclassified = (
        reclassify(run, attempts, labels, taxonomy, level=level, seed=seed).to_dict()
        if harness_labelled
        else None
    )
    return {
        "run_id": run.run_id,
        "suite": run.suite,
        "split": run.split,
        "model": run.model,
        "taxonomy": {"suite": taxonomy.suite, "version": taxonomy.version},
        "attempts": len(attempts),
        "labelled": len(labels),
        "modes": modes,
        "scanners": scanner_rates(findings, attempts),
        "scans": [
            {k: s[k] for k in ("scanner", "scan_location", "scanned_at", "transcripts", "flagged")}
            for s in scans
        ],
        "scanner_checks": [c.to_dict() for c in checks],
        "reclassified": reclassified,
        "saturation": saturation(label_history(store, run.run_id)),
    }


@dataclass(frozen=True, slots=True)
class StatsOptions:
    """The statistics' options: interval level, Holm's alpha, the generator's seed."""

    level: float = 0.95
    alpha: float = 0.05
    seed: int = 0


def review_summary(
    store: Store,
    layout: Layout,
    run_ids: Sequence[str],
    *,
    taxonomy_file: Path | None = None,
    options: StatsOptions | None = None,
    skip_missing: bool = False,
) -> dict[str, Any]:
    """Failure modes of `run_ids` and their changes: the payload of ``review --stats --json``.

    Each run after the first of its suite is compared with that first run (as the report
    does), paired by item over the items labelled in both.

    Args:
        store: the results store (labels, findings, attempts).
        layout: the project (taxonomy files, log folders).
        run_ids: the runs, the first of each suite its baseline.
        taxonomy_file: a taxonomy file for every run instead of each suite's own.
        options: level, alpha and seed (defaults: 0.95, 0.05, 0).
        skip_missing: leave out (listed in ``skipped`` with the reason) a run whose suite has
            no taxonomy file, instead of failing (the report's use).

    Raises:
        NotFoundError: a run or (unless `skip_missing`) a taxonomy is not found.
    """
    options = options or StatsOptions()
    level, alpha, seed = options.level, options.alpha, options.seed
    runs = []
    skipped = []
    labels_of = {}
    taxonomies: dict[str, Taxonomy] = {}
    records = [store.get_run(r) for r in run_ids]
    for run in records:
        try:
            taxonomy = run_taxonomy_of(layout, run, taxonomy_file)
        except NotFoundError as exc:
            if not skip_missing:
                raise
            skipped.append({"run_id": run.run_id, "reason": str(exc)})
            continue
        taxonomies[run.run_id] = taxonomy
        labels_of[run.run_id] = load_labels(store, run.run_id)
        runs.append(_run_section(store, layout, run, taxonomy, level=level, seed=seed))
    comparisons = []
    first_of: dict[str | None, RunRecord] = {}
    for run in records:
        if run.run_id not in taxonomies:
            continue
        base = first_of.setdefault(run.suite, run)
        if base is run:
            continue
        taxonomy = taxonomies[run.run_id]
        changes = mode_changes(
            labels_of[base.run_id], labels_of[run.run_id], taxonomy, level=level, alpha=alpha
        )
        comparisons.append(
            {
                "baseline": base.run_id,
                "candidate": run.run_id,
                "suite": run.suite,
                "alpha": alpha,
                "multiplicity": "holm",
                "paired_items": changes[0].n_items if changes else 0,
                "changes": [c.to_dict() for c in changes],
                "changed": [c.mode for c in changes if c.direction != "no clear change"],
            }
        )
    return {
        "level": level,
        "seed": seed,
        "runs": runs,
        "comparisons": comparisons,
        "skipped": skipped,
    }
