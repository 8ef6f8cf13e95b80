"""Content fingerprint of an ingested run: what was stored, not the file it came from.

The same results ingested twice give the same fingerprint whatever the file's name, path,
format (CSV or Parquet), row order, column names (``--column``), epoch base or number
formatting (``1`` and ``1.0``), because the fingerprint is computed over the canonical attempt
rows the store writes, not over the file's bytes. docs/design/ingest.md says what counts as
"the same content"; docs/design/store-scale.md why the rows are combined as a multiset.

Scheme 2 (``evalsuite-ingest-fingerprint/2``) is computed batch by batch in constant memory:
each row is serialised canonically and hashed with SHA-256, and the row digests are added
lane-wise (four 64-bit lanes, modulo 2**64), which does not depend on their order (a multiset
hash). The result is ``"rows-sha256:<hex>"``: SHA-256 over the run's content fields, the
source's identity, the number of rows and the lane sums. Scheme 1 (``"sha256:<hex>"``, rows
sorted and hashed column by column) needed the whole run in memory; schema version 3 replaced
every stored scheme-1 fingerprint by its scheme-2 value (`_migrations`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from evalsuite._core.hashing import canonical_json

__all__ = [
    "ATTEMPT_CONTENT_COLUMNS",
    "ATTEMPT_SCHEMA",
    "FINGERPRINTED_RUN_FIELDS",
    "FINGERPRINT_PREFIX",
    "FINGERPRINT_SCHEME",
    "ContentFingerprint",
    "attempt_table",
    "ingest_fingerprint",
]

FINGERPRINT_SCHEME = "evalsuite-ingest-fingerprint/2"
"""Names the serialisation below; a change to it is a new scheme, never a silent edit."""
FINGERPRINT_PREFIX = "rows-sha256:"
"""Scheme-2 fingerprints start with this; scheme 1 wrote ``sha256:``."""

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
"""Every attempt column but ``run_id`` and ``recorded_at``, in fingerprint order."""

ATTEMPT_SCHEMA = pa.schema(
    [(name, pa.string()) for name in _TEXT]
    + [(name, pa.int64()) for name in _INT]
    + [(name, pa.float64()) for name in _FLOAT]
)
"""Arrow types of a batch of attempt rows as the store writes them (docs/design/attempts.md)."""

_NULL = pa.scalar("~")
_SEP = "\x1f"


def attempt_table(columns: Mapping[str, Sequence[Any]]) -> pa.Table:
    """`ATTEMPT_SCHEMA` table from Python columns (None or NaN is a missing value)."""
    arrays = []
    for field in ATTEMPT_SCHEMA:
        values = list(columns[field.name])
        if field.type == pa.float64():
            values = [None if v is None or v != v else float(v) for v in values]
        elif field.type == pa.int64():
            values = [None if v is None or v != v else int(v) for v in values]
        else:
            values = [None if v is None or v != v else str(v) for v in values]
        arrays.append(pa.array(values, type=field.type))
    return pa.Table.from_arrays(arrays, schema=ATTEMPT_SCHEMA)


def _field_text(column: pa.Array, kind: pa.DataType) -> pa.Array:
    """One column as canonical text: length-prefixed text, decimal integers, float bits."""
    if kind == pa.string():
        text = pc.binary_join_element_wise(
            pc.cast(pc.utf8_length(column), pa.string()), column, ":"
        )
    elif kind == pa.int64():
        text = pc.cast(column, pa.string())
    else:
        # NaN is a missing value; -0.0 is 0.0; the IEEE bits, written as a decimal integer,
        # do not depend on any float formatting
        values = pc.add(pc.if_else(pc.is_nan(column), None, column), 0.0)
        text = pc.cast(values.view(pa.int64()), pa.string())
    return pc.fill_null(text, _NULL)


def _field(column: pa.Array, kind: pa.DataType) -> pa.Array | pa.Scalar:
    """`_field_text` of a column, as one scalar when every row holds the same value.

    Only a speed-up (ingested columns are mostly constant): the text of each row is the same.
    """
    if column.null_count == len(column):
        return _NULL
    if column.null_count == 0 and len(column) > 1:
        bounds = pc.min_max(column)
        low, high = bounds["min"], bounds["max"]
        nan = kind == pa.float64() and bool(pc.any(pc.is_nan(column)).as_py())
        same = low.equals(high) and not nan
        if same:
            return _field_text(column.slice(0, 1), kind)[0]
    return _field_text(column, kind)


class ContentFingerprint:
    """Scheme-2 fingerprint built batch by batch: `add` row batches in any order, then `digest`."""

    def __init__(self) -> None:
        """An empty multiset of rows."""
        self.rows = 0
        self._lanes = np.zeros(4, dtype=np.uint64)

    def add(self, batch: pa.RecordBatch | pa.Table) -> None:
        """Add attempt rows with `ATTEMPT_SCHEMA` columns (extra columns are ignored)."""
        if batch.num_rows == 0:
            return
        parts = []
        for field in ATTEMPT_SCHEMA:
            column = batch.column(field.name)
            if isinstance(column, pa.ChunkedArray):
                column = column.combine_chunks()
            parts.append(_field(pc.cast(column, field.type), field.type))
        rows = pc.cast(pc.binary_join_element_wise(*parts, _SEP), pa.binary())
        sha256 = hashlib.sha256
        digests = b"".join([sha256(row).digest() for row in rows.to_pylist()])
        lanes = np.frombuffer(digests, dtype="<u8").reshape(-1, 4)
        self._lanes += lanes.sum(axis=0, dtype=np.uint64)
        self.rows += batch.num_rows

    def merge(self, other: ContentFingerprint) -> None:
        """Add every row of `other` (fingerprints of disjoint parts combine by addition)."""
        self._lanes += other._lanes
        self.rows += other.rows

    def digest(self, run: Mapping[str, Any], identity: Mapping[str, str]) -> str:
        """``"rows-sha256:<hex>"`` of the rows added so far, for this run and source identity."""
        header = {
            "scheme": FINGERPRINT_SCHEME,
            "run": {name: run.get(name) for name in FINGERPRINTED_RUN_FIELDS},
            "identity": dict(identity),
            "attempts": self.rows,
        }
        digest = hashlib.sha256(canonical_json(header).encode("utf-8"))
        digest.update(b"\n" + self._lanes.astype("<u8").tobytes())
        return FINGERPRINT_PREFIX + digest.hexdigest()


def ingest_fingerprint(
    run: Mapping[str, Any], identity: Mapping[str, str], columns: Mapping[str, Sequence[Any]]
) -> str:
    """Fingerprint of an ingested run's content fields and its attempt rows (any order).

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
        >>> a == b, a.startswith("rows-sha256:")
        (True, True)
    """
    fingerprint = ContentFingerprint()
    fingerprint.add(attempt_table(columns))
    return fingerprint.digest(run, identity)
