"""A run's analysis columns cached in the store as one blob, and what keeps it honest.

`Store.attempt_columns` turns a run's attempt rows into one array per column; at 500,000
attempts that is about 2.5 s of CPU, almost all of it the driver's per-row Python objects.
The arrays themselves are small and compress well, so the store keeps them, per run, in
``attempt_column_cache`` (a few MB at 500,000 attempts), and a later read of the same run
decodes them in a few hundredths of a second. Design and the correctness argument:
docs/design/analysis-scale.md, "Fifth pass".

A cached blob is used only while it describes the rows as they are:

- **Any write to a run's attempts drops its blob**, by triggers on ``attempts`` created with
  the table (schema version 7), whoever writes: evalsuite's upserts, its bulk ingest, a
  deletion, another tool's SQL. On SQLite one row trigger per event; on PostgreSQL one
  statement trigger per event, which also raises the run's revision in ``attempt_revs``.
- **A blob is written from the snapshot it was read in.** On SQLite the rows are read and the
  blob written in one transaction: if anything was committed after the read began, SQLite
  refuses the write (its snapshot is stale) and nothing is cached. On PostgreSQL the rows and
  the run's revision are read in one REPEATABLE READ snapshot and the blob carries that
  revision; a write committed after the snapshot has raised the revision, so the blob never
  matches it.
- **A blob is read only with its revision current**, in one statement.

The blob: a JSON header (one entry per column: its kind, dtype, byte range, and the texts of
its labels), then the raw arrays, compressed with zlib. Only plain values are cached: texts
(or missing) for labels and text columns, float64 and int64 numbers; any other value (another
tool's row holding a number where text is expected) leaves the run uncached.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import Connection, text

__all__ = ["FORMAT", "create_triggers", "decode", "encode"]

FORMAT = 1
"""The blob's layout version: a blob of another format is ignored (and rewritten)."""

_TRIGGERS_SQLITE = [
    "CREATE TRIGGER IF NOT EXISTS attempts_insert_drops_column_cache AFTER INSERT ON attempts "
    "BEGIN DELETE FROM attempt_column_cache WHERE run_id = NEW.run_id; END",
    "CREATE TRIGGER IF NOT EXISTS attempts_update_drops_column_cache AFTER UPDATE ON attempts "
    "BEGIN DELETE FROM attempt_column_cache WHERE run_id IN (OLD.run_id, NEW.run_id); END",
    "CREATE TRIGGER IF NOT EXISTS attempts_delete_drops_column_cache AFTER DELETE ON attempts "
    "BEGIN DELETE FROM attempt_column_cache WHERE run_id = OLD.run_id; END",
]


def _pg_function(name: str, source: str) -> str:
    return (
        f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$\n"
        "BEGIN\n"
        "  INSERT INTO attempt_revs (run_id, rev)\n"
        f"    SELECT DISTINCT run_id, 1 FROM ({source}) AS changed\n"
        "    ON CONFLICT (run_id) DO UPDATE SET rev = attempt_revs.rev + 1;\n"
        "  DELETE FROM attempt_column_cache\n"
        f"    WHERE run_id IN (SELECT run_id FROM ({source}) AS c);\n"
        "  RETURN NULL;\n"
        "END $$"
    )


_TRIGGERS_PG = [
    _pg_function("evalsuite_attempts_inserted", "SELECT run_id FROM new_rows"),
    _pg_function("evalsuite_attempts_deleted", "SELECT run_id FROM old_rows"),
    _pg_function(
        "evalsuite_attempts_updated",
        "SELECT run_id FROM new_rows UNION SELECT run_id FROM old_rows",
    ),
    "CREATE OR REPLACE FUNCTION evalsuite_attempts_truncated() RETURNS trigger "
    "LANGUAGE plpgsql AS $$\nBEGIN\n  UPDATE attempt_revs SET rev = rev + 1;\n"
    "  DELETE FROM attempt_column_cache;\n  RETURN NULL;\nEND $$",
    "DROP TRIGGER IF EXISTS attempts_insert_drops_column_cache ON attempts",
    "CREATE TRIGGER attempts_insert_drops_column_cache AFTER INSERT ON attempts "
    "REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT "
    "EXECUTE FUNCTION evalsuite_attempts_inserted()",
    "DROP TRIGGER IF EXISTS attempts_update_drops_column_cache ON attempts",
    "CREATE TRIGGER attempts_update_drops_column_cache AFTER UPDATE ON attempts "
    "REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT "
    "EXECUTE FUNCTION evalsuite_attempts_updated()",
    "DROP TRIGGER IF EXISTS attempts_delete_drops_column_cache ON attempts",
    "CREATE TRIGGER attempts_delete_drops_column_cache AFTER DELETE ON attempts "
    "REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT "
    "EXECUTE FUNCTION evalsuite_attempts_deleted()",
    "DROP TRIGGER IF EXISTS attempts_truncate_drops_column_cache ON attempts",
    "CREATE TRIGGER attempts_truncate_drops_column_cache AFTER TRUNCATE ON attempts "
    "FOR EACH STATEMENT EXECUTE FUNCTION evalsuite_attempts_truncated()",
]


