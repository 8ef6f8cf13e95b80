"""Reading the runs of a store quickly: `evalsuite runs` and `verify` without SQLAlchemy.

Importing SQLAlchemy (and pandas, behind `Store`) costs more CPU than the whole of `runs`
may spend (docs/scale.md, "Start-up"). `RunReader` reads an SQLite store whose file exists
and whose schema is the current one through the standard library's `sqlite3`, opened
read-only, with the same queries and the same records as `Store` (`RunRecord`). Every other
store goes through `Store`: a PostgreSQL URL, an older schema (`Store` upgrades it), a
newer one (`Store` refuses it and says what to do), or an SQLite file that cannot be opened
or read (`Store` reports why). So the store contract is `Store`'s, whichever path reads.
Design: docs/design/startup.md.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from evalsuite.store._records import RunRecord, run_from_mapping, sqlite_file
from evalsuite.store._version import SCHEMA_VERSION

if TYPE_CHECKING:
    from evalsuite.store._store import Store

__all__ = ["RunKey", "RunReader", "ShardRow"]

_CHUNK = 500
"""Run ids per ``IN (...)`` list: under every SQLite's limit on bound parameters."""


@dataclass(frozen=True, slots=True)
class RunKey:
    """A stored run's identity: what the holdout ledger's cross-checks read of it."""

    run_id: str
    suite: str | None
    version: str | None
    split: str | None
    source: str
    manifest_hash: str | None


@dataclass(frozen=True, slots=True)
class ShardRow:
    """One stored shard of a sharded run (`Store.shards`' `ShardState`, read without it)."""

    run_id: str
    shard: int
    shards: int
    status: str
    host: str | None
    started_at: str
    finished_at: str | None


