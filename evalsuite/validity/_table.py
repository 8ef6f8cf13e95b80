"""The validity report over several predictors: the ``validity report --json`` payload."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from evalsuite.analyse import N_RESAMPLES, Interval, check_level
from evalsuite.errors import InsufficientDataError, UsageError
from evalsuite.validity._checks import check_n_boot
from evalsuite.validity._compare import PredictorComparison, compare_predictors
from evalsuite.validity._validity import Statistic, Validity, validity

__all__ = ["ValidityReport", "validity_table"]

SCORE_COLUMNS = ("model", "predictor", "score")
OUTCOME_COLUMNS = ("model", "value")
OUTCOME = "\x00outcome"  # a column name no predictor can take


@dataclass(frozen=True, slots=True)
class ValidityReport:
    """Predictive validity of several predictors for one deployment result (metric).

    Attributes:
        metric: the deployment result's name.
        n_models: models with an observed deployment result.
        level: level of every interval.
        predictors: one `Validity` per predictor, highest Spearman first (undefined last).
        comparisons: paired comparisons of the top predictors (a ranked above b).
        notes: how to read the report.
    """

    metric: str
    n_models: int
    level: float
    predictors: tuple[Validity, ...]
    comparisons: tuple[PredictorComparison, ...]
    notes: tuple[str, ...]

    def predictor(self, name: str) -> Validity:
        """The `Validity` of predictor `name`.

        Raises:
            UsageError: no such predictor.
        """
        for v in self.predictors:
            if v.name == name:
                return v
        raise UsageError(
            f"no predictor {name!r} in this report ({[v.name for v in self.predictors]})"
        )

    def conf_int(
        self, level: float = 0.95, statistic: Statistic = "spearman"
    ) -> dict[str, Interval]:
        """Each predictor's interval for `statistic` at `level`, by name."""
        return {v.name: v.conf_int(level, statistic) for v in self.predictors}

    def to_dict(self) -> dict[str, Any]:
        """The ``validity report --json`` payload: metric, n_models, predictors, comparisons."""
        return {
            "metric": self.metric,
            "n_models": self.n_models,
            "level": self.level,
            "predictors": [v.to_dict() for v in self.predictors],
            "comparisons": [c.to_dict() for c in self.comparisons],
            "notes": list(self.notes),
        }

    def to_frame(self) -> pd.DataFrame:
        """One row per predictor (the columns of `Validity.to_frame`)."""
        frames = [v.to_frame() for v in self.predictors]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _check_frame(frame: pd.DataFrame, required: tuple[str, ...], what: str) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise UsageError(f"'{what}' must be a pandas DataFrame (got {type(frame).__name__})")
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise UsageError(f"'{what}' lacks column(s) {missing}; it needs {list(required)}")
    keys = [c for c in required if c in ("model", "predictor")]
    dup = frame.duplicated(keys)
    if dup.any():
        first = frame.loc[dup, keys].iloc[0].tolist()
        raise UsageError(f"'{what}' has {int(dup.sum())} duplicate row(s) of {keys}, e.g. {first}")


def _column(frame: pd.DataFrame, name: str) -> np.ndarray[Any, Any] | None:
    if name not in frame.columns:
        return None
    values = pd.to_numeric(frame[name], errors="coerce").to_numpy(dtype=np.float64)
    return values if np.isfinite(values).any() else None


def _one_predictor(
    name: str, merged: pd.DataFrame, options: tuple[float, int, int], rng: np.random.Generator
) -> Validity:
    level, n_boot, min_models = options
    x = pd.to_numeric(merged["score"], errors="coerce").to_numpy(dtype=np.float64)
    y = pd.to_numeric(merged["value"], errors="coerce").to_numpy(dtype=np.float64)
    keep = np.isfinite(x) & np.isfinite(y)
    n = int(np.count_nonzero(keep))
    if n < max(3, min_models):
        reason = (
            f"{n} models have both {name} and the deployment result; "
            f"at least {max(3, min_models)} needed"
        )
        return Validity.undefined(n, reason, name=name, level=level)
    order = None
    flags: tuple[str, ...] = ()
    if "observed_at" in merged.columns:
        times = merged["observed_at"]
        if times[keep].isna().any():
            flags = ("observed_at missing for some models: no forward-chaining error",)
        else:
            order = times.to_numpy()
    v = validity(x, y, se_x=_column(merged, "se_x"), se_y=_column(merged, "se_y"), order=order,
                 level=level, rng=rng, n_boot=n_boot)  # fmt: skip
    return replace(v, name=name, flags=(*v.flags, *flags))


