from __future__ import annotations

import math
import threading
from pathlib import Path

import pandas as pd
import pytest
from sqlalchemy import event

from evalsuite.errors import NotFoundError, StoreError, UsageError
from evalsuite.store import (
    ATTEMPT_COLUMNS,
    SCHEMA_VERSION,
    AttemptRecord,
    OutcomeRecord,
    RunRecord,
    Store,
    run_health,
)
from evalsuite.store._schema import attempts
from tests import zygote
from tests.helpers import SLOW_ON_POSTGRESQL, finish, wait_until


def _run(run_id: str = "r1", planned: int = 4) -> RunRecord:
    return RunRecord(
        run_id=run_id,
        model="m",
        epochs=2,
        planned=planned,
        status="running",
        source="evalsuite",
        started_at="2026-01-01T00:00:00+00:00",
        weights={"a": 1.0},
        spec={"x": 1},
    )


def _attempt(
    item: str, epoch: int, outcome: str = "scored", score: float = 1.0, **kw: object
) -> AttemptRecord:
    return AttemptRecord(
        item_id=item,
        epoch=epoch,
        stratum="a",
        outcome=outcome,  # type: ignore[arg-type]
        score=score,
        **kw,
    )  # type: ignore[arg-type]


@pytest.fixture
def store(store_url: str) -> Store:
    """A new store on each backend: SQLite, and PostgreSQL (tests/conftest.py::store_url)."""
    return Store(store_url)


def test_round_trip_keeps_full_precision_and_nan(store: Store) -> None:
    store.create_run(_run())
    store.record_attempts(
        "r1",
        [
            _attempt("i1", 1, score=1 / 3, checks={"fixed": True}),
            _attempt("i1", 2, outcome="limit", score=0.0, limit_type="message"),
            _attempt("i2", 1, outcome="harness_error", score=math.nan, reason="HarnessFault: x"),
        ],
    )
    frame = store.attempts("r1")
    assert list(frame.columns) == ATTEMPT_COLUMNS
    assert frame.loc[0, "score"] == 1 / 3
    assert math.isnan(frame.loc[2, "score"])
    assert frame.loc[0, "checks"] == '{"fixed": true}'
    run = store.get_run("r1")
    assert run.weights == {"a": 1.0}
    assert run.spec == {"x": 1}
    assert store.schema_version == SCHEMA_VERSION


def test_upsert_never_duplicates(store: Store) -> None:
    store.create_run(_run())
    store.record_attempts("r1", [_attempt("i1", 1, score=0.0)])
    store.record_attempts("r1", [_attempt("i1", 1, score=1.0)])
    frame = store.attempts("r1")
    assert len(frame) == 1
    assert frame.loc[0, "score"] == 1.0


def test_a_harness_error_cannot_carry_a_score(store: Store) -> None:
    store.create_run(_run())
    with pytest.raises(UsageError, match="excluded, never scored"):
        store.record_attempts("r1", [_attempt("i", 1, outcome="harness_error", score=0.0)])
    with pytest.raises(UsageError, match="only harness errors"):
        store.record_attempts("r1", [_attempt("i", 1, outcome="scored", score=math.nan)])


def test_get_run_by_prefix_and_errors(store: Store) -> None:
    store.create_run(_run("20260101-aaaa"))
    store.create_run(_run("20260101-aabb"))
    assert store.get_run("20260101-aaaa").run_id == "20260101-aaaa"
    with pytest.raises(UsageError, match="ambiguous"):
        store.get_run("20260101-aa")
    with pytest.raises(NotFoundError):
        store.get_run("zzz")


