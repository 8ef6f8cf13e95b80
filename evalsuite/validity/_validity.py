"""Predictive validity of one eval score against one deployment result (docs/methods.md).

`validity` answers "do the eval's scores predict what deployment later showed, over these M
models, and how much can M models show at all?". Decisions: docs/design/validity.md.
Comparisons of predictors, the expanding-window view and the multi-predictor report live in
`_validity_compare`, `_validity_time` and `_validity_table`; the numerics in `_validity_stats`
and `_validity_regress`.
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
from evalsuite.validity._checks import (
    aligned_order,
    aligned_se,
    as_vector,
    check_n_boot,
    check_reliability,
    flag_few_models,
    reliability_of,
    statement,
)
from evalsuite.validity._regress import deming_delta, regression
from evalsuite.validity._stats import (
    correlations,
    critical_r,
    disattenuate,
    fisher_interval,
    kendall_se,
    pearson_se,
    spearman_se,
)

__all__ = ["Statistic", "Validity", "validity"]

Statistic = Literal["spearman", "kendall", "pearson", "disattenuated"]
"""Which correlation `Validity.conf_int` recomputes."""

NAN_INTERVAL = Interval(math.nan, math.nan)
SMALL_FOR_CORRECTION = 20
"""Below this many models an estimated-reliability correction under-covers (tests: sim)."""


@dataclass(frozen=True, slots=True)
class Validity:
    """How well one eval score predicts one deployment result over the models that have both.

    Attributes:
        name: the predictor's name ('' when called directly; set by `validity_table`).
        n: models with both x and y (pairwise complete).
        n_dropped: models dropped because x or y was missing.
        level: confidence level of every interval.
        spearman: Spearman rank correlation r_s.
        spearman_ci: Bonett–Wright Fisher-z interval of r_s.
        kendall: Kendall τ-b; ``(1 + τ)/2`` is the share of model pairs ordered alike.
        kendall_ci: Fieller Fisher-z interval of τ (``SE² = 0.437/(n − 4)``).
        pearson: Pearson r.
        pearson_ci: Fisher-z interval of r (``SE = 1/√(n − 3)``), as scipy's.
        pearson_p: two-sided p-value of r (scipy ``pearsonr``).
        kendall_p: two-sided p-value of τ (scipy ``kendalltau``, exact at small n).
        r_critical: smallest |r| significant at ``1 − level`` with n models.
        reliability_x: the eval's reliability over these models (NaN if unknown).
        reliability_x_source: ``given``, ``separation`` (from ``se_x``) or ``unknown``.
        reliability_y: the deployment result's reliability (1 when assumed).
        reliability_y_source: ``given``, ``separation`` (from ``se_y``) or ``assumed``.
        disattenuated: ``pearson/√(r_xx·r_yy)``; may exceed 1 (flagged, never clipped).
        disattenuated_ci: `pearson_ci` with both ends corrected the same way.
        deming_slope: closed-form Deming slope of y on x.
        deming_slope_ci: percentile bootstrap interval over models.
        deming_intercept: ``ȳ − β·x̄``.
        deming_delta: error-variance ratio δ = σ²_err,y/σ²_err,x used.
        deming_delta_source: ``se`` (mean se_y²/mean se_x²) or ``assumed`` (δ = 1).
        ols_slope: OLS slope of y on x (attenuated by the eval's unreliability).
        loo_error: RMSE of the PRESS (leave-one-out) residuals of ``OLS y ~ x``.
        in_sample_error: RMSE of the in-sample residuals of the same fit.
        loo_spearman: Spearman correlation of y with its leave-one-out predictions.
        forward_error: RMSE of forward-chaining errors (predict each model from the
            models observed before it); NaN without an order.
        n_forward: models predicted in the forward chain.
        n_boot: bootstrap resamples behind `deming_slope_ci`.
        flags: warnings a reader must see next to the numbers.
        statement: what these M models can and cannot show, in plain words.
    """

    name: str
    n: int
    n_dropped: int
    level: float
    spearman: float
    spearman_ci: Interval
    kendall: float
    kendall_ci: Interval
    pearson: float
    pearson_ci: Interval
    pearson_p: float
    kendall_p: float
    r_critical: float
    reliability_x: float
    reliability_x_source: str
    reliability_y: float
    reliability_y_source: str
    disattenuated: float
    disattenuated_ci: Interval
    deming_slope: float
    deming_slope_ci: Interval
    deming_intercept: float
    deming_delta: float
    deming_delta_source: str
    ols_slope: float
    loo_error: float
    in_sample_error: float
    loo_spearman: float
    forward_error: float
    n_forward: int
    n_boot: int
    flags: tuple[str, ...]
    statement: str

    def conf_int(self, level: float = 0.95, statistic: Statistic = "spearman") -> Interval:
        """The Fisher-z interval of a correlation at another `level`.

        Raises:
            UsageError: `statistic` is not a correlation (the Deming slope's interval is a
                bootstrap: re-run `validity` with that level).
        """
        check_level(level)
        if statistic == "spearman":
            return fisher_interval(self.spearman, spearman_se(self.spearman, self.n), level)
        if statistic == "kendall":
            return fisher_interval(self.kendall, kendall_se(self.n), level)
        ci = fisher_interval(self.pearson, pearson_se(self.n), level)
        if statistic == "pearson":
            return ci
        if statistic == "disattenuated":
            return disattenuate(self.pearson, ci, self.reliability_x, self.reliability_y)[1]
        raise UsageError(
            f"'statistic' must be spearman, kendall, pearson or disattenuated (got "
            f"{statistic!r}); the Deming slope's bootstrap interval is `deming_slope_ci`"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields: intervals as ``[low, high]``, flags as a list, NaN kept.

        The keys include the ``validity report --json`` predictor keys: ``name``,
        ``n``, ``spearman``, ``spearman_ci``, ``kendall``, ``kendall_ci``, ``pearson``,
        ``pearson_ci``, ``disattenuated``, ``deming_slope``, ``deming_slope_ci`` and
        ``loo_error``.
        """
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Interval):
                value = [value.low, value.high]
            elif isinstance(value, tuple):
                value = list(value)
            out[f.name] = value
        return out

    def to_frame(self) -> pd.DataFrame:
        """One row; each interval split into ``<name>_low``/``<name>_high``, flags joined."""
        row: dict[str, Any] = {}
        for key, value in self.to_dict().items():
            if key.endswith("_ci"):
                row[f"{key[:-3]}_low"], row[f"{key[:-3]}_high"] = value
            elif key == "flags":
                row[key] = "; ".join(value)
            else:
                row[key] = value
        return pd.DataFrame([row])

    @classmethod
    def undefined(cls, n: int, reason: str, *, name: str = "", level: float = 0.95) -> Validity:
        """Every figure NaN (sources ''), `reason` as flag and statement: too few models."""
        blank = {"Interval": NAN_INTERVAL, "int": 0, "str": "", "float": math.nan}
        values: dict[str, Any] = {f.name: blank.get(str(f.type)) for f in fields(cls)}
        values.update(name=name, n=n, level=level, r_critical=critical_r(n, level),
                      flags=(reason,), statement=reason)  # fmt: skip
        return cls(**values)


