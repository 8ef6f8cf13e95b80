"""Gates asked for in `compare`, recorded with the comparison so that reports show them.

`evalsuite compare A B --gate noninferior --margin D` records the gate in
``.evalsuite/gates/<A>__<B>.json`` (one file per pair, written atomically, so comparisons
run side by side never race). A report of A and B judges the same gate again on the same
numbers and says where it came from; `report --margin` overrides it for every comparison.
See docs/design/result-model.md.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evalsuite._core.atomic import atomic_write_text
from evalsuite._core.layout import Layout

__all__ = ["record_gate", "recorded_gate"]

_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def _path(layout: Layout, baseline: str, candidate: str) -> Path:
    name = f"{_SAFE.sub('_', baseline)}__{_SAFE.sub('_', candidate)}.json"
    return layout.state / "gates" / name


def record_gate(
    layout: Layout, baseline: str, candidate: str, *, kind: str, margin: float, alpha: float
) -> Path:
    """Record the gate asked for in a comparison of `candidate` against `baseline`."""
    path = _path(layout, baseline, candidate)
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "baseline": baseline,
        "candidate": candidate,
        "kind": kind,
        "margin": margin,
        "alpha": alpha,
        "asked_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    atomic_write_text(path, json.dumps(record, indent=2) + "\n")
    return path


def recorded_gate(layout: Layout | None, baseline: str, candidate: str) -> dict[str, Any] | None:
    """The gate last recorded for this pair, or None (none, or an unreadable record)."""
    if layout is None:
        return None
    path = _path(layout, baseline, candidate)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    ok = (
        isinstance(record, dict)
        and record.get("baseline") == baseline
        and record.get("candidate") == candidate
        and isinstance(record.get("margin"), int | float)
        and record["margin"] > 0
    )
    return record if ok else None
