"""A run's cached analysis columns: the same arrays as the row read, and never stale.

Every test runs on SQLite and on PostgreSQL (tests/conftest.py::store_url). The cache is
kept for runs of `CACHE_MIN_ROWS` attempts or more; the tests lower that to a handful.
"""

from __future__ import annotations

import math
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import event, func, select, text, update

from evalsuite.store import AttemptRecord, RunRecord, Store
from evalsuite.store import _store as store_module
from evalsuite.store._column_cache import decode, encode
from evalsuite.store._schema import attempt_column_cache, attempts
from tests.store.test_migrations import V4_DUMP, _load


@pytest.fixture(autouse=True)
def _cache_small_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "CACHE_MIN_ROWS", 4)


def _run(run_id: str = "r1") -> RunRecord:
    return RunRecord(
        run_id=run_id,
        model="m",
        epochs=3,
        planned=18,
        status="running",
        source="evalsuite",
        started_at="2026-01-01T00:00:00+00:00",
        weights={},
        spec={},
    )


def _attempts(score_shift: float = 0.0) -> list[AttemptRecord]:
    """Six items x 3 epochs: every outcome, NaN scores, texts, missing labels, non-ASCII."""
    items = ["a", "B", "item-10", "item_2", "é", "z\U0001f600"]
    out = []
    for k, item in enumerate(items):
        for epoch in (3, 1, 2):
            kind = (k + epoch) % 3
            out.append(
                AttemptRecord(
                    item_id=item,
                    epoch=epoch,
                    stratum=f"s{k % 2}",
                    cluster=None if k % 3 == 0 else f"c{k % 2}",
                    item_hash=None if k == 1 else f"sha256:{k}",
                    outcome=("scored", "limit", "harness_error")[kind],  # type: ignore[arg-type]
                    limit_type="time" if kind == 1 else None,
                    score=(math.nan, 0.0, (0.1 * k + score_shift) % 1.0)[2 - kind if kind else 2],
                    reason="boom <&>" if kind == 2 else None,
                    retries=k % 2,
                    checks={"exact": k % 2 == 0} if kind == 0 else None,
                )
            )
    return out


def _stored(run_id: str = "r1", url: str = "") -> Store:
    store = Store(url)
    store.create_run(_run(run_id))
    store.record_attempts(run_id, _attempts())
    return store


def _blobs(store: Store) -> dict[str, int]:
    """Run id -> rev of every stored blob."""
    with store.engine.connect() as conn:
        rows = conn.execute(select(attempt_column_cache.c.run_id, attempt_column_cache.c.rev))
        return {r[0]: int(r[1]) for r in rows}


def _row_read(store: Store, run_id: str, columns: Any = store_module.ANALYSIS_COLUMNS) -> Any:
    """The columns as the row-by-row read gives them (the cache bypassed)."""
    wanted = [c for c in store_module.ATTEMPT_COLUMNS if c in columns and c != "run_id"]
    data = store._read_columns(run_id, wanted)
    assert data is not None
    return data


def _assert_same(frame: pd.DataFrame, store: Store, run_id: str) -> None:
    """`frame` is exactly the row read: values, dtypes, label order, missing values."""
    data = _row_read(store, run_id, frame.columns)
    expected = pd.DataFrame(data)
    if "run_id" in frame.columns:
        frame = frame.drop(columns="run_id")
    pd.testing.assert_frame_equal(frame, expected, check_exact=True, check_categorical=True)
    for name in frame.columns:
        assert frame[name].dtype == expected[name].dtype, name
        if isinstance(frame[name].dtype, pd.CategoricalDtype):
            assert list(frame[name].cat.categories) == list(expected[name].cat.categories)
            assert frame[name].cat.categories.dtype == expected[name].cat.categories.dtype
    full = store.attempts(run_id)  # and the full read, value for value
    for name in frame.columns:
        ours = frame[name].astype(object).where(frame[name].notna(), None).tolist()
        theirs = full[name].astype(object).where(full[name].notna(), None).tolist()
        assert ours == theirs, name


