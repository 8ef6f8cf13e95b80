"""Collect everything a report shows: per-run scores, comparisons, items, provenance."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from evalsuite._core.layout import Layout
from evalsuite._core.version import __version__
from evalsuite.analyse import ItemTable, item_table
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
from evalsuite.report._health import environment_health
from evalsuite.report._items import item_figures
from evalsuite.service import (
    AnalysisOptions,
    ComparisonResult,
    ResultView,
    ScoreResult,
    adaptive_result,
    compare,
    comparison_view,
    fmt_time,
    is_unfinished,
    item_sections,
    items_view,
    last_gate,
    score,
    score_view,
    scorecard,
    validity_results,
    why_it_failed,
)
from evalsuite.store import Store

__all__ = ["REPORT_FORMAT", "NotCompared", "ReportData", "build_report", "item_rows"]

REPORT_FORMAT = "evalsuite-report/1"


@dataclass(frozen=True, slots=True)
class NotCompared:
    """A pair of runs the report could not compare, and why."""

    baseline: str
    candidate: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """``{"baseline", "candidate", "skipped"}`` (report.json's field names)."""
        return {"baseline": self.baseline, "candidate": self.candidate, "skipped": self.reason}


@dataclass(frozen=True, slots=True)
class ReportData:
    """The report's numbers (`payload`, JSON-ready) and its figures (name -> SVG).

    `scores` and `comparisons` are the typed results behind ``payload["runs"]`` and
    ``payload["comparisons"]`` (same order): the renderers build their views from them.
    `item_views`: the view of each item-analysis section (``payload["item_analysis"]``), which
    the Markdown and HTML renderers lay out.
    """

    payload: dict[str, Any]
    figures: dict[str, str] = field(default_factory=dict)
    scores: tuple[ScoreResult, ...] = ()
    comparisons: tuple[ComparisonResult | NotCompared, ...] = ()
    item_views: tuple[ResultView, ...] = ()


def _id_codes(ids: pd.Series) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.object_]]:
    """Codes of the item ids as text, and the distinct ids sorted by code point."""
    codes, uniques = pd.factorize(ids, sort=False)
    texts = np.array([str(u) for u in uniques], dtype=object)
    merged, ordered = pd.factorize(texts, sort=True)
    return np.asarray(merged, dtype=np.intp)[codes], np.asarray(ordered, dtype=object)


def _per_item(frame: pd.DataFrame) -> dict[str, Any] | None:
    """One run's usable attempts per item (ids sorted): mean, flip, stratum, hash, epochs."""
    usable = (frame["outcome"] != "harness_error").to_numpy()
    if not usable.any():
        return None
    sub = frame.loc[usable]
    codes, ids = _id_codes(sub["item_id"])
    score = sub["score"].to_numpy(np.float64)
    stats = (
        pd.DataFrame({"item": codes, "score": score})
        .groupby("item", sort=True)["score"]
        .agg(["mean", "min", "max"])
    )
    order = np.argsort(codes, kind="stable")
    first = order[np.flatnonzero(np.r_[True, np.diff(codes[order]) != 0])]
    hashes = np.full(len(ids), None, dtype=object)
    if "item_hash" in sub:
        known = np.flatnonzero(sub["item_hash"].notna().to_numpy())
        found, at = np.unique(codes[known], return_index=True)  # first non-null, as `first`
        hashes[found] = sub["item_hash"].iloc[known[at]].to_numpy(dtype=object)
    return {
        "ids": ids,
        "mean": stats["mean"].to_numpy(np.float64),
        # more than one distinct score (nunique > 1; NaN is no score)
        "flip": ((stats["min"] != stats["max"]) & stats["min"].notna()).to_numpy(),
        "stratum": sub["stratum"].iloc[first].astype(str).to_numpy(dtype=object),
        "hash": hashes,
        "epochs": np.bincount(codes, weights=sub["epoch"].notna().to_numpy()).astype(np.int64),
    }


