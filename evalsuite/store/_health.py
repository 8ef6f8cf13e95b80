"""Run health from stored attempts: the one computation every command and report shares."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["Health", "HealthCounts", "error_kind", "run_health"]

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


@dataclass(slots=True)
class HealthCounts:
    """What run health needs from a run's attempts, added up batch by batch (constant memory)."""

    rows: int = 0
    scored: int = 0
    limits: int = 0
    harness_errors: int = 0
    retried: int = 0
    limit_types: Counter[str] = field(default_factory=Counter)
    error_kinds: Counter[str] = field(default_factory=Counter)

    def add(self, batch: pa.RecordBatch | pa.Table) -> None:
        """Count a batch with columns ``outcome``, ``limit_type``, ``reason``, ``retries``."""
        outcome = batch.column("outcome")
        is_limit = pc.fill_null(pc.equal(outcome, "limit"), False)
        is_error = pc.fill_null(pc.equal(outcome, "harness_error"), False)
        self.rows += batch.num_rows
        self.scored += pc.sum(pc.cast(pc.equal(outcome, "scored"), pa.int64())).as_py() or 0
        self.limits += pc.sum(pc.cast(is_limit, pa.int64())).as_py() or 0
        self.harness_errors += pc.sum(pc.cast(is_error, pa.int64())).as_py() or 0
        retries = pc.fill_null(batch.column("retries"), 0)
        self.retried += pc.sum(pc.cast(pc.greater(retries, 0), pa.int64())).as_py() or 0
        types = pc.fill_null(pc.filter(batch.column("limit_type"), is_limit), "unspecified")
        self.limit_types.update(str(t) for t in types.to_pylist())
        reasons = pc.filter(batch.column("reason"), is_error).to_pylist()
        self.error_kinds.update(error_kind(r) for r in reasons)

    def health(self, *, planned: int, threshold: float) -> Health:
        """The run's health, counting planned attempts without a row as harness errors."""
        missing = max(planned - self.rows, 0)
        errors = self.harness_errors + missing
        rate = errors / planned if planned > 0 else math.nan
        kinds = Counter(self.error_kinds)
        if missing:
            kinds["not run"] += missing
        return Health(
            planned=planned,
            scored=self.scored,
            limits=self.limits,
            harness_errors=errors,
            error_rate=rate,
            threshold=threshold,
            valid=bool(planned > 0 and rate <= threshold),
            limits_by_type=dict(sorted(self.limit_types.items())),
            errors_by_kind=dict(sorted(kinds.items())),
            retried=self.retried,
        )


def run_health(attempts: pd.DataFrame, *, planned: int, threshold: float) -> Health:
    """Health of a run from its attempts table (docs/design/attempts.md).

    Planned attempts without a row count as harness errors, so nothing leaves the
    denominator. Undefined for ``planned == 0`` (error rate NaN, run invalid). The same
    computation as `HealthCounts`, which the bulk ingest path adds up batch by batch.
    """
    n = len(attempts)

    def column(name: str, kind: pa.DataType, default: object) -> pa.Array:
        if name in attempts and n:
            return pa.array(attempts[name].astype(object), type=kind, from_pandas=True)
        return pa.array([default] * n, type=kind)

    counts = HealthCounts()
    counts.add(
        pa.table(
            {
                "outcome": column("outcome", pa.string(), None),
                "limit_type": column("limit_type", pa.string(), None),
                "reason": column("reason", pa.string(), None),
                "retries": column("retries", pa.int64(), 0),
            }
        )
    )
    return counts.health(planned=planned, threshold=threshold)