def _rank_key(v: Validity) -> tuple[int, float, str]:
    defined = math.isfinite(v.spearman)
    return (0 if defined else 1, -v.spearman if defined else 0.0, v.name)


def _comparisons(
    wide: pd.DataFrame, names: list[str], level: float, n_boot: int, rng: np.random.Generator
) -> tuple[list[PredictorComparison], list[str]]:
    out, notes = [], []
    for a, b in itertools.combinations(names, 2):
        try:
            c = compare_predictors(wide[a], wide[b], wide[OUTCOME], rng=rng, n_boot=n_boot,
                                   level=level, names=(a, b))  # fmt: skip
        except InsufficientDataError as exc:
            notes.append(f"{a} vs {b} not compared: {exc}")
            continue
        out.append(c)
    return out, notes


def validity_table(  # noqa: PLR0913 - report options; each argument has one meaning
    scores: pd.DataFrame,
    outcomes: pd.DataFrame,
    *,
    metric: str,
    rng: np.random.Generator,
    level: float = 0.95,
    n_boot: int = N_RESAMPLES,
    min_models: int = 3,
    compare_top: int = 3,
) -> ValidityReport:
    """Predictive validity of every predictor in `scores` for the deployment result in `outcomes`.

    Args:
        scores: one row per (model, predictor): columns ``model``, ``predictor``,
            ``score`` and optionally ``se``. Predictors are benchmarks, or strata of one.
        outcomes: one row per model: ``model``, ``value`` and optionally ``se`` and
            ``observed_at`` (numbers or datetimes; enables forward chaining).
        metric: the deployment result's name, carried into the report.
        rng: the generator every bootstrap draws from.
        level: level of every interval.
        n_boot: bootstrap resamples (Deming slopes and comparisons).
        min_models: predictors with fewer models than this (with both score and deployment result)
            are listed with NaN figures and the reason, not analysed.
        compare_top: compare every pair among this many top-ranked predictors (0: none).

    Returns:
        A `ValidityReport` whose `to_dict` is the ``validity report --json`` payload.

    Raises:
        UsageError: a column is missing, a (model, predictor) or model is repeated, or an
            option is out of range.

    Notes:
        Each predictor is analysed by `validity` on its own pairwise-complete models, so n
        differs between predictors; a comparison uses only the models where both
        predictors and the deployment result are present (`compare_predictors`). Predictors are
        ranked by Spearman r_s; ties and NaN go by name. Comparisons are not adjusted for
        multiplicity: with k predictors compared, read them as descriptive.
    """
    check_level(level)
    check_n_boot(n_boot)
    if isinstance(min_models, bool) or not isinstance(min_models, int) or min_models < 3:
        raise UsageError(f"'min_models' must be an integer >= 3 (got {min_models!r})")
    if isinstance(compare_top, bool) or not isinstance(compare_top, int) or compare_top < 0:
        raise UsageError(f"'compare_top' must be an integer >= 0 (got {compare_top!r})")
    _check_frame(scores, SCORE_COLUMNS, "scores")
    _check_frame(outcomes, OUTCOME_COLUMNS, "outcomes")
    scores = scores[[c for c in (*SCORE_COLUMNS, "se") if c in scores.columns]]
    scores = scores.assign(predictor=scores["predictor"].astype(str))
    outcomes = outcomes[[c for c in (*OUTCOME_COLUMNS, "se", "observed_at") if c in outcomes]]
    out = outcomes.rename(columns={"se": "se_y"}).set_index("model")
    n_models = int(np.isfinite(pd.to_numeric(out["value"], errors="coerce")).sum())
    results = []
    for name, group in scores.groupby("predictor", sort=True):
        merged = group.rename(columns={"se": "se_x"}).set_index("model").join(out, how="left")
        results.append(_one_predictor(str(name), merged, (level, n_boot, min_models), rng))
    results.sort(key=_rank_key)
    top = [v.name for v in results if math.isfinite(v.spearman)][:compare_top]
    wide = scores.pivot(index="model", columns="predictor", values="score")
    wide = wide.join(out["value"].rename(OUTCOME), how="inner")
    comparisons, notes = _comparisons(wide, top, level, n_boot, rng)
    notes += [
        "each predictor uses its own pairwise-complete models (its n); comparisons use the "
        "models where both predictors and the deployment result are present",
        "comparisons are not adjusted for multiplicity",
    ]
    return ValidityReport(metric, n_models, level, tuple(results), tuple(comparisons),
                          tuple(notes))  # fmt: skip
