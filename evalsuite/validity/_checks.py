"""Input checks, small-M flags and the plain-language statement of the validity records."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pandas as pd

from evalsuite.analyse import Interval
from evalsuite.errors import UsageError
from evalsuite.validity._stats import FloatArray, separation_reliability

__all__ = [
    "FEW_FOR_P",
    "FEW_MODELS",
    "aligned_order",
    "aligned_se",
    "as_vector",
    "check_n_boot",
    "check_reliability",
    "flag_few_models",
    "reliability_of",
    "statement",
]

FEW_MODELS = 5
"""Below this many models a correlation is shown with its interval only."""
FEW_FOR_P = 10
"""Below this many models no validity claim may rest on a p-value (docs/design/validity.md)."""
MIN_BOOT = 100

CAVEAT = (
    "Models are not independent draws (checkpoints of one family cluster), later models tend "
    "to be better at everything, and a narrow capability range hides validity: this "
    "describes these models, not models in general."
)


def as_vector(values: npt.ArrayLike, what: str, *, allow_nan: bool = True) -> FloatArray:
    """`values` as a 1-D float array; NaN marks a missing value, ±inf is refused."""
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"'{what}' must be numbers, one per model ({exc})") from None
    if arr.ndim != 1:
        raise UsageError(f"'{what}' must be one-dimensional, one value per model")
    if np.isinf(arr).any():
        raise UsageError(f"'{what}' must not contain infinite values (use NaN for missing)")
    if not allow_nan and np.isnan(arr).any():
        raise UsageError(f"'{what}' must not contain NaN")
    return arr


def check_n_boot(n_boot: int) -> None:
    """Raise `UsageError` unless `n_boot` is an integer of at least `MIN_BOOT`."""
    if isinstance(n_boot, bool) or not isinstance(n_boot, int | np.integer) or n_boot < MIN_BOOT:
        raise UsageError(f"'n_boot' must be an integer >= {MIN_BOOT} (got {n_boot!r})")


def check_reliability(value: float | None, what: str) -> float | None:
    """`value` unchanged if None or in (0, 1]; otherwise `UsageError`."""
    if value is not None and not (math.isfinite(value) and 0.0 < value <= 1.0):
        raise UsageError(f"'{what}' must be in (0, 1] (got {value!r})")
    return value


def flag_few_models(n: int) -> list[str]:
    """The small-M flags that must travel with every correlation from n models."""
    flags = []
    if n < FEW_MODELS:
        flags.append(
            f"fewer than {FEW_MODELS} models: the correlation is shown with its interval only"
        )
    if n < FEW_FOR_P:
        flags.append(
            f"M < {FEW_FOR_P}: do not claim validity from p-values; bootstrap intervals "
            "(Deming slope) are rough at this size"
        )
    return flags


def statement(n: int, level: float, rho: float, ci: Interval, tau: float, r_crit: float) -> str:
    """What n models show about validity, and what they cannot show."""
    pct = f"{level:.0%}"
    defined = math.isfinite(ci.low) and math.isfinite(ci.high)
    ci_text = f"[{ci.low:.2f}, {ci.high:.2f}]" if defined else "undefined"
    if n < FEW_MODELS:
        parts = [
            f"Only {n} models: they can show almost nothing about validity. The {pct} "
            f"interval for the rank correlation is {ci_text}; report it, never the point "
            "estimate alone."
        ]
    elif math.isfinite(rho):
        width = f" (width {ci.high - ci.low:.2f})" if defined else ""
        parts = [f"{n} models: Spearman r_s = {rho:.2f}, {pct} CI {ci_text}{width}."]
    else:
        parts = [f"{n} models: the correlation is undefined on these data."]
    if math.isfinite(r_crit):
        parts.append(
            f"With {n} models a Pearson r must exceed ±{r_crit:.2f} to differ from 0 at the "
            f"{1 - level:.0%} level."
        )
    if math.isfinite(tau):
        parts.append(
            f"The eval orders about {(1 + tau) / 2:.0%} of model pairs as the deployment "
            "results do ((1 + τ)/2)."
        )
    if n > 3:
        parts.append(
            f"Halving the interval's width (Fisher-z scale) takes about {4 * (n - 3) + 3} models."
        )
    if n < FEW_FOR_P:
        parts.append(f"With fewer than {FEW_FOR_P} models do not claim validity from a p-value.")
    parts.append(CAVEAT)
    return " ".join(parts)


def reliability_of(
    values: FloatArray, se: FloatArray | None, given: float | None, role: str
) -> tuple[float, str, list[str]]:
    """Reliability of x or y (`role`): `given`, else separation from `se`, else unknown.

    Notes:
        An unknown reliability of the deployment results is taken as 1 (``assumed``,
        flagged); an unknown eval reliability stays NaN (``unknown``, flagged): no correction
        without it.
    """
    if given is not None:
        return given, "given", []
    if se is None or not np.isfinite(se).any():
        if role == "y":
            return 1.0, "assumed", [
                "deployment result reliability unknown: r_yy = 1 assumed, so the correction "
                "removes the eval's noise only"
            ]  # fmt: skip
        return math.nan, "unknown", [
            "eval reliability unknown (pass se_x or reliability_x): no attenuation correction"
        ]  # fmt: skip
    rel, why = separation_reliability(values, se)
    flags = [] if math.isfinite(rel) else [f"{role}: separation reliability undefined: {why}"]
    n_missing = int(np.count_nonzero(~np.isfinite(se)))
    if n_missing:
        flags.append(f"se_{role} missing for {n_missing} model(s): reliability uses the others")
    return rel, "separation", flags


def aligned_se(values: npt.ArrayLike, what: str, n: int) -> FloatArray:
    """`values` as n standard errors (NaN: unknown); `UsageError` if negative or misaligned."""
    se = as_vector(values, what, allow_nan=True)
    if se.size != n:
        raise UsageError(f"'{what}' must have one value per model ({se.size} != {n})")
    if np.any(se[np.isfinite(se)] < 0.0):
        raise UsageError(f"'{what}' must be >= 0 (standard errors)")
    return se


def aligned_order(
    values: npt.ArrayLike, n: int, keep: npt.NDArray[np.bool_]
) -> npt.NDArray[np.generic]:
    """The `keep` entries of n sortable observation times (numbers or datetimes).

    Raises:
        UsageError: not n values, or a kept model's time is missing.
    """
    series = pd.Series(np.asarray(values).ravel())
    if len(series) != n:
        raise UsageError(f"'order' must have one value per model ({len(series)} != {n})")
    kept = series[keep]
    if kept.isna().any():
        raise UsageError(
            f"'order' is missing for {int(kept.isna().sum())} model(s) that have both x and "
            "y; give every such model an observation time, or pass order=None"
        )
    return np.asarray(kept.to_numpy())
