"""The store's bulk path (issue 12): Arrow batches in, one transaction, on SQLite and PostgreSQL."""

from __future__ import annotations

import math

import pyarrow as pa
import pytest

from evalsuite.errors import StoreError, UsageError
from evalsuite.store import (
    ATTEMPT_SCHEMA,
    AttemptRecord,
    RunRecord,
    Store,
    attempt_table,
)
from evalsuite.store._bulk import RunTally
from evalsuite.store._fingerprint import ATTEMPT_CONTENT_COLUMNS
from tests.pg import PgServer


@pytest.fixture
def store(store_url: str) -> Store:
    return Store(store_url)


def _run(run_id: str = "r1", planned: int = 4) -> RunRecord:
    return RunRecord(
        run_id=run_id,
        model="m",
        epochs=1,
        planned=planned,
        status="complete",
        source="csv",
        started_at="2026-01-01T00:00:00+00:00",
    )


def _rows(n: int, start: int = 0, **constant: object) -> pa.Table:
    columns: dict[str, list[object]] = {name: [None] * n for name in ATTEMPT_CONTENT_COLUMNS}
    columns |= {
        "item_id": [f"i{i:05d}" for i in range(start, start + n)],
        "epoch": [1] * n,
        "stratum": ["s"] * n,
        "outcome": ["scored"] * n,
        "score": [(i % 3) / 3 for i in range(start, start + n)],
        "retries": [0] * n,
        "tokens": [0] * n,
        "duration_s": [0.0] * n,
    }
    for name, value in constant.items():
        columns[name] = [value] * n
    return attempt_table(columns)


def _finish(session: object, run_id: str) -> object:
    def make(tally: RunTally) -> RunRecord:
        return _run(run_id, planned=tally.rows)

    return session.finish(run_id, make, identity={})  # type: ignore[attr-defined]


def test_batches_commit_together_and_are_invisible_until_then(store: Store) -> None:
    with store.ingest_session() as session:
        for part in range(3):
            session.add("r1", _rows(1000, start=part * 1000))
        other = Store(store.url)  # another connection sees nothing yet
        assert other.list_runs() == []
        assert len(other.attempts("r1")) == 0
        stored = _finish(session, "r1")
    assert stored.run_id == "r1"  # type: ignore[attr-defined]
    frame = Store(store.url).attempts("r1")
    assert len(frame) == 3000
    assert frame["score"].tolist() == [(i % 3) / 3 for i in range(3000)]  # full precision


def test_a_key_repeated_across_batches_stores_nothing(store: Store) -> None:
    def ingest() -> None:
        with store.ingest_session() as session:
            session.add("r1", _rows(50))
            session.add("r1", _rows(10, start=45))  # i00045..i00049 again
            _finish(session, "r1")

    with pytest.raises((UsageError, StoreError), match="share an"):
        ingest()
    assert store.list_runs() == []
    assert len(store.attempts("r1")) == 0


def test_a_bad_row_in_a_late_batch_stores_nothing(store: Store) -> None:
    bad = _rows(5, start=100, outcome="harness_error")  # harness errors with a score

    def ingest() -> None:
        with store.ingest_session() as session:
            session.add("r1", _rows(100))
            session.add("r1", bad)

    with pytest.raises(UsageError, match="never scored"):
        ingest()
    assert len(store.attempts("r1")) == 0


def test_every_value_survives_the_bulk_writers(store: Store) -> None:
    # constant columns are written as SQL literals (SQLite) or one COPY field (PostgreSQL),
    # varying ones bound or escaped: both must store exactly what was given
    texts = ["it's", 'a "quote"', "back\\slash", "tab\there", "line\nbreak", "cr\rx", "é ∑ 😀", ""]
    n = len(texts)
    rows = _rows(n, reason="it's constant\\ with\ttab", checks='{"ok": true}', seed=2**62 + 7)
    rows = rows.set_column(ATTEMPT_SCHEMA.get_field_index("stratum"), "stratum", pa.array(texts))
    scores = [1 / 3, 1e-300, 0.1, 0.0, 1.0, 2 / 3, 5e-324, 0.5]
    rows = rows.set_column(ATTEMPT_SCHEMA.get_field_index("score"), "score", pa.array(scores))
    with store.ingest_session() as session:
        session.add("r1", rows)
        _finish(session, "r1")
    frame = store.attempts("r1").sort_values("item_id")
    assert frame["stratum"].tolist() == texts
    assert frame["score"].tolist() == scores
    assert set(frame["reason"]) == {"it's constant\\ with\ttab"}
    assert set(frame["checks"]) == {'{"ok": true}'}
    assert {int(s) for s in frame["seed"]} == {2**62 + 7}


def test_the_same_rows_give_the_same_fingerprint_through_records_or_batches(
    store: Store,
) -> None:
    records = [
        AttemptRecord(item_id=f"q{i}", epoch=e, stratum="s", outcome="scored", score=i / 10)
        for i in range(10)
        for e in (1, 2)
    ]
    through_records = store.add_ingested_run(_run("a", 20), records, identity={})
    columns = {name: [getattr(r, name) for r in reversed(records)] for name in ATTEMPT_SCHEMA.names}
    with store.ingest_session() as session:
        table = attempt_table(columns)
        session.add("b", table.slice(0, 7))
        session.add("b", table.slice(7))
        through_batches = session.finish("b", lambda _: _run("b", 20), identity={})
    assert through_batches.run_id is None  # the same content: skipped
    assert through_batches.content_hash == through_records.content_hash
    assert through_batches.existing == ("a",)
    assert len(store.attempts("b")) == 0  # its rows were dropped in the same transaction


