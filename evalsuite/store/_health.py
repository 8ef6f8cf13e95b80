"""Run health from stored attempts: the one computation every command and report shares."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd

__all__ = ["Health", "error_kind", "run_health"]

_KIND = re.compile(r"^([A-Za-z_][A-Za-z0-9_.]*):")


def error_kind(reason: str | None) -> str:
    """A short kind for a harness error's reason (the exception type, or a named cause).

    Examples:
        >>> error_kind("HarnessFault: injected fault: tool 'refund' failed")
        'HarnessFault'
        >>> error_kind("not run: the eval stopped before this attempt")
        'not run'
    """
    if not reason:
        return "unknown"
    match = _KIND.match(reason)
    if match:
        return match.group(1)
    return reason.split(":", 1)[0].strip()[:40] or "unknown"


@dataclass(frozen=True, slots=True)
class Health:
    """Harness health of a run (DESIGN.md, "Run health")."""

    planned: int
    scored: int
    limits: int
    harness_errors: int
    error_rate: float
    """harness_errors / planned (planned attempts that never ran count as harness errors)."""
    threshold: float
    valid: bool
    limits_by_type: dict[str, int] = field(default_factory=dict)
    errors_by_kind: dict[str, int] = field(default_factory=dict)
    retried: int = 0
    """Attempts that needed at least one retry (whatever their final outcome)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form; `planned`, `scored`, `limits`, `harness_errors`, `error_rate` first."""
        return asdict(self)


def run_health(attempts: pd.DataFrame, *, planned: int, threshold: float) -> Health:
    """Health of a run from its attempts table (docs/design/attempts.md).

    Planned attempts without a row count as harness errors, so nothing leaves the
    denominator. Undefined for ``planned == 0`` (error rate NaN, run invalid).
    """
    outcome = attempts["outcome"] if len(attempts) else pd.Series(dtype=str)
    scored = int((outcome == "scored").sum())
    limits = int((outcome == "limit").sum())
    recorded_errors = int((outcome == "harness_error").sum())
    missing = max(planned - len(attempts), 0)
    errors = recorded_errors + missing
    rate = errors / planned if planned > 0 else math.nan
    reasons = attempts["reason"] if "reason" in attempts else pd.Series([None] * len(attempts))
    kinds = Counter(error_kind(r) for r in reasons[(outcome == "harness_error").to_numpy()])
    if missing:
        kinds["not run"] += missing
    limit_types = Counter(
        str(t) for t in attempts.loc[outcome == "limit", "limit_type"].fillna("unspecified")
    )
    retried = int((attempts["retries"] > 0).sum()) if len(attempts) and "retries" in attempts else 0
    return Health(
        planned=planned,
        scored=scored,
        limits=limits,
        harness_errors=errors,
        error_rate=rate,
        threshold=threshold,
        valid=bool(planned > 0 and rate <= threshold),
        limits_by_type=dict(sorted(limit_types.items())),
        errors_by_kind=dict(sorted(kinds.items())),
        retried=retried,
    )
