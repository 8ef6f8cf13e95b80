"""The regression half of `validity`: Deming slope and interval, LOO and forward errors."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from evalsuite.analyse import Interval
from evalsuite.validity._stats import (
    FloatArray,
    deming_bootstrap,
    deming_slopes,
    forward_chain_errors,
    ols_press,
)

__all__ = ["Regression", "deming_delta", "regression"]

NAN_INTERVAL = Interval(math.nan, math.nan)


@dataclass(frozen=True, slots=True)
class Regression:
    """Deming and OLS fits of y on x, with prediction errors (fields as in `Validity`)."""

    deming_slope: float
    deming_slope_ci: Interval
    deming_intercept: float
    delta: float
    delta_source: str
    ols_slope: float
    loo_error: float
    in_sample_error: float
    loo_spearman: float
    forward_error: float
    n_forward: int
    flags: tuple[str, ...]


def deming_delta(se_x: FloatArray | None, se_y: FloatArray | None) -> tuple[float, str]:
    """δ = mean(se_y²)/mean(se_x²) when both are known, else 1 (``assumed``).

    Notes:
        NaN SEs are left out of the means. ``mean(se_x²) = 0`` (an error-free eval) gives
        δ = ∞, where Deming regression is OLS of y on x.
    """
    if se_x is None or se_y is None:
        return 1.0, "assumed"
    kx, ky = se_x[np.isfinite(se_x)], se_y[np.isfinite(se_y)]
    if kx.size == 0 or ky.size == 0:
        return 1.0, "assumed"
    vx, vy = float(np.mean(kx**2)), float(np.mean(ky**2))
    return (vy / vx if vx > 0.0 else math.inf), "se"


def _prediction_errors(x: FloatArray, y: FloatArray) -> tuple[float, float, float, list[str]]:
    resid, press = ols_press(x, y)
    in_sample = math.sqrt(float(np.mean(resid**2)))
    if not np.isfinite(press).all():
        return math.nan, in_sample, math.nan, [
            "leave-one-out error undefined: removing one model leaves x without variation"
        ]  # fmt: skip
    loo = math.sqrt(float(np.mean(press**2)))
    pred = y - press
    loo_rs = math.nan
    if np.ptp(pred) > 0.0 and np.ptp(y) > 0.0:
        from scipy import stats  # about 1 s to import: only where it is used

        loo_rs = float(stats.spearmanr(y, pred).statistic)
    return loo, in_sample, loo_rs, []


def _forward(
    x: FloatArray, y: FloatArray, order: npt.NDArray[np.generic] | None
) -> tuple[float, int, list[str]]:
    if order is None:
        return math.nan, 0, []
    errors = forward_chain_errors(x, y, order)
    ok = errors[np.isfinite(errors)]
    if ok.size == 0:
        return math.nan, 0, [
            "forward chaining: no model has 3 earlier models with varying x to learn from"
        ]  # fmt: skip
    return math.sqrt(float(np.mean(ok**2))), int(ok.size), []


def regression(
    x: FloatArray,
    y: FloatArray,
    order: npt.NDArray[np.generic] | None,
    delta: tuple[float, str],
    *,
    level: float,
    n_boot: int,
    rng: np.random.Generator,
) -> Regression:
    """Deming slope (bootstrap interval), OLS slope, PRESS and forward-chaining RMSEs.

    Notes:
        `delta` is δ and its source, from `deming_delta`. Undefined (NaN, flagged) when x
        does not vary.
    """
    delta_value, source = delta
    flags: list[str] = []
    if source == "assumed":
        flags.append(
            "Deming δ = 1 assumed (error variances of x and y not both known): orthogonal "
            "regression, whose slope depends on the units of x and y"
        )
    xc = x - x.mean()
    sxx = float(np.sum(xc * xc))
    if np.ptp(x) == 0.0 or not sxx > 0.0:  # a spread so small that its square underflows to 0
        nan = math.nan
        flags.append("x does not vary: regression undefined")
        return Regression(nan, NAN_INTERVAL, nan, delta_value, source, nan, nan, nan, nan, nan, 0,
                          tuple(flags))  # fmt: skip
    slope = float(deming_slopes(x, y, delta_value))
    ci, bad = deming_bootstrap(x, y, delta_value, level=level, n_boot=n_boot, rng=rng)
    if bad:
        flags.append(
            f"Deming bootstrap: {bad} of {n_boot} resamples had no x–y covariance and were dropped"
        )
    ols = float(np.sum(xc * (y - y.mean())) / sxx)
    loo, in_sample, loo_rs, f_loo = _prediction_errors(x, y)
    fwd, n_fwd, f_fwd = _forward(x, y, order)
    intercept = float(y.mean() - slope * x.mean()) if math.isfinite(slope) else math.nan
    return Regression(slope, ci, intercept, delta_value, source, ols, loo, in_sample, loo_rs, fwd,
                      n_fwd, (*flags, *f_loo, *f_fwd))  # fmt: skip
