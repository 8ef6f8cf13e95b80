"""A run's own cost around the attempts (docs/design/run-speed.md, "Per-run fixed cost").

Speed is measured in benchmarks/bench_run_cost.py; these tests pin the behaviour behind it:
the attempts upsert is built once per store and reused for every attempt the run's hook
writes, and a run records the same attempts, scores and health as with the upsert built
anew at every write.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Connection

from evalsuite.store._store import Store
from tests.helpers import Project, json_out
from tests.run.conftest import STABLE, make_probe_project


def _run(project: Project) -> dict[str, Any]:
    result = project.invoke(
        "run", "probe@1.0.0", "--model", "fakeagent/x", "--json", "--no-progress"
    )
    assert result.exit_code == 0, result.stderr
    return json_out(result)


def test_a_runs_attempt_writes_reuse_one_upsert_statement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_probe_project(tmp_path, n_per_stratum=3)
    upserts: list[Any] = []
    execute = Connection.execute

    def spying_execute(self: Connection, statement: Any, *args: Any, **kwargs: Any) -> Any:
        if getattr(statement, "table", None) is not None and statement.table.name == "attempts":
            upserts.append(statement)
        return execute(self, statement, *args, **kwargs)

    monkeypatch.setattr(Connection, "execute", spying_execute)
    out = _run(project)
    stored = project.store().attempts(out["run_id"])
    assert len(stored) >= 2
    # the hook writes each attempt as it finishes: one statement per attempt, one object
    assert len(upserts) >= len(stored)
    assert len({id(s) for s in upserts}) == 1, f"{len({id(s) for s in upserts})} statements"


def test_a_run_stores_the_same_attempts_scores_and_health_with_the_reused_upsert(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reused = _run(reused_project := make_probe_project(tmp_path / "a", n_per_stratum=3))
    with monkeypatch.context() as patch:  # as before: the upsert built at every write
        patch.setattr(Store, "_upsert_statement", Store._build_upsert_statement)
        rebuilt = _run(rebuilt_project := make_probe_project(tmp_path / "b", n_per_stratum=3))
    for key in ("valid", "error_rate", "mean", "planned"):
        if key in reused:
            assert reused[key] == rebuilt[key], key
    a = reused_project.store().attempts(reused["run_id"]).sort_values(["item_id", "epoch"])
    b = rebuilt_project.store().attempts(rebuilt["run_id"]).sort_values(["item_id", "epoch"])
    assert len(a) == len(b) >= 2
    assert a[STABLE].reset_index(drop=True).equals(b[STABLE].reset_index(drop=True))


def test_an_attempt_written_again_still_replaces_the_stored_one(tmp_path: Path) -> None:
    from evalsuite.store import AttemptRecord, RunRecord

    store = Store(f"sqlite:///{tmp_path / 'store.db'}")
    store.create_run(
        RunRecord(
            run_id="r1",
            model="m",
            epochs=1,
            planned=1,
            status="running",
            source="evalsuite",
            started_at="2026-01-01T00:00:00+00:00",
            error_threshold=0.05,
        )
    )
    first = AttemptRecord(
        item_id="i1", epoch=1, stratum="s", outcome="scored", score=0.0, item_hash="h", seed=1
    )
    second = AttemptRecord(
        item_id="i1", epoch=1, stratum="s", outcome="scored", score=1.0, item_hash="h", seed=1
    )
    store.record_attempts("r1", [first])
    store.record_attempts("r1", [second])  # the same (reused) statement: still an upsert
    frame = store.attempts("r1")
    assert len(frame) == 1
    assert float(frame["score"].iloc[0]) == 1.0
