"""Content fingerprint of an ingested run: what was stored, not the file it came from.

The same results ingested twice give the same fingerprint whatever the file's name, path,
row order, column names (``--column``), epoch base or number formatting (``1`` and ``1.0``),
because the fingerprint is computed over the canonical attempt rows the store writes, not
over the file's bytes. docs/design/ingest.md says what counts as "the same content".
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from evalsuite._core.hashing import canonical_json

__all__ = [
    "ATTEMPT_CONTENT_COLUMNS",
    "FINGERPRINTED_RUN_FIELDS",
    "FINGERPRINT_SCHEME",
    "ingest_fingerprint",
]

FINGERPRINT_SCHEME = "evalsuite-ingest-fingerprint/1"
"""Names the serialisation below; a change to it is a new scheme, never a silent edit."""

FINGERPRINTED_RUN_FIELDS = (
    "source",
    "model",
    "epochs",
    "planned",
    "suite",
    "version",
    "manifest_hash",
    "split",
)
"""Run fields that are content (not the run id, times, threshold, provenance or file path)."""

_TEXT = ("item_id", "item_hash", "stratum", "cluster", "outcome", "limit_type", "reason", "checks")
_INT = ("epoch", "seed", "retries", "tokens")
_FLOAT = ("score", "duration_s")
ATTEMPT_CONTENT_COLUMNS = _TEXT + _INT + _FLOAT
"""Every attempt column but ``run_id`` and ``recorded_at``."""


def _objects(values: Sequence[Any]) -> np.ndarray[Any, Any]:
    array = np.empty(len(values), dtype=object)
    array[:] = list(values)
    return array


def _text(values: np.ndarray[Any, Any]) -> list[str | None]:
    # v != v: NaN, as pandas reads a missing value of a text column
    return [None if v is None or v != v else str(v) for v in values.tolist()]


def _ints(values: np.ndarray[Any, Any]) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    array = pd.array(values, dtype="Int64")
    return np.asarray(array.isna(), dtype=bool), array.to_numpy(dtype="int64", na_value=0)


def _floats(values: np.ndarray[Any, Any]) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    array = np.asarray(values, dtype="<f8")  # None becomes NaN
    mask = np.isnan(array)
    # NaN payloads and the sign of zero are not content
    return mask, np.where(mask, 0.0, array) + 0.0


def ingest_fingerprint(
    run: Mapping[str, Any], identity: Mapping[str, str], columns: Mapping[str, Sequence[Any]]
) -> str:
    """``"sha256:<hex>"`` over an ingested run's content fields and its attempt rows.

    Args:
        run: the run's fields; those in `FINGERPRINTED_RUN_FIELDS` are hashed.
        identity: what names the source run beyond its rows (an inspect log's ``eval_id``;
            empty for a CSV, which carries no run identity).
        columns: attempt columns as stored (``ATTEMPT_CONTENT_COLUMNS``), one value per
            attempt; missing values may be None or NaN. Row order does not matter.

    Examples:
        >>> cols = {c: [None] for c in ATTEMPT_CONTENT_COLUMNS}
        >>> cols |= {"item_id": ["q1"], "epoch": [1], "stratum": ["all"], "outcome": ["scored"],
        ...          "retries": [0], "tokens": [0], "score": [1.0], "duration_s": [0.0]}
        >>> a = ingest_fingerprint({"model": "m", "source": "csv"}, {}, cols)
        >>> b = ingest_fingerprint({"model": "m", "source": "csv"}, {}, cols | {"score": [1]})
        >>> a == b
        True
    """
    arrays = {name: _objects(columns[name]) for name in ATTEMPT_CONTENT_COLUMNS}
    item_ids = _text(arrays["item_id"])
    _, epochs = _ints(arrays["epoch"])
    keys = pd.DataFrame({"item": pd.Series(item_ids, dtype=object), "epoch": epochs})
    order = keys.sort_values(["item", "epoch"], kind="stable").index.to_numpy()
    header = {
        "scheme": FINGERPRINT_SCHEME,
        "run": {name: run.get(name) for name in FINGERPRINTED_RUN_FIELDS},
        "identity": dict(identity),
        "attempts": len(item_ids),
    }
    digest = hashlib.sha256(canonical_json(header).encode("utf-8"))
    for name in ATTEMPT_CONTENT_COLUMNS:
        digest.update(b"\n" + name.encode("ascii") + b"\n")
        values = arrays[name][order]
        if name in _TEXT:
            text = json.dumps(_text(values), ensure_ascii=False, separators=(",", ":"))
            digest.update(text.encode("utf-8"))
            continue
        mask, array = _ints(values) if name in _INT else _floats(values)
        digest.update(mask.astype("u1").tobytes())
        digest.update(array.astype("<i8" if name in _INT else "<f8").tobytes())
    return "sha256:" + digest.hexdigest()