class RunReader:
    """The runs of the store at `url`, read through sqlite3 when it can, else through `Store`."""

    def __init__(self, url: str) -> None:
        """Decide how to read the store at `url` (nothing is read or created yet)."""
        self.url = url
        self._file = sqlite_file(url)
        self._store: Store | None = None

    @property
    def display_url(self) -> str:
        """The store's URL to show: a SQLite URL whole, any other without its credentials."""
        return self.url if self._file is not None else self.url.split("@")[-1]

    @property
    def missing(self) -> bool:
        """Whether the store is a SQLite file that does not exist (yet).

        It holds no runs, and reading it creates nothing.
        """
        return self._store is None and self._file is not None and not self._file.exists()

    @property
    def fast(self) -> bool:
        """Whether this store is read without SQLAlchemy (decided on first read)."""
        return self._store is None and self._file is not None

    def _full(self) -> Store:
        if self._store is None:
            from evalsuite.store._store import Store

            self._store = Store(self.url)
        return self._store

    @contextmanager
    def _sqlite(self) -> Iterator[sqlite3.Connection | None]:
        """A read-only connection to a current SQLite store, or None (read through `Store`)."""
        if self._store is not None or self._file is None or not self._file.is_file():
            yield None
            return
        uri = f"file:{quote(str(self._file.resolve()))}?mode=ro"
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=60)
        except sqlite3.Error:
            yield None
            return
        with closing(conn):
            try:
                found = conn.execute(
                    "SELECT value FROM meta WHERE key = 'schema_version'"
                ).fetchone()
            except sqlite3.Error:
                found = None
            yield conn if found is not None and found[0] == str(SCHEMA_VERSION) else None

    def runs(self, *, suite: str | None = None, newest: int | None = None) -> list[RunRecord]:
        """All runs (of `suite`, when given), oldest first; the `newest` N only, when given.

        The same records, in the same order, as `Store.list_runs`.
        """
        where = "WHERE suite = ?" if suite is not None else ""
        params: list[object] = [suite] if suite is not None else []
        if newest is not None:
            sql = f"SELECT * FROM runs {where} ORDER BY started_at DESC, run_id DESC LIMIT ?"
            params = [*params, newest]
        else:
            sql = f"SELECT * FROM runs {where} ORDER BY started_at, run_id"
        if self.missing:
            return []
        try:
            with self._sqlite() as conn:
                if conn is not None:
                    cursor = conn.execute(sql, params)
                    names = [d[0] for d in cursor.description]
                    records = [_record(dict(zip(names, row, strict=True))) for row in cursor]
                    return records[::-1] if newest is not None else records
        except sqlite3.Error:
            pass  # `Store` reads it again and reports what is wrong, as it always has
        return self._full().list_runs(suite=suite, newest=newest)

    def run_keys(self) -> list[RunKey]:
        """Every run's identity, oldest first (as `runs`, without decoding the rest).

        `verify` cross-checks the ledger against every stored run; building whole records
        (four JSON columns each) was most of its work on a store of thousands of runs.
        """
        sql = (
            "SELECT run_id, suite, version, split, source, manifest_hash FROM runs "
            "ORDER BY started_at, run_id"
        )
        if self.missing:
            return []
        try:
            with self._sqlite() as conn:
                if conn is not None:
                    return [RunKey(*row) for row in conn.execute(sql)]
        except sqlite3.Error:
            pass  # `Store` reads it again and reports what is wrong, as it always has
        return [
            RunKey(r.run_id, r.suite, r.version, r.split, r.source, r.manifest_hash)
            for r in self._full().list_runs()
        ]

    def count(self, *, suite: str | None = None) -> int:
        """How many runs (of `suite`, when given) the store holds."""
        where, params = ("WHERE suite = ?", [suite]) if suite is not None else ("", [])
        if self.missing:
            return 0
        try:
            with self._sqlite() as conn:
                if conn is not None:
                    return int(
                        conn.execute(f"SELECT count(*) FROM runs {where}", params).fetchone()[0]
                    )
        except sqlite3.Error:
            pass
        return self._full().count_runs(suite=suite)

    def top_error_reasons(self, run_ids: Sequence[str]) -> dict[str, tuple[str, int]]:
        """Each run's most frequent harness error reason and its count, as `Store` gives it."""
        if not run_ids or self.missing:
            return {}
        best: dict[str, tuple[str, int]] = {}
        try:
            with self._sqlite() as conn:
                if conn is not None:
                    ids = list(dict.fromkeys(run_ids))
                    for start in range(0, len(ids), _CHUNK):
                        chunk = ids[start : start + _CHUNK]
                        marks = ", ".join("?" * len(chunk))
                        rows = conn.execute(
                            "SELECT run_id, reason, count(*) FROM attempts "
                            f"WHERE run_id IN ({marks}) AND outcome = 'harness_error' "
                            "GROUP BY run_id, reason",
                            chunk,
                        )
                        for run_id, raw, count in rows:
                            reason, n = str(raw or "unknown error"), int(count)
                            current = best.get(run_id)
                            if current is None or (-n, reason) < (-current[1], current[0]):
                                best[run_id] = (reason, n)
                    return best
        except sqlite3.Error:
            pass
        return self._full().top_error_reasons(run_ids)

    def shard_rows(self, run_id: str) -> tuple[list[ShardRow], list[tuple[str, int, str]]]:
        """A sharded run's shard rows and its attempts as (item id, epoch, outcome)."""
        if self.missing:
            return [], []
        try:
            with self._sqlite() as conn:
                if conn is not None:
                    rows = conn.execute(
                        "SELECT run_id, shard, shards, status, host, started_at, finished_at "
                        "FROM run_shards WHERE run_id = ? ORDER BY shard",
                        [run_id],
                    )
                    states = [ShardRow(*row) for row in rows]
                    found = conn.execute(
                        "SELECT item_id, epoch, outcome FROM attempts WHERE run_id = ?", [run_id]
                    )
                    return states, [(str(i), int(e), str(o)) for i, e, o in found]
        except sqlite3.Error:
            pass
        store = self._full()
        states = [
            ShardRow(s.run_id, s.shard, s.shards, s.status, s.host, s.started_at, s.finished_at)
            for s in store.shards(run_id)
        ]
        return states, store.attempt_outcomes(run_id)


def _record(row: dict[str, Any]) -> RunRecord:
    """A `RunRecord` from sqlite3's values, typed as SQLAlchemy's column types give them."""
    if row["valid"] is not None:
        row["valid"] = bool(row["valid"])
    for name in ("error_rate", "error_threshold"):
        if row[name] is not None:
            row[name] = float(row[name])
    return run_from_mapping(row)
