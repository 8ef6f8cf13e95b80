"""The results store: SQLite under `.evalsuite/` by default, or PostgreSQL (or another URL).

Safe under concurrent writers: SQLite runs in WAL mode with a busy timeout, every write is
one transaction, attempt rows are upserted on (run_id, item_id, epoch) so a resumed run never
duplicates a row, outcomes are inserted-or-ignored on their fingerprint, and an ingested run
is stored only if no run holds the same content (docs/design/ingest.md). Rows are written in
bounded batches (`BATCH_ROWS` per executemany), so no statement grows with the run and no
database's limit on bound parameters is reached. Ingests stream Arrow batches through the
bulk path (`ingest_session`; `_bulk`): executemany of tuples on SQLite, COPY on PostgreSQL.
Errors of the database become `StoreError` with a one-line cause: never the SQL statement or
its parameters. The schema carries its version; `Store` upgrades an older store when it
opens it and refuses a newer one (docs/store.md).
"""

from __future__ import annotations

import gc
import json
import math
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path
from typing import Any, Literal, TypeVar

import numpy as np
import numpy.typing as npt
import pandas as pd
from sqlalchemy import (
    Connection,
    Engine,
    Table,
    case,
    create_engine,
    event,
    func,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import (
    ArgumentError,
    DBAPIError,
    IntegrityError,
    OperationalError,
    ProgrammingError,
    SQLAlchemyError,
)
from sqlalchemy.pool import StaticPool

from evalsuite._core.display import show_id
from evalsuite._core.fork import forkable
from evalsuite._core.version import __version__
from evalsuite.errors import NotFoundError, StoreError, UsageError
from evalsuite.store import _column_cache
from evalsuite.store._bulk import IngestSession
from evalsuite.store._column_cache import create_triggers
from evalsuite.store._fingerprint import ATTEMPT_CONTENT_COLUMNS, attempt_table
from evalsuite.store._migrations import MIGRATIONS
from evalsuite.store._records import (
    JSON_RUN_FIELDS,
    IngestStored,
    RunRecord,
    default_store_url,
    missing_store_message,
    run_from_mapping,
    run_row,
    sqlite_file,
)
from evalsuite.store._schema import (
    SCHEMA_VERSION,
    aggregates,
    attempt_column_cache,
    attempt_labels,
    attempt_revs,
    attempts,
    gates,
    ingest_claims,
    meta,
    metadata,
    outcomes,
    run_adaptive,
    run_shards,
    runs,
    scan_findings,
    scan_runs,
)

__all__ = [
    "ANALYSIS_COLUMNS",
    "ATTEMPT_COLUMNS",
    "BATCH_ROWS",
    "MIGRATIONS",
    "AttemptRecord",
    "OutcomeRecord",
    "RunRecord",
    "ShardState",
    "Store",
    "StoreInfo",
    "default_store_url",
    "engine_url",
]

T = TypeVar("T")
Outcome = Literal["scored", "limit", "harness_error"]
ATTEMPT_COLUMNS = [
    "run_id", "item_id", "item_hash", "stratum", "cluster", "epoch", "seed", "outcome",
    "limit_type", "score", "reason", "retries", "duration_s", "tokens", "checks",
]  # fmt: skip
ANALYSIS_COLUMNS = (
    "run_id", "item_id", "item_hash", "stratum", "cluster", "epoch", "outcome", "limit_type",
    "score", "reason", "retries", "checks",
)  # fmt: skip
"""What `score`, `compare` and `report` read of each attempt (`Store.attempt_columns`)."""
_CATEGORICAL = frozenset({"item_id", "item_hash", "stratum", "cluster", "outcome"})
_OUTCOMES = ("scored", "limit", "harness_error")
"""The outcomes the store writes; `attempt_columns` reads them as their positions."""
CACHED_COLUMNS = tuple(c for c in ANALYSIS_COLUMNS if c != "run_id")
"""What a run's cached columns hold (`attempt_columns`; `run_id` is a constant)."""
CACHE_MIN_ROWS = 50_000
"""Runs with fewer attempts are read row by row each time (under 0.3 s of CPU) and not cached."""
_READ_TRIES = 3
"""Reads of a run by `attempt_columns` before it gives up on a run still being written."""
BATCH_ROWS = 2000
"""Attempt rows per executemany call: bounds memory and every statement's parameters.

SQLite binds one row's 16 values per execution; PostgreSQL drivers fold a batch into
multi-row VALUES pages of at most `_PG_PAGE_ROWS` rows (16,000 parameters, under its 65,535)."""
_PG_PAGE_ROWS = 1000
SQLITE_PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=NORMAL",
    "PRAGMA busy_timeout=60000",
    "PRAGMA cache_size=-65536",
    "PRAGMA temp_store=FILE",
    "PRAGMA journal_size_limit=67108864",
)
"""Set on every SQLite connection: concurrent readers beside one writer (WAL), a commit
that survives a crash of the process (NORMAL, in WAL mode), a minute's wait for the write
lock, a 64 MiB page cache (bulk inserts touch many index pages), sorts spilled to disk, not
memory, and a write-ahead log cut back to 64 MiB after a checkpoint (a bulk ingest grows it to
its transaction's size) (docs/design/store-scale.md)."""


def engine_url(url: str) -> str:
    """The SQLAlchemy URL to connect with: ``postgresql://`` uses psycopg (version 3).

    SQLAlchemy maps a bare ``postgresql://`` to psycopg2; evalsuite's PostgreSQL driver is
    psycopg 3 (its bulk path uses psycopg's COPY protocol). An explicit driver is kept.
    """
    parsed = make_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        return parsed.set(drivername="postgresql+psycopg").render_as_string(hide_password=False)
    return url


def _now() -> str:
    return datetime.now(UTC).isoformat()


@dataclass(frozen=True, slots=True)
class AttemptRecord:
    """One (run, item, epoch) attempt; columns as in docs/design/attempts.md."""

    item_id: str
    epoch: int
    stratum: str
    outcome: Outcome
    score: float
    """In [0, 1]; 0.0 for limits; NaN for harness errors."""
    item_hash: str | None = None
    cluster: str | None = None
    seed: int | None = None
    limit_type: str | None = None
    reason: str | None = None
    retries: int = 0
    duration_s: float = 0.0
    tokens: int = 0
    checks: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class OutcomeRecord:
    """A deployment outcome observed for a model version (predictive validity)."""

    model: str
    metric: str
    value: float
    se: float | None = None
    n: int | None = None
    observed_at: str | None = None
    source: str | None = None


_ATTEMPT_FIELDS = tuple(f.name for f in fields(AttemptRecord))


def _run_from_row(row: Any) -> RunRecord:
    return run_from_mapping(dict(row._mapping))


T_co = TypeVar("T_co")


def _chunks(items: Iterable[T_co], size: int) -> Iterator[list[T_co]]:
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


def _checks_text(checks: Mapping[str, Any] | None) -> str | None:
    return json.dumps(checks, sort_keys=True) if checks else None


def _attempt_row(run_id: str, record: AttemptRecord, now: str) -> dict[str, Any]:
    if record.outcome not in ("scored", "limit", "harness_error"):
        raise UsageError(
            f"attempt outcome must be scored, limit or harness_error (got {record.outcome!r})"
        )
    score: float | None = record.score
    if score is not None and math.isnan(score):
        if record.outcome != "harness_error":
            raise UsageError(
                f"attempt {record.item_id}#{record.epoch}: only harness errors may lack a score"
            )
        score = None
    elif record.outcome == "harness_error":
        raise UsageError(
            f"attempt {record.item_id}#{record.epoch}: a harness error carries "
            "no score (got a number); it is excluded, never scored"
        )
    row = {name: getattr(record, name) for name in _ATTEMPT_FIELDS}
    row.update(run_id=run_id, score=score, recorded_at=now)
    row["checks"] = _checks_text(record.checks)
    return row


