"""`run --executor ray` on a real Ray cluster with a throwaway PostgreSQL store (`make slow`).

A local Ray cluster with two worker CPUs (`ray.init`, made by the run itself, no dashboard, a
small object store, no usage statistics) runs the run's two shards as Ray tasks; the worker
running shard 1 or 2 is killed with SIGKILL mid-run (`EVALSUITE_FAULT_KILL_SHARD=I:K:parent`:
the shard's process kills its parent, the Ray worker, then itself, after K stored attempts,
on its first try only). Ray runs the task again, the shard resumes its unfinished attempts,
and the run must equal the same run made by one local process: the same attempts (item,
epoch, seed, outcome, score, checks...), none lost, none twice, and the same scores; a
holdout run spends one look in the ledger.

Each test costs about a minute of CPU or more (a Ray cluster, two shard processes, a local
reference run): `slow`, run by `make slow` (docs/design/test-speed.md).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evalsuite.holdout import read_ledger
from evalsuite.run import KILL_SHARD_ENV
from tests.helpers import REPO, Project, finish, json_out, wait_until
from tests.pg import PgServer
from tests.run.conftest import STABLE
from tests.run.processes import spawn

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

RAY_ENV = {
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_memory_monitor_refresh_ms": "0",  # no memory monitor killing workers of a shared machine
    "RAY_DISABLE_DOCKER_CPU_WARNING": "1",
    "PYTHONPATH": str(REPO),  # Ray's workers and the shard processes import this checkout
}

NO_AUTH = {"RAY_AUTH_MODE": "disabled"}
"""The test's own cluster on 127.0.0.1 runs without Ray's token authentication (its token
would be written to the user's ~/.ray, which other sessions of the machine share)."""


def _project(tmp_path: Path, store_url: str) -> Project:
    """A copy of this project (tasks, manifests, holdout without its ledger)."""
    root = tmp_path / "project"
    for part in ("tasks", "manifests", "holdout"):
        shutil.copytree(
            REPO / part,
            root / part,
            ignore=shutil.ignore_patterns("__pycache__", "*.lock", "ACCESS.jsonl"),
        )
    return Project(root=root, key_dir=tmp_path / "keys", store_url=store_url)


def _on_ray(project: Project, args: tuple[str, ...], kill: str) -> dict[str, Any]:
    """`run ARGS --executor ray --shards 2` in a process of its own; its JSON output."""
    env = {**RAY_ENV, "EVALSUITE_STORE": str(project.store_url), KILL_SHARD_ENV: kill}
    proc = spawn(project, *args, "--executor", "ray", "--shards", "2", env=env, fresh=True)
    out, err = finish(proc)
    assert proc.returncode == 0, err[-3000:]
    assert "2 shard(s) on a local Ray cluster" in err  # the progress, on stderr
    assert "shard 1/2 complete" in err and "shard 2/2 complete" in err
    return json.loads(out)


def _attempts(project: Project, run_id: str) -> pd.DataFrame:
    frame = project.store().attempts(run_id)
    return frame[STABLE].sort_values(["item_id", "epoch"]).reset_index(drop=True)


def _scores(project: Project, run_id: str) -> Any:
    """`evalsuite score RUN --json` with the run id left out."""
    result = project.invoke("score", run_id, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(json.dumps(json_out(result)).replace(run_id, "<run>"))


def _same_as_local(project: Project, ray_id: str, local_id: str, planned: int) -> None:
    ray, local = _attempts(project, ray_id), _attempts(project, local_id)
    assert len(local) == planned
    assert not ray.duplicated(["item_id", "epoch"]).any()
    pd.testing.assert_frame_equal(ray, local)  # none lost, none twice, the same results
    assert _scores(project, ray_id) == _scores(project, local_id)
    run = project.store().get_run(ray_id)
    assert (run.status, run.planned, run.spec["shards"]) == ("complete", planned, 2)
    assert [s.status for s in project.store().shards(ray_id)] == ["complete", "complete"]


def _killed(project: Project, run_id: str, shard: int) -> bool:
    """Whether the injected kill of `shard` happened (its marker file)."""
    marker = project.root / ".evalsuite" / "faults" / f"{run_id}.shard-{shard}-of-2.killed"
    return marker.exists()


def test_a_holdout_run_on_ray_with_a_worker_killed_equals_a_local_run_and_spends_one_look(
    tmp_path: Path, pg: PgServer
) -> None:
    project = _project(tmp_path, pg.new_database())
    args = (
        "run",
        "support@4.0.0",
        "--split",
        "holdout",
        "--model",
        "evalsuite/improved",
        "--epochs",
        "3",
        "--seed",
        "7",
        "--limit",
        "8",
        "--purpose",
        "ray acceptance (test)",
        "--json",
    )
    local = project.invoke(*args, "--run-id", "local-1", "--no-progress")
    assert local.exit_code == 0, local.stderr
    found = _on_ray(project, (*args, "--run-id", "ray-1"), kill="1:3:parent")
    assert _killed(project, "ray-1", 1)
    assert (found["run_id"], found["valid"], found["executor"]) == ("ray-1", True, "ray")
    assert found["mean"] == json_out(local)["mean"]
    assert [(s["shard"], s["status"], s["done"], s["planned"]) for s in found["shards"]] == [
        (1, "complete", 12, 12),
        (2, "complete", 12, 12),
    ]
    _same_as_local(project, "ray-1", "local-1", planned=24)
    ledger = read_ledger(project.root / "holdout" / "support" / "ACCESS.jsonl")
    assert [(e.kind, e.run_id) for e in ledger] == [("access", "local-1"), ("access", "ray-1")]
    listed = {r["run_id"]: r for r in json_out(project.invoke("runs", "--json"))}
    assert (listed["ray-1"]["status"], listed["ray-1"]["shards"]) == ("complete", None)


def test_support_dev_3_epochs_on_ray_with_a_worker_killed_equals_a_local_run(
    tmp_path: Path, pg: PgServer
) -> None:
    """Issue 35's acceptance: the support suite's whole dev split, 3 epochs."""
    project = _project(tmp_path, pg.new_database())
    args = (
        "run",
        "support@4.0.0",
        "--model",
        "evalsuite/improved",
        "--epochs",
        "3",
        "--seed",
        "7",
        "--json",
    )
    local = project.invoke(*args, "--run-id", "local-dev", "--no-progress")
    assert local.exit_code == 0, local.stderr
    found = _on_ray(project, (*args, "--run-id", "ray-dev"), kill="2:40:parent")
    assert _killed(project, "ray-dev", 2)
    assert found["mean"] == json_out(local)["mean"]
    _same_as_local(project, "ray-dev", "local-dev", planned=324)


@pytest.fixture
def head(tmp_path: Path) -> Iterator[str]:
    """A Ray cluster started as a user starts one, `ray start --head --block`, on 127.0.0.1
    with two worker CPUs; its address. Ended by ending that process (never `ray stop`,
    which would stop every Ray cluster of the machine)."""
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    ray = Path(sys.executable).parent / "ray"
    temp = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))  # short: Unix socket paths
    command = [str(ray), "start", "--head", "--block", "--node-ip-address", "127.0.0.1"]
    command += [f"--port={port}", "--num-cpus=2", "--include-dashboard=false"]
    command += ["--object-store-memory=200000000", f"--temp-dir={temp}", "--disable-usage-stats"]
    log = (tmp_path / "ray-head.log").open("w")
    proc = subprocess.Popen(
        command,
        env={**os.environ, **RAY_ENV, **NO_AUTH},
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    address = f"127.0.0.1:{port}"
    try:
        wait_until(lambda: _listening(port), "the Ray head listens", proc=proc)
        yield address
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # --block: the head stops what it started
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()
        shutil.rmtree(temp, ignore_errors=True)


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def test_a_run_on_a_started_cluster_by_address_survives_a_killed_shard_process(
    tmp_path: Path, pg: PgServer, head: str
) -> None:
    """`--address` of a cluster made by `ray start --head`; the shard's process (not its
    worker) is killed: the task raises `ShardLost`, which Ray retries."""
    project = _project(tmp_path, pg.new_database())
    args = ("run", "support@4.0.0", "--model", "evalsuite/improved", "--epochs", "2")
    args += ("--seed", "5", "--limit", "6", "--json")
    local = project.invoke(*args, "--run-id", "local-2", "--no-progress")
    assert local.exit_code == 0, local.stderr
    env = {**RAY_ENV, **NO_AUTH, "EVALSUITE_STORE": str(project.store_url), KILL_SHARD_ENV: "2:2"}
    proc = spawn(
        project, *args, "--run-id", "ray-2", "--executor", "ray", "--address", head,
        "--shards", "2", env=env, fresh=True,
    )  # fmt: skip
    out, err = finish(proc)
    assert proc.returncode == 0, err[-3000:]
    assert f"2 shard(s) on the Ray cluster at {head}" in err
    assert _killed(project, "ray-2", 2)
    assert json.loads(out)["mean"] == json_out(local)["mean"]
    _same_as_local(project, "ray-2", "local-2", planned=12)
