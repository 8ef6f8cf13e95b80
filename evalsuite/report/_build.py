"""Collect everything a report shows: per-run scores, comparisons, items, provenance."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from evalsuite import __version__
from evalsuite._core.layout import Layout
from evalsuite.errors import EvalsuiteError, UsageError
from evalsuite.manifest import load_manifest
from evalsuite.report._figures import (
    comparison_forest,
    pass_k_curves,
    reliability_panel,
    strata_forest,
    to_svg,
    validity_over_time_plot,
    validity_scatter,
)
from evalsuite.report._payloads import AnalysisOptions, compare_payload, score_payload
from evalsuite.report._validity import validity_sections
from evalsuite.store import Store

__all__ = ["REPORT_FORMAT", "ReportData", "build_report", "item_rows"]

REPORT_FORMAT = "evalsuite-report/1"


@dataclass(frozen=True, slots=True)
class ReportData:
    """The report's numbers (`payload`, JSON-ready) and its figures (name -> SVG)."""

    payload: dict[str, Any]
    figures: dict[str, str] = field(default_factory=dict)


def item_rows(frames: dict[str, pd.DataFrame]) -> list[dict[str, Any]]:
    """Per item: stratum, hash, difficulty, flip rate and mean per run (never any text).

    difficulty = 1 − the mean of the item's per-run means; flip rate = the share of runs in
    which the item's usable epochs disagree; harness errors are excluded.
    """
    per_run = []
    for run_id, frame in frames.items():
        usable = frame[frame["outcome"] != "harness_error"]
        if usable.empty:
            continue
        grouped = usable.groupby("item_id").agg(
            mean=("score", "mean"),
            spread=("score", "nunique"),
            stratum=("stratum", "first"),
            item_hash=("item_hash", "first"),
            epochs=("epoch", "count"),
        )
        grouped["run_id"] = run_id
        per_run.append(grouped.reset_index())
    if not per_run:
        return []
    table = pd.concat(per_run)
    rows = []
    for item_id, group in table.groupby("item_id", sort=False):
        means = {
            str(run): float(value)
            for run, value in zip(group["run_id"], group["mean"].astype(float), strict=True)
        }
        rows.append(
            {
                "item_id": str(item_id),
                "stratum": str(group["stratum"].iloc[0]),
                "item_hash": group["item_hash"].iloc[0]
                if pd.notna(group["item_hash"].iloc[0])
                else None,
                "difficulty": 1.0 - float(group["mean"].mean()),
                "flip_rate": float((group["spread"] > 1).mean()),
                "epochs": int(group["epochs"].max()),
                "means": means,
            }
        )
    return sorted(rows, key=lambda r: (r["stratum"], r["item_id"]))


def _manifest_facts(layout: Layout, run: dict[str, Any]) -> dict[str, Any] | None:
    if not run.get("suite") or not run.get("version"):
        return None
    try:
        manifest = load_manifest(layout, run["suite"], run["version"])
    except EvalsuiteError:
        return None
    return {
        "suite": manifest.suite,
        "version": manifest.version,
        "manifest_hash": manifest.manifest_hash,
        "canary": manifest.canary,
        "frozen_at": manifest.frozen_at,
        "n_items": len(manifest.items),
    }


