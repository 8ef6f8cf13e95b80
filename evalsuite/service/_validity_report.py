"""The `validity report` use case: eval scores of model versions beside deployment results.

Scores come from each model's latest valid, complete run of the whole split on one suite
version and one split (the suite mean, and each stratum as a predictor of its own), or from a
CSV of results from elsewhere (``model, benchmark, score`` and optional ``se``). Partial runs
(``run --limit``) are left out unless asked for, and one table never mixes the dev and holdout
splits (docs/design/partial-runs.md). Outcomes come from the store (`validity add` or
`validity import`); for each model the latest observation of the metric is used.

`validity_report` returns a typed `ValidityResult` (the validity stage's `ValidityReport` and
what this use case chose: the runs, the split, the main predictor, its points); its view is
`validity_view`, its JSON `ValidityResult.to_dict()` (the ``validity report --json``
payload). The report's predictive-validity sections are `validity_results`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from evalsuite._core.jsonout import JsonObject
from evalsuite._core.layout import Layout
from evalsuite.errors import InsufficientDataError, ItemSourceError, NotFoundError, UsageError
from evalsuite.service._completeness import run_completeness
from evalsuite.service._payloads import AnalysisOptions
from evalsuite.service._score import score
from evalsuite.store import RunRecord, Store
from evalsuite.validity import ValidityReport, validity_over_time, validity_table

__all__ = [
    "ValidityPoint",
    "ValidityResult",
    "ValidityRuns",
    "ValidityTimePoint",
    "latest_outcomes",
    "read_scores_file",
    "suite_scores",
    "validity_report",
    "validity_results",
]


@dataclass(frozen=True, slots=True)
class ValidityPoint:
    """One model in the scatter: its eval score (x) and deployment result (y), 95% half-widths."""

    model: str
    x: float
    y: float
    x_half_width: float
    y_half_width: float

    def to_dict(self) -> JsonObject:
        """``{"model", "x", "y", "x_half_width", "y_half_width"}``."""
        return {
            "model": self.model,
            "x": self.x,
            "y": self.y,
            "x_half_width": self.x_half_width,
            "y_half_width": self.y_half_width,
        }


@dataclass(frozen=True, slots=True)
class ValidityTimePoint:
    """Validity over the models observed through `through` (forward in time)."""

    n: int
    through: str
    spearman: float
    spearman_ci: tuple[float, float]
    pearson: float
    pearson_ci: tuple[float, float]

    def to_dict(self) -> JsonObject:
        """``{"n", "through", "spearman", "spearman_ci", "pearson", "pearson_ci"}``."""
        return {
            "n": self.n,
            "through": self.through,
            "spearman": self.spearman,
            "spearman_ci": list(self.spearman_ci),
            "pearson": self.pearson,
            "pearson_ci": list(self.pearson_ci),
        }


@dataclass(frozen=True, slots=True)
class ValidityRuns:
    """Scores from stored runs: which runs, on which split, and the partial runs.

    Attributes:
        split: the one split of the runs (None: no split recorded).
        used: model -> the run whose scores were used.
        partial: the partial runs used (``--allow-partial``).
        partial_left_out: the partial runs left out (no ``--allow-partial``).
    """

    split: str | None
    used: Mapping[str, str]
    partial: tuple[str, ...]
    partial_left_out: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ValidityResult:
    """How well the suite's score (or each benchmark of a scores file) predicted a metric.

    Attributes:
        report: the validity stage's analysis of every predictor.
        source: ``runs of SUITE@X.Y.Z`` or ``scores file``.
        analysis_seed: the seed of every bootstrap.
        models_with_outcome: models with a deployment result of the metric.
        models_with_scores: models with a score.
        runs: the stored runs used (None: scores from a file).
        notes: the analysis's notes, then the use case's (partial runs).
        statements: the main predictor's statement, in words.
        main_predictor: the suite's own score, or a file's top benchmark (None: no predictor).
        points: the main predictor's scatter.
        over_time: the main predictor's validity over time (empty below five dated models).
    """

    report: ValidityReport
    source: str
    analysis_seed: int
    models_with_outcome: tuple[str, ...]
    models_with_scores: tuple[str, ...]
    runs: ValidityRuns | None
    notes: tuple[str, ...]
    statements: tuple[str, ...]
    main_predictor: str | None
    points: tuple[ValidityPoint, ...] = field(default=())
    over_time: tuple[ValidityTimePoint, ...] = field(default=())

    @property
    def metric(self) -> str:
        """The deployment result predicted."""
        return self.report.metric

    def to_dict(self) -> JsonObject:
        """The ``validity report --json`` payload (docs/cli.md), field for field."""
        out: JsonObject = self.report.to_dict()
        out["notes"] = list(self.notes)
        out["source"] = self.source
        out["analysis_seed"] = self.analysis_seed
        out["models_with_outcome"] = list(self.models_with_outcome)
        out["models_with_scores"] = list(self.models_with_scores)
        if self.runs is not None:
            out["split"] = self.runs.split
            out["runs_used"] = dict(self.runs.used)
            out["partial_runs"] = list(self.runs.partial)
            out["partial_runs_left_out"] = list(self.runs.partial_left_out)
        out["statements"] = list(self.statements)
        if self.main_predictor is not None:
            out["main_predictor"] = self.main_predictor
            out["points"] = [p.to_dict() for p in self.points]
            out["over_time"] = [p.to_dict() for p in self.over_time]
        return out


def latest_outcomes(store: Store, metric: str) -> pd.DataFrame:
    """The latest observation of `metric` per model: model, value, se, observed_at, n, source.

    A rate given with its sample size ``n`` (value in [0, 1]) gets the binomial standard
    error ``sqrt(v (1 − v) / n)``.
    """
    frame = store.outcomes(metric)
    if frame.empty:
        known = sorted(set(store.outcomes()["metric"])) if not store.outcomes().empty else []
        raise NotFoundError(
            f"no deployment results for metric {metric!r} in the store (metrics recorded: "
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


def _eligible_runs(
    store: Store,
    suite: str,
    version: str,
    *,
    layout: Layout | None,
    allow_partial: bool,
) -> tuple[list[RunRecord], list[str]]:
    """Valid, complete runs of `suite@version`; partial ones only with `allow_partial`.

    Returns the runs (oldest first) and the ids of partial runs that were left out.
    """
    runs, left_out = [], []
    for r in store.list_runs():
        if not (r.suite == suite and r.version == version and r.valid and r.status == "complete"):
            continue
        if run_completeness(r, layout).partial and not allow_partial:
            left_out.append(r.run_id)
            continue
        runs.append(r)
    return runs, left_out


def _choose_split(runs: list[RunRecord], split: str | None, ref: str) -> str | None:
    """The one split the table is about; refuse to mix dev and holdout scores."""
    if split is not None:
        return split
    by_split: dict[str, set[str]] = {}
    for r in runs:
        by_split.setdefault(str(r.split), set()).add(r.model)
    if len(by_split) > 1:
        listed = "; ".join(f"{s}: {', '.join(sorted(m))}" for s, m in sorted(by_split.items()))
        raise UsageError(
            f"{ref} has runs on more than one split ({listed}). A validity table never mixes "
            "one model's dev score with another's holdout score: choose the split with "
            "--split dev or --split holdout."
        )
    return next(iter(by_split), None)


def _latest_runs(runs: list[RunRecord], split: str | None) -> list[RunRecord]:
    latest: dict[str, RunRecord] = {}
    for run in runs:  # list_runs is oldest first
        if split is None or run.split == split:
            latest[run.model] = run
    return list(latest.values())


def suite_scores(
    store: Store,
    suite: str,
    version: str,
    options: AnalysisOptions,
    *,
    split: str | None = None,
    layout: Layout | None = None,
    allow_partial: bool = False,
) -> pd.DataFrame:
    """model, predictor, score, se, run_id, split, partial: the suite mean and each stratum.

    One run per model: its latest valid, complete run of the whole split (partial runs only
    with `allow_partial`), all on one split (`split`, or the only split with runs).

    Raises:
        UsageError: no `split` given and the runs span both splits.
        NotFoundError: no eligible run.
    """
    ref = f"{suite}@{version}"
    runs, left_out = _eligible_runs(
        store, suite, version, layout=layout, allow_partial=allow_partial
    )
    chosen = _choose_split(runs, split, ref)
    rows = []
    for run in _latest_runs(runs, chosen):
        result = score(store, run.run_id, options, layout=layout)
        common = {"run_id": run.run_id, "split": run.split, "partial": result.run.partial}
        rows.append(
            {
                "model": run.model,
                "predictor": ref,
                "score": result.overall.mean,
                "se": result.overall.se,
                **common,
            }
        )
        rows.extend(
            {
                "model": run.model,
                "predictor": f"stratum {s.stratum}",
                "score": s.estimate.mean,
                "se": s.estimate.se,
                **common,
            }
            for s in result.estimates.strata
        )
    if not rows:
        skipped = (
            f" ({len(left_out)} partial run(s) left out: {', '.join(left_out[:5])}; pass "
            "--allow-partial to use them)"
            if left_out
            else ""
        )
        raise NotFoundError(
            f"no valid, complete run of {ref}"
            + (f" on the {chosen} split" if chosen else "")
            + f" in the store{skipped}; run the model versions first (`evalsuite run`)"
        )
    frame = pd.DataFrame(rows)
    frame.attrs["left_out_partial"] = left_out
    frame.attrs["split"] = chosen
    return frame


def stored_aggregate_scores(store: Store) -> pd.DataFrame:
    """model, predictor, score, se of the stored aggregate results; each benchmark a predictor.

    They come from `ingest --format eee` of records without samples.

    Raises:
        NotFoundError: the store holds none.
    """
    frame = store.aggregates()
    if frame.empty:
        raise NotFoundError(
            f"no aggregate results in the store {store.display_url}: store some with "
            "`evalsuite ingest RECORD.json --format eee` (an Every Eval Ever record without "
            "samples), or give --scores FILE or --suite SUITE@X.Y.Z"
        )
    twice = frame[frame.duplicated(["model", "benchmark"], keep=False)]
    if not twice.empty:
        first = twice.iloc[0]
        raise UsageError(
            f"the store holds {int((twice['model'] == first['model']).sum())} aggregate "
            f"results of {first['model']!r} on {first['benchmark']!r} (from "
            f"{sorted(set(twice['source']))}): a validity table takes one score per model "
            "and benchmark; give the one you mean with --scores FILE"
        )
    return pd.DataFrame(
        {
            "model": frame["model"].astype(str),
            "predictor": frame["benchmark"].astype(str),
            "score": frame["score"].astype(float),
            "se": pd.to_numeric(frame["se"], errors="coerce"),
        }
    )


def read_scores_file(path: Path) -> pd.DataFrame:
    """Scores from elsewhere: CSV with model, benchmark, score and optional se.

    Every Eval Ever aggregate records (a ``.json`` file or a directory of them) are read by
    `evalsuite.interchange.eee_scores`: means suffice here, so no per-sample file is needed.
    """
    if path.suffix == ".json" or path.is_dir():
        from evalsuite.interchange import eee_scores

        return eee_scores(path)
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


def _points(scores: pd.DataFrame, outcomes: pd.DataFrame, predictor: str) -> list[ValidityPoint]:
    merged = scores[scores["predictor"] == predictor].merge(outcomes, on="model")
    se_x = merged["se_x"] if "se_x" in merged else pd.Series(math.nan, index=merged.index)
    se_y = merged["se_y"] if "se_y" in merged else pd.Series(math.nan, index=merged.index)
    return [
        ValidityPoint(str(model), float(x), float(y), 1.96 * float(sx), 1.96 * float(sy))
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
) -> list[ValidityTimePoint]:
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
        ValidityTimePoint(
            p.n,
            str(p.through),
            p.spearman,
            (p.spearman_ci.low, p.spearman_ci.high),
            p.pearson,
            (p.pearson_ci.low, p.pearson_ci.high),
        )
        for p in path.points
    ]


def validity_report(  # noqa: PLR0913 - the options of `validity report`, one each
    store: Store,
    *,
    metric: str,
    options: AnalysisOptions,
    suite: str | None = None,
    version: str | None = None,
    scores_file: Path | None = None,
    split: str | None = None,
    layout: Layout | None = None,
    allow_partial: bool = False,
    aggregates: bool = False,
) -> ValidityResult:
    """`validity report`: how well the suite version's score (or each benchmark) predicted `metric`.

    Raises:
        UsageError: neither a suite version nor a scores file; or runs on both splits and
            no `split` chosen.
        NotFoundError: no outcomes of `metric`, or no eligible runs of the suite version,
            or (`aggregates`) no aggregate results stored.
    """
    if aggregates and (scores_file is not None or suite is not None):
        raise UsageError(
            "give one source of scores: --aggregates (stored aggregate results), --scores "
            "FILE or --suite SUITE@X.Y.Z"
        )
    if aggregates:
        scores = stored_aggregate_scores(store)
    elif scores_file is not None:
        scores = read_scores_file(scores_file)
    elif suite is not None and version is not None:
        scores = suite_scores(
            store,
            suite,
            version,
            options,
            split=split,
            layout=layout,
            allow_partial=allow_partial,
        )
    else:
        raise UsageError(
            "give --suite SUITE@X.Y.Z (scores from stored runs), --scores FILE or --aggregates "
            "(stored aggregate results)"
        )
    outcomes = latest_outcomes(store, metric)
    report = validity_table(
        scores.drop(columns=["run_id", "split", "partial"], errors="ignore"),
        outcomes[["model", "value", "se", "observed_at"]],
        metric=metric,
        rng=np.random.default_rng(options.seed),
        level=options.level,
    )
    top = report.predictors[0].name if report.predictors else None
    from_runs = scores_file is None and not aggregates
    main = f"{suite}@{version}" if from_runs else top
    notes = list(report.notes)
    runs = None
    if from_runs:
        used = scores.drop_duplicates("model")
        runs = ValidityRuns(
            split=scores.attrs.get("split"),
            used=dict(zip(used["model"], used["run_id"], strict=True)),
            partial=tuple(sorted(used.loc[used["partial"], "run_id"])),
            partial_left_out=tuple(scores.attrs.get("left_out_partial", [])),
        )
        if runs.partial:
            notes.append(
                f"used with --allow-partial: run(s) {list(runs.partial)} are PARTIAL "
                "(a subset of the split's items)"
            )
        if runs.partial_left_out:
            notes.append(
                f"{len(runs.partial_left_out)} partial run(s) left out "
                "(--allow-partial to use them)"
            )
    points: list[ValidityPoint] = []
    over_time: list[ValidityTimePoint] = []
    if main is not None:
        renamed = outcomes.rename(columns={"se": "se_y"})
        scored = scores.rename(columns={"se": "se_x"}) if "se" in scores else scores
        points = _points(scored, renamed, main)
        over_time = _over_time(scores, outcomes, main)
    return ValidityResult(
        report=report,
        source=(
            "scores file"
            if scores_file
            else "stored aggregate results"
            if aggregates
            else f"runs of {suite}@{version}"
        ),
        analysis_seed=options.seed,
        models_with_outcome=tuple(sorted(outcomes["model"])),
        models_with_scores=tuple(sorted(set(scores["model"]))),
        runs=runs,
        notes=tuple(notes),
        statements=tuple(v.statement for v in report.predictors if v.name == main and v.statement),
        main_predictor=main,
        points=tuple(points),
        over_time=tuple(over_time),
    )


def validity_results(
    store: Store,
    runs: Sequence[Mapping[str, object]],
    options: AnalysisOptions,
    *,
    layout: Layout | None = None,
) -> list[ValidityResult]:
    """A validity result per (suite version, split, outcome metric) with ≥ 3 paired models.

    `runs` are the report's runs (`run_facts` payloads). Partial runs never enter these
    results, and each is about one split.
    """
    outcomes = store.outcomes()
    if outcomes.empty:
        return []
    results = []
    refs = sorted(
        {
            (str(r["suite"]), str(r["version"]), str(r["split"]))
            for r in runs
            if r.get("manifest") and r["split"]
        }
    )
    for suite, version, split in refs:
        for metric in sorted(set(outcomes["metric"])):
            try:
                result = validity_report(
                    store,
                    metric=metric,
                    options=options,
                    suite=suite,
                    version=version,
                    split=split,
                    layout=layout,
                )
            except (NotFoundError, InsufficientDataError):
                continue
            main = [v for v in result.report.predictors if v.name == result.main_predictor]
            if main and main[0].n >= 3:
                results.append(result)
    return results
