"""The results store: SQLite under `.evalsuite/` by default, any SQLAlchemy URL otherwise.

Safe under concurrent writers: SQLite runs in WAL mode with a busy timeout, every write is
one short transaction, and attempt rows are upserted on (run_id, item_id, epoch), so a
resumed run or a repeated ingest never duplicates a row.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypeVar

import pandas as pd
from sqlalchemy import Connection, Engine, create_engine, event, select, update
from sqlalchemy.exc import IntegrityError, OperationalError, SQLAlchemyError

from evalsuite.errors import NotFoundError, StoreError, UsageError
from evalsuite.store._schema import SCHEMA_VERSION, attempts, meta, metadata, outcomes, runs

__all__ = [
    "ATTEMPT_COLUMNS",
    "AttemptRecord",
    "OutcomeRecord",
    "RunRecord",
    "Store",
    "default_store_url",
]

T = TypeVar("T")
Outcome = Literal["scored", "limit", "harness_error"]
ATTEMPT_COLUMNS = [
    "run_id", "item_id", "item_hash", "stratum", "cluster", "epoch", "seed", "outcome",
    "limit_type", "score", "reason", "retries", "duration_s", "tokens", "checks",
]  # fmt: skip


def _now() -> str:
    return datetime.now(UTC).isoformat()


def default_store_url(state_dir: Path) -> str:
    """``sqlite:///<project>/.evalsuite/results.sqlite``."""
    return f"sqlite:///{state_dir / 'results.sqlite'}"


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One run: what was run, how, and its health (DESIGN.md, "Run health")."""

    run_id: str
    model: str
    epochs: int
    planned: int
    status: Literal["running", "interrupted", "complete"]
    source: Literal["evalsuite", "inspect", "csv"]
    started_at: str
    error_threshold: float = 0.05
    suite: str | None = None
    version: str | None = None
    manifest_hash: str | None = None
    split: str | None = None
    model_args: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    valid: bool | None = None
    error_rate: float | None = None
    weights: dict[str, float] = field(default_factory=dict)
    spec: dict[str, Any] = field(default_factory=dict)
    """The exact run spec (limits, retries, fault injection, ...), enough to resume."""
    provenance: dict[str, Any] = field(default_factory=dict)
    """Package versions, git revision, host, user, command line."""
    finished_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


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


_JSON_RUN_FIELDS = ("model_args", "weights", "spec", "provenance")


def _run_row(record: RunRecord) -> dict[str, Any]:
    row = {f.name: getattr(record, f.name) for f in fields(RunRecord)}
    for name in _JSON_RUN_FIELDS:
        row[name] = json.dumps(row[name], sort_keys=True)
    return row


def _run_from_row(row: Any) -> RunRecord:
    data = dict(row._mapping)
    for name in _JSON_RUN_FIELDS:
        data[name] = json.loads(data[name] or "{}")
    return RunRecord(**data)


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
    row = {f.name: getattr(record, f.name) for f in fields(AttemptRecord)}
    row.update(run_id=run_id, score=score, recorded_at=now)
    row["checks"] = json.dumps(record.checks, sort_keys=True) if record.checks else None
    return row


class Store:
    """Runs, attempts and deployment outcomes in one database."""

    def __init__(self, url: str) -> None:
        """Open (and create or migrate) the store at SQLAlchemy `url`."""
        self.url = url
        try:
            self.engine: Engine = self._make_engine(url)
            self._retrying(self._migrate)
        except SQLAlchemyError as exc:
            raise StoreError(f"cannot open the results store at {url}: {exc}") from None

    @staticmethod
    def _make_engine(url: str) -> Engine:
        if url.startswith("sqlite:///"):
            Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
            engine = create_engine(url, connect_args={"timeout": 60})

            @event.listens_for(engine, "connect")
            def _pragmas(dbapi_connection: Any, _record: Any) -> None:
                cursor = dbapi_connection.cursor()
                cursor.execute("PRAGMA journal_mode=WAL")
                cursor.execute("PRAGMA synchronous=NORMAL")
                cursor.execute("PRAGMA busy_timeout=60000")
                cursor.close()

            return engine
        return create_engine(url, pool_pre_ping=True)

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

    def _migrate(self) -> None:
        # two processes may open a new store at once: the loser of a create/insert race
        # finds the winner's tables and row on its next try
        for attempt in range(5):
            try:
                self._migrate_once()
                return
            except (OperationalError, IntegrityError) as exc:
                racing = "already exists" in str(exc) or isinstance(exc, IntegrityError)
                if not racing or attempt == 4:
                    raise
                time.sleep(0.05 * (attempt + 1))

    def _migrate_once(self) -> None:
        with self._tx() as conn:
            metadata.create_all(conn)
            found = conn.execute(select(meta.c.value).where(meta.c.key == "schema_version"))
            version = found.scalar_one_or_none()
            if version is None:
                conn.execute(meta.insert().values(key="schema_version", value=str(SCHEMA_VERSION)))
            elif int(version) > SCHEMA_VERSION:
                raise StoreError(
                    f"the store at {self.url} has schema version {version}, newer than this "
                    f"evalsuite understands ({SCHEMA_VERSION}); upgrade evalsuite"
                )

    @property
    def schema_version(self) -> int:
        """The schema version recorded in the database."""
        with self._tx() as conn:
            value = conn.execute(select(meta.c.value).where(meta.c.key == "schema_version"))
            return int(value.scalar_one())

    # runs ------------------------------------------------------------------------------

    def create_run(self, record: RunRecord) -> None:
        """Insert a new run."""

        def action() -> None:
            with self._tx() as conn:
                conn.execute(runs.insert().values(**_run_row(record)))

        try:
            self._retrying(action)
        except SQLAlchemyError as exc:
            raise StoreError(f"cannot record run {record.run_id}: {exc}") from None

    def update_run(self, run_id: str, **values: Any) -> None:
        """Update fields of a run (JSON fields given as Python objects)."""
        for name in _JSON_RUN_FIELDS:
            if name in values:
                values[name] = json.dumps(values[name], sort_keys=True)

        def action() -> None:
            with self._tx() as conn:
                conn.execute(update(runs).where(runs.c.run_id == run_id).values(**values))

        self._retrying(action)

    def get_run(self, run_id: str) -> RunRecord:
        """The run with id `run_id` (a unique prefix is enough)."""
        with self._tx() as conn:
            rows = conn.execute(select(runs).where(runs.c.run_id.startswith(run_id))).fetchall()
        exact = [r for r in rows if r.run_id == run_id]
        if exact:
            return _run_from_row(exact[0])
        if len(rows) == 1:
            return _run_from_row(rows[0])
        if not rows:
            raise NotFoundError(
                f"no run {run_id!r} in the store {self.url} (`evalsuite runs` lists them)"
            )
        raise UsageError(
            f"run id prefix {run_id!r} is ambiguous: " + ", ".join(r.run_id for r in rows[:5])
        )

    def list_runs(self) -> list[RunRecord]:
        """All runs, oldest first."""
        with self._tx() as conn:
            rows = conn.execute(select(runs).order_by(runs.c.started_at, runs.c.run_id))
            return [_run_from_row(r) for r in rows]

    # attempts --------------------------------------------------------------------------

    def record_attempts(self, run_id: str, records: Sequence[AttemptRecord]) -> int:
        """Upsert attempts of `run_id` on (item_id, epoch); return how many rows were written."""
        if not records:
            return 0
        now = _now()
        rows = [_attempt_row(run_id, r, now) for r in records]

        def action() -> None:
            with self._tx() as conn:
                conn.execute(self._upsert(rows))

        try:
            self._retrying(action)
        except SQLAlchemyError as exc:
            raise StoreError(f"cannot record attempts of run {run_id}: {exc}") from None
        return len(rows)

    def _upsert(self, rows: list[dict[str, Any]]) -> Any:
        keys = ["run_id", "item_id", "epoch"]
        if self.engine.dialect.name == "postgresql":
            from sqlalchemy.dialects.postgresql import insert as pg_insert

            pg_stmt = pg_insert(attempts).values(rows)
            updates = {
                c.name: pg_stmt.excluded[c.name] for c in attempts.columns if c.name not in keys
            }
            return pg_stmt.on_conflict_do_update(index_elements=keys, set_=updates)
        if self.engine.dialect.name != "sqlite":  # pragma: no cover - unique key still guards
            return attempts.insert().values(rows)
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        stmt = sqlite_insert(attempts).values(rows)
        updates = {c.name: stmt.excluded[c.name] for c in attempts.columns if c.name not in keys}
        return stmt.on_conflict_do_update(index_elements=keys, set_=updates)

    def attempt_keys(self, run_id: str) -> set[tuple[str, int]]:
        """(item_id, epoch) pairs already recorded for a run."""
        with self._tx() as conn:
            rows = conn.execute(
                select(attempts.c.item_id, attempts.c.epoch).where(attempts.c.run_id == run_id)
            )
            return {(r.item_id, int(r.epoch)) for r in rows}

    def attempts(self, run_id: str) -> pd.DataFrame:
        """The run's attempts as a DataFrame with `ATTEMPT_COLUMNS` (NaN score = excluded)."""
        with self._tx() as conn:
            frame = pd.read_sql(
                select(attempts)
                .where(attempts.c.run_id == run_id)
                .order_by(attempts.c.item_id, attempts.c.epoch),
                conn,
            )
        frame = frame[ATTEMPT_COLUMNS].copy()
        frame["score"] = frame["score"].astype(float)
        frame["epoch"] = frame["epoch"].astype(int)
        return frame.reset_index(drop=True)

    def delete_run(self, run_id: str) -> None:
        """Remove a run and its attempts (used to undo a failed ingest)."""

        def action() -> None:
            with self._tx() as conn:
                conn.execute(attempts.delete().where(attempts.c.run_id == run_id))
                conn.execute(runs.delete().where(runs.c.run_id == run_id))

        self._retrying(action)

    # deployment outcomes ---------------------------------------------------------------

    def add_outcomes(self, records: Iterable[tuple[OutcomeRecord, str]]) -> int:
        """Insert outcomes with their fingerprints; existing fingerprints are skipped.

        Returns:
            The number of new rows.
        """
        now = _now()
        batch = [dict(asdict(r), fingerprint=fp, recorded_at=now) for r, fp in records]
        if not batch:
            return 0

        def action() -> int:
            with self._tx() as conn:
                existing = {
                    row.fingerprint
                    for row in conn.execute(
                        select(outcomes.c.fingerprint).where(
                            outcomes.c.fingerprint.in_([b["fingerprint"] for b in batch])
                        )
                    )
                }
                fresh = [b for b in batch if b["fingerprint"] not in existing]
                unique = list({b["fingerprint"]: b for b in fresh}.values())
                if unique:
                    conn.execute(outcomes.insert(), unique)
                return len(unique)

        return self._retrying(action)

    def outcomes(self, metric: str | None = None) -> pd.DataFrame:
        """Deployment outcomes (optionally of one metric), oldest observation first."""
        query = select(outcomes).order_by(outcomes.c.observed_at, outcomes.c.id)
        if metric is not None:
            query = query.where(outcomes.c.metric == metric)
        with self._tx() as conn:
            return pd.read_sql(query, conn)
