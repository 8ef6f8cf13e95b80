"""The deployment-weighted paired difference: the comparison the suite's weights ask for.

A suite that declares deployment shares W_h per stratum scores each run as ``Σ_h W_h ȳ_h``
(`stratified_mean`). The comparison that matches it is the same combination of the
per-stratum paired differences: ``Δ_W = Σ_h W_h d̄_h`` with ``Var(Δ_W) = Σ_h W_h² SE_h²``
(strata are independent samples; Cochran 1977, ch. 5), on Satterthwaite's degrees of
freedom ``(Σ_h W_h² SE_h²)² / Σ_h (W_h² SE_h²)² / df_h`` (Satterthwaite 1946, Biometrics
Bulletin 2:110). The MDE is the one function every MDE goes through (`mde_from_se`, power
0.8, two-sided, at this SE and df: docs/design/mde.md). See docs/design/result-model.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalsuite.analyse import _dist
from evalsuite.analyse._compare import Gate, GateResult, StratumDiff, gate_from_bounds, judge_gate
from evalsuite.analyse._mde import solve_shift
from evalsuite.analyse._paired import PairedDiff, constant_difference_bounds
from evalsuite.analyse._power import mde_from_se
from evalsuite.errors import UsageError

__all__ = ["WeightedDiff", "weighted_difference"]


@dataclass(frozen=True, slots=True)
class WeightedDiff:
    """``Σ_h W_h d̄_h`` with its t inference; NaN figures carry their `reason`."""

    diff: float
    se: float
    ci: tuple[float, float]
    level: float
    df: float
    p_value: float
    mde: float
    alpha: float
    n_items: int
    weights: dict[str, float]
    reason: str | None
    gate: GateResult | None = None
    unclipped_ci: tuple[float, float] | None = None
    """The t interval's own ends when they left [−1, 1] and `ci` shows them bounded to it."""
    mde_variance: str = "alternative"
    """``alternative`` (every weighted stratum's variance at baseline ± δ) or ``observed``
    (held at the observed one, with `mde_note` saying why)."""
    mde_note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The ``weighted`` block of ``compare --json`` (NaN kept; `reason` when undefined)."""
        out: dict[str, Any] = {
            "diff": self.diff,
            "se": self.se,
            "ci": list(self.ci),
            "level": self.level,
            "df": self.df,
            "p_value": self.p_value,
            "mde": self.mde,
            "alpha": self.alpha,
            "n_items": self.n_items,
            "weights": dict(self.weights),
            "method": "stratified_paired_t",
            "reason": self.reason,
            "mde_variance": self.mde_variance,
            "mde_note": self.mde_note,
            "clipped": self.unclipped_ci is not None,
            "unclipped_ci": None if self.unclipped_ci is None else list(self.unclipped_ci),
        }
        if self.gate is not None:
            out["gate"] = self.gate.to_dict()
        return out


def _some(strata: list[str]) -> str:
    """``2 weighted strata (a, b)``, at most three named."""
    named = ", ".join(strata[:3]) + (f" and {len(strata) - 3} more" if len(strata) > 3 else "")
    return f"{len(strata)} weighted strat{'um' if len(strata) == 1 else 'a'} ({named})"


def weighted_difference(
    strata: Sequence[StratumDiff],
    weights: Mapping[str, float],
    *,
    level: float = 0.95,
    alpha: float = 0.05,
    gate: Gate | None = None,
) -> WeightedDiff:
    """Combine a comparison's per-stratum paired differences with deployment weights.

    Args:
        strata: `Comparison.strata` (each stratum's paired difference, SE and df).
        weights: deployment share per stratum (the suite's weights; they sum to 1).
        level: confidence level of the interval.
        alpha: significance level of the MDE and the gate.
        gate: a non-inferiority gate to judge on the weighted difference, or None.

    Returns:
        The `WeightedDiff`. It is undefined (NaN, with `reason`) when a stratum with a
        positive weight has no paired item or no SE: never renormalised over the rest.

    Raises:
        UsageError: no weights, or a compared stratum without a weight.
    """
    if not weights:
        raise UsageError("a weighted difference needs the suite's deployment weights")
    unknown = sorted({s.stratum for s in strata} - set(weights))
    if unknown:
        raise UsageError(f"the suite's weights have no deployment share for strata {unknown}")
    by_name = {s.stratum: s.test for s in strata}
    n_items = sum(t.n_items for t in by_name.values())
    missing = sorted(h for h, w in weights.items() if w > 0 and h not in by_name)
    undefined = sorted(
        h
        for h, t in by_name.items()
        if weights[h] > 0 and not (math.isfinite(t.se) and math.isfinite(t.diff) and t.df >= 1)
    )
    reason = None
    if missing:
        reason = f"no paired item in {_some(missing)}"
    elif undefined:
        reason = f"no standard error (fewer than 2 units) in {_some(undefined)}"
    nan = math.nan
    if reason is not None:
        return WeightedDiff(
            nan, nan, (nan, nan), level, nan, nan, nan, alpha, n_items, dict(weights), reason
        )
    parts = [(weights[h], t) for h, t in by_name.items() if weights[h] > 0]
    diff = float(sum(w * t.diff for w, t in parts))
    var = float(sum(w * w * t.se * t.se for w, t in parts))
    denom = float(sum((w * w * t.se * t.se) ** 2 / t.df for w, t in parts))
    se = math.sqrt(var)
    if se > 0 and denom > 0:
        df = var * var / denom
        q = _dist.t_isf((1 - level) / 2, df)
        ci = (diff - q * se, diff + q * se)
        # a weighted difference of scores in [0, 1] lies in [-1, 1]: bounded, and said so
        unclipped = ci if ci[0] < -1.0 or ci[1] > 1.0 else None
        ci = (max(ci[0], -1.0), min(ci[1], 1.0))
        p = 2 * _dist.t_sf(abs(diff) / se, df)
    else:
        df = float(sum(t.df for _, t in parts))
        ci = _constant_bounds(parts, (1 - level) / 2)
        p = nan
        reason = (
            "the weighted strata's differences have no variance: no t test; the interval "
            "combines each stratum's exact bound for units that all showed the same difference"
        )
    mde, mde_variance, mde_note = _weighted_mde(strata, weights, se, df, alpha)
    judged = None
    if gate is not None:
        judged = (
            judge_gate(gate, diff, se, df, alpha)
            if se > 0
            else gate_from_bounds(gate, *_constant_bounds(parts, alpha), alpha)
        )
    result = WeightedDiff(
        diff, se, ci, level, df, p, mde, alpha, n_items, dict(weights), reason, judged,
        unclipped if se > 0 and denom > 0 else None,
        mde_variance, mde_note,
    )  # fmt: skip
    return result


def _weighted_mde(
    strata: Sequence[StratumDiff],
    weights: Mapping[str, float],
    se: float,
    df: float,
    alpha: float,
) -> tuple[float, str, str]:
    """The weighted MDE with every stratum's variance under the alternative: value, how, note.

    The alternative shifts every weighted stratum's candidate mean by the same δ from its
    baseline's, so the weighted difference is δ; each stratum's squared SE is scaled by
    ``Var_h(d_i; ±δ)/Var_h(d_i)`` (`PairedMde.variance_at`, docs/design/mde.md). Where a
    stratum has no such model (no spread to scale), the MDE is taken at the observed SE and
    the note says so.
    """
    if not se > 0:
        return math.nan, "alternative", ""
    parts = [(weights[s.stratum], s) for s in strata if weights.get(s.stratum, 0.0) > 0]
    ncp = mde_from_se(1.0, df, alpha=alpha)
    terms = []
    for w, s in parts:
        d = s.mde_detail
        base = d.observed_variance() if d is not None else math.nan
        if d is None or d.variance != "alternative" or not base > 0:
            return (
                mde_from_se(se, df, alpha=alpha),
                "observed",
                f"stratum {s.stratum} has no item-mean spread to take under the alternative: "
                "the weighted MDE holds the variance at the observed one",
            )
        terms.append((w * w * s.test.se**2 / base, d))

    def se_at(delta: float) -> float:
        return math.sqrt(sum(c * d.variance_at(delta) for c, d in terms))

    up_room = min(1.0 - d.mean_baseline for _, d in terms)
    down_room = min(d.mean_baseline for _, d in terms)
    up, down = solve_shift(se_at, ncp, (up_room, down_room))
    found = [v for v in (up, down) if math.isfinite(v)]
    if not found:
        return math.nan, "alternative", "no shift within [0, 1] is detected with this power"
    return max(found), "alternative", ""


def _constant_bounds(
    parts: Sequence[tuple[float, PairedDiff]], alpha: float
) -> tuple[float, float]:
    """Bounds on ``Σ_h W_h δ_h`` when every stratum's units all showed one difference.

    Each stratum's `constant_difference_bounds` at ``alpha / H`` (Bonferroni over the H
    weighted strata), combined with the weights: all H hold at once with probability at
    least ``1 − alpha``, and then so does their weighted sum.
    """
    share = alpha / len(parts)
    ends = [(w, constant_difference_bounds(t.diff, t.n_clusters, share)) for w, t in parts]
    return (
        float(sum(w * low for w, (low, _) in ends)),
        float(sum(w * high for w, (_, high) in ends)),
    )
