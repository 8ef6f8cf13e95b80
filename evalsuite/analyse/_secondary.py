"""Secondary metrics: a task's other scores, estimated like the primary score.

The runner keeps every score that is not the declared one in the attempt's ``checks``
(docs/design/scorers.md). Each secondary metric is estimated exactly as the primary's
unweighted score: attempts aggregated to item means by `item_table` (harness errors excluded
and counted, limits 0), then `estimate_mean` with the item-clustered interval. A scored
attempt whose secondary value could not be mapped to [0, 1] is excluded from that metric
only, and counted.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalsuite._core.checks import secondary_values
from evalsuite.analyse._attempts import item_table
from evalsuite.analyse._estimates import estimate_mean
from evalsuite.analyse._intervals import Estimate, IntervalMethod, check_level

__all__ = ["SecondaryEstimate", "secondary_estimates"]


@dataclass(frozen=True, slots=True)
class SecondaryEstimate:
    """One secondary metric of a run.

    Attributes:
        name: the metric, named as a ``score`` declaration would select it.
        estimate: mean over items with the primary score's interval rule.
        n_missing: scored attempts without a value for this metric (excluded from it).
        missing_reasons: why, with counts.
    """

    name: str
    estimate: Estimate
    n_missing: int
    missing_reasons: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the name, the estimate's fields, and the missing counts."""
        return {
            "name": self.name,
            **self.estimate.to_dict(),
            "n_missing": self.n_missing,
            "missing_reasons": dict(self.missing_reasons),
        }


def secondary_estimates(
    attempts: pd.DataFrame,
    *,
    planned: int | None = None,
    level: float = 0.95,
    interval: IntervalMethod = "auto",
    rng: np.random.Generator,
) -> list[SecondaryEstimate]:
    """Estimate every secondary metric recorded in a run's attempts, sorted by name.

    Args:
        attempts: the attempts table of one run (docs/design/attempts.md).
        planned: planned attempts; None: the number of rows.
        level: confidence level.
        interval: as in `estimate_mean`.
        rng: generator for the bootstrap (only drawn from when it runs).

    Returns:
        One estimate per metric found in any attempt's ``checks``; [] when there is none
        (a task with a single score).
    """
    check_level(level)
    if "checks" not in attempts.columns or len(attempts) == 0:
        return []
    checks = attempts["checks"]
    recorded = np.flatnonzero(checks.notna().to_numpy())  # most attempts have none
    parsed = [secondary_values(raw) for raw in checks.iloc[recorded]]
    names = sorted({name for values, _ in parsed for name in values})
    if not names:
        return []
    scored = (attempts["outcome"] == "scored").to_numpy()
    out = []
    for name in names:
        values = np.full(len(attempts), np.nan)
        values[recorded] = [np.nan if v.get(name) is None else v[name] for v, _ in parsed]
        missing = scored & np.isnan(values)
        errors_at = dict(zip(recorded.tolist(), (e for _, e in parsed), strict=True))
        reasons = Counter(
            errors_at.get(row, {}).get(name, "no value recorded")
            for row in np.flatnonzero(missing).tolist()
        )
        frame = attempts.copy()
        frame["score"] = np.where(scored, values, frame["score"].to_numpy(np.float64))
        frame["outcome"] = np.where(missing, "harness_error", frame["outcome"].to_numpy())
        table = item_table(frame, planned=planned, what=f"secondary metric {name!r}")
        estimate = estimate_mean(
            table.mean,
            clusters=table.cluster if table.clustered else None,
            level=level,
            interval=interval,
            n_excluded=table.n_items_excluded,
            rng=rng,
        )
        out.append(SecondaryEstimate(name, estimate, int(missing.sum()), dict(reasons)))
    return out
