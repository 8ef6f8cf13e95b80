"""Predictive validity from the store: eval scores of model versions beside deployment outcomes.

Scores come from each model's latest valid, complete run on one suite version (the suite
mean, and each stratum as a predictor of its own), or from a CSV of results from elsewhere
(``model, benchmark, score`` and optional ``se``). Outcomes come from the store (`validity add`
or `validity import`); for each model the latest observation of the metric is used.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalsuite.analyse import validity_over_time, validity_table
from evalsuite.errors import InsufficientDataError, ItemSourceError, NotFoundError, UsageError
from evalsuite.report._payloads import AnalysisOptions, score_payload
from evalsuite.store import RunRecord, Store

__all__ = [
    "latest_outcomes",
    "read_scores_file",
    "suite_scores",
    "validity_section",
    "validity_sections",
]


def latest_outcomes(store: Store, metric: str) -> pd.DataFrame:
    """The latest observation of `metric` per model: model, value, se, observed_at, n, source.

    A rate given with its sample size ``n`` (value in [0, 1]) gets the binomial standard
    error ``sqrt(v (1 − v) / n)``.
    """
    frame = store.outcomes(metric)
    if frame.empty:
        known = sorted(set(store.outcomes()["metric"])) if not store.outcomes().empty else []
        raise NotFoundError(
            f"no deployment outcomes for metric {metric!r} in the store (metrics recorded: "
            f"{known or 'none'}); add them with `evalsuite validity add` or `validity import`"
        )
    frame = frame.sort_values(["observed_at", "id"], na_position="first")
    latest = frame.groupby("model", sort=True).tail(1).copy()

    def _se(row: pd.Series) -> float:
        if pd.notna(row["se"]):
            return float(row["se"])
        if pd.notna(row["n"]) and 0.0 <= row["value"] <= 1.0:
            return math.sqrt(row["value"] * (1 - row["value"]) / row["n"])
        return math.nan

    latest["se"] = latest.apply(_se, axis=1) if len(latest) else []
    return latest[["model", "value", "se", "observed_at", "n", "source"]].reset_index(drop=True)


def _latest_runs(store: Store, suite: str, version: str, split: str | None) -> list[RunRecord]:
    runs = [
        r
        for r in store.list_runs()
        if r.suite == suite
        and r.version == version
        and r.valid
        and r.status == "complete"
        and (split is None or r.split == split)
    ]
    latest: dict[str, RunRecord] = {}
    for run in runs:  # list_runs is oldest first
        latest[run.model] = run
    return list(latest.values())


def suite_scores(
    store: Store, suite: str, version: str, options: AnalysisOptions, *, split: str | None = None
) -> pd.DataFrame:
    """model, predictor, score, se, run_id: the suite mean and each stratum, per model."""
    rows = []
    for run in _latest_runs(store, suite, version, split):
        payload = score_payload(store, run.run_id, options)
        rows.append(
            {
                "model": run.model,
                "predictor": f"{suite}@{version}",
                "score": payload["overall"]["mean"],
                "se": payload["overall"]["se"],
                "run_id": run.run_id,
            }
        )
        rows.extend(
            {
                "model": run.model,
                "predictor": f"stratum {s['stratum']}",
                "score": s["mean"],
                "se": s["se"],
                "run_id": run.run_id,
            }
            for s in payload["strata"]
        )
    if not rows:
        raise NotFoundError(
            f"no valid, complete run of {suite}@{version}"
            + (f" on the {split} split" if split else "")
            + " in the store; run the model versions first (`evalsuite run`)"
        )
    return pd.DataFrame(rows)


def read_scores_file(path: Path) -> pd.DataFrame:
    """Scores from elsewhere: CSV with model, benchmark, score and optional se."""
    if not path.is_file():
        raise NotFoundError(f"{path} does not exist")
    try:
        frame = pd.read_csv(path)
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise ItemSourceError(f"{path}: not a readable CSV ({exc})") from None
    missing = [c for c in ("model", "benchmark", "score") if c not in frame.columns]
    if missing:
        raise ItemSourceError(
            f"{path}: missing column(s) {missing}; expected model, benchmark, "
            f"score (optional se); found {list(frame.columns)}"
        )
    scores = pd.to_numeric(frame["score"], errors="coerce")
    bad = frame.index[scores.isna() & frame["score"].notna()].tolist()
    if bad:
        raise ItemSourceError(
            f"{path} row {bad[0] + 2}: score {frame['score'][bad[0]]!r} is not a number"
        )
    out = pd.DataFrame(
        {"model": frame["model"].astype(str), "predictor": frame["benchmark"], "score": scores}
    )
    if "se" in frame.columns:
        out["se"] = pd.to_numeric(frame["se"], errors="coerce")
    return out.dropna(subset=["score"])


def _points(scores: pd.DataFrame, outcomes: pd.DataFrame, predictor: str) -> list[dict[str, Any]]:
    merged = scores[scores["predictor"] == predictor].merge(outcomes, on="model")
    se_x = merged["se_x"] if "se_x" in merged else pd.Series(math.nan, index=merged.index)
    se_y = merged["se_y"] if "se_y" in merged else pd.Series(math.nan, index=merged.index)
    return [
        {
            "model": str(model),
            "x": float(x),
            "y": float(y),
            "x_half_width": 1.96 * float(sx),
            "y_half_width": 1.96 * float(sy),
        }
        for model, x, y, sx, sy in zip(
            merged["model"],
            merged["score"].astype(float),
            merged["value"].astype(float),
            se_x.astype(float),
            se_y.astype(float),
            strict=True,
        )
    ]


def _over_time(
    scores: pd.DataFrame, outcomes: pd.DataFrame, predictor: str
) -> list[dict[str, Any]]:
    merged = scores[scores["predictor"] == predictor].merge(outcomes, on="model")
    merged = merged.dropna(subset=["observed_at"])
    if len(merged) < 5:
        return []
    try:
        path = validity_over_time(
            merged["score"].to_numpy(float),
            merged["value"].to_numpy(float),
            pd.to_datetime(merged["observed_at"]).to_numpy(),
        )
    except (InsufficientDataError, UsageError):
        return []
    return [
        {
            "n": p.n,
            "through": str(p.through),
            "spearman": p.spearman,
            "spearman_ci": [p.spearman_ci.low, p.spearman_ci.high],
            "pearson": p.pearson,
            "pearson_ci": [p.pearson_ci.low, p.pearson_ci.high],
        }
        for p in path.points
    ]


def validity_section(
    store: Store,
    *,
    metric: str,
    options: AnalysisOptions,
    suite: str | None = None,
    version: str | None = None,
    scores_file: Path | None = None,
    split: str | None = None,
) -> dict[str, Any]:
    """`validity report --json`, plus the points and path the report draws.

    Raises:
        UsageError: neither a suite version nor a scores file.
        NotFoundError: no outcomes of `metric`, or no runs of the suite version.
    """
    if scores_file is not None:
        scores = read_scores_file(scores_file)
    elif suite is not None and version is not None:
        scores = suite_scores(store, suite, version, options, split=split)
    else:
        raise UsageError("give --suite SUITE@X.Y.Z (scores from stored runs) or --scores FILE")
    outcomes = latest_outcomes(store, metric)
    report = validity_table(
        scores.drop(columns=["run_id"], errors="ignore"),
        outcomes[["model", "value", "se", "observed_at"]],
        metric=metric,
        rng=np.random.default_rng(options.seed),
        level=options.level,
    )
    payload = report.to_dict()
    top = payload["predictors"][0]["name"] if payload["predictors"] else None
    main = f"{suite}@{version}" if scores_file is None else top
    payload["source"] = "scores file" if scores_file else f"runs of {suite}@{version}"
    payload["analysis_seed"] = options.seed
    payload["models_with_outcome"] = sorted(outcomes["model"])
    payload["models_with_scores"] = sorted(set(scores["model"]))
    payload["statements"] = [
        p["statement"] for p in payload["predictors"] if p["name"] == main and p.get("statement")
    ]
    if main is not None:
        renamed = outcomes.rename(columns={"se": "se_y"})
        scored = scores.rename(columns={"se": "se_x"}) if "se" in scores else scores
        payload["main_predictor"] = main
        payload["points"] = _points(scored, renamed, main)
        payload["over_time"] = _over_time(scores, outcomes, main)
    return payload


def validity_sections(
    store: Store, runs: list[dict[str, Any]], options: AnalysisOptions
) -> list[dict[str, Any]]:
    """A validity section per (suite version, outcome metric) with at least 3 paired models."""
    outcomes = store.outcomes()
    if outcomes.empty:
        return []
    sections = []
    refs = sorted({(r["suite"], r["version"]) for r in runs if r.get("manifest")})
    for suite, version in refs:
        for metric in sorted(set(outcomes["metric"])):
            try:
                section = validity_section(
                    store, metric=metric, options=options, suite=suite, version=version
                )
            except (NotFoundError, InsufficientDataError):
                continue
            main = [p for p in section["predictors"] if p["name"] == section["main_predictor"]]
            if main and main[0]["n"] >= 3:
                sections.append(section)
    return sections
