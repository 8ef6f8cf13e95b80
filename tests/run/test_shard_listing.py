"""`evalsuite runs` shows each shard's progress for a sharded run that is not complete.

On the project's SQLite store (read without SQLAlchemy); the same on PostgreSQL, with the
Slurm job array script, is tests/run/test_slurm_array.py (`make slow`).
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers import json_out
from tests.run.conftest import make_probe_project

BASE = ("run", "probe@1.0.0", "--model", "fakeagent/x", "-M", "accuracy=0.6", "--epochs", "3")
ARGS = (*BASE, "--seed", "11", "--no-progress", "--json", "--run-id", "arr")


def test_runs_shows_the_shards_done_waiting_and_their_attempts(tmp_path: Path) -> None:
    project = make_probe_project(tmp_path, n_per_stratum=4)  # 4 dev items x 3 epochs = 12
    first = project.invoke(*ARGS, "--shard", "2/3")
    assert first.exit_code == 0, first.stderr
    (entry,) = json_out(project.invoke("runs", "--json"))
    assert entry["status"] == "running"
    assert [
        (s["shard"], s["status"], s["done"], s["planned"], s["errors"]) for s in entry["shards"]
    ] == [
        (1, "waiting", 0, 4, 0),
        (2, "complete", 4, 4, 0),
        (3, "waiting", 0, 4, 0),
    ]
    table = project.invoke("runs").stdout
    assert "running · 1/3 shards complete · 4/12 attempts · 0 error(s)" in table
    for shard in ("1/3", "3/3"):
        assert project.invoke(*ARGS, "--shard", shard).exit_code == 0
    (entry,) = json_out(project.invoke("runs", "--json"))
    assert (entry["status"], entry["shards"]) == ("complete", None)
    assert "shards complete" not in project.invoke("runs").stdout