def _column(name: str, values: Sequence[Any]) -> Any:
    """One column of `Store.attempt_columns`: categorical labels, numbers, or objects."""
    if name in _CATEGORICAL:
        codes, uniques = pd.factorize(np.array(values, dtype=object))  # None -> missing
        return pd.Categorical.from_codes(codes, categories=pd.Index(uniques, dtype=object))
    if name == "score":
        return np.array(values, dtype=np.float64)  # None -> NaN, as `attempts` gives
    if name in ("epoch", "retries"):
        return np.array(values, dtype=np.int64)
    return np.array(values, dtype=object)


def _outcome_column(codes: npt.NDArray[np.int64]) -> pd.Categorical | None:
    """Outcome codes (`_OUTCOMES` positions) as the categorical `_column` makes of the text.

    Categories in order of first appearance. None if a code is -1 (another label).
    """
    if len(codes) and codes.min() < 0:
        return None
    seen, first = np.unique(codes, return_index=True)
    order = seen[np.argsort(first)]  # the labels in order of first appearance
    remap = np.zeros(len(_OUTCOMES), dtype=np.int64)
    remap[order] = np.arange(len(order))
    return pd.Categorical.from_codes(
        remap[codes], categories=pd.Index([_OUTCOMES[k] for k in order], dtype=object)
    )


def _latest_per_key(records: Sequence[AttemptRecord]) -> list[AttemptRecord]:
    """One record per (item_id, epoch), the last one given winning, as sequential upserts."""
    latest = {(r.item_id, r.epoch): r for r in records}
    return list(latest.values()) if len(latest) < len(records) else list(records)


def _cause(exc: SQLAlchemyError) -> str:
    """The database's own one-line reason, without the SQL statement or its parameters.

    PostgreSQL puts key values on later lines (``DETAIL: Key (fingerprint)=(...)``), and
    SQLAlchemy appends ``[SQL: ...]`` and ``[parameters: ...]``: only the first line of the
    driver's message is kept.
    """
    original = exc.orig if isinstance(exc, DBAPIError) else None
    text = str(original) if original is not None else type(exc).__name__
    line = (text.strip().splitlines() or [type(exc).__name__])[0]
    line = line.split("[SQL:", 1)[0].strip()
    return line[:200] + ("…" if len(line) > 200 else "")


