"""The store's bulk path: attempt rows streamed in as Arrow batches, one transaction per ingest.

SQLite gets ``executemany`` of plain tuples (``INSERT ... ON CONFLICT DO NOTHING``, so a
repeated key is counted, not fatal); PostgreSQL gets one ``COPY ... FROM STDIN`` through
psycopg's copy protocol. Memory is bounded by the batch: rows are handed to the driver from
an iterator, and what the run record needs (its fingerprint, health counts, largest epoch) is
added up batch by batch. docs/design/store-scale.md explains the choices.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, replace
from itertools import repeat
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlalchemy import Connection, func, select

from evalsuite.errors import StoreError, UsageError
from evalsuite.store._fingerprint import ATTEMPT_SCHEMA, ContentFingerprint
from evalsuite.store._health import HealthCounts
from evalsuite.store._records import IngestStored, RunRecord, run_row
from evalsuite.store._schema import TEXT_LIMITS, attempts, runs


class _SessionStore(Protocol):
    """What a session needs of its `Store` (`_store.Store`, which imports this module)."""

    display_url: str

    def _claim(self, conn: Connection, content_hash: str) -> None: ...

    @staticmethod
    def _runs_with_content(conn: Connection, content_hash: str) -> list[str]: ...


__all__ = ["WRITE_COLUMNS", "IngestSession", "RunTally"]

WRITE_COLUMNS = ("run_id", *ATTEMPT_SCHEMA.names, "recorded_at")
"""Column order of every bulk write."""
_OUTCOMES = pa.array(["scored", "limit", "harness_error"])


def _literal(value: Any) -> str | None:
    """`value` as an SQLite literal, or None when it must be bound (NUL, infinities, NaN)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):  # pragma: no cover - no boolean attempt column
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else None
    if isinstance(value, str) and "\x00" not in value:
        return "'" + value.replace("'", "''") + "'"
    return None


def _constant_literal(column: pa.Array) -> str | None:
    """An SQL literal when every row of `column` holds the same value (or none), else None."""
    if column.null_count == len(column):
        return "NULL"
    if column.null_count:
        return None
    if pa.types.is_floating(column.type) and pc.any(pc.is_nan(column)).as_py():
        return None
    bounds = pc.min_max(column)
    low, high = bounds["min"].as_py(), bounds["max"].as_py()
    if low != high or (isinstance(low, float) and low == 0.0 and math.copysign(1, low) < 0):
        return None
    return _literal(low)


def _copy_field(column: pa.Array) -> pa.Array | pa.Scalar:
    r"""A column in COPY's text format (backslash escapes, ``\N`` for NULL).

    One scalar when every row holds the same value.
    """
    if column.null_count == len(column):
        return pa.scalar("\\N")
    literal = _constant_literal(column)
    if literal is not None:
        column = column.slice(0, 1)
    if pa.types.is_string(column.type):
        text = column
        for plain, escaped in (("\\", "\\\\"), ("\t", "\\t"), ("\n", "\\n"), ("\r", "\\r")):
            text = pc.replace_substring(text, plain, escaped)
    else:
        text = pc.cast(column, pa.string())  # floats: shortest text that reads back exactly
    text = pc.fill_null(text, "\\N")
    return text[0] if literal is not None else text


def _copy_text(run_id: str, batch: pa.RecordBatch, recorded_at: str) -> memoryview:
    """Rows of `batch` as one block of COPY text: built column by column, no Python per row."""
    one = pa.array([run_id, recorded_at])
    parts = [_copy_field(one.slice(0, 1))]
    parts += [_copy_field(batch.column(name)) for name in ATTEMPT_SCHEMA.names]
    parts += [_copy_field(one.slice(1, 1))]
    fields = pc.binary_join_element_wise(*parts, "\t")
    lines = pc.binary_join_element_wise(fields, pa.scalar("\n"), "")
    if isinstance(lines, pa.Scalar):  # pragma: no cover - every batch has a varying column
        lines = pa.array([lines.as_py()] * batch.num_rows)
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int32)
    start, end = offsets[lines.offset], offsets[lines.offset + len(lines)]
    return memoryview(lines.buffers()[2])[start:end]


@dataclass(slots=True)
class RunTally:
    """What is known about one run's rows once they are all written."""

    run_id: str
    rows: int = 0
    max_epoch: int = 0
    n_items: int = 0
    """Distinct item ids (counted by the database when the run is finished)."""
    health: HealthCounts = field(default_factory=HealthCounts)
    fingerprint: ContentFingerprint = field(default_factory=ContentFingerprint)