def test_the_cached_columns_are_the_row_read_exactly(store_url: str) -> None:
    store = _stored(url=store_url)
    first = store.attempt_columns("r1")
    assert set(_blobs(store)) == {"r1"}  # written by the first read
    statements: list[str] = []
    event.listen(store.engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    second = store.attempt_columns("r1")
    assert not any("GROUP BY" in s for s in statements)  # no row read: the blob
    pd.testing.assert_frame_equal(first, second, check_exact=True)
    _assert_same(second, store, "r1")
    compare = store.attempt_columns("r1", ("run_id", "item_id", "outcome", "score", "cluster"))
    _assert_same(compare, store, "r1")
    assert list(compare.columns) == ["run_id", "item_id", "cluster", "outcome", "score"]


def test_the_blob_round_trips_every_column_kind() -> None:
    data = {
        "item_id": pd.Categorical.from_codes(
            np.array([0, 0, 1]), categories=pd.Index(["b", "a\x00é"], dtype=object)
        ),
        "cluster": pd.Categorical.from_codes(
            np.array([-1, 0, -1]), categories=pd.Index(["c"], dtype=object)
        ),
        "epoch": np.array([1, 2, 1], dtype=np.int64),
        "score": np.array([-0.0, math.nan, 1e-300], dtype=np.float64),
        "reason": np.array([None, "x", "x"], dtype=object),
        "checks": np.array([None, None, None], dtype=object),
    }
    blob = encode(data)
    assert blob is not None
    back = decode(blob)
    assert list(back) == list(data)
    pd.testing.assert_frame_equal(pd.DataFrame(back), pd.DataFrame(data), check_exact=True)
    assert np.signbit(back["score"][0]) and back["reason"][0] is None
    # a value that is not plain text (another tool's number in a text column): not cached
    assert encode({"reason": np.array([None, 3], dtype=object)}) is None
    for not_none in (math.nan, pd.NA, pd.NaT):  # missing, but not as the store reads it
        assert encode({"reason": np.array([None, not_none, "x"], dtype=object)}) is None
    odd = pd.Categorical.from_codes(np.array([0]), categories=pd.Index([7], dtype=object))
    assert encode({"stratum": odd}) is None


@pytest.mark.parametrize("write", ["upsert_same_count", "new_attempt", "raw_sql", "delete"])
def test_any_write_to_the_run_s_attempts_drops_its_blob(store_url: str, write: str) -> None:
    store = _stored(url=store_url)
    other = Store(store_url)
    other.create_run(_run("r2"))
    other.record_attempts("r2", _attempts())
    store.attempt_columns("r1")
    store.attempt_columns("r2")
    assert set(_blobs(store)) == {"r1", "r2"}
    if write == "upsert_same_count":  # the same keys, other scores: the row count stays
        other.record_attempts("r1", _attempts(score_shift=0.05))
    elif write == "new_attempt":
        other.record_attempts(
            "r1", [AttemptRecord(item_id="new", epoch=1, stratum="s0", outcome="scored", score=1.0)]
        )
    elif write == "raw_sql":  # another tool's statement, not evalsuite's code
        with other.engine.begin() as conn:
            conn.execute(
                update(attempts)
                .where(attempts.c.run_id == "r1", attempts.c.item_id == "B")
                .values(stratum="s9")
            )
    else:
        with other.engine.begin() as conn:
            conn.execute(
                attempts.delete().where(attempts.c.run_id == "r1", attempts.c.item_id == "a")
            )
    assert set(_blobs(store)) == {"r2"}
    after = store.attempt_columns("r1")
    _assert_same(after, store, "r1")
    if write == "upsert_same_count":
        assert not np.array_equal(after["score"].to_numpy(), _column(store, "r2", "score"))
    if write == "raw_sql":
        assert "s9" in set(after["stratum"])
    assert "r1" in _blobs(store)  # written again from the rows as they are now


def _column(store: Store, run_id: str, name: str) -> Any:
    return store.attempt_columns(run_id)[name].to_numpy()


def test_a_write_committed_during_the_first_read_never_leaves_a_stale_blob(
    store_url: str,
) -> None:
    """Another process records an attempt between the reader's statements: the reader returns
    its own snapshot, and no blob of that snapshot is ever taken for the grown run."""
    store = _stored(url=store_url)
    writer = Store(store_url)
    added: list[bool] = []

    def add_one(conn: object, cursor: object, statement: str, *_: object) -> None:
        if "GROUP BY" in statement and not added:
            added.append(True)
            writer.record_attempts(
                "r1",
                [AttemptRecord(item_id="zz", epoch=1, stratum="s0", outcome="scored", score=1.0)],
            )

    event.listen(store.engine, "after_cursor_execute", add_one)
    first = store.attempt_columns("r1")
    assert added
    assert "zz" not in set(first["item_id"])  # one snapshot: the attempt came after it
    again = store.attempt_columns("r1")
    assert "zz" in set(again["item_id"])
    _assert_same(again, store, "r1")


def test_a_small_run_is_not_cached(store_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "CACHE_MIN_ROWS", 19)
    store = _stored(url=store_url)  # 18 attempts
    _assert_same(store.attempt_columns("r1"), store, "r1")
    assert _blobs(store) == {}


def test_a_blob_that_does_not_decode_is_read_again_from_the_rows(store_url: str) -> None:
    store = _stored(url=store_url)
    store.attempt_columns("r1")
    with store.engine.begin() as conn:
        conn.execute(update(attempt_column_cache).values(data=b"not a blob"))
    _assert_same(store.attempt_columns("r1"), store, "r1")
    with store.engine.connect() as conn:
        data = conn.execute(select(attempt_column_cache.c.data)).scalar_one()
    assert decode(bytes(data))  # rewritten


def test_a_blob_that_cannot_be_written_is_skipped(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read-only store (file or role): the columns are read, the command goes on."""
    from sqlalchemy.exc import OperationalError

    def refused(*_: object) -> None:
        raise OperationalError("INSERT", {}, Exception("attempt to write a readonly database"))

    store = _stored(url=store_url)
    monkeypatch.setattr(Store, "_write_cache", refused)
    _assert_same(store.attempt_columns("r1"), store, "r1")
    assert _blobs(store) == {}
    _assert_same(store.attempt_columns("r1"), store, "r1")


def test_a_busy_sqlite_writer_is_not_waited_for(tmp_path: Path) -> None:
    """SQLite: a writer holding the lock makes the first read skip the blob at once."""
    url = f"sqlite:///{tmp_path / 'store.sqlite'}"
    store = _stored(url=url)
    holder = Store(url)
    with holder.engine.connect() as conn:
        conn.exec_driver_sql("BEGIN IMMEDIATE")  # the write lock, held
        started = time.monotonic()
        first = store.attempt_columns("r1")
        waited = time.monotonic() - started
        conn.rollback()
    assert waited < 30  # not the store's 60 s wait for the lock
    _assert_same(first, store, "r1")
    assert _blobs(store) == {}
    store.attempt_columns("r1")
    assert "r1" in _blobs(store)


def test_a_store_upgraded_from_an_older_version_gets_the_triggers(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "CACHE_MIN_ROWS", 2)
    url = _load(store_url, V4_DUMP)
    store = Store(url)
    with store.engine.connect() as conn:
        run_id = conn.execute(select(attempts.c.run_id)).scalars().first()
        n = conn.execute(select(func.count()).where(attempts.c.run_id == run_id)).scalar_one()
    assert run_id is not None and n >= 2
    store.attempt_columns(run_id)
    assert run_id in _blobs(store)
    with store.engine.begin() as conn:
        conn.execute(
            text("UPDATE attempts SET retries = retries + 1 WHERE run_id = :r"), {"r": run_id}
        )
    assert run_id not in _blobs(store)
    _assert_same(store.attempt_columns(run_id), store, run_id)


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """The parallel read is SQLite's (PostgreSQL's readers each cache as they read)."""
    return f"sqlite:///{tmp_path / 'store.sqlite'}"


def _three_runs(url: str) -> Store:
    store = _stored("r1", url)
    for run_id, shift in (("r2", 0.3), ("r3", 0.6)):
        store.create_run(_run(run_id))
        store.record_attempts(run_id, _attempts(shift))
    return store


@pytest.fixture
def forkable(monkeypatch: pytest.MonkeyPatch) -> None:
    """A second process is forked beside pytest-xdist's threads (the check protects the CLI)."""
    if sys.platform != "linux":
        pytest.skip("the second reading process is forked on Linux only")
    monkeypatch.setattr(store_module, "forkable", lambda: True)


@pytest.mark.usefixtures("forkable")
def test_runs_never_read_are_cached_two_at_once_and_equal_the_row_read(sqlite_url: str) -> None:
    store = _three_runs(sqlite_url)
    store.attempt_columns("r3")  # r3 read before: cached already
    statements: list[str] = []
    event.listen(store.engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    assert store.cache_columns(["r1", "r2", "r3", "r1"]) == ["r1", "r2"]
    # r1 read here, r2 in the forked process (no row statement of r2 runs in this one)
    assert sum("GROUP BY" in s for s in statements) == 1
    assert set(_blobs(store)) == {"r1", "r2", "r3"}
    statements.clear()
    for run_id in ("r1", "r2", "r3"):
        _assert_same(store.attempt_columns(run_id), store, run_id)
    assert store.cache_columns(["r1", "r2"]) == []  # nothing left to read


@pytest.mark.usefixtures("forkable")
def test_a_write_committed_during_the_parallel_read_caches_nothing(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process records an attempt while the runs are read: no blob is written, so no
    blob of the older snapshot is ever taken for the grown run."""
    store = _three_runs(sqlite_url)
    writer = Store(sqlite_url)
    parent = os.getpid()
    read = Store._read_columns

    def read_then_write(self: Store, run_id: str, wanted: list[str], conn: Any = None) -> Any:
        out = read(self, run_id, wanted, conn)
        if os.getpid() == parent and run_id == "r1":
            writer.record_attempts(
                "r2",
                [AttemptRecord(item_id="zz", epoch=1, stratum="s0", outcome="scored", score=1.0)],
            )
        return out

    monkeypatch.setattr(Store, "_read_columns", read_then_write)
    assert store.cache_columns(["r1", "r2"]) == []
    assert _blobs(store) == {}
    monkeypatch.setattr(Store, "_read_columns", read)
    grown = store.attempt_columns("r2")
    assert "zz" in set(grown["item_id"])
    _assert_same(grown, store, "r2")


@pytest.mark.usefixtures("forkable")
def test_a_failed_second_process_leaves_its_runs_to_attempt_columns(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _three_runs(sqlite_url)
    parent = os.getpid()
    encoded = Store._read_encoded

    def fail_in_child(self: Store, conn: Any, run_id: str) -> Any:
        if os.getpid() != parent:
            raise RuntimeError("the child fails")
        return encoded(self, conn, run_id)

    monkeypatch.setattr(Store, "_read_encoded", fail_in_child)
    assert store.cache_columns(["r1", "r2"]) == ["r1"]
    monkeypatch.setattr(Store, "_read_encoded", encoded)
    assert set(_blobs(store)) == {"r1"}
    _assert_same(store.attempt_columns("r2"), store, "r2")  # read from its rows, then cached
    assert set(_blobs(store)) == {"r1", "r2"}


def test_no_parallel_read_without_a_fork_one_run_or_postgresql(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _three_runs(store_url)
    monkeypatch.setattr(store_module, "forkable", lambda: False)
    assert store.cache_columns(["r1", "r2"]) == []
    monkeypatch.setattr(store_module, "forkable", lambda: True)
    assert store.cache_columns(["r1"]) == []
    if store.engine.dialect.name == "postgresql":
        assert store.cache_columns(["r1", "r2"]) == []  # each process caches as it reads
    assert _blobs(store) == {}