def validity(  # noqa: PLR0913 - the issue-7 signature; each argument has one meaning
    x: npt.ArrayLike,
    y: npt.ArrayLike,
    *,
    se_x: npt.ArrayLike | None = None,
    se_y: npt.ArrayLike | None = None,
    reliability_x: float | None = None,
    reliability_y: float | None = None,
    order: npt.ArrayLike | None = None,
    level: float = 0.95,
    rng: np.random.Generator,
    n_boot: int = N_RESAMPLES,
) -> Validity:
    """Predictive validity of eval scores `x` for deployment results `y` over M models.

    Args:
        x: the eval score of each model (NaN: not evaluated).
        y: the deployment result of each model, aligned with `x` by position (NaN: not observed).
        se_x: standard error of each eval score; gives the separation reliability and δ.
        se_y: standard error of each deployment result.
        reliability_x: the eval's reliability over these models (e.g. test–retest r_tt);
            overrides `se_x` for the attenuation correction.
        reliability_y: the deployment result's reliability; overrides `se_y`.
        order: when each model's deployment result was observed (numbers or datetimes); enables
            forward-chaining prediction errors.
        level: confidence level of every interval.
        rng: the generator the Deming bootstrap draws from.
        n_boot: bootstrap resamples of models for the Deming slope.

    Returns:
        A `Validity` with the correlations and their intervals, the attenuation-corrected
        correlation, the Deming slope, leave-one-out and forward-chaining errors, `flags`
        and a plain-language `statement` of what n models can show.

    Raises:
        InsufficientDataError: fewer than 3 models have both x and y.
        UsageError: inputs of different lengths, infinite values, negative SEs, or a
            reliability outside (0, 1].

    Notes:
        Pairwise complete: a model missing x or y is dropped (counted in ``n_dropped``);
        the SEs and reliabilities refer to the models kept. Spearman's interval is
        Bonett–Wright (0.96 coverage at M = 8 in tests/validity/test_validity_sim.py); Kendall's
        is Fieller's; Pearson's is Fisher's, as scipy ``pearsonr(...).confidence_interval``.
        The intervals are ``(−1, 1)`` when n is too small for the approximation and NaN
        at a perfect correlation. The attenuation correction divides Pearson r and its
        interval ends by ``√(r_xx·r_yy)``; r_xx is `reliability_x`, else the separation
        reliability ``1 − mean(se_x²)/Var(x)``; r_yy likewise, else 1 (flagged). It is
        undefined without any reliability for x. Deming's δ is ``mean(se_y²)/mean(se_x²)``
        when both SEs are known, else 1 (orthogonal regression, unit-dependent; flagged).
        The leave-one-out error uses the PRESS residuals of ``OLS y ~ x``. Models are not
        independent draws (families of checkpoints), time confounds both measures, and a
        narrow capability range hides validity: see `Validity.statement`.

    References:
        Spearman (1904), Am. J. Psychol. 15:72. Bonett & Wright (2000), Psychometrika
        65:23. Fieller, Hartley & Pearson (1957), Biometrika 44:470. Deming (1943).
        Allen (1974), Technometrics 16:125 (PRESS). Wright & Masters (1982), Rating Scale
        Analysis (separation reliability).
    """
    check_level(level)
    check_n_boot(n_boot)
    xs, ys = as_vector(x, "x"), as_vector(y, "y")
    n_all = xs.size
    if ys.size != n_all:
        raise UsageError(f"'x' and 'y' must have one value per model ({n_all} != {ys.size})")
    keep = np.isfinite(xs) & np.isfinite(ys)
    n = int(np.count_nonzero(keep))
    if n < 3:
        raise InsufficientDataError(
            f"validity needs at least 3 models with both an eval score and a deployment result; "
            f"got {n} of {n_all} (the others miss x or y). Add models or deployment results."
        )
    sx = None if se_x is None else aligned_se(se_x, "se_x", n_all)[keep]
    sy = None if se_y is None else aligned_se(se_y, "se_y", n_all)[keep]
    ords = None if order is None else aligned_order(order, n_all, keep)
    xs, ys = xs[keep], ys[keep]
    corr, flags = correlations(xs, ys, level)
    rel_x, src_x, fx = reliability_of(
        xs, sx, check_reliability(reliability_x, "reliability_x"), "x"
    )
    rel_y, src_y, fy = reliability_of(
        ys, sy, check_reliability(reliability_y, "reliability_y"), "y"
    )
    dis, dis_ci = disattenuate(corr.pearson, corr.pearson_ci, rel_x, rel_y)
    reg = regression(xs, ys, ords, deming_delta(sx, sy), level=level, n_boot=n_boot, rng=rng)
    if src_x == "unknown":
        fy = [f for f in fy if not f.startswith("deployment result reliability unknown")]
    flags = [*flag_few_models(n), *flags, *fx, *fy, *reg.flags]
    if n_all > n:
        flags.append(f"{n_all - n} model(s) dropped: eval score or deployment result missing")
    if math.isfinite(dis) and n < SMALL_FOR_CORRECTION and src_x == "separation":
        flags.append(
            f"fewer than {SMALL_FOR_CORRECTION} models: the disattenuated interval ignores the "
            "sampling error of the estimated reliability and can under-cover (simulated "
            "0.83–0.86 at M = 10 with reliability 0.6)"
        )
    if math.isfinite(dis) and abs(dis) > 1.0:
        flags.append(
            f"disattenuated r = {dis:.3f} exceeds 1: sampling error in r or in the "
            "reliabilities; reported unclipped"
        )
    r_crit = critical_r(n, level)
    return Validity(
        name="",
        n=n,
        n_dropped=n_all - n,
        level=level,
        spearman=corr.spearman,
        spearman_ci=corr.spearman_ci,
        kendall=corr.kendall,
        kendall_ci=corr.kendall_ci,
        pearson=corr.pearson,
        pearson_ci=corr.pearson_ci,
        pearson_p=corr.pearson_p,
        kendall_p=corr.kendall_p,
        r_critical=r_crit,
        reliability_x=rel_x,
        reliability_x_source=src_x,
        reliability_y=rel_y,
        reliability_y_source=src_y,
        disattenuated=dis,
        disattenuated_ci=dis_ci,
        deming_slope=reg.deming_slope,
        deming_slope_ci=reg.deming_slope_ci,
        deming_intercept=reg.deming_intercept,
        deming_delta=reg.delta,
        deming_delta_source=reg.delta_source,
        ols_slope=reg.ols_slope,
        loo_error=reg.loo_error,
        in_sample_error=reg.in_sample_error,
        loo_spearman=reg.loo_spearman,
        forward_error=reg.forward_error,
        n_forward=reg.n_forward,
        n_boot=n_boot,
        flags=tuple(flags),
        statement=statement(n, level, corr.spearman, corr.spearman_ci, corr.kendall, r_crit),
    )
