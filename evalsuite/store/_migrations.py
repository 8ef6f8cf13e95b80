"""Schema migrations of the results store: `MIGRATIONS[n]` upgrades version n to n + 1.

Each runs inside the transaction that opens the store, after every missing table has been
created, and never drops or rewrites a row it does not have to.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from sqlalchemy import Connection, select, text, update

from evalsuite.store._fingerprint import (
    ATTEMPT_CONTENT_COLUMNS,
    FINGERPRINTED_RUN_FIELDS,
    ingest_fingerprint,
)
from evalsuite.store._schema import attempts, ingest_claims, runs

__all__ = ["MIGRATIONS"]


def _v1_to_v2(conn: Connection) -> None:
    """Add ``runs.content_hash`` (indexed) and ``ingest_claims``; fingerprint CSV runs.

    Runs ingested from a CSV before version 2 get the fingerprint their rows would get today,
    so re-ingesting such a file is recognised. Runs ingested from inspect logs cannot: their
    fingerprint includes the log's ``eval_id``, which version 1 did not keep. (A CSV run
    with ``limit`` rows was stored with limit type ``custom`` before version 2; its file now
    ingests with the types it states, i.e. as different content.)
    """
    conn.execute(text("ALTER TABLE runs ADD COLUMN content_hash VARCHAR(80)"))
    for index in runs.indexes:
        if [c.name for c in index.columns] == ["content_hash"]:
            index.create(conn)
    ingest_claims.create(conn, checkfirst=True)
    header = [runs.c[name] for name in FINGERPRINTED_RUN_FIELDS]
    csv_runs = conn.execute(select(runs.c.run_id, *header).where(runs.c.source == "csv"))
    for run in csv_runs.fetchall():
        rows = conn.execute(
            select(*(attempts.c[name] for name in ATTEMPT_CONTENT_COLUMNS)).where(
                attempts.c.run_id == run.run_id
            )
        ).fetchall()
        columns = {name: [row._mapping[name] for row in rows] for name in ATTEMPT_CONTENT_COLUMNS}
        fingerprint = ingest_fingerprint(dict(run._mapping), {}, columns)
        conn.execute(
            update(runs).where(runs.c.run_id == run.run_id).values(content_hash=fingerprint)
        )


MIGRATIONS: Mapping[int, Callable[[Connection], None]] = {1: _v1_to_v2}
"""From-version -> upgrade to the next version (see `_schema.SCHEMA_VERSION`)."""