def check_batch(batch: pa.RecordBatch) -> None:
    """Refuse rows the store never holds (vectorised): the checks of `Store.record_attempts`.

    Raises:
        UsageError: an unknown outcome, a harness error with a score, another outcome
            without one, or a missing item id, epoch or stratum.
    """

    def first(mask: pa.Array) -> int | None:
        rows = pc.indices_nonzero(pc.fill_null(mask, True))
        return int(rows[0].as_py()) if len(rows) else None

    def where(row: int) -> str:
        return f"attempt {batch.column('item_id')[row]}#{batch.column('epoch')[row]}"

    outcome = batch.column("outcome")
    bad = first(pc.invert(pc.is_in(outcome, _OUTCOMES)))
    if bad is not None:
        raise UsageError(
            f"attempt outcome must be scored, limit or harness_error (got {outcome[bad]})"
        )
    for name in ("item_id", "epoch", "stratum"):
        bad = first(pc.is_null(batch.column(name)))
        if bad is not None:
            raise UsageError(f"attempt row {bad + 1} of a batch has no {name}")
    for name in ("item_id", "item_hash", "stratum", "cluster", "limit_type"):
        column = batch.column(name)
        bad = first(pc.fill_null(pc.match_substring(column, "\x00"), False))
        if bad is not None:
            raise UsageError(
                f"attempt row {bad + 1} of a batch: its {name} holds a NUL character (\\x00), "
                "which a PostgreSQL store cannot hold; remove it before ingesting"
            )
        length = pc.utf8_length(column)
        bad = first(pc.fill_null(pc.greater(length, TEXT_LIMITS[name]), False))
        if bad is not None:
            shown = str(column[bad].as_py())
            raise UsageError(
                f"attempt row {bad + 1} of a batch: its {name} ({shown[:40]!r}"
                f"{'…' if len(shown) > 40 else ''}) is {length[bad].as_py()} characters, and the "
                f"store holds at most {TEXT_LIMITS[name]}; shorten it before ingesting"
            )
    error = pc.equal(outcome, "harness_error")
    missing = pc.is_null(batch.column("score"))
    bad = first(pc.and_(error, pc.invert(missing)))
    if bad is not None:
        raise UsageError(
            f"{where(bad)}: a harness error carries no score (got a number); it is excluded, "
            "never scored"
        )
    bad = first(pc.and_(pc.invert(error), missing))
    if bad is not None:
        raise UsageError(f"{where(bad)}: only harness errors may lack a score")