def item_rows(frames: Mapping[str, pd.DataFrame]) -> list[dict[str, Any]]:
    """Per item: stratum, hash, difficulty, flip rate and mean per run (never any text).

    difficulty = 1 − the mean of the item's per-run means; flip rate = the share of runs in
    which the item's usable epochs disagree; harness errors are excluded. Stratum and hash
    are those of the first run (in `frames` order) that has the item. Computed per run on
    arrays, then merged by item id, hashing the ids rather than comparing them, and ordered
    by stratum codes over the sorted ids (docs/design/analysis-scale.md).
    """
    runs = [(str(r), t) for r, f in frames.items() if (t := _per_item(f)) is not None]
    if not runs:
        return []
    first_ids = runs[0][1]["ids"]
    if all(len(t["ids"]) == len(first_ids) and (t["ids"] == first_ids).all() for _, t in runs):
        ids = first_ids  # every run has the same items (each run's ids are sorted)
    else:
        ids = np.array(sorted(set().union(*(t["ids"].tolist() for _, t in runs))), dtype=object)
    position = pd.Index(ids)
    n = len(ids)
    present = np.zeros((len(runs), n), dtype=bool)
    means = np.zeros((len(runs), n))
    total = np.zeros(n)  # added in run order, as pandas' mean of the run means adds them
    flips = np.zeros(n)
    epochs = np.zeros(n, dtype=np.int64)
    stratum = np.full(n, None, dtype=object)
    hashes = np.full(n, None, dtype=object)
    for r, (_, t) in enumerate(runs):
        at = np.arange(n) if t["ids"] is ids else position.get_indexer(t["ids"])
        first_here = ~present[:r, at].any(axis=0) if r else np.ones(len(at), dtype=bool)
        stratum[at[first_here]] = t["stratum"][first_here]
        hashes[at[first_here]] = t["hash"][first_here]
        present[r, at] = True
        means[r, at] = t["mean"]
        total[at] += t["mean"]
        flips[at] += t["flip"]
        epochs[at] = np.maximum(epochs[at], t["epochs"])
    count = present.sum(axis=0)
    difficulty = 1.0 - total / count
    flip_rate = flips / count
    names = [run for run, _ in runs]
    # rows by (stratum, item id): the ids are sorted, so a stable sort on stratum codes
    labels = [str(s) for s in stratum.tolist()]
    rank = {label: k for k, label in enumerate(sorted(set(labels)))}
    order = np.argsort(np.array([rank[s] for s in labels], dtype=np.intp), kind="stable")
    known = pd.notna(hashes)
    everywhere = bool(present.all())
    per_run = [means[r, order].tolist() for r in range(len(runs))]
    run_means = (
        [dict(zip(names, row, strict=True)) for row in zip(*per_run, strict=True)]
        if everywhere
        else [
            {r: v for r, v, here in zip(names, row, row_in, strict=True) if here}
            for row, row_in in zip(
                zip(*per_run, strict=True), present[:, order].T.tolist(), strict=True
            )
        ]
    )
    columns = zip(
        ids[order].tolist(),
        [labels[k] for k in order.tolist()],
        hashes[order].tolist(),
        known[order].tolist(),
        difficulty[order].tolist(),
        flip_rate[order].tolist(),
        epochs[order].tolist(),
        run_means,
        strict=True,
    )
    return [
        {
            "item_id": str(item),
            "stratum": label,
            "item_hash": item_hash if known else None,
            "difficulty": hard,
            "flip_rate": flip,
            "epochs": most,
            "means": means_of_item,
        }
        for item, label, item_hash, known, hard, flip, most, means_of_item in columns
    ]


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
    runs: Sequence[ScoreResult],
    options: AnalysisOptions,
    *,
    layout: Layout,
    allow_partial: bool,
    frames: Mapping[str, pd.DataFrame] | None = None,
    tables: Mapping[str, ItemTable] | None = None,
) -> list[ComparisonResult | NotCompared]:
    out: list[ComparisonResult | NotCompared] = []
    # each suite's first run is the baseline of its later runs; a run ingested without a
    # suite is compared with the report's first run, item by item id
    baselines: dict[str | None, ScoreResult] = {runs[0].run.suite: runs[0]}
    pairs = []
    for run in runs[1:]:
        suite = run.run.suite
        if not suite:
            pairs.append((runs[0], run))
        elif suite in baselines:
            pairs.append((baselines[suite], run))
        else:
            baselines[suite] = run
    for baseline, candidate in pairs:
        # a gate asked for in `compare` is recorded with the pair and shown here too;
        # `report --margin` asks for one in every comparison instead
        recorded = (
            None
            if options.margin is not None
            else last_gate(store, baseline.run_id, candidate.run_id, layout=layout)
        )
        pair_options = options if recorded is None else replace(options, margin=recorded.margin)
        try:
            result = compare(
                store,
                baseline.run_id,
                candidate.run_id,
                pair_options,
                allow_invalid=True,
                allow_partial=allow_partial,
                layout=layout,
                attempts=None
                if frames is None
                else (frames[baseline.run_id], frames[candidate.run_id]),
                tables=None
                if tables is None
                else (tables[baseline.run_id], tables[candidate.run_id]),
            )
        except EvalsuiteError as exc:
            out.append(NotCompared(baseline.run_id, candidate.run_id, str(exc)))
            continue
        if result.gate is not None:
            result = replace(
                result,
                gate_source=f"asked in compare at {fmt_time(recorded.asked_at)}"
                if recorded is not None
                else "asked in report --margin",
            )
        out.append(result)
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
    """Score every run, compare each later run with its suite's first, draw the figures.

    Args:
        store: The results store.
        layout: The project (for manifests and canaries).
        run_ids: Runs to report. Each run is compared with the first named run of the same
            suite (its baseline); runs of different suites are never compared, so
            one report can hold several suites' runs side by side. A run ingested without
            a suite is compared with the first run, by item id.
        options: Level, alpha, analysis seed and gate margin (recorded in the report).
        validity: Validity sections to include (default: every outcome metric recorded for
            the runs' suite versions, see `service.validity_results`); ``[]`` for none.
        now: Generation time.
        allow_partial: Compare partial runs (``run --limit``) too; by default a comparison
            involving one is listed as not compared. Partial runs are always flagged, and
            never enter the validity sections.
    """
    options = options or AnalysisOptions()
    if not run_ids:
        raise UsageError("name at least one run to report (`evalsuite runs` lists them)")
    records = [store.get_run(r) for r in run_ids]
    seen: set[str] = set()
    for name, record in zip(run_ids, records, strict=True):
        if record.run_id in seen:
            raise UsageError(
                f"run {record.run_id} is named twice ({name!r}); a report shows each run once: "
                "name each run once (`evalsuite runs` lists them)"
            )
        seen.add(record.run_id)
    runs = []
    scores: list[ScoreResult] = []
    frames: dict[str, pd.DataFrame] = {}
    tables: dict[str, ItemTable] = {}
    store.cache_columns([r.run_id for r in records])  # runs never read: two at once
    for record in records:
        frames[record.run_id] = store.attempt_columns(record.run_id)  # read once per run
        # checked and aggregated once per run: the score and the comparisons share it
        tables[record.run_id] = item_table(frames[record.run_id], planned=record.planned)
        result = score(
            store,
            record.run_id,
            options,
            layout=layout,
            attempts=frames[record.run_id],
            table=tables[record.run_id],
        )
        scores.append(result)
        payload: dict[str, Any] = result.to_dict()
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
    compared = _comparisons(
        store,
        scores,
        options,
        layout=layout,
        allow_partial=allow_partial,
        frames=frames,
        tables=tables,
    )
    if validity is None:
        validity = [v.to_dict() for v in validity_results(store, runs, options, layout=layout)]
    # each comparison with its view's sentences (headline, gate line, caveats)
    comparisons: list[dict[str, Any]] = [
        c.to_dict() if isinstance(c, NotCompared) else comparison_view(c).to_dict()
        for c in compared
    ]
    headlines = [c["headline"] for c in comparisons if "headline" in c]
    headlines += [
        f"{c['candidate']} vs {c['baseline']}: not compared ({c['skipped']})"
        for c in comparisons
        if "skipped" in c
    ]
    if not headlines:  # nothing compared: each run's own answer
        headlines = [score_view(r).headline for r in scores]
    canaries = sorted({r["manifest"]["canary"] for r in runs if r["manifest"]})
    notes = []
    if any(r["manifest"] is None for r in runs):
        notes.append(
            "some runs were ingested from other harnesses without a frozen manifest: "
            "their items are compared by id, and their strata, weights and item "
            "hashes are unknown"
        )
    health = environment_health(layout, runs, frames)
    # labels, scanner findings, mode rates and changes (docs/review.md): after the verdict
    why = why_it_failed(
        store,
        layout,
        [r["run_id"] for r in runs],
        level=options.level,
        alpha=options.alpha,
        seed=options.seed,
    )
    item_results = item_sections(store, layout, runs, level=options.level)
    payload = {
        "format": REPORT_FORMAT,
        "generated_at": (now or datetime.now(UTC)).isoformat(),
        "evalsuite_version": __version__,
        "level": options.level,
        "alpha": options.alpha,
        "analysis_seed": options.seed,
        "margin": options.margin,
        "canaries": canaries,
        # a run still running or interrupted is "not complete", never "invalid"
        "invalid_runs": [r["run_id"] for r in runs if not r["valid"] and not is_unfinished(r)],
        "unfinished_runs": [r["run_id"] for r in runs if is_unfinished(r)],
        "partial_runs": [r["run_id"] for r in runs if r["partial"]],
        "environment_health": health,
        "why_it_failed": why,
        "adaptive": [  # each adaptive run's result, as the store keeps it
            adaptive_result(store, layout, r["run_id"]).to_dict()
            for r in runs
            if (r.get("spec") or {}).get("adaptive")
        ],
        "item_analysis": [section.section_dict() for section in item_results],
        "unaudited_runs": [
            {"run_id": r["run_id"], "marker": r["audit"]["marker"], "suite": r["suite"]}
            | {"version": r["version"], "detail": r["audit"]["detail"]}
            for r in runs
            if r["audit"]["marker"]
        ],
        "model_corr": options.model_corr,
        "runs": runs,
        "comparisons": comparisons,
        "items": item_rows(frames),
        "validity": validity,
        "notes": notes,
        "summary": headlines,
        # the first screen: one row per comparison (docs/design/result-model.md)
        "scorecard": scorecard(comparisons).to_dict(),
    }
    figures = {
        "strata": to_svg(strata_forest(runs), "Score per stratum with confidence intervals"),
        "pass_k": to_svg(pass_k_curves(runs), "pass@k and pass^k against k"),
        "reliability": to_svg(reliability_panel(runs), "Variance split per run"),
    } | item_figures(payload["item_analysis"])
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
            figures[f"answer_{i}"] = to_svg(
                comparison_forest(comparison, strata=False), "Paired difference"
            )
    return ReportData(
        payload=payload,
        figures=figures,
        scores=tuple(scores),
        comparisons=tuple(compared),
        item_views=tuple(items_view(section) for section in item_results),
    )