def create_triggers(conn: Connection) -> None:
    """Create the triggers that drop a run's cached columns at any write to its attempts.

    SQLite has row triggers only (about 1.5 µs per written row); PostgreSQL gets statement
    triggers with transition tables (one per statement, COPY included). Created again when
    they exist (a store migrated twice), never twice.
    """
    statements = _TRIGGERS_PG if conn.dialect.name == "postgresql" else _TRIGGERS_SQLITE
    for statement in statements:
        conn.execute(text(statement))


def _plain_texts(values: Any) -> list[str] | None:
    """`values` as a list if every one is a `str` (exactly), else None."""
    out = list(values)
    return out if all(type(v) is str for v in out) else None


def encode(columns: dict[str, Any]) -> bytes | None:
    """The blob of `columns` (as `Store._read_columns` gives them), or None if not cacheable."""
    header: list[dict[str, Any]] = []
    buffers: list[bytes] = []
    offset = 0
    for name, column in columns.items():
        entry: dict[str, Any] = {"name": name}
        if isinstance(column, pd.Categorical):
            labels = _plain_texts(column.categories)
            if labels is None or column.categories.dtype != object:
                return None
            raw = np.asarray(column.codes, dtype=np.int32)
            entry.update(kind="categorical", labels=labels)
        elif isinstance(column, np.ndarray) and column.dtype in (np.float64, np.int64):
            raw = column
            entry.update(kind="number", dtype=column.dtype.str)
        elif isinstance(column, np.ndarray) and column.dtype == object:
            missing = column[pd.isna(column)]
            # only None stands for a missing text (NaN, pd.NA, NaT compare unequal to None);
            # elementwise in C: a run's text columns are mostly missing
            if not np.equal(missing, np.array(None, dtype=object)).all():
                return None
            codes, uniques = pd.factorize(column)
            labels = _plain_texts(uniques)
            if labels is None:
                return None
            raw = codes.astype(np.int32)
            entry.update(kind="text", labels=labels)
        else:
            return None
        data = np.ascontiguousarray(raw).tobytes()
        entry.update(start=offset, length=len(raw), itemsize=raw.dtype.itemsize)
        header.append(entry)
        buffers.append(data)
        offset += len(data)
    head = json.dumps(header, ensure_ascii=False).encode()
    return zlib.compress(len(head).to_bytes(8, "little") + head + b"".join(buffers), 1)


def decode(blob: bytes) -> dict[str, Any]:
    """The columns `encode` was given: the same arrays, labels in the same order."""
    raw = bytearray(zlib.decompress(blob))  # writable: the arrays below are views of it
    size = int.from_bytes(raw[:8], "little")
    header = json.loads(bytes(raw[8 : 8 + size]))
    body = memoryview(raw)[8 + size :]
    out: dict[str, Any] = {}
    for entry in header:
        start, length = entry["start"], entry["length"]
        if entry["kind"] == "number":
            dtype = np.dtype(entry["dtype"])
            out[entry["name"]] = np.frombuffer(body, dtype, length, start)
            continue
        codes = np.frombuffer(body, np.int32, length, start)
        if entry["kind"] == "categorical":
            out[entry["name"]] = pd.Categorical.from_codes(
                codes, categories=pd.Index(entry["labels"], dtype=object)
            )
        else:  # text: each value its label, -1 missing (None)
            labels = np.empty(len(entry["labels"]) + 1, dtype=object)
            labels[:-1] = entry["labels"]
            out[entry["name"]] = labels[codes]
    return out
