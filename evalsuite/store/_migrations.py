"""Schema migrations of the results store: `MIGRATIONS[n]` upgrades version n to n + 1.

Each runs inside the transaction that opens (or explicitly upgrades) the store, after every
missing table has been created, and never drops or rewrites a row it does not have to. The
same code runs on SQLite and PostgreSQL (both have transactional DDL).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

from sqlalchemy import Connection, select, text, update

from evalsuite.store._column_cache import create_triggers
from evalsuite.store._fingerprint import (
    ATTEMPT_CONTENT_COLUMNS,
    FINGERPRINTED_RUN_FIELDS,
    ContentFingerprint,
    attempt_table,
)
from evalsuite.store._schema import (
    attempt_labels,
    attempts,
    gates,
    ingest_claims,
    run_adaptive,
    run_shards,
    runs,
    scan_findings,
    scan_runs,
)

__all__ = ["MIGRATIONS", "fingerprint_stored_run"]

_READ_ROWS = 50_000


def _v1_to_v2(conn: Connection) -> None:
    """Add ``runs.content_hash`` (indexed) and ``ingest_claims``.

    Version 2 also fingerprinted the runs ingested from CSV here; since version 3 that is
    done (with the scheme-2 fingerprint) by `_v2_to_v3`, which every version-1 store passes
    through next.
    """
    conn.execute(text("ALTER TABLE runs ADD COLUMN content_hash VARCHAR(80)"))
    for index in runs.indexes:
        if [c.name for c in index.columns] == ["content_hash"]:
            index.create(conn)
    ingest_claims.create(conn, checkfirst=True)


def fingerprint_stored_run(conn: Connection, run: Mapping[str, object]) -> str:
    """Scheme-2 fingerprint of a stored run, read from its attempt rows in batches.

    `run` holds the run's `FINGERPRINTED_RUN_FIELDS`, ``run_id``, ``source`` and ``spec``
    (JSON text); an inspect run's identity is the ``eval_id`` its ingest kept in the spec.
    """
    spec = json.loads(str(run.get("spec") or "{}"))
    identity = (
        {"eval_id": str(spec["eval_id"])}
        if run.get("source") == "inspect" and "eval_id" in spec
        else {}
    )
    fingerprint = ContentFingerprint()
    result = conn.execute(
        select(*(attempts.c[name] for name in ATTEMPT_CONTENT_COLUMNS)).where(
            attempts.c.run_id == run["run_id"]
        )
    )
    while rows := result.fetchmany(_READ_ROWS):
        columns = {name: [row[i] for row in rows] for i, name in enumerate(ATTEMPT_CONTENT_COLUMNS)}
        fingerprint.add(attempt_table(columns))
    return fingerprint.digest(run, identity)


def _v2_to_v3(conn: Connection) -> None:
    """Fingerprint ingested runs with scheme 2; drop the index that the unique key covers.

    On PostgreSQL the ``seed`` columns become ``BIGINT``: a live run's per-attempt seeds are
    63-bit, which its 32-bit ``INTEGER`` refused.

    Every run that has a fingerprint (scheme 1), and every run ingested from CSV (a version-1
    store's CSV runs have none yet), gets the scheme-2 fingerprint of its stored rows, so a
    file ingested before the upgrade is still recognised after it. Runs ingested from inspect
    logs that have no fingerprint (ingested before version 2, which did not keep the log's
    ``eval_id``) keep none.
    """
    conn.execute(text("DROP INDEX IF EXISTS ix_attempts_run_id"))
    if conn.dialect.name == "postgresql":  # SQLite's INTEGER is 64-bit already
        for table in ("attempts", "runs"):
            conn.execute(text(f"ALTER TABLE {table} ALTER COLUMN seed TYPE BIGINT"))
    header = [runs.c[name] for name in FINGERPRINTED_RUN_FIELDS if name != "source"]
    found = conn.execute(
        select(runs.c.run_id, runs.c.source, runs.c.spec, *header).where(
            (runs.c.content_hash.is_not(None)) | (runs.c.source == "csv")
        )
    ).fetchall()
    for run in found:
        fingerprint = fingerprint_stored_run(conn, dict(run._mapping))
        conn.execute(
            update(runs).where(runs.c.run_id == run.run_id).values(content_hash=fingerprint)
        )


def _v3_to_v4(conn: Connection) -> None:
    """Add ``run_shards`` (the per-shard state of sharded runs); no row changes."""
    run_shards.create(conn, checkfirst=True)


def _v4_to_v5(conn: Connection) -> None:
    """Add ``run_adaptive`` (adaptive runs' summaries, kept with the run); no row changes.

    Summaries written before version 5 stay in the project's ``.evalsuite/adaptive/``, where
    the report still finds them.
    """
    run_adaptive.create(conn, checkfirst=True)


def _v5_to_v6(conn: Connection) -> None:
    """Add ``gates`` (the gate asked for in `compare`, per pair of runs); no row changes.

    Gates recorded before, in ``.evalsuite/gates/`` of one checkout, are imported by
    `evalsuite store upgrade` run in that checkout (docs/store.md).
    """
    gates.create(conn, checkfirst=True)


def _v6_to_v7(conn: Connection) -> None:
    """Add the cached analysis columns of runs and the triggers that drop them; no row changes.

    ``attempt_column_cache`` and ``attempt_revs`` are created empty (by the table creation
    that runs before every migration); the triggers on ``attempts`` drop a run's cached
    columns at any later write to its attempts (docs/design/analysis-scale.md, "Fifth pass").
    """
    create_triggers(conn)


def _v7_to_v8(conn: Connection) -> None:
    """Add ``attempt_labels``, ``scan_findings`` and ``scan_runs`` (docs/review.md).

    No row changes.
    """
    attempt_labels.create(conn, checkfirst=True)
    scan_findings.create(conn, checkfirst=True)
    scan_runs.create(conn, checkfirst=True)


MIGRATIONS: Mapping[int, Callable[[Connection], None]] = {
    1: _v1_to_v2,
    2: _v2_to_v3,
    3: _v3_to_v4,
    4: _v4_to_v5,
    5: _v5_to_v6,
    6: _v6_to_v7,
    7: _v7_to_v8,
}
"""From-version -> upgrade to the next version (see `_schema.SCHEMA_VERSION`)."""