def _comparisons(
    store: Store,
    runs: list[dict[str, Any]],
    options: AnalysisOptions,
    *,
    layout: Layout,
    allow_partial: bool,
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    baseline = runs[0]
    for candidate in runs[1:]:
        try:
            payload = compare_payload(
                store,
                baseline["run_id"],
                candidate["run_id"],
                options,
                allow_invalid=True,
                allow_partial=allow_partial,
                layout=layout,
            )
        except EvalsuiteError as exc:
            out.append(
                {
                    "baseline": baseline["run_id"],
                    "candidate": candidate["run_id"],
                    "skipped": str(exc),
                }
            )
            continue
        out.append(payload)
    return out


def build_report(
    store: Store,
    layout: Layout,
    run_ids: Sequence[str],
    options: AnalysisOptions | None = None,
    *,
    validity: list[dict[str, Any]] | None = None,
    now: datetime | None = None,
    allow_partial: bool = False,
) -> ReportData:
    """Score every run, compare each later run with the first, and draw the figures.

    Args:
        store: The results store.
        layout: The project (for manifests and canaries).
        run_ids: Runs to report, the first is the baseline of every comparison.
        options: Level, alpha, analysis seed and gate margin (recorded in the report).
        validity: Validity sections to include (default: every outcome metric recorded for
            the runs' suite versions, see `validity_sections`); ``[]`` for none.
        now: Generation time.
        allow_partial: Compare partial runs (``run --limit``) too; by default a comparison
            involving one is listed as not compared. Partial runs are always flagged, and
            never enter the validity sections.
    """
    options = options or AnalysisOptions()
    if not run_ids:
        raise UsageError("name at least one run to report (`evalsuite runs` lists them)")
    records = [store.get_run(r) for r in run_ids]
    if len({r.run_id for r in records}) != len(records):
        raise UsageError("a run is named twice")
    runs = []
    frames: dict[str, pd.DataFrame] = {}
    for record in records:
        payload = score_payload(store, record.run_id, options, layout=layout)
        payload |= {
            "model_args": record.model_args,
            "seed": record.seed,
            "spec": record.spec,
            "provenance": record.provenance,
            "started_at": record.started_at,
            "finished_at": record.finished_at,
            "planned": record.planned,
            "manifest": _manifest_facts(layout, payload),
        }
        runs.append(payload)
        frames[record.run_id] = store.attempts(record.run_id)
    comparisons = _comparisons(store, runs, options, layout=layout, allow_partial=allow_partial)
    if validity is None:
        validity = validity_sections(store, runs, options, layout=layout)
    canaries = sorted({r["manifest"]["canary"] for r in runs if r["manifest"]})
    notes = []
    if any(r["manifest"] is None for r in runs):
        notes.append(
            "some runs were ingested from other harnesses without a frozen manifest: "
            "their items are compared by id, and their strata, weights and item "
            "hashes are unknown"
        )
    payload = {
        "format": REPORT_FORMAT,
        "generated_at": (now or datetime.now(UTC)).isoformat(),
        "evalsuite_version": __version__,
        "level": options.level,
        "alpha": options.alpha,
        "analysis_seed": options.seed,
        "margin": options.margin,
        "canaries": canaries,
        "invalid_runs": [r["run_id"] for r in runs if not r["valid"]],
        "partial_runs": [r["run_id"] for r in runs if r["partial"]],
        "model_corr": options.model_corr,
        "runs": runs,
        "comparisons": comparisons,
        "items": item_rows(frames),
        "validity": validity,
        "notes": notes,
    }
    figures = {
        "strata": to_svg(strata_forest(runs), "Score per stratum with confidence intervals"),
        "pass_k": to_svg(pass_k_curves(runs), "pass@k and pass^k against k"),
        "reliability": to_svg(reliability_panel(runs), "Variance split per run"),
    }
    for i, section in enumerate(validity):
        main = next(p for p in section["predictors"] if p["name"] == section["main_predictor"])
        fit = {"slope": main.get("deming_slope"), "intercept": main.get("deming_intercept")}
        figures[f"validity_{i}"] = to_svg(
            validity_scatter(section["points"], metric=section["metric"], fit=fit),
            f"Eval score against {section['metric']}",
        )
        if section.get("over_time"):
            figures[f"validity_time_{i}"] = to_svg(
                validity_over_time_plot(section["over_time"]), "Validity over time"
            )
    for i, comparison in enumerate(comparisons):
        if "skipped" not in comparison and math.isfinite(comparison["diff"]):
            figures[f"comparison_{i}"] = to_svg(
                comparison_forest(comparison), "Paired difference per stratum"
            )
    return ReportData(payload=payload, figures=figures)
