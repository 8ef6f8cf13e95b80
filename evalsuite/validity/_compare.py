"""Is one predictor's validity better than another's, and does validity hold up over time?

`compare_predictors` is a paired bootstrap over models of the difference of two correlations
with one deployment result; `validity_over_time` recomputes the correlations on an expanding
window of models in observation order. docs/design/validity.md; docs/methods.md, "Predictive
validity".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from evalsuite.analyse import N_RESAMPLES, Interval, check_level
from evalsuite.errors import InsufficientDataError, UsageError
from evalsuite.validity._checks import FEW_FOR_P, FEW_MODELS, as_vector, check_n_boot
from evalsuite.validity._stats import (
    FloatArray,
    rowwise_pearson,
    rowwise_spearman,
)

__all__ = ["PredictorComparison", "Verdict", "compare_predictors", "plain_dict", "plain_value"]

Verdict = Literal["not distinguishable", "a better", "b better"]
"""``a better``: a's correlation with the deployment result is higher; the interval excludes 0."""


def plain_value(value: Any) -> Any:
    """`value` as plain Python: intervals and tuples as lists, numpy scalars and times as Python.

    Not `evalsuite._core.jsonout.jsonable`, which turns non-finite floats into None for JSON
    output; this keeps NaN (the records' ``to_dict`` leave that step to the JSON writer).
    """
    if isinstance(value, Interval):
        return [value.low, value.high]
    if isinstance(value, tuple | list):
        return [plain_value(v) for v in value]
    if isinstance(value, np.datetime64 | pd.Timestamp):
        return pd.Timestamp(value).isoformat()
    if isinstance(value, np.generic):
        return value.item()
    return value


def plain_dict(record: Any) -> dict[str, Any]:
    """Every dataclass field of `record`, as `plain_value`."""
    return {f.name: plain_value(getattr(record, f.name)) for f in fields(record)}