@dataclass(frozen=True, slots=True)
class ShardState:
    """One shard of a sharded run (docs/design/sharded-runs.md)."""

    run_id: str
    shard: int
    """1..shards."""
    shards: int
    status: Literal["running", "interrupted", "complete"]
    host: str | None
    started_at: str
    finished_at: str | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class StoreInfo:
    """What `evalsuite store info` shows: where the store is, its schema, what it holds."""

    url: str
    """With the password hidden."""
    backend: str
    schema_version: int | None
    """None: the database holds no evalsuite store yet."""
    supported_version: int
    written_by: str | None
    """The evalsuite version that created or last upgraded the store (version 3 on)."""
    runs: int
    attempts: int
    outcomes: int
    size_bytes: int | None
    """SQLite: the database file and its write-ahead log; PostgreSQL: the tables and indexes."""

    @property
    def state(self) -> str:
        """``current``, ``older`` (upgrade it), ``newer`` (upgrade evalsuite) or ``empty``."""
        if self.schema_version is None:
            return "empty"
        if self.schema_version < self.supported_version:
            return "older"
        return "newer" if self.schema_version > self.supported_version else "current"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``store info --json``)."""
        return asdict(self) | {"state": self.state}


class Store:
    """Runs, attempts and deployment outcomes in one database."""

    def __init__(
        self, url: str, *, upgrade: bool = True, refuse_newer: bool = True, create: bool = True
    ) -> None:
        """Open the store at SQLAlchemy `url`: create it, or upgrade an older schema.

        With ``upgrade=False`` nothing is created or changed (`info` and `upgrade` use that).
        A store of a newer schema is refused (`StoreError`) unless ``refuse_newer=False``
        (only `info`, which reads nothing but the version and counts). With ``create=False``
        (the commands that only read) a SQLite file that does not exist is read as an empty
        store (`missing`), and neither it nor its directory is created: a mistyped path leaves
        nothing behind, and a run asked for is "not found" with the path named.
        """
        self.url = url
        try:
            self.display_url = make_url(url).render_as_string(hide_password=True)
        except SQLAlchemyError:  # not a URL: say so below, never echo it back whole
            self.display_url = url.split("@")[-1]
        self.missing = False
        """Whether this is a SQLite store that does not exist, opened with ``create=False``."""
        if not create:
            file = sqlite_file(url)
            self.missing = file is not None and not file.exists()
        with self._errors("open it"):
            try:
                self.engine: Engine = (
                    self._empty_engine() if self.missing else self._make_engine(url)
                )
            except ArgumentError:
                raise StoreError(
                    f"results store {self.display_url!r}: not a database URL (SQLAlchemy could "
                    "not parse it); expected e.g. sqlite:////absolute/path/results.sqlite or "
                    "postgresql://USER@HOST:5432/DBNAME (docs/store.md). Fix EVALSUITE_STORE, "
                    "or unset it to use the project's .evalsuite/results.sqlite"
                ) from None
            except ImportError as exc:
                raise StoreError(
                    f"results store {self.display_url}: the database driver it needs is not "
                    f"installed (no module {exc.name!r}); install it (for PostgreSQL: pip "
                    "install 'evalsuite[postgres]', i.e. psycopg[binary]) or use a sqlite:/// URL"
                ) from None
            if upgrade:
                self._retrying(self._migrate)
            elif refuse_newer:
                self._check_not_newer()

    @staticmethod
    def _empty_engine() -> Engine:
        """An empty store in memory, one connection shared.

        What a command that only reads sees of a SQLite store that does not exist, without
        creating it.
        """
        return create_engine(
            "sqlite://", poolclass=StaticPool, connect_args={"check_same_thread": False}
        )

    @staticmethod
    def _make_engine(url: str) -> Engine:
        if url.startswith("sqlite:///"):
            Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
            engine = create_engine(url, connect_args={"timeout": 60})

            @event.listens_for(engine, "connect")
            def _pragmas(dbapi_connection: Any, _record: Any) -> None:
                cursor = dbapi_connection.cursor()
                for pragma in SQLITE_PRAGMAS:
                    cursor.execute(pragma)
                cursor.close()

            return engine
        return create_engine(
            engine_url(url), pool_pre_ping=True, insertmanyvalues_page_size=_PG_PAGE_ROWS
        )

    @contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        """Turn a database error into a `StoreError` saying what failed, and one-line why."""
        try:
            yield
        except SQLAlchemyError as exc:
            raise StoreError(
                f"results store {self.display_url}: cannot {what}: {_cause(exc)}. Check that "
                "the store is reachable and writable, and that no other program changed it"
            ) from exc

    def _retrying(self, action: Callable[[], T], attempts_left: int = 20) -> T:
        delay = 0.05
        while True:
            try:
                return action()
            except OperationalError as exc:
                attempts_left -= 1
                if "locked" not in str(exc).lower() or attempts_left <= 0:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 1.0)

    @contextmanager
    def _tx(self) -> Iterator[Connection]:
        with self.engine.begin() as conn:
            yield conn

    def _migrate(self) -> tuple[int | None, int]:
        # two processes may open a new store at once: the loser of a create/insert race
        # finds the winner's tables and row on its next try
        for attempt in range(5):
            try:
                return self._migrate_once()
            except (OperationalError, IntegrityError, ProgrammingError) as exc:
                # PostgreSQL reports a table created at the same moment as DuplicateTable (a
                # ProgrammingError) or as a unique violation in its catalogue (IntegrityError)
                racing = "already exists" in str(exc) or isinstance(exc, IntegrityError)
                if not racing or attempt == 4:
                    raise
                time.sleep(0.05 * (attempt + 1))
        raise AssertionError("unreachable")  # pragma: no cover

    def _newer_error(self, found: int, written_by: str | None) -> StoreError:
        writer = f", written by evalsuite {written_by}" if written_by else ""
        return StoreError(
            f"the store at {self.display_url} has schema version {found}{writer}, newer than "
            f"this evalsuite {__version__} understands (version {SCHEMA_VERSION}); it was not "
            "changed. Upgrade evalsuite (pip install -U evalsuite) to the version that wrote "
            "it or later, or point EVALSUITE_STORE at another store"
        )

    def _read_meta(self, conn: Connection) -> dict[str, str]:
        """The `meta` rows; an empty table over stored results is refused (`_held`)."""

        def rows() -> dict[str, str]:
            return {row.key: row.value for row in conn.execute(select(meta.c.key, meta.c.value))}

        found = rows()
        if found:
            return found
        held = self._held(conn)
        # Each read sees what was committed when it ran (SQLite's reads outside a write,
        # PostgreSQL's READ COMMITTED): a process that created the store may have committed
        # its meta rows after the read above, and another stored results after that. Results
        # are stored only once meta is, so a meta read now that is still empty is a damaged
        # store, not a race.
        found = rows() if any(held.values()) else found
        if not found and any(held.values()):
            raise StoreError(
                f"the store at {self.display_url} is damaged: its meta table is empty "
                f"(no schema_version row) but it holds {held['runs']} run(s), "
                f"{held['attempts']} attempt(s) and {held['outcomes']} deployment "
                "result(s); it was not changed (taking it for a new store would record "
                "today's schema version over tables of an unknown one). Restore it from a "
                "backup, or insert the meta row schema_version with the version its "
                f"tables have (docs/store.md lists the versions; this evalsuite uses "
                f"{SCHEMA_VERSION}), then try again"
            )
        return found

    def _held(self, conn: Connection) -> dict[str, int]:
        """Rows in the tables that hold results (0 for a table that does not exist)."""
        return {
            name: int(conn.execute(select(func.count()).select_from(table)).scalar_one())
            if self.engine.dialect.has_table(conn, name)
            else 0
            for name, table in (("runs", runs), ("attempts", attempts), ("outcomes", outcomes))
        }

    def _recorded_version(self, found: Mapping[str, str]) -> int | None:
        """The schema version the `meta` rows record; None for a store not created yet.

        Raises:
            StoreError: a `meta` table whose version is not a whole number from 1 on, or
                that has rows but no version: the store was damaged or edited by hand, and
                guessing a version would skip or repeat migrations (docs/store.md). An empty
                `meta` over stored results is refused when it is read (`_read_meta`).
        """
        raw = found.get("schema_version")
        if raw is None and not found:
            return None
        problem = None
        if raw is None:
            problem = f"its meta table has no schema_version row (it has {sorted(found)})"
        else:
            try:
                version = int(raw)
            except ValueError:
                version = 0
            if version < 1:
                problem = f"meta.schema_version is {raw!r}, not a schema version (1, 2, ...)"
        if problem is not None:
            raise StoreError(
                f"the store at {self.display_url} is damaged: {problem}; it was not changed. "
                "Restore it from a backup, or set meta.schema_version to the version its "
                f"tables have (docs/store.md lists the versions; this evalsuite uses "
                f"{SCHEMA_VERSION}), then try again"
            )
        return version

    def _check_not_newer(self) -> None:
        with self._tx() as conn:
            if not self.engine.dialect.has_table(conn, "meta"):
                return
            found = self._read_meta(conn)
        version = self._recorded_version(found)
        if version is not None and version > SCHEMA_VERSION:
            raise self._newer_error(version, found.get("written_by"))

    def _migrate_once(self) -> tuple[int | None, int]:
        """Create or upgrade the schema; return (version found, version now)."""
        key = meta.c.key == "schema_version"
        with self._tx() as conn:
            metadata.create_all(conn)
            found = self._read_meta(conn)
            if self._recorded_version(found) is None:
                conn.execute(
                    meta.insert(),
                    [
                        {"key": "schema_version", "value": str(SCHEMA_VERSION)},
                        {"key": "written_by", "value": __version__},
                    ],
                )
                create_triggers(conn)
                return None, SCHEMA_VERSION
            version = int(found["schema_version"])
            if version > SCHEMA_VERSION:
                raise self._newer_error(version, found.get("written_by"))
            if version == SCHEMA_VERSION:
                return version, version
            # write first: it takes the lock, so one process migrates and the others then
            # read the new version (SQLite: the database's write lock; PostgreSQL: the row)
            conn.execute(update(meta).where(key).values(value=meta.c.value))
            start = version = int(conn.execute(select(meta.c.value).where(key)).scalar_one())
            try:
                while version < SCHEMA_VERSION:
                    MIGRATIONS[version](conn)
                    version += 1
            except SQLAlchemyError as exc:
                raise StoreError(
                    f"the store at {self.display_url} has schema version {start}; this evalsuite "
                    f"uses version {SCHEMA_VERSION} and could not upgrade it ({_cause(exc)}); "
                    "nothing was changed. Run `evalsuite store upgrade` as a user who may alter "
                    "the database (PostgreSQL: the owner of its tables), then try again"
                ) from exc
            conn.execute(update(meta).where(key).values(value=str(version)))
            self._set_meta(conn, "written_by", __version__)
            return start, version

    def _set_meta(self, conn: Connection, key: str, value: str) -> None:
        changed = conn.execute(update(meta).where(meta.c.key == key).values(value=value))
        if changed.rowcount == 0:
            conn.execute(meta.insert().values(key=key, value=value))

    def upgrade(self) -> tuple[int | None, int]:
        """Create or upgrade the schema now (`evalsuite store upgrade`).

        Returns:
            (version found, None for a new store; version now).
        """
        with self._errors("upgrade its schema"):
            return self._retrying(self._migrate)

    def info(self) -> StoreInfo:
        """Where the store is, its schema version and what it holds; changes nothing."""
        with self._errors("read its schema and counts"), self._tx() as conn:
            exists = self.engine.dialect.has_table(conn, "meta")
            found = self._read_meta(conn) if exists else {}
            counts = {
                name: int(conn.execute(select(func.count()).select_from(table)).scalar_one())
                if exists and self.engine.dialect.has_table(conn, name)
                else 0
                for name, table in (("runs", runs), ("attempts", attempts), ("outcomes", outcomes))
            }
            size = self._size_bytes(conn) if exists else None
        return StoreInfo(
            url=self.display_url,
            backend=self.engine.dialect.name,
            schema_version=self._recorded_version(found),
            supported_version=SCHEMA_VERSION,
            written_by=found.get("written_by"),
            size_bytes=size,
            **counts,
        )

    def _size_bytes(self, conn: Connection) -> int | None:
        if self.engine.dialect.name == "sqlite":
            path = Path(str(self.engine.url.database))
            files = [path, path.with_name(path.name + "-wal")]
            return sum(f.stat().st_size for f in files if f.exists())
        if self.engine.dialect.name == "postgresql":
            total = conn.execute(
                text(
                    "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n "
                    "ON n.oid = c.relnamespace WHERE c.relkind = 'r' AND n.nspname = "
                    "current_schema() AND c.relname = ANY(:names)"
                ),
                {"names": [t.name for t in metadata.sorted_tables]},
            ).scalar_one()
            return int(total) if total is not None else None
        return None  # pragma: no cover - other databases

    @property
    def schema_version(self) -> int:
        """The schema version recorded in the database."""
        with self._errors("read the schema version"), self._tx() as conn:
            version = self._recorded_version(self._read_meta(conn))
        if version is None:
            raise StoreError(f"the store at {self.display_url} has no schema yet")
        return version

    # runs ------------------------------------------------------------------------------

    def create_run(self, record: RunRecord) -> None:
        """Insert a new run."""

        def action() -> None:
            with self._tx() as conn:
                conn.execute(runs.insert().values(**run_row(record)))

        with self._errors(f"record run {record.run_id}"):
            self._retrying(action)

    def find_run(self, run_id: str) -> RunRecord | None:
        """The run with exactly this id, or None (no prefix matching)."""
        with self._errors("read runs"), self._tx() as conn:
            row = conn.execute(select(runs).where(runs.c.run_id == run_id)).first()
        return _run_from_row(row) if row is not None else None

    def create_run_if_absent(self, record: RunRecord) -> RunRecord:
        """Insert `record` unless a run with its id exists; return the stored run.

        Atomic: of several processes creating the same run id at once (the shards of one
        run), one inserts and all get the same stored record back.
        """
        row = run_row(record)
        dialect = self.engine.dialect.name

        def action() -> None:
            with self._tx() as conn:
                if dialect == "postgresql":
                    from sqlalchemy.dialects.postgresql import insert as pg_insert

                    conn.execute(pg_insert(runs).values(**row).on_conflict_do_nothing())
                elif dialect == "sqlite":
                    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

                    conn.execute(sqlite_insert(runs).values(**row).on_conflict_do_nothing())
                else:  # pragma: no cover - other databases
                    found = conn.execute(
                        select(runs.c.run_id).where(runs.c.run_id == record.run_id)
                    )
                    if found.first() is None:
                        conn.execute(runs.insert().values(**row))

        with self._errors(f"record run {record.run_id}"):
            self._retrying(action)
        stored = self.find_run(record.run_id)
        if stored is None:  # pragma: no cover - deleted in between
            raise StoreError(f"run {record.run_id} vanished from {self.display_url} as it was made")
        return stored

    def set_shard(
        self,
        run_id: str,
        shard: int,
        shards: int,
        status: Literal["running", "interrupted", "complete"],
        *,
        host: str | None = None,
    ) -> None:
        """Record shard `shard` of `shards` of a run as `status` (insert or update).

        ``running`` (re)sets its start time and clears its finish time; ``complete`` sets
        the finish time.
        """
        now = _now()
        values: dict[str, Any] = {"shards": shards, "status": status}
        if status == "running":
            values |= {"started_at": now, "finished_at": None, "host": host}
        elif status == "complete":
            values["finished_at"] = now
        key = (run_shards.c.run_id == run_id) & (run_shards.c.shard == shard)

        def action() -> None:
            with self._tx() as conn:
                changed = conn.execute(update(run_shards).where(key).values(**values))
                if changed.rowcount == 0:
                    conn.execute(
                        run_shards.insert().values(
                            run_id=run_id,
                            shard=shard,
                            host=host,
                            started_at=now,
                            **{k: v for k, v in values.items() if k not in ("host", "started_at")},
                        )
                    )

        with self._errors(f"record shard {shard}/{shards} of run {run_id}"):
            self._retrying(action)

    def shards(self, run_id: str) -> list[ShardState]:
        """The recorded shards of a run, by shard number (empty for an unsharded run)."""
        with self._errors(f"read the shards of run {run_id}"), self._tx() as conn:
            rows = conn.execute(
                select(run_shards).where(run_shards.c.run_id == run_id).order_by(run_shards.c.shard)
            ).fetchall()
        return [
            ShardState(
                run_id=r.run_id,
                shard=int(r.shard),
                shards=int(r.shards),
                status=r.status,
                host=r.host,
                started_at=r.started_at,
                finished_at=r.finished_at,
            )
            for r in rows
        ]

    def set_adaptive(self, run_id: str, summary: Mapping[str, Any]) -> None:
        """Keep an adaptive run's summary with the run (insert or replace, one transaction).

        Raises:
            NotFoundError: no run `run_id` in the store.
        """
        self.get_run(run_id)
        text_ = json.dumps(summary, sort_keys=True, allow_nan=True)
        now = _now()

        def action() -> None:
            with self._tx() as conn:
                key = run_adaptive.c.run_id == run_id
                changed = conn.execute(
                    update(run_adaptive).where(key).values(summary=text_, recorded_at=now)
                )
                if changed.rowcount == 0:
                    conn.execute(
                        run_adaptive.insert().values(run_id=run_id, summary=text_, recorded_at=now)
                    )

        with self._errors(f"record the adaptive summary of run {run_id}"):
            self._retrying(action)

    def adaptive(self, run_id: str) -> dict[str, Any] | None:
        """The adaptive summary kept with run `run_id`, or None.

        None: not an adaptive run, or one recorded before the store kept summaries (schema
        version 5).

        Raises:
            StoreError: the stored summary is not a valid JSON object.
        """
        with self._errors(f"read the adaptive summary of run {run_id}"), self._tx() as conn:
            row = conn.execute(
                select(run_adaptive.c.summary).where(run_adaptive.c.run_id == run_id)
            ).first()
        if row is None:
            return None
        try:
            value = json.loads(row.summary)
        except json.JSONDecodeError:
            raise StoreError(
                f"run {run_id}: the adaptive summary stored in {self.display_url} is not valid "
                "JSON; re-run the adaptive run to record it again"
            ) from None
        if not isinstance(value, dict):
            raise StoreError(
                f"run {run_id}: the adaptive summary stored in {self.display_url} is not an "
                "object; re-run the adaptive run to record it again"
            )
        return value

    def update_run(self, run_id: str, **values: Any) -> None:
        """Update fields of a run (JSON fields given as Python objects)."""
        for name in JSON_RUN_FIELDS:
            if name in values:
                values[name] = json.dumps(values[name], sort_keys=True)

        def action() -> None:
            with self._tx() as conn:
                conn.execute(update(runs).where(runs.c.run_id == run_id).values(**values))

        with self._errors(f"update run {run_id}"):
            self._retrying(action)

    def get_run(self, run_id: str) -> RunRecord:
        """The run with id `run_id` (a unique prefix is enough)."""
        with self._errors("read runs"), self._tx() as conn:
            rows = conn.execute(select(runs).where(runs.c.run_id.startswith(run_id))).fetchall()
        exact = [r for r in rows if r.run_id == run_id]
        if exact:
            return _run_from_row(exact[0])
        if len(rows) == 1:
            return _run_from_row(rows[0])
        if not rows:
            raise NotFoundError(
                f"no run {show_id(run_id)} in the store {self.display_url} (`evalsuite runs` "
                "lists them)"
                + self._aggregate_note(run_id)
                + (f"; {missing_store_message(self.display_url)}" if self.missing else "")
            )
        raise UsageError(
            f"run id prefix {run_id!r} is ambiguous: " + ", ".join(r.run_id for r in rows[:5])
        )

    def _aggregate_note(self, name: str) -> str:
        """Why a model with aggregate results only is no run ("" when it has none)."""
        if self.missing:
            return ""
        query = select(aggregates.c.benchmark).where(aggregates.c.model == name)
        try:
            with self._tx() as conn:
                found = sorted({str(b) for b in conn.execute(query).scalars()})
        except SQLAlchemyError:  # a read-only store of an older schema: no note, same error
            return ""
        if not found:
            return ""
        return (
            f"; {name!r} has aggregate results only ({', '.join(found[:3])}: means from Every "
            "Eval Ever records without samples), and a paired comparison or a score needs "
            "its items: ingest the record with its _samples.jsonl sidecar to make it a run, "
            "or use the means where they suffice (`evalsuite validity report --aggregates`)"
        )

    def list_runs(self, *, suite: str | None = None, newest: int | None = None) -> list[RunRecord]:
        """All runs (of `suite`, when given), oldest first; the `newest` N only, when given."""
        query = select(runs)
        if suite is not None:
            query = query.where(runs.c.suite == suite)
        if newest is not None:
            query = query.order_by(runs.c.started_at.desc(), runs.c.run_id.desc()).limit(newest)
        else:
            query = query.order_by(runs.c.started_at, runs.c.run_id)
        with self._errors("read runs"), self._tx() as conn:
            records = [_run_from_row(r) for r in conn.execute(query)]
        return records[::-1] if newest is not None else records

    def count_runs(self, *, suite: str | None = None) -> int:
        """How many runs (of `suite`, when given) the store holds."""
        query = select(func.count()).select_from(runs)
        if suite is not None:
            query = query.where(runs.c.suite == suite)
        with self._errors("count runs"), self._tx() as conn:
            return int(conn.execute(query).scalar_one())

    def runs_with_content(self, content_hash: str) -> list[str]:
        """Ids of the runs whose stored content has this fingerprint, oldest first."""
        with self._errors("read runs"), self._tx() as conn:
            return self._runs_with_content(conn, content_hash)

    @staticmethod
    def _runs_with_content(conn: Connection, content_hash: str) -> list[str]:
        query = (
            select(runs.c.run_id)
            .where(runs.c.content_hash == content_hash)
            .order_by(runs.c.started_at, runs.c.run_id)
        )
        return [row.run_id for row in conn.execute(query)]

    # attempts --------------------------------------------------------------------------

    def record_attempts(self, run_id: str, records: Sequence[AttemptRecord]) -> int:
        """Upsert attempts of `run_id` on (item_id, epoch); return how many rows were written.

        Any number of records, in one transaction, `BATCH_ROWS` rows per statement; a
        record that is not valid (e.g. a harness error with a score) writes nothing.
        """
        if not records:
            return 0
        unique = _latest_per_key(records)

        def action() -> None:
            with self._tx() as conn:
                self._write_attempts(conn, run_id, unique)

        with self._errors(f"record attempts of run {run_id}"):
            self._retrying(action)
        return len(unique)

    def _write_attempts(
        self, conn: Connection, run_id: str, records: Sequence[AttemptRecord]
    ) -> None:
        now = _now()
        statement = self._upsert_statement()
        for chunk in _chunks(records, BATCH_ROWS):
            conn.execute(statement, [_attempt_row(run_id, r, now) for r in chunk])

    def _upsert_statement(self) -> Any:
        """The attempts upsert, built once per store and reused (docs/design/run-speed.md).

        A run writes each attempt as it finishes, one statement per attempt: building the
        upsert (one SET clause per column) and its SQL cache key anew every time cost about
        a third of that write. The statement is immutable, so one object serves them all.
        """
        cached = self.__dict__.get("_upsert")
        if cached is None:
            cached = self.__dict__["_upsert"] = self._build_upsert_statement()
        return cached

    def _build_upsert_statement(self) -> Any:
        keys = ["run_id", "item_id", "epoch"]
        dialect = self.engine.dialect.name
        if dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert as pg_insert

            pg_stmt = pg_insert(attempts)
            updates = {
                c.name: pg_stmt.excluded[c.name] for c in attempts.columns if c.name not in keys
            }
            return pg_stmt.on_conflict_do_update(index_elements=keys, set_=updates)
        if dialect != "sqlite":  # pragma: no cover - the unique key still guards
            return insert(attempts)
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        stmt = sqlite_insert(attempts)
        updates = {c.name: stmt.excluded[c.name] for c in attempts.columns if c.name not in keys}
        return stmt.on_conflict_do_update(index_elements=keys, set_=updates)

    @contextmanager
    def ingest_session(self) -> Iterator[IngestSession]:
        """One transaction that streams ingested runs in (`_bulk.IngestSession`).

        Everything written in the block commits together when it ends, or not at all.
        SQLite's write lock is held from the first row to the commit; PostgreSQL writers
        run side by side and meet only on a content fingerprint's claim row.
        """
        with self._errors("record ingested runs"), self._tx() as conn:
            if self.engine.dialect.name == "sqlite":
                # take the write lock now (waiting up to the busy timeout), so no read in
                # the session can make SQLite refuse its later writes
                conn.execute(
                    update(meta).where(meta.c.key == "schema_version").values(value=meta.c.value)
                )
            session = IngestSession(self, conn, _now())
            try:
                yield session
            except BaseException as exc:
                session.abort(exc)
                raise

    def add_ingested_run(
        self,
        record: RunRecord,
        records: Sequence[AttemptRecord],
        *,
        identity: Mapping[str, str],
        again: bool = False,
    ) -> IngestStored:
        """Store an ingested run and its attempts in one transaction, unless already stored.

        The run's content fingerprint (`ContentFingerprint` over the rows written) is
        recorded in ``runs.content_hash``. When a run with the same fingerprint exists and
        `again` is false, nothing is written and the existing runs are returned. The check
        and the insert hold one lock (the fingerprint's `ingest_claims` row), so concurrent
        ingests of the same content store it once. `ingest_session` is the same path for
        runs too large to hold as records.

        Raises:
            UsageError: two records share (item_id, epoch), or a record is not valid.
        """
        if len({(r.item_id, r.epoch) for r in records}) < len(records):
            raise UsageError(f"run {record.run_id}: two attempts share an (item_id, epoch)")
        now = _now()
        rows = [_attempt_row(record.run_id, r, now) for r in records]  # validates each
        table = attempt_table(
            {name: [row[name] for row in rows] for name in ATTEMPT_CONTENT_COLUMNS}
        )

        with self.ingest_session() as session:
            for batch in table.to_batches(max_chunksize=BATCH_ROWS):
                session.add(record.run_id, batch)
            return session.finish(record.run_id, lambda _: record, identity=identity, again=again)

    def _claim(self, conn: Connection, content_hash: str) -> None:
        """Write the fingerprint's claim row: a lock held until the transaction ends."""
        values = {"content_hash": content_hash, "claimed_at": _now()}
        dialect = self.engine.dialect.name
        refresh = {"claimed_at": values["claimed_at"]}
        if dialect == "sqlite":
            from sqlalchemy.dialects.sqlite import insert as sqlite_insert

            lite = sqlite_insert(ingest_claims).values(**values)
            conn.execute(lite.on_conflict_do_update(index_elements=["content_hash"], set_=refresh))
            return
        if dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert as pg_insert

            pg = pg_insert(ingest_claims).values(**values)
            conn.execute(pg.on_conflict_do_update(index_elements=["content_hash"], set_=refresh))
            return
        claimed = conn.execute(  # pragma: no cover - other databases
            update(ingest_claims)
            .where(ingest_claims.c.content_hash == content_hash)
            .values(claimed_at=values["claimed_at"])
        )
        if claimed.rowcount == 0:  # pragma: no cover
            conn.execute(insert(ingest_claims).values(**values))

    def attempt_keys(self, run_id: str) -> set[tuple[str, int]]:
        """(item_id, epoch) pairs already recorded for a run."""
        with self._errors(f"read attempts of run {run_id}"), self._tx() as conn:
            rows = conn.execute(
                select(attempts.c.item_id, attempts.c.epoch).where(attempts.c.run_id == run_id)
            )
            return {(r.item_id, int(r.epoch)) for r in rows}

    def attempt_outcomes(self, run_id: str) -> list[tuple[str, int, str]]:
        """(item_id, epoch, outcome) of every attempt of a run (a sharded run's progress)."""
        with self._errors(f"read attempts of run {run_id}"), self._tx() as conn:
            rows = conn.execute(
                select(attempts.c.item_id, attempts.c.epoch, attempts.c.outcome).where(
                    attempts.c.run_id == run_id
                )
            )
            return [(r.item_id, int(r.epoch), str(r.outcome)) for r in rows]

    def top_error_reasons(self, run_ids: Sequence[str]) -> dict[str, tuple[str, int]]:
        """Each run's most frequent harness error reason and its count (runs with errors only).

        Reads only the harness error rows of the runs named (the run id index), so listing
        runs stays fast however many attempts the store holds.
        """
        if not run_ids:
            return {}
        query = (
            select(attempts.c.run_id, attempts.c.reason, func.count().label("n"))
            .where(attempts.c.run_id.in_(list(run_ids)))
            .where(attempts.c.outcome == "harness_error")
            .group_by(attempts.c.run_id, attempts.c.reason)
        )
        best: dict[str, tuple[str, int]] = {}
        with self._errors("read harness errors"), self._tx() as conn:
            for row in conn.execute(query):
                reason, n = str(row.reason or "unknown error"), int(row.n)
                current = best.get(row.run_id)
                if current is None or (-n, reason) < (-current[1], current[0]):
                    best[row.run_id] = (reason, n)
        return best

    def attempts(self, run_id: str) -> pd.DataFrame:
        """The run's attempts as a DataFrame with `ATTEMPT_COLUMNS` (NaN score = excluded).

        Ordered by item id (by code point, as SQLite compares text, whatever collation a
        PostgreSQL database has: seeded analyses draw items in this order) and epoch.
        """
        item = attempts.c.item_id
        if self.engine.dialect.name == "postgresql":
            item = item.collate("C")  # type: ignore[assignment]
        with self._errors(f"read attempts of run {run_id}"), self._tx() as conn:
            frame = pd.read_sql(
                select(attempts)
                .where(attempts.c.run_id == run_id)
                .order_by(item, attempts.c.epoch),
                conn,
            )
        frame = frame[ATTEMPT_COLUMNS].copy()
        frame["score"] = frame["score"].astype(float)
        frame["epoch"] = frame["epoch"].astype(int)
        return frame.reset_index(drop=True)

    def attempt_columns(
        self, run_id: str, columns: Sequence[str] = ANALYSIS_COLUMNS
    ) -> pd.DataFrame:
        """The run's attempts, only `columns`, read column-wise for analysis at scale.

        The same rows, order and values as `attempts` (docs/design/analysis-scale.md), but
        built without SQLAlchemy's per-row objects: the driver's rows are turned into one
        array per column, and the repeated labels (item id, stratum, cluster, outcome, item
        hash) become pandas categoricals, so a run of 500,000 attempts holds a few integer
        codes per row instead of Python strings. ``run_id`` is added as a constant column.

        A run of `CACHE_MIN_ROWS` attempts or more keeps its analysis columns in the store
        (`_column_cache`): the first read writes them, later reads decode them, and any write
        to the run's attempts drops them. Same arrays either way.

        Raises:
            UsageError: a column that is not an attempt column.
        """
        unknown = [c for c in columns if c not in ATTEMPT_COLUMNS]
        if unknown:
            raise UsageError(f"unknown attempt column(s) {unknown}; expected {ATTEMPT_COLUMNS}")
        wanted = [c for c in ATTEMPT_COLUMNS if c in columns and c != "run_id"]
        paused = gc.isenabled()
        gc.disable()  # millions of short-lived row tuples: no cycles, only collector passes
        try:
            with self._errors(f"read attempts of run {run_id}"):
                data = None
                if not self.missing and set(wanted) <= set(CACHED_COLUMNS):
                    data = self._cached_columns(run_id)
                    if data is None and self._count_attempts(run_id) >= CACHE_MIN_ROWS:
                        data = self._read_and_cache(run_id)
                tries = 0
                while data is None:
                    if tries == _READ_TRIES:
                        raise StoreError(
                            f"the attempts of run {run_id} changed while they were read "
                            f"({_READ_TRIES} times): run the command again when the run's "
                            "writer has finished"
                        )
                    data = self._read_columns(run_id, wanted)
                    tries += 1
            frame = pd.DataFrame({name: data[name] for name in wanted})
        finally:
            if paused:
                gc.enable()
        if "run_id" in columns:
            run = pd.Categorical.from_codes(
                np.zeros(len(frame), dtype=np.int8), categories=pd.Index([run_id])
            )
            frame.insert(0, "run_id", pd.Series(run))
        return frame[[c for c in ATTEMPT_COLUMNS if c in columns]]

    def _count_attempts(self, run_id: str) -> int:
        with self._tx() as conn:
            query = select(func.count()).where(attempts.c.run_id == run_id)
            return int(conn.execute(query).scalar_one())

    def _current_rev(self, run_id: str) -> Any:
        """The run's attempts revision (`attempt_revs`; 0 when it has none), as SQL."""
        rev = select(attempt_revs.c.rev).where(attempt_revs.c.run_id == run_id)
        return func.coalesce(rev.scalar_subquery(), 0)

    def _current_blob(self, run_id: str, column: Any) -> Any:
        """`column` of the run's cached blob if it is of this format and the current revision."""
        cache = attempt_column_cache.c
        return select(column).where(
            cache.run_id == run_id,
            cache.format == _column_cache.FORMAT,
            cache.rev == self._current_rev(run_id),
        )

    def _cached_columns(self, run_id: str) -> dict[str, Any] | None:
        """The run's cached columns if a blob of the current revision is stored, else None."""
        with self._tx() as conn:
            row = conn.execute(self._current_blob(run_id, attempt_column_cache.c.data)).first()
        if row is None:
            return None
        try:
            return _column_cache.decode(bytes(row[0]))
        except (ValueError, KeyError, TypeError, zlib.error):
            return None  # not a blob this code wrote whole: read the rows (and rewrite it)

    def _read_and_cache(self, run_id: str) -> dict[str, Any] | None:
        """`CACHED_COLUMNS` read in one snapshot, and stored as the run's blob if it can be.

        SQLite: read and write in one transaction, so a write committed since the read
        began makes SQLite refuse the blob (stale snapshot); the write waits for no lock.
        PostgreSQL: read with the run's revision in one REPEATABLE READ snapshot; the blob
        carries that revision. A blob that cannot be written (a read-only store, a
        concurrent writer) is simply not written: the columns read are returned either way.
        """
        postgres = self.engine.dialect.name == "postgresql"
        with self.engine.connect() as conn:
            if postgres:
                conn.execution_options(isolation_level="REPEATABLE READ")
            else:
                conn.exec_driver_sql("BEGIN")  # one snapshot for the reads and the write
            data, encoded = self._read_encoded(conn, run_id)
            if encoded is None:
                conn.rollback()
            else:
                self._commit_blobs(conn, {run_id: encoded})
        return data

    def cache_columns(self, run_ids: Sequence[str]) -> list[str]:
        """Cache the columns of the runs not cached yet, reading two at once in two processes.

        `compare` and `report` of runs never read before would read each from its rows in
        turn (about 2 s of CPU per 500,000 attempts, `attempt_columns`). Here, on SQLite,
        when two or more of `run_ids` have `CACHE_MIN_ROWS` attempts or more and no current
        blob, a forked second process reads every other one of them while this process reads
        the rest; the child only sends its blobs back, and this process writes every blob in
        the one transaction its own read began in, before the fork. SQLite refuses that
        write if anything was committed since (a stale snapshot), and the child's snapshot
        began after this one's, so a blob written describes its run's rows as they are;
        when refused, nothing is cached (docs/design/analysis-scale.md, "Sixth pass").
        Anything else (one such run, PostgreSQL, no fork possible, a child that fails) does
        nothing here: `attempt_columns` then reads and caches each run as before.

        Returns:
            The runs whose blobs were written here.
        """
        if self.missing or self.engine.dialect.name != "sqlite":
            return []
        todo = [r for r in dict.fromkeys(run_ids) if self._needs_reading(r)]
        if len(todo) < 2 or not forkable():
            return []
        paused = gc.isenabled()
        gc.disable()  # as in `attempt_columns`: millions of short-lived row tuples
        try:
            with self._errors("read the attempts of runs " + ", ".join(todo)):
                return self._cache_in_two_processes(todo)
        finally:
            if paused:
                gc.enable()

    def _needs_reading(self, run_id: str) -> bool:
        """A run `attempt_columns` would read from its rows and then cache."""
        current = self._current_blob(run_id, attempt_column_cache.c.run_id)
        with self._tx() as conn:
            cached = conn.execute(current).first() is not None
        return not cached and self._count_attempts(run_id) >= CACHE_MIN_ROWS

    def _read_encoded(
        self, conn: Connection, run_id: str
    ) -> tuple[dict[str, Any] | None, tuple[int, int, bytes] | None]:
        """The run's `CACHED_COLUMNS` as `conn` sees them, and (revision, rows, blob).

        The columns are None if attempts were added meanwhile (`_read_columns`); the blob
        part None when they are, or when they are not cacheable (`_column_cache.encode`).
        """
        rev = int(conn.execute(select(self._current_rev(run_id))).scalar_one())
        data = self._read_columns(run_id, list(CACHED_COLUMNS), conn)
        blob = _column_cache.encode(data) if data is not None else None
        if data is None or blob is None:
            return data, None
        return data, (rev, len(data["epoch"]), blob)

    def _commit_blobs(self, conn: Connection, blobs: Mapping[str, tuple[int, int, bytes]]) -> bool:
        """Write `blobs` (run id -> revision, rows, blob) and commit; False if refused.

        Never waits for a lock on SQLite (busy timeout 0 for the write), where a write
        committed since `conn`'s snapshot began makes SQLite refuse it; a store that cannot
        be written refuses it too. Refused, nothing is written (rolled back).
        """
        sqlite = self.engine.dialect.name != "postgresql"
        try:
            if sqlite:
                conn.exec_driver_sql("PRAGMA busy_timeout=0")  # never wait to cache
            for run_id, encoded in blobs.items():
                self._write_cache(conn, run_id, *encoded)
            conn.commit()
            return True
        except SQLAlchemyError:
            conn.rollback()
            return False
        finally:
            if sqlite:
                conn.exec_driver_sql(SQLITE_PRAGMAS[2])

    def _cache_in_two_processes(self, todo: list[str]) -> list[str]:
        import multiprocessing
        import pickle

        context = multiprocessing.get_context("fork")
        receive, send = context.Pipe(duplex=False)
        with self.engine.connect() as conn:
            conn.exec_driver_sql("BEGIN")
            conn.execute(select(func.count()).select_from(attempt_column_cache)).scalar_one()
            child = context.Process(target=_encode_in_child, args=(self, todo[1::2], send))
            child.start()  # after this process's snapshot began: the child's is no older
            send.close()
            try:
                blobs = {run_id: self._read_encoded(conn, run_id)[1] for run_id in todo[0::2]}
                with suppress(EOFError):  # a child that failed: attempt_columns reads its runs
                    blobs.update(pickle.loads(receive.recv_bytes()))
            finally:
                receive.close()
                child.join()
            ready = {run_id: encoded for run_id, encoded in blobs.items() if encoded is not None}
            # refused when a write was committed since the snapshot: then nothing is cached
            return list(ready) if self._commit_blobs(conn, ready) else []

    def _write_cache(
        self, conn: Connection, run_id: str, rev: int, n_rows: int, blob: bytes
    ) -> None:
        row = {
            "run_id": run_id,
            "rev": rev,
            "format": _column_cache.FORMAT,
            "n_rows": n_rows,
            "data": blob,
            "written_at": _now(),
        }
        conn.execute(self._upsert_row(attempt_column_cache, row, keys=("run_id",)))

    def _upsert_row(self, table: Table, row: Mapping[str, Any], keys: Sequence[str]) -> Any:
        """Insert `row` into `table`, or update its other columns where `keys` match."""
        if self.engine.dialect.name == "postgresql":
            from sqlalchemy.dialects.postgresql import insert as upsert
        else:
            from sqlalchemy.dialects.sqlite import insert as upsert  # type: ignore[assignment]
        statement = upsert(table).values(**row)
        return statement.on_conflict_do_update(
            index_elements=list(keys),
            set_={k: statement.excluded[k] for k in row if k not in keys},
        )

    def _read_columns(
        self, run_id: str, wanted: list[str], conn: Connection | None = None
    ) -> dict[str, Any] | None:
        """`wanted` as arrays (`attempt_columns`); None if attempts were added meanwhile.

        The item ids come from one row per item (``GROUP BY``, with its count) and are
        spread over the item's rows by the order both queries share; the outcome comes as
        a small integer. The two statements may see different snapshots (a run being
        resumed gains attempts; none is ever removed but with its run), so the counts must
        add up to the rows read, or the caller reads again. `conn`: read there (in its
        transaction) instead of in transactions of its own.
        """
        item = attempts.c.item_id
        if self.engine.dialect.name == "postgresql":
            item = item.collate("C")  # type: ignore[assignment]
        mine = attempts.c.run_id == run_id
        outcome_code = case(
            *[(attempts.c.outcome == o, k) for k, o in enumerate(_OUTCOMES)], else_=-1
        )
        selected = [c for c in wanted if c != "item_id"]
        row_query = (
            select(*[outcome_code if c == "outcome" else attempts.c[c] for c in selected])
            .where(mine)
            .order_by(item, attempts.c.epoch)
        )
        with self._on(conn) as c:
            per_item = (
                c.execute(
                    select(item, func.count()).where(mine).group_by(item).order_by(item)
                ).cursor.fetchall()
                if "item_id" in wanted
                else []
            )
            rows = c.execute(row_query).cursor.fetchall()  # the driver's tuples, as is
        values = list(zip(*rows, strict=True)) if rows else [()] * len(selected)
        n = len(rows)
        del rows
        out: dict[str, Any] = {}
        if "item_id" in wanted:
            ids, counts = zip(*per_item, strict=True) if per_item else ((), ())
            if sum(counts) != n:
                return None
            codes = np.repeat(np.arange(len(ids), dtype=np.int64), np.asarray(counts, np.int64))
            out["item_id"] = pd.Categorical.from_codes(
                codes, categories=pd.Index(list(ids), dtype=object)
            )
        for name, column in zip(selected, values, strict=True):
            if name == "outcome":
                out[name] = _outcome_column(np.asarray(column, dtype=np.int64))
                if out[name] is None:  # a label the store does not write: read it as text
                    with self._on(conn) as c:
                        text_rows = c.execute(
                            select(attempts.c.outcome).where(mine).order_by(item, attempts.c.epoch)
                        ).cursor.fetchall()
                    if len(text_rows) != n:
                        return None
                    out[name] = _column(name, [r[0] for r in text_rows])
            else:
                out[name] = _column(name, column)
        return {name: out[name] for name in wanted}

    @contextmanager
    def _on(self, conn: Connection | None) -> Iterator[Connection]:
        """`conn` itself, or a transaction of its own when None."""
        if conn is not None:
            yield conn
        else:
            with self._tx() as own:
                yield own

    def delete_run(self, run_id: str) -> None:
        """Remove a run and its attempts (used to undo a failed ingest)."""

        def action() -> None:
            with self._tx() as conn:
                conn.execute(attempts.delete().where(attempts.c.run_id == run_id))
                conn.execute(run_shards.delete().where(run_shards.c.run_id == run_id))
                conn.execute(run_adaptive.delete().where(run_adaptive.c.run_id == run_id))
                conn.execute(attempt_labels.delete().where(attempt_labels.c.run_id == run_id))
                conn.execute(scan_findings.delete().where(scan_findings.c.run_id == run_id))
                conn.execute(scan_runs.delete().where(scan_runs.c.run_id == run_id))
                conn.execute(
                    gates.delete().where(
                        (gates.c.baseline == run_id) | (gates.c.candidate == run_id)
                    )
                )
                conn.execute(runs.delete().where(runs.c.run_id == run_id))

        with self._errors(f"delete run {run_id}"):
            self._retrying(action)

    # gates -----------------------------------------------------------------------------

    def record_gate(
        self,
        baseline: str,
        candidate: str,
        *,
        kind: str,
        margin: float,
        alpha: float,
        asked_at: str | None = None,
    ) -> dict[str, Any]:
        """Record the gate asked for in a comparison of `candidate` against `baseline`.

        One row per pair: a later gate of the same pair replaces the earlier one (an upsert,
        so comparisons of one pair run side by side never fail on the key).

        Returns:
            The record: baseline, candidate, kind, margin, alpha, asked_at.
        """
        row = {
            "baseline": baseline,
            "candidate": candidate,
            "kind": kind,
            "margin": float(margin),
            "alpha": float(alpha),
            "asked_at": asked_at or _now(),
        }
        statement = self._upsert_row(gates, row, keys=("baseline", "candidate"))

        def action() -> None:
            with self._tx() as conn:
                conn.execute(statement)

        with self._errors(f"record the gate of {candidate} against {baseline}"):
            self._retrying(action)
        return row

    def gate(self, baseline: str, candidate: str) -> dict[str, Any] | None:
        """The gate last recorded for this pair, or None."""
        key = (gates.c.baseline == baseline) & (gates.c.candidate == candidate)
        with self._errors("read a recorded gate"), self._tx() as conn:
            row = conn.execute(select(gates).where(key)).first()
        return dict(row._mapping) if row is not None else None

    # review: labels and scanner findings -----------------------------------------------

    def add_label_row(self, row: Mapping[str, Any]) -> None:
        """Append one label of an attempt (`attempt_labels`; earlier labels are kept).

        `row` holds run_id, item_id, epoch, modes (a JSON list), note, who, at and
        taxonomy_version; the caller (`evalsuite.review.save_label`) has checked them.

        Raises:
            NotFoundError: no run `row["run_id"]` in the store.
        """
        self.get_run(str(row["run_id"]))
        values = {c.name: row[c.name] for c in attempt_labels.columns if c.name != "label_id"}

        def action() -> None:
            with self._tx() as conn:
                conn.execute(attempt_labels.insert().values(**values))

        with self._errors(f"save a label of run {row['run_id']}"):
            self._retrying(action)

    def label_rows(self, run_id: str, *, history: bool = False) -> list[dict[str, Any]]:
        """The labels of run `run_id`: the latest per attempt, or every save (`history`).

        The latest are ordered by (item_id, epoch), the history in save order; a row's
        ``modes`` is its JSON text.
        """
        query = (
            select(attempt_labels)
            .where(attempt_labels.c.run_id == run_id)
            .order_by(attempt_labels.c.label_id)
        )
        with self._errors(f"read the labels of run {run_id}"), self._tx() as conn:
            rows = [dict(r._mapping) for r in conn.execute(query)]
        if history:
            return rows
        latest: dict[tuple[str, int], dict[str, Any]] = {}
        for row in rows:
            latest[(row["item_id"], row["epoch"])] = row
        return [latest[key] for key in sorted(latest)]

    def replace_findings(
        self,
        run_id: str,
        scanner: str,
        rows: Sequence[Mapping[str, Any]],
        *,
        scan: Mapping[str, Any],
    ) -> int:
        """Replace what `scanner` found in run `run_id` by `rows` (one transaction).

        Each row holds item_id, epoch, value (JSON text), explanation, scan_location and
        scanned_at; `scan` (scan_location, scanned_at, transcripts) is the scan's record in
        `scan_runs`. Returns the number of rows written.
        """
        record = dict(scan) | {"run_id": run_id, "scanner": scanner, "flagged": len(rows)}
        upsert = self._upsert_row(scan_runs, record, keys=("run_id", "scanner"))

        def action() -> None:
            with self._tx() as conn:
                conn.execute(upsert)
                conn.execute(
                    scan_findings.delete().where(
                        (scan_findings.c.run_id == run_id) & (scan_findings.c.scanner == scanner)
                    )
                )
                if rows:
                    conn.execute(
                        scan_findings.insert(),
                        [dict(r) | {"run_id": run_id, "scanner": scanner} for r in rows],
                    )

        with self._errors(f"record the findings of scanner {scanner} in run {run_id}"):
            self._retrying(action)
        return len(rows)

    def scan_records(self, run_id: str) -> list[dict[str, Any]]:
        """The last scan of run `run_id` by each scanner (`scan_runs`), by scanner name."""
        query = select(scan_runs).where(scan_runs.c.run_id == run_id).order_by(scan_runs.c.scanner)
        with self._errors(f"read the scans of run {run_id}"), self._tx() as conn:
            return [dict(r._mapping) for r in conn.execute(query)]

    def finding_rows(self, run_id: str) -> list[dict[str, Any]]:
        """What the scanners found in run `run_id`, ordered by (item_id, epoch, scanner)."""
        query = (
            select(scan_findings)
            .where(scan_findings.c.run_id == run_id)
            .order_by(scan_findings.c.item_id, scan_findings.c.epoch, scan_findings.c.scanner)
        )
        with self._errors(f"read the scanner findings of run {run_id}"), self._tx() as conn:
            return [dict(r._mapping) for r in conn.execute(query)]

    # deployment outcomes ---------------------------------------------------------------

    def add_outcomes(self, records: Iterable[tuple[OutcomeRecord, str]]) -> int:
        """Insert outcomes with their fingerprints; existing fingerprints are skipped.

        Insert-or-ignore on the unique fingerprint (never check-then-insert), so concurrent
        imports of the same observations add each once and none of them fails.

        Returns:
            The number of new rows.
        """
        now = _now()
        batch = [dict(asdict(r), fingerprint=fp, recorded_at=now) for r, fp in records]
        unique = list({b["fingerprint"]: b for b in batch}.values())
        if not unique:
            return 0
        statement = self._insert_or_ignore_outcomes()

        def action() -> int:
            with self._tx() as conn:
                return sum(
                    len(conn.execute(statement, chunk).fetchall())
                    for chunk in _chunks(unique, BATCH_ROWS)
                )

        with self._errors("record deployment outcomes"):
            return self._retrying(action)

    def _insert_or_ignore_outcomes(self) -> Any:
        dialect = self.engine.dialect.name
        if dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert as pg_insert

            return (
                pg_insert(outcomes)
                .on_conflict_do_nothing(index_elements=["fingerprint"])
                .returning(outcomes.c.fingerprint)
            )
        if dialect != "sqlite":  # pragma: no cover - the unique key still guards
            return insert(outcomes).returning(outcomes.c.fingerprint)
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        return (
            sqlite_insert(outcomes)
            .on_conflict_do_nothing(index_elements=["fingerprint"])
            .returning(outcomes.c.fingerprint)
        )

    def add_aggregates(self, rows: Sequence[Mapping[str, Any]]) -> list[str]:
        """Store aggregate results; a fingerprint already stored is skipped (insert-or-ignore).

        Each row: model, benchmark, score, se, format, source, detail, fingerprint.

        Returns:
            The fingerprints of the rows added (the others were stored before).
        """
        now = _now()
        batch = [
            {
                "model": str(r["model"]),
                "benchmark": str(r["benchmark"]),
                "score": float(r["score"]),
                "se": None if r.get("se") is None else float(r["se"]),
                "format": str(r["format"]),
                "source": str(r["source"]),
                "detail": json.dumps(r.get("detail") or {}, sort_keys=True),
                "fingerprint": str(r["fingerprint"]),
                "recorded_at": now,
            }
            for r in rows
        ]
        if not batch:
            return []
        dialect = self.engine.dialect.name
        if dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert as dialect_insert
        else:
            from sqlalchemy.dialects.sqlite import insert as dialect_insert  # type: ignore[assignment]
        statement = (
            dialect_insert(aggregates)
            .on_conflict_do_nothing(index_elements=["fingerprint"])
            .returning(aggregates.c.fingerprint)
        )

        def action() -> list[str]:
            with self._tx() as conn:
                return [str(f) for row in batch for f in conn.execute(statement, [row]).scalars()]

        with self._errors("store aggregate results"):
            return self._retrying(action)

    def aggregates(self) -> pd.DataFrame:
        """Stored aggregate results (as stored, with ``recorded_at``), oldest first."""
        query = select(aggregates).order_by(aggregates.c.id)
        with self._errors("read aggregate results"), self._tx() as conn:
            return pd.read_sql(query, conn)

    def outcomes(self, metric: str | None = None) -> pd.DataFrame:
        """Deployment outcomes (optionally of one metric), oldest observation first."""
        query = select(outcomes).order_by(outcomes.c.observed_at, outcomes.c.id)
        if metric is not None:
            query = query.where(outcomes.c.metric == metric)
        with self._errors("read deployment outcomes"), self._tx() as conn:
            return pd.read_sql(query, conn)


def _encode_in_child(store: Store, run_ids: list[str], send: Any) -> None:
    """`Store.cache_columns`'s second process: encode `run_ids` and send the blobs back.

    It reads in a connection of its own (the parent's pooled connections are left alone:
    ``dispose(close=False)``, SQLAlchemy's advice for a forked process) and writes nothing;
    the parent writes every blob. A forked process inherits SQLite's per-process lock
    records, so the child's read locks may be the parent's own; the parent keeps its read
    transaction, and so its locks, open until the child has ended, so no checkpoint or WAL
    restart can pass their snapshot, and any commit meanwhile makes the parent refuse the
    write (docs/design/analysis-scale.md, "Sixth pass").
    """
    import pickle

    try:
        store.engine.dispose(close=False)
        with store.engine.connect() as conn:
            conn.exec_driver_sql("BEGIN")
            blobs = {run_id: store._read_encoded(conn, run_id)[1] for run_id in run_ids}
            conn.rollback()
        send.send_bytes(pickle.dumps(blobs))
    except Exception:  # the parent gets no blobs, and its attempt_columns reads these runs
        return
    finally:
        send.close()