def test_health_counts_of_the_bulk_path_match_run_health(store: Store) -> None:
    from evalsuite.store import run_health

    rows = _rows(6)
    outcome = pa.array(["scored", "limit", "harness_error", "limit", "scored", "harness_error"])
    score = pa.array([1.0, 0.0, None, 0.0, 0.5, None], pa.float64())
    kinds = pa.array([None, "time", None, None, None, None], pa.string())
    reason = pa.array([None, "time", "HarnessFault: x", None, None, "not run: y"], pa.string())
    for name, values in (
        ("outcome", outcome),
        ("score", score),
        ("limit_type", kinds),
        ("reason", reason),
    ):
        rows = rows.set_column(ATTEMPT_SCHEMA.get_field_index(name), name, values)
    seen: dict[str, object] = {}
    with store.ingest_session() as session:
        session.add("r1", rows)

        def make(tally: RunTally) -> RunRecord:
            seen["health"] = tally.health.health(planned=8, threshold=0.05)
            return _run("r1", planned=8)

        session.finish("r1", make, identity={})
    frame = store.attempts("r1")
    assert seen["health"] == run_health(frame, planned=8, threshold=0.05)
    assert seen["health"].errors_by_kind == {"HarnessFault": 1, "not run": 3}  # type: ignore[attr-defined]
    assert seen["health"].limits_by_type == {"time": 1, "unspecified": 1}  # type: ignore[attr-defined]


def test_a_constant_text_with_a_nul_is_bound_not_inlined(tmp_path: object) -> None:
    from pathlib import Path

    store = Store(f"sqlite:///{Path(str(tmp_path)) / 's.sqlite'}")
    with store.ingest_session() as session:
        session.add("r1", _rows(3, reason="nul\x00inside"))
        _finish(session, "r1")
    assert set(store.attempts("r1")["reason"]) == {"nul\x00inside"}


def test_queries_of_one_run_use_the_unique_index(store: Store) -> None:
    """`score RUN` reads one run's rows through (run_id, item_id, epoch): not a table scan."""
    from sqlalchemy import select, text

    from evalsuite.store._schema import attempts

    with store.ingest_session() as session:
        session.add("r1", _rows(200))
        _finish(session, "r1")
    query = (
        select(attempts)
        .where(attempts.c.run_id == "r1")
        .order_by(attempts.c.item_id, attempts.c.epoch)
    )
    with store.engine.connect() as conn:
        compiled = query.compile(conn, compile_kwargs={"literal_binds": True})
        if store.engine.dialect.name == "sqlite":
            plan = " ".join(
                str(r[-1]) for r in conn.execute(text(f"EXPLAIN QUERY PLAN {compiled}"))
            )
            assert "USING INDEX sqlite_autoindex_attempts_1 (run_id=?)" in plan, plan
            assert "TEMP B-TREE" not in plan  # the index gives the order: no sort
        else:
            conn.execute(text("SET enable_seqscan = off"))  # a 200-row table would be scanned
            plan = " ".join(r[0] for r in conn.execute(text(f"EXPLAIN {compiled}")))
            assert "Index Scan using uq_attempt" in plan, plan
    assert not math.isnan(store.attempts("r1")["score"].sum())


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("item_id", "x" * 257, "its item_id .* is 257 characters, and the store holds at most 256"),
        ("stratum", "s" * 300, "its stratum .* is 300 characters"),
        ("cluster", "c" * 257, "its cluster .* is 257 characters"),
        ("item_id", "a\x00b", "its item_id holds a NUL character"),
        ("stratum", "s\x00", "its stratum holds a NUL character"),
    ],
)
def test_text_the_store_cannot_hold_is_refused_on_every_backend(
    store: Store, column: str, value: str, message: str
) -> None:
    """A 300-character item id or a NUL was stored by SQLite and failed on PostgreSQL in the
    middle of the COPY with "unexpected StringDataRightTruncation" (or
    CharacterNotInRepertoire), quoting the value: one file, two answers."""

    def ingest(middle: str) -> None:
        rows = _rows(3)
        values = pa.array(["ok-1", middle, "ok-3"])
        rows = rows.set_column(ATTEMPT_SCHEMA.get_field_index(column), column, values)
        with store.ingest_session() as session:
            session.add("r1", rows)
            _finish(session, "r1")

    with pytest.raises(UsageError, match=message):
        ingest(value)
    assert store.list_runs() == [] and len(store.attempts("r1")) == 0
    ingest("y" * 256)  # at the limit: stored
    assert len(store.attempts("r1")) == 3


@pytest.mark.postgres
def test_a_copy_the_database_refuses_is_a_store_error_without_the_row(
    pg: PgServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever PostgreSQL refuses in a COPY (here a NUL, past the checks) is a `StoreError`
    with the database's first line, never "unexpected ..." nor its CONTEXT line, which quotes
    the row. (The COPY path is PostgreSQL's.)"""
    import evalsuite.store._bulk as bulk

    store_url = pg.new_database()

    monkeypatch.setattr(bulk, "check_batch", lambda batch: None)
    store = Store(store_url)
    rows = _rows(2)
    secret = "secret-value"
    rows = rows.set_column(
        ATTEMPT_SCHEMA.get_field_index("item_id"), "item_id", pa.array([f"{secret}\x00", "b"])
    )

    def ingest() -> None:
        with store.ingest_session() as session:
            session.add("r1", rows)
            _finish(session, "r1")

    with pytest.raises(StoreError, match="cannot write the attempts") as raised:
        ingest()
    assert "CONTEXT" not in str(raised.value) and secret not in str(raised.value)
    assert store.list_runs() == []