@dataclass(frozen=True, slots=True)
class PredictorComparison:
    """Difference of two predictors' correlations with one deployment result, on the same models.

    Attributes:
        name_a: the first predictor's name (``a`` unless given).
        name_b: the second predictor.
        n: models with a, b and the deployment result all present.
        n_dropped: models dropped because a, b or the deployment result was missing.
        level: level of the intervals.
        spearman_a: Spearman r_s of a with the deployment result, on the n models.
        spearman_b: the same for b.
        spearman_diff: ``spearman_a − spearman_b``.
        spearman_diff_ci: paired percentile-bootstrap interval of the difference.
        p_value: two-sided bootstrap p-value of ``spearman_diff = 0``.
        pearson_a: Pearson r of a with the deployment result.
        pearson_b: Pearson r of b with the deployment result.
        pearson_diff: ``pearson_a − pearson_b``.
        pearson_diff_ci: paired percentile-bootstrap interval of the difference.
        pearson_p_value: two-sided bootstrap p-value of ``pearson_diff = 0``.
        verdict: from the Spearman interval: ``a better``/``b better`` when it excludes 0.
        n_boot: bootstrap resamples.
        n_degenerate: resamples dropped because a resampled variable was constant.
        flags: warnings a reader must see.
        statement: the answer in plain words.
    """

    name_a: str
    name_b: str
    n: int
    n_dropped: int
    level: float
    spearman_a: float
    spearman_b: float
    spearman_diff: float
    spearman_diff_ci: Interval
    p_value: float
    pearson_a: float
    pearson_b: float
    pearson_diff: float
    pearson_diff_ci: Interval
    pearson_p_value: float
    verdict: Verdict
    n_boot: int
    n_degenerate: int
    flags: tuple[str, ...]
    statement: str

    def conf_int(self, level: float = 0.95) -> Interval:
        """The Spearman-difference interval; bootstrap, so only at the level computed.

        Raises:
            UsageError: `level` differs from `self.level` (re-run `compare_predictors`).
        """
        check_level(level)
        if math.isclose(level, self.level):
            return self.spearman_diff_ci
        raise UsageError(
            f"a bootstrap interval was computed at level {self.level}; re-run "
            f"compare_predictors with level={level} instead of asking conf_int for it"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields: intervals as ``[low, high]``, flags as a list, NaN kept."""
        return plain_dict(self)

    def to_frame(self) -> pd.DataFrame:
        """One row; intervals split into ``_low``/``_high`` columns, flags joined."""
        row: dict[str, Any] = {}
        for key, value in self.to_dict().items():
            if key.endswith("_ci"):
                row[f"{key[:-3]}_low"], row[f"{key[:-3]}_high"] = value
            else:
                row[key] = "; ".join(value) if key == "flags" else value
        return pd.DataFrame([row])


def _boot_diff(diffs: FloatArray, level: float, observed: float) -> tuple[Interval, float, int]:
    ok = diffs[np.isfinite(diffs)]
    bad = diffs.size - ok.size
    if ok.size < diffs.size / 2 or not math.isfinite(observed):
        return Interval(math.nan, math.nan), math.nan, bad
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(ok, [tail, 1.0 - tail])
    below = (np.count_nonzero(ok <= 0.0) + 1) / (ok.size + 1)
    above = (np.count_nonzero(ok >= 0.0) + 1) / (ok.size + 1)
    return Interval(float(low), float(high)), min(1.0, 2.0 * min(below, above)), bad


def _verdict(ci: Interval) -> Verdict:
    if ci.low > 0.0:
        return "a better"
    if ci.high < 0.0:
        return "b better"
    return "not distinguishable"


def _common(
    x_a: npt.ArrayLike, x_b: npt.ArrayLike, y: npt.ArrayLike
) -> tuple[FloatArray, FloatArray, FloatArray, int]:
    a, b, out = as_vector(x_a, "x_a"), as_vector(x_b, "x_b"), as_vector(y, "y")
    if not a.size == b.size == out.size:
        raise UsageError(
            f"'x_a', 'x_b' and 'y' must have one value per model ({a.size}, {b.size}, {out.size})"
        )
    keep = np.isfinite(a) & np.isfinite(b) & np.isfinite(out)
    n = int(np.count_nonzero(keep))
    if n < FEW_MODELS:
        raise InsufficientDataError(
            f"comparing two predictors needs at least {FEW_MODELS} models with both "
            f"predictors and the deployment result; got {n} of {a.size}"
        )
    dropped = a.size - n
    a, b, out = a[keep], b[keep], out[keep]
    for name, v in (("x_a", a), ("x_b", b), ("y", out)):
        if np.ptp(v) == 0.0:
            raise InsufficientDataError(
                f"'{name}' is constant on the {n} common models: correlations undefined"
            )
    return a, b, out, dropped


def compare_predictors(
    x_a: npt.ArrayLike,
    x_b: npt.ArrayLike,
    y: npt.ArrayLike,
    *,
    rng: np.random.Generator,
    n_boot: int = N_RESAMPLES,
    level: float = 0.95,
    names: tuple[str, str] = ("a", "b"),
) -> PredictorComparison:
    """Do predictors a and b correlate differently with deployment result `y`, given these models?

    Args:
        x_a: predictor a's score per model (NaN: missing).
        x_b: predictor b's score per model, aligned by position.
        y: the deployment result per model.
        rng: the generator the bootstrap draws from.
        n_boot: bootstrap resamples of models.
        level: level of the intervals.
        names: what to call a and b in the record and its statement.

    Returns:
        A `PredictorComparison`; ``verdict`` is ``not distinguishable`` unless the Spearman
        difference's interval excludes 0.

    Raises:
        InsufficientDataError: fewer than 5 models have all three values, or one of them
            is constant on those models.
        UsageError: inputs of different lengths, or a bad `level` or `n_boot`.

    Notes:
        Only models with a, b and y all present are used, so both correlations are on the
        same models (they may differ from each predictor's own pairwise-complete `validity`).
        Paired bootstrap: each resample draws models with replacement and recomputes both
        correlations on the same draw, so their dependence (a and b share y, and often each
        other) is kept. Spearman uses mid-ranks of each resample. Percentile interval of the
        difference; p-value ``2·min(P*(d ≤ 0), P*(d ≥ 0))`` with the +1 correction. "Better"
        means a higher (more positive) correlation: negate a predictor where lower is
        better. Resamples where a variable is constant are dropped and counted. With
        several comparisons, intervals and p-values are not adjusted for multiplicity.

    References:
        Efron & Tibshirani (1993), An Introduction to the Bootstrap, ch. 13 and 16.
    """
    check_level(level)
    check_n_boot(n_boot)
    a, b, out, dropped = _common(x_a, x_b, y)
    n = a.size
    idx = rng.integers(0, n, size=(n_boot, n))
    ra, rb = rowwise_spearman(a[None, :], out[None, :]), rowwise_spearman(b[None, :], out[None, :])
    pa, pb = rowwise_pearson(a[None, :], out[None, :]), rowwise_pearson(b[None, :], out[None, :])
    s_obs, p_obs = float(ra[0] - rb[0]), float(pa[0] - pb[0])
    ya = out[idx]
    s_ci, s_p, s_bad = _boot_diff(
        rowwise_spearman(a[idx], ya) - rowwise_spearman(b[idx], ya), level, s_obs
    )
    p_ci, p_p, _ = _boot_diff(
        rowwise_pearson(a[idx], ya) - rowwise_pearson(b[idx], ya), level, p_obs
    )
    verdict = _verdict(s_ci)
    flags = []
    if n < FEW_FOR_P:
        flags.append(f"only {n} common models: the bootstrap interval is rough")
    if s_bad:
        flags.append(f"{s_bad} of {n_boot} resamples had a constant variable and were dropped")
    name_a, name_b = names
    text = (
        f"On the {n} models with both predictors and the deployment result, Spearman r_s is "
        f"{float(ra[0]):.3f} for {name_a} and {float(rb[0]):.3f} for {name_b}; the "
        f"difference {s_obs:.3f} "
        f"has a {level:.0%} paired-bootstrap interval [{s_ci.low:.3f}, {s_ci.high:.3f}] "
        f"(p = {s_p:.3g}): "
        + (
            "not distinguishable given these data."
            if verdict == "not distinguishable"
            else f"{name_a if verdict == 'a better' else name_b} predicts the deployment result "
            "better."
        )
    )
    return PredictorComparison(
        name_a, name_b, n, dropped, level, float(ra[0]), float(rb[0]), s_obs, s_ci, s_p,
        float(pa[0]), float(pb[0]), p_obs, p_ci, p_p, verdict, n_boot, s_bad, tuple(flags), text,
    )  # fmt: skip
