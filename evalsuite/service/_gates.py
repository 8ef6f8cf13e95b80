"""Gates asked for in `compare`, recorded in the store with the comparison so reports show them.

`evalsuite compare A B --gate noninferior --margin D` records the gate in the store's
``gates`` table (one row per pair; a later gate of the pair replaces it), so every report of
A and B, on any machine sharing the store (PostgreSQL), judges the same gate again on the
same numbers and says where it came from; `report --margin` overrides it for every
comparison.

Before store schema version 5 the gate went to ``.evalsuite/gates/<A>__<B>.json`` of the
checkout that ran `compare`. A report still reads such a file when the store has no gate for
the pair, and `evalsuite store upgrade` imports every such file into the store once (then
moves the folder to ``.evalsuite/gates.imported/``). See docs/design/result-model.md and
docs/store.md.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalsuite._core.jsonout import JsonObject
from evalsuite._core.layout import Layout
from evalsuite.store import Store

__all__ = ["import_local_gates", "record_gate", "recorded_gate"]

_SAFE = re.compile(r"[^A-Za-z0-9._-]")
LEGACY_DIR = "gates"
IMPORTED_DIR = "gates.imported"


def _legacy_path(layout: Layout, baseline: str, candidate: str) -> Path:
    name = f"{_SAFE.sub('_', baseline)}__{_SAFE.sub('_', candidate)}.json"
    return layout.state / LEGACY_DIR / name


def _valid(record: Any, baseline: str | None = None, candidate: str | None = None) -> bool:
    return (
        isinstance(record, dict)
        and isinstance(record.get("baseline"), str)
        and isinstance(record.get("candidate"), str)
        and (baseline is None or record["baseline"] == baseline)
        and (candidate is None or record["candidate"] == candidate)
        and isinstance(record.get("margin"), int | float)
        and not isinstance(record.get("margin"), bool)
        and record["margin"] > 0
        and isinstance(record.get("alpha"), int | float)
        and 0 < record["alpha"] < 1
    )


def _read_legacy(path: Path) -> Mapping[str, Any] | None:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def record_gate(
    store: Store, baseline: str, candidate: str, *, kind: str, margin: float, alpha: float
) -> JsonObject:
    """Record the gate asked for in a comparison of `candidate` against `baseline`."""
    return store.record_gate(baseline, candidate, kind=kind, margin=margin, alpha=alpha)


def recorded_gate(
    store: Store | None, baseline: str, candidate: str, *, layout: Layout | None = None
) -> JsonObject | None:
    """The gate last recorded for this pair: the store's, else a pre-version-5 local file.

    A damaged or unusable local file is ignored, as if no gate had been asked; without a
    store or a layout there is nothing to read.
    """
    found = store.gate(baseline, candidate) if store is not None else None
    if found is not None:
        return found
    if layout is None:
        return None
    record = _read_legacy(_legacy_path(layout, baseline, candidate))
    return dict(record) if record is not None and _valid(record, baseline, candidate) else None


@dataclass(frozen=True, slots=True)
class RecordedGate:
    """The gate last asked for in `compare` of a pair (docs/design/result-model.md).

    Attributes:
        kind: ``noninferior``.
        margin: the non-inferiority margin.
        alpha: the significance level.
        asked_at: when it was asked (ISO 8601; None: a pre-version-5 file without it).
    """

    kind: str
    margin: float
    alpha: float
    asked_at: str | None


def last_gate(
    store: Store | None, baseline: str, candidate: str, *, layout: Layout | None = None
) -> RecordedGate | None:
    """The gate last recorded for this pair (`recorded_gate`), typed; None: no gate."""
    record = recorded_gate(store, baseline, candidate, layout=layout)
    if record is None:
        return None
    margin, alpha, asked_at = record.get("margin"), record.get("alpha"), record.get("asked_at")
    return RecordedGate(
        kind=str(record.get("kind") or "noninferior"),
        margin=float(margin) if isinstance(margin, int | float) else math.nan,
        alpha=float(alpha) if isinstance(alpha, int | float) else math.nan,
        asked_at=str(asked_at) if asked_at else None,
    )


def import_local_gates(store: Store, layout: Layout) -> tuple[int, list[str]]:
    """Import the gates of ``.evalsuite/gates/`` into `store`, then move the folder aside.

    A gate the store already holds for the pair is kept (it is the newer: files stopped
    being written at schema version 5). Files that are not a valid gate are left where they
    are and named.

    Returns:
        (gates imported, names of the files left because they are not a valid gate).
    """
    folder = layout.state / LEGACY_DIR
    if not folder.is_dir():
        return 0, []
    imported, bad = 0, []
    for path in sorted(folder.glob("*.json")):
        record = _read_legacy(path)
        if record is None or not _valid(record):
            bad.append(path.name)
            continue
        if store.gate(record["baseline"], record["candidate"]) is None:
            store.record_gate(
                record["baseline"],
                record["candidate"],
                kind=str(record.get("kind") or "noninferior"),
                margin=float(record["margin"]),
                alpha=float(record["alpha"]),
                asked_at=str(record["asked_at"]) if record.get("asked_at") else None,
            )
            imported += 1
    if not bad:
        target = layout.state / IMPORTED_DIR
        if not target.exists():
            folder.rename(target)
    return imported, bad