class IngestSession:
    """Runs streamed into the store inside one transaction (`Store.ingest_session`).

    Call `add` with batches of any run in any order, then `close_writes`, then `finish` once
    per run. Nothing is visible to others until the session's transaction commits; any
    exception rolls everything back.
    """

    def __init__(self, store: _SessionStore, conn: Connection, recorded_at: str) -> None:
        """Start writing on `conn` (inside the transaction the store opened)."""
        self._store = store
        self._conn = conn
        self._recorded_at = recorded_at
        self._dialect = conn.dialect.name
        self._copy: Any = None
        self._copy_writer: Any = None
        self._copy_cursor: Any = None
        self.tallies: dict[str, RunTally] = {}
        self.writing = True
        self.duplicates = False
        """A (run_id, item_id, epoch) was given twice: nothing must be committed."""

    def _rows(self, run_id: str, batch: pa.RecordBatch) -> Iterator[tuple[Any, ...]]:
        columns = [batch.column(name).to_pylist() for name in ATTEMPT_SCHEMA.names]
        return zip(repeat(run_id), *columns, repeat(self._recorded_at), strict=False)

    def _sqlite_insert(self, run_id: str, batch: pa.RecordBatch) -> tuple[str, Iterator[Any]]:
        """The INSERT for one batch, and its rows: only the columns that vary are bound.

        A column that is missing or the same on every row of the batch is written as an SQL
        literal: SQLite binds each parameter of each row separately, and most ingested
        columns (run id, reason, retries, ...) are constant.
        """
        values: list[str] = [_literal(run_id) or "?"]
        bound: list[list[Any]] = [] if values[0] != "?" else [[run_id] * batch.num_rows]
        for name in ATTEMPT_SCHEMA.names:
            column = batch.column(name)
            literal = _constant_literal(column)
            if literal is None:
                values.append("?")
                bound.append(column.to_pylist())
            else:
                values.append(literal)
        values.append(_literal(self._recorded_at) or "?")
        if values[-1] == "?":  # pragma: no cover - an ISO timestamp is always a literal
            bound.append([self._recorded_at] * batch.num_rows)
        sql = (
            f"INSERT INTO attempts ({', '.join(WRITE_COLUMNS)}) VALUES ({', '.join(values)}) "
            "ON CONFLICT (run_id, item_id, epoch) DO NOTHING"
        )
        return sql, zip(*bound, strict=True) if bound else iter([()] * batch.num_rows)

    def add(self, run_id: str, batch: pa.RecordBatch | pa.Table) -> None:
        """Write a batch of `run_id`'s attempt rows (`ATTEMPT_SCHEMA` columns) and tally it."""
        if isinstance(batch, pa.Table):
            batch = batch.combine_chunks().to_batches()[0] if batch.num_rows else None
            if batch is None:
                return
        batch = pa.RecordBatch.from_arrays(
            [pc.cast(batch.column(f.name), f.type) for f in ATTEMPT_SCHEMA], schema=ATTEMPT_SCHEMA
        )
        check_batch(batch)
        tally = self.tallies.setdefault(run_id, RunTally(run_id))
        tally.rows += batch.num_rows
        tally.max_epoch = max(tally.max_epoch, int(pc.max(batch.column("epoch")).as_py() or 0))
        tally.health.add(batch)
        tally.fingerprint.add(batch)
        if self.writing and not self.duplicates:
            self._write(run_id, batch)

    def _write(self, run_id: str, batch: pa.RecordBatch) -> None:
        if self._dialect == "postgresql":
            self._write_copy(run_id, batch)
            return
        sql, rows = self._sqlite_insert(run_id, batch)
        cursor = self._conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
        try:
            cursor.executemany(sql, rows)
            if cursor.rowcount != batch.num_rows:
                self.duplicates = True
        finally:
            cursor.close()

    def _write_copy(self, run_id: str, batch: pa.RecordBatch) -> None:
        import psycopg

        if self._copy is None:
            raw = self._conn.connection.driver_connection
            self._copy_cursor = raw.cursor()  # type: ignore[union-attr]
            statement = f"COPY attempts ({', '.join(WRITE_COLUMNS)}) FROM STDIN"
            self._copy = self._copy_cursor.copy(statement)
            self._copy_writer = self._copy.__enter__()
        try:
            self._copy_writer.write(_copy_text(run_id, batch, self._recorded_at))
        except psycopg.errors.UniqueViolation:
            self._abandon_copy()
        except psycopg.Error as exc:
            raise self._copy_error(exc) from None

    def _copy_error(self, exc: Exception) -> StoreError:
        """The database's reason a COPY failed, on its first line.

        Never its CONTEXT line, which quotes the row's values (docs/design/ingest.md,
        "Inserts that may collide insert-or-ignore; errors never show SQL").
        """
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        return StoreError(
            f"results store {self._store.display_url}: cannot write the attempts: {reason}; "
            "nothing was stored"
        )

    def _abandon_copy(self) -> None:
        self.duplicates = True
        self._copy = None
        if self._copy_cursor is not None:
            self._copy_cursor.close()
            self._copy_cursor = None

    def abort(self, exc: BaseException) -> None:
        """End an open COPY with an error (before the transaction is rolled back)."""
        if self._copy is not None:
            copy, self._copy = self._copy, None
            try:
                copy.__exit__(type(exc), exc, exc.__traceback__)
            except Exception:  # the COPY is abandoned; the transaction rolls back
                pass
            finally:
                if self._copy_cursor is not None:
                    self._copy_cursor.close()
                    self._copy_cursor = None

    def stop_writing(self) -> None:
        """Write no more rows (the caller found a bad row; it will raise, rolling back)."""
        self.writing = False

    def close_writes(self) -> bool:
        """End the stream of rows; True if a repeated (item_id, epoch) was found."""
        if self._copy is not None:
            import psycopg

            copy, self._copy = self._copy, None
            try:
                copy.__exit__(None, None, None)
            except psycopg.errors.UniqueViolation:
                self._abandon_copy()
            except psycopg.Error as exc:
                raise self._copy_error(exc) from None
            finally:
                if self._copy_cursor is not None:
                    self._copy_cursor.close()
                    self._copy_cursor = None
        return self.duplicates

    def finish(
        self,
        run_id: str,
        make_record: Callable[[RunTally], RunRecord],
        *,
        identity: Mapping[str, str],
        again: bool = False,
    ) -> IngestStored:
        """Store `run_id`'s run row, unless its content is already stored (then drop its rows).

        `make_record` builds the run from the tally (rows, largest epoch, distinct items,
        health counts); its fingerprint is the tally's rows with the record's content fields.
        """
        if self.close_writes():
            raise UsageError(f"run {run_id}: two attempts share an (item_id, epoch)")
        tally = self.tallies.get(run_id) or RunTally(run_id)
        tally.n_items = int(
            self._conn.execute(
                select(func.count(func.distinct(attempts.c.item_id))).where(
                    attempts.c.run_id == run_id
                )
            ).scalar_one()
        )
        record = make_record(tally)
        if record.run_id != run_id:
            raise UsageError(f"the run record names {record.run_id}, not {run_id}")
        content_hash = tally.fingerprint.digest(asdict(record), identity)
        store = self._store
        store._claim(self._conn, content_hash)
        existing = tuple(store._runs_with_content(self._conn, content_hash))
        if existing and not again:
            self._conn.execute(attempts.delete().where(attempts.c.run_id == run_id))
            return IngestStored(content_hash, None, existing)
        stored = replace(record, content_hash=content_hash)
        self._conn.execute(runs.insert().values(**run_row(stored)))
        return IngestStored(content_hash, run_id, existing)