def test_concurrent_writers_lose_nothing(store_url: str) -> None:
    url = store_url
    Store(url).create_run(_run("a", planned=400))
    Store(url).create_run(_run("b", planned=400))

    def write(run_id: str) -> None:
        store = Store(url)
        for i in range(200):
            store.record_attempts(run_id, [_attempt(f"i{i}", 1), _attempt(f"i{i}", 2)])

    threads = [threading.Thread(target=write, args=(r,)) for r in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    store = Store(url)
    assert len(store.attempts("a")) == 400
    assert len(store.attempts("b")) == 400


def test_newer_schema_is_refused(store_url: str) -> None:
    url = store_url
    store = Store(url)
    with store.engine.begin() as conn:
        from sqlalchemy import update

        from evalsuite.store._schema import meta

        conn.execute(update(meta).values(value=str(SCHEMA_VERSION + 1)))
    with pytest.raises(StoreError, match="newer than this evalsuite"):
        Store(url)


def test_outcomes_are_deduplicated_by_fingerprint(store: Store) -> None:
    rec = OutcomeRecord(model="m1", metric="success", value=0.7, n=100)
    assert store.add_outcomes([(rec, "fp1"), (rec, "fp1")]) == 1
    assert store.add_outcomes([(rec, "fp1")]) == 0
    assert len(store.outcomes("success")) == 1


def test_health_counts_missing_planned_attempts_as_errors() -> None:
    frame = pd.DataFrame(
        {
            "outcome": ["scored", "limit", "harness_error"],
            "limit_type": [None, "time", None],
            "reason": [None, "time limit", "HarnessFault: x"],
            "retries": [0, 0, 2],
        }
    )
    health = run_health(frame, planned=5, threshold=0.05)
    assert health.harness_errors == 3
    assert health.error_rate == 3 / 5
    assert health.valid is False
    assert health.errors_by_kind == {"HarnessFault": 1, "not run": 2}
    assert health.limits_by_type == {"time": 1}
    assert run_health(frame.iloc[:2], planned=2, threshold=0.05).valid is True


@SLOW_ON_POSTGRESQL
def test_many_processes_opening_a_new_store_at_once(store_url: str) -> None:
    import subprocess
    import sys

    url = store_url
    code = (
        "import sys; from evalsuite.store import Store; s = Store(sys.argv[1]); "
        "print(s.schema_version)"
    )
    procs = [
        zygote.popen(  # a process forked by the tests' zygote (tests/zygote.py)
            [sys.executable, "-c", code, url],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)  # four processes race to create the schema (six before: 4 s more)
    ]
    outs = [finish(p) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, [o[1][-300:] for o in outs]
    assert {o[0].strip() for o in outs} == {str(SCHEMA_VERSION)}


# issue 10, item 8: bounded batches -------------------------------------------------------


PG_BIND_LIMIT = 65_535
"""PostgreSQL's bound parameters per statement (the protocol counts them in 16 bits)."""


def _bind_limit(store: Store) -> int:
    """The most variables one statement of `store`'s database may bind: PostgreSQL's 65,535,
    SQLite's SQLITE_MAX_VARIABLE_NUMBER as this build sets it (32,766 upstream; 250,000 in
    Debian's and Ubuntu's builds)."""
    if store.engine.dialect.name != "sqlite":
        return PG_BIND_LIMIT
    import sqlite3

    with store.engine.connect() as conn:
        driver = conn.connection.driver_connection
        assert isinstance(driver, sqlite3.Connection)
        return driver.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)


def test_record_attempts_of_any_size_in_bounded_batches(store: Store) -> None:
    from sqlalchemy import event

    from evalsuite.store._store import BATCH_ROWS

    # enough rows that one multi-row INSERT of them would bind more variables than the
    # database allows: 5,000 rows (80,000 variables) on PostgreSQL, 16,000 (256,000) on an
    # SQLite built with 250,000 (was 40,000 rows on both)
    columns = len(attempts.columns)
    limit = _bind_limit(store)
    n = max(5_000, -(-(limit // columns + 1) // 1_000) * 1_000)
    assert n * columns > limit
    assert n * columns > PG_BIND_LIMIT and n > 2 * BATCH_ROWS
    store.create_run(_run("big", planned=n))
    sizes: list[int] = []

    @event.listens_for(store.engine, "before_cursor_execute")
    def _count(conn, cursor, statement, parameters, context, executemany) -> None:  # type: ignore[no-untyped-def]
        if statement.lstrip().upper().startswith("INSERT INTO ATTEMPTS"):
            # SQLite: one executemany per batch; PostgreSQL: SQLAlchemy's multi-row VALUES
            # pages, whose parameters are one dict of 16 values per row
            sizes.append(len(parameters) if executemany else len(parameters) // columns)

    written = store.record_attempts(
        "big", [_attempt(f"i{i:05d}", 1, score=i % 2) for i in range(n)]
    )
    assert written == n
    frame = store.attempts("big")
    assert len(frame) == n
    assert frame["score"].sum() == n // 2
    assert sum(sizes) == n
    assert max(sizes) <= BATCH_ROWS


def test_a_bad_record_in_a_late_batch_writes_nothing(store: Store) -> None:
    from evalsuite.store._store import BATCH_ROWS

    store.create_run(_run("r1"))
    records = [_attempt(f"i{i}", 1) for i in range(BATCH_ROWS * 2)]
    records.append(_attempt("bad", 1, outcome="harness_error", score=0.0))
    with pytest.raises(UsageError, match="never scored"):
        store.record_attempts("r1", records)
    assert len(store.attempts("r1")) == 0  # one transaction: the good batches are rolled back


def test_repeated_keys_in_one_call_keep_the_last(store: Store) -> None:
    store.create_run(_run())
    store.record_attempts("r1", [_attempt("i1", 1, score=0.0), _attempt("i1", 1, score=1.0)])
    assert list(store.attempts("r1")["score"]) == [1.0]


# issue 10, item 9: errors never carry SQL or its parameters ------------------------------

SECRET = "do-not-print-7f3a"


def test_store_errors_name_no_sql_and_no_parameters(store: Store) -> None:
    import dataclasses

    run = dataclasses.replace(_run("dup"), model=SECRET, spec={"note": SECRET})
    store.create_run(run)
    with pytest.raises(StoreError) as duplicate:
        store.create_run(run)
    store.create_run(_run("r1"))
    with pytest.raises(StoreError) as not_null:
        store.record_attempts(
            "r1",
            [AttemptRecord(item_id=SECRET, epoch=1, stratum=None, outcome="scored", score=1.0)],  # type: ignore[arg-type]
        )
    with pytest.raises(StoreError) as outcome:
        store.add_outcomes([(OutcomeRecord(model=None, metric=SECRET, value=1.0), SECRET)])  # type: ignore[arg-type]
    for raised in (duplicate, not_null, outcome):
        message = str(raised.value)
        assert SECRET not in message
        assert "[SQL" not in message
        assert "INSERT" not in message.upper()
        assert "parameters" not in message
        assert len(message) < 400
        assert "constraint" in message  # the database's one-line reason is kept


def test_a_postgresql_detail_line_with_key_values_is_not_shown(store: Store) -> None:
    from sqlalchemy.exc import IntegrityError as SAIntegrityError

    driver_error = Exception(
        'duplicate key value violates unique constraint "outcomes_fingerprint_key"\n'
        f"DETAIL:  Key (fingerprint)=({SECRET}) already exists."
    )
    with pytest.raises(StoreError) as raised, store._errors("record outcomes"):
        raise SAIntegrityError("INSERT INTO outcomes ...", {"fingerprint": SECRET}, driver_error)
    assert SECRET not in str(raised.value)
    assert "violates unique constraint" in str(raised.value)


def test_a_password_in_the_store_url_is_never_printed() -> None:
    with pytest.raises(StoreError) as raised:
        Store(f"postgresql://evals:{SECRET}@127.0.0.1:1/evals")
    assert SECRET not in str(raised.value)
    assert "127.0.0.1" in str(raised.value)


@pytest.mark.parametrize("url", ["garbage", f"evals:{SECRET}@db.example.org/evals", "sqlite:x.db"])
def test_a_store_url_that_does_not_parse_says_what_a_url_looks_like(url: str) -> None:
    """`EVALSUITE_STORE=garbage` said only "cannot open it: ArgumentError"."""
    with pytest.raises(StoreError, match="not a database URL") as raised:
        Store(url)
    message = str(raised.value)
    assert "sqlite:////" in message and "postgresql://" in message and "EVALSUITE_STORE" in message
    assert "ArgumentError" not in message and SECRET not in message


# issue 10, item 10: one run per content, even under concurrent ingests -------------------

_INGEST_AFTER_GO = """
import sys, time, pathlib
from evalsuite.store import AttemptRecord, RunRecord, Store
url, ready, go, run_id = sys.argv[1:5]
store = Store(url)
records = [
    AttemptRecord(item_id=f"i{i}", epoch=e, stratum="s", outcome="scored", score=float(i % 2))
    for i in range(300) for e in (1, 2)
]
run = RunRecord(run_id=run_id, model="m", epochs=2, planned=600, status="complete",
                source="csv", started_at="2026-01-01T00:00:00+00:00")
pathlib.Path(ready).touch()
while not pathlib.Path(go).exists():
    time.sleep(0.005)
stored = store.add_ingested_run(run, records, identity={})
print(stored.run_id or "skipped", ",".join(stored.existing))
"""


@SLOW_ON_POSTGRESQL
def test_concurrent_ingests_of_the_same_content_store_it_once(
    tmp_path: Path, store_url: str
) -> None:
    import subprocess
    import sys

    url = store_url
    Store(url)
    go = tmp_path / "go"
    procs = [
        zygote.popen(  # a process forked by the tests' zygote (tests/zygote.py)
            [
                sys.executable,
                "-c",
                _INGEST_AFTER_GO,
                url,
                str(tmp_path / f"r{n}"),
                str(go),
                f"run-{n}",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(3)  # three ingests released at once by `go` (five before)
    ]
    wait_until(  # a process that ended early counts: its exit code and stderr tell why
        lambda: all(
            (tmp_path / f"r{n}").exists() or p.poll() is not None for n, p in enumerate(procs)
        ),
        "the ingest processes are ready",
        interval_s=0.01,
    )
    go.touch()
    outs = [finish(p) for p in procs]
    assert [p.returncode for p in procs] == [0] * 3, [err[-500:] for _, err in outs]
    results = [out.split() for out, _ in outs]
    winners = [r[0] for r in results if r[0] != "skipped"]
    assert len(winners) == 1
    assert all(r[1] == winners[0] for r in results if r[0] == "skipped")
    store = Store(url)
    assert [r.run_id for r in store.list_runs()] == winners
    assert len(store.attempts(winners[0])) == 600


# issue 12: the same order on every backend ------------------------------------------------


def test_attempts_come_in_code_point_order_on_every_backend(store_url: str) -> None:
    # a PostgreSQL database with a language collation sorts "a" before "B"; SQLite, and the
    # seeded analyses that draw items in this order, need "B" before "a"
    if store_url.startswith("postgresql"):
        from tests.pg import PgServer

        server = PgServer.of_url(store_url)
        store_url = server.new_database(icu_locale="en-US")
    store = Store(store_url)
    store.create_run(_run())
    items = ["a", "B", "item-10", "item_2", "é", "z"]
    store.record_attempts("r1", [_attempt(i, 1) for i in reversed(items)])
    assert store.attempts("r1")["item_id"].tolist() == sorted(items)


def test_a_resumed_run_re_records_without_duplicates(store: Store) -> None:
    store.create_run(_run(planned=40))
    store.record_attempts("r1", [_attempt(f"i{i:02d}", 1, score=0.0) for i in range(25)])
    # the resume re-runs the last attempts it cannot prove complete, then the rest
    store.record_attempts("r1", [_attempt(f"i{i:02d}", 1, score=1.0) for i in range(20, 40)])
    frame = store.attempts("r1")
    assert len(frame) == 40
    assert frame["score"].tolist() == [0.0] * 20 + [1.0] * 20
    assert store.attempt_keys("r1") == {(f"i{i:02d}", 1) for i in range(40)}


_WRITER = """
import sys
from evalsuite.store import AttemptRecord, Store
url, run_id, first = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = Store(url)
for start in range(first, first + 200, 10):
    store.record_attempts(run_id, [
        AttemptRecord(item_id=f"i{i:04d}", epoch=1, stratum="s", outcome="scored", score=1.0)
        for i in range(start, start + 10)
    ])
"""


def test_concurrent_writer_processes_lose_nothing(store_url: str) -> None:
    import subprocess
    import sys

    store = Store(store_url)
    store.create_run(_run("shared", planned=600))
    procs = [
        zygote.popen(  # a process forked by the tests' zygote (tests/zygote.py)
            [sys.executable, "-c", _WRITER, store_url, "shared", str(first)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for first in (0, 200, 400)  # three writers (four before: each child costs ~2 s)
    ]
    errors = [finish(p)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * 3, [e[-500:] for e in errors]
    assert store.attempt_keys("shared") == {(f"i{i:04d}", 1) for i in range(600)}


def test_shards_of_a_run_create_it_once_and_record_their_states(store_url: str) -> None:
    """Sharded runs (docs/design/sharded-runs.md): one run row whoever creates it first,
    and a row per shard that moves running -> interrupted -> running -> complete."""
    barrier = threading.Barrier(4)
    got: list[RunRecord] = []

    def create(n: int) -> None:
        mine = Store(store_url)
        barrier.wait()
        got.append(mine.create_run_if_absent(_run("sh", planned=10 + n)))

    threads = [threading.Thread(target=create, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    store = Store(store_url)
    assert [r.run_id for r in store.list_runs()] == ["sh"]
    assert len({r.planned for r in got}) == 1  # every caller got the one stored row
    assert store.find_run("s") is None  # exact ids only, no prefix
    assert store.shards("sh") == []
    store.set_shard("sh", 2, 2, "running", host="h2")
    store.set_shard("sh", 1, 2, "running", host="h1")
    store.set_shard("sh", 2, 2, "interrupted")
    states = {s.shard: s for s in store.shards("sh")}
    assert [(s.shard, s.status, s.host) for s in states.values()] == [
        (1, "running", "h1"),
        (2, "interrupted", "h2"),
    ]
    store.set_shard("sh", 2, 2, "running", host="h3")
    store.set_shard("sh", 2, 2, "complete")
    final = store.shards("sh")[1]
    assert (final.status, final.host, final.shards) == ("complete", "h3", 2)
    assert final.finished_at is not None
    store.delete_run("sh")
    assert store.shards("sh") == []


def test_a_table_created_by_another_process_at_the_same_moment_is_retried(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL reports that race as DuplicateTable, a ProgrammingError: opening retries."""
    from sqlalchemy.exc import ProgrammingError

    real = Store._migrate_once
    calls = []

    def racing(self: Store) -> tuple[int | None, int]:
        calls.append(1)
        if len(calls) == 1:
            cause = Exception('relation "meta" already exists')
            raise ProgrammingError("CREATE TABLE meta", {}, cause)
        return real(self)

    monkeypatch.setattr(Store, "_migrate_once", racing)
    assert Store(store_url).schema_version == SCHEMA_VERSION
    assert len(calls) == 2


def _columns_as_lists(frame: pd.DataFrame) -> dict[str, list[object]]:
    return {
        name: frame[name].astype(object).where(frame[name].notna(), None).tolist()
        for name in frame.columns
    }


def test_attempt_columns_are_the_full_read_on_every_backend(store_url: str) -> None:
    """Item ids one per item (spread by count), outcomes as codes: the same columns as
    `attempts`, in code point order also under a language collation, and an outcome label
    the store never writes (put there by another tool) read as text."""
    if store_url.startswith("postgresql"):
        from tests.pg import PgServer

        store_url = PgServer.of_url(store_url).new_database(icu_locale="en-US")
    store = Store(store_url)
    store.create_run(_run())
    items = ["a", "B", "item-10", "item_2", "é", "z"]
    outcomes = ["limit", "scored", "harness_error"]
    store.record_attempts(
        "r1",
        [
            _attempt(
                i, e, outcome=outcomes[(k + e) % 3], score=math.nan if (k + e) % 3 == 2 else 0.5
            )
            for k, i in enumerate(reversed(items))
            for e in (2, 1, 3)
            if not (i == "z" and e == 3)
        ],
    )
    full = store.attempts("r1")
    columns = store.attempt_columns("r1")
    assert columns["item_id"].tolist()[::3] == sorted(items)
    assert _columns_as_lists(columns) == _columns_as_lists(full[columns.columns])
    # categories in order of first appearance, as a factorisation of the text gives them
    assert list(columns["outcome"].cat.categories) == list(pd.unique(full["outcome"]))
    with store.engine.begin() as conn:
        conn.execute(attempts.update().where(attempts.c.item_id == "B").values(outcome="cancelled"))
    assert _columns_as_lists(store.attempt_columns("r1")) == _columns_as_lists(
        store.attempts("r1")[columns.columns]
    )


def test_attempt_columns_read_again_when_the_run_grows_meanwhile(store_url: str) -> None:
    """Attempts recorded between the per-item and the per-row statement: read again."""
    store = Store(store_url)
    store.create_run(_run())
    store.record_attempts("r1", [_attempt(f"i{k}", 1) for k in range(5)])
    writer = Store(store_url)
    added = []

    def add_one(conn: object, cursor: object, statement: str, *_: object) -> None:
        if "GROUP BY" in statement and not added:  # the next statement sees a new attempt
            added.append(True)
            writer.record_attempts("r1", [_attempt("i9", 1)])

    event.listen(store.engine, "after_cursor_execute", add_one)
    columns = store.attempt_columns("r1")
    assert added
    assert columns["item_id"].tolist() == [f"i{k}" for k in (0, 1, 2, 3, 4, 9)]
    assert _columns_as_lists(columns) == _columns_as_lists(store.attempts("r1")[columns.columns])


def test_attempt_columns_give_up_on_a_run_that_keeps_changing(store_url: str) -> None:
    store = Store(store_url)
    store.create_run(_run())
    store.record_attempts("r1", [_attempt("i0", 1)])
    writer = Store(store_url)
    grown = iter(range(100, 200))

    def add_one(conn: object, cursor: object, statement: str, *_: object) -> None:
        if "GROUP BY" in statement:
            writer.record_attempts("r1", [_attempt(f"i{next(grown)}", 1)])

    event.listen(store.engine, "after_cursor_execute", add_one)
    with pytest.raises(StoreError, match="changed while they were read") as caught:
        store.attempt_columns("r1")
    assert "run the command again" in str(caught.value)


def test_an_adaptive_summary_is_kept_with_its_run(store: Store) -> None:
    store.create_run(_run("r1"))
    assert store.adaptive("r1") is None
    summary = {"method": "betting_cs_hedged", "ci": [0.25, math.nan], "rounds": []}
    store.set_adaptive("r1", summary)
    store.set_adaptive("r1", summary | {"calls": 7})  # replaced, never duplicated
    got = store.adaptive("r1")
    assert got is not None and got["calls"] == 7 and math.isnan(got["ci"][1])
    with pytest.raises(NotFoundError, match="no run 'nope'"):
        store.set_adaptive("nope", summary)
    store.delete_run("r1")
    assert store.adaptive("r1") is None
