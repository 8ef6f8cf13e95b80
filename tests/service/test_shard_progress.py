"""Each shard's progress, read from the store's attempts (evalsuite/service/_shard_progress.py).

The done counts must place every stored attempt in the shard that runs it
(`evalsuite.run.Shard.share` of the runner's plan), or `run --executor ray` and `runs` would
show progress the shards do not make.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from evalsuite.run import Shard
from evalsuite.service import plan_item_ids, shard_progress, shards_line
from evalsuite.store import RunRecord, ShardRow


class _Manifest:
    """The one thing `plan_item_ids` reads of a manifest summary: its items."""

    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.items = items

    def record(self) -> dict[str, Any]:
        return {"items": self.items}


def _record(items: int, epochs: int, shards: int, **spec: Any) -> RunRecord:
    return RunRecord(
        run_id="r",
        model="m",
        epochs=epochs,
        planned=items * epochs,
        status="running",
        source="evalsuite",
        started_at="2026-12-06T00:00:00+00:00",
        error_threshold=0.05,
        suite="s",
        version="1.0.0",
        split="dev",
        spec={"shards": shards, **spec},
    )


@pytest.mark.parametrize(("n_items", "epochs", "shards"), [(7, 3, 2), (5, 1, 3), (4, 2, 9)])
def test_every_attempt_counts_for_the_shard_whose_share_holds_it(
    n_items: int, epochs: int, shards: int
) -> None:
    ids = [f"item-{n:02d}" for n in reversed(range(n_items))]  # unsorted in the manifest
    manifest = _Manifest(
        [{"id": i, "split": "dev"} for i in ids] + [{"id": "held-1", "split": "holdout"}]
    )
    record = _record(n_items, epochs, shards)
    item_ids = plan_item_ids(record, manifest)  # type: ignore[arg-type]
    assert item_ids == sorted(ids)
    plan = [(i, e) for i in sorted(ids) for e in range(1, epochs + 1)]
    # every third attempt stored, one of them a harness error
    stored = plan[::3]
    outcomes = [(i, e, "harness_error" if k == 0 else "scored") for k, (i, e) in enumerate(stored)]
    states = [ShardRow("r", 1, shards, "running", "node-1", "t", None)]
    progress = shard_progress(record, shards, item_ids, outcomes, states)
    for p in progress:
        share = Shard(p.shard, shards).share(plan)
        assert p.planned == len(share)
        assert p.done == len(set(share) & set(stored))
    assert [p.status for p in progress] == ["running"] + ["waiting"] * (shards - 1)
    assert progress[0].host == "node-1"
    assert sum(p.errors or 0 for p in progress) == 1
    assert sum(p.planned for p in progress) == len(plan)


def test_a_limited_run_plans_the_first_items_by_id() -> None:
    manifest = _Manifest([{"id": f"i{n}", "split": "dev"} for n in (5, 3, 9, 1)])
    record = _record(2, 2, 2, limit_items=2)
    assert plan_item_ids(record, manifest) == ["i1", "i3"]  # type: ignore[arg-type]


def test_a_plan_that_does_not_match_the_run_gives_no_done_counts() -> None:
    manifest = _Manifest([{"id": "a", "split": "dev"}])
    record = _record(3, 1, 2)  # three items planned; the manifest has one
    assert plan_item_ids(record, manifest) is None  # type: ignore[arg-type]
    progress = shard_progress(record, 2, None, [("a", 1, "scored")], [])
    assert [(p.done, p.planned, p.errors) for p in progress] == [(None, 2, None), (None, 1, None)]
    assert shards_line(progress) == "0/2 shards complete"
    assert progress[0].line() == "shard 1/2 waiting: ?/2 attempts"


def test_the_line_sums_the_shards() -> None:
    record = _record(2, 2, 2)
    rows = [ShardRow("r", 1, 2, "complete", None, "t", "t")]
    attempts = [(i, e, "scored") for i, e in itertools.product(["a", "b"], [1, 2])][:3]
    progress = shard_progress(record, 2, ["a", "b"], attempts, rows)
    assert shards_line(progress) == "1/2 shards complete · 3/4 attempts · 0 error(s)"
    assert progress[1].line() == "shard 2/2 waiting: 1/2 attempts, 0 error(s)"


def test_the_fast_reader_and_the_store_give_the_same_shard_rows(tmp_path: Path) -> None:
    """`RunReader.shard_rows` reads SQLite with sqlite3, any other store through `Store`
    (`shards`, `attempt_outcomes`): both must give the same rows."""
    import math

    from evalsuite.store import AttemptRecord, RunReader, Store

    url = f"sqlite:///{tmp_path / 'store.sqlite'}"
    store = Store(url)
    store.create_run(_record(2, 2, 2))
    store.set_shard("r", 2, 2, "running", host="node-2")
    store.record_attempts(
        "r",
        [
            AttemptRecord(
                item_id=item,
                epoch=epoch,
                stratum="s",
                outcome=outcome,
                score=math.nan if outcome == "harness_error" else 1.0,
                item_hash="h",
                seed=epoch,
            )
            for item, epoch, outcome in [("a", 1, "scored"), ("b", 2, "harness_error")]
        ],
    )
    states, attempts = RunReader(url).shard_rows("r")
    assert sorted(attempts) == sorted(store.attempt_outcomes("r"))
    assert sorted(attempts) == [("a", 1, "scored"), ("b", 2, "harness_error")]
    assert [(s.shard, s.shards, s.status, s.host) for s in states] == [(2, 2, "running", "node-2")]
    assert [(s.shard, s.status) for s in store.shards("r")] == [(2, "running")]
