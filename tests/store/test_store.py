from __future__ import annotations

import math
import threading
from pathlib import Path

import pandas as pd
import pytest

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
def store(tmp_path: Path) -> Store:
    return Store(f"sqlite:///{tmp_path / 's.sqlite'}")


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


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'c.sqlite'}"
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


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'n.sqlite'}"
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


def test_many_processes_opening_a_new_store_at_once(tmp_path: Path) -> None:
    import subprocess
    import sys

    url = f"sqlite:///{tmp_path / 'race.sqlite'}"
    code = (
        "import sys; from evalsuite.store import Store; s = Store(sys.argv[1]); "
        "print(s.schema_version)"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, url],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(6)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 6, [o[1][-300:] for o in outs]
    assert {o[0].strip() for o in outs} == {str(SCHEMA_VERSION)}
