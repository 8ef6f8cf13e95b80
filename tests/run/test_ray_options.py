"""`run --executor ray`'s options and refusals, without a cluster (docs/scale.md).

What is refused before anything runs (a SQLite store, the cluster's options without
``--executor ray``, ``--shard`` with it, an address where nothing listens, Ray missing), and
the command line each shard gets. The runs on a real cluster are in
tests/run/test_ray_run.py (`make slow`).
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from typing import Any

import pytest

from evalsuite._core.cluster import (
    LOCAL_CLUSTER,
    LOCAL_OBJECT_STORE_BYTES,
    ClusterOptions,
    connect,
    import_ray,
)
from evalsuite.errors import UsageError
from evalsuite.service import RayRunRequest
from tests.helpers import Project, json_out

BASE = ("run", "support@4.0.0", "--model", "evalsuite/improved", "--no-progress")
FAKE_PG = "postgresql://nobody@/nowhere?host=/nonexistent"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    root = tmp_path / "project"
    root.mkdir()
    return Project(root=root, key_dir=tmp_path / "keys")


def test_a_sqlite_store_is_refused_for_a_distributed_run(project: Project) -> None:
    result = project.invoke(*BASE, "--executor", "ray", "--shards", "2", "--json")
    assert result.exit_code == 2
    message = json_out(result)["message"]
    assert "SQLite" in message and "EVALSUITE_STORE" in message and "PostgreSQL" in message
    project.store_url = f"sqlite:///{project.root / 'x.sqlite'}"
    assert project.invoke(*BASE, "--executor", "ray").exit_code == 2
    assert not (project.root / "x.sqlite").exists()  # nothing was made


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (("--shards", "2"), "--shards only apply with --executor ray"),
        (("--address", "h:1"), "--address only apply with --executor ray"),
        (("--executor", "ray", "--shard", "1/2", "--run-id", "x"), "--shard 1/2 cannot go"),
        (("--executor", "ray", "--adaptive"), "--adaptive cannot go"),
        (("--executor", "ray", "--shards", "0"), "0 is not in the range x>=1"),
    ],
)
def test_options_that_do_not_go_together_are_refused(
    project: Project, extra: tuple[str, ...], expected: str
) -> None:
    project.store_url = FAKE_PG
    result = project.invoke(*BASE, *extra)
    assert result.exit_code == 2, result.output
    assert expected in result.stderr


def test_an_address_where_nothing_listens_is_refused_at_once(project: Project) -> None:
    with socket.socket() as free:  # a port nothing listens on: bound, then released
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    project.store_url = FAKE_PG
    result = project.invoke(*BASE, "--executor", "ray", "--address", f"127.0.0.1:{port}")
    assert result.exit_code == 2
    assert f"--address 127.0.0.1:{port}: no Ray cluster answers there" in result.stderr
    assert "ray start --head" in result.stderr


def test_ray_missing_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    with pytest.raises(UsageError, match=r"pip install 'evalsuite\[ray\]'"):
        import_ray()


class _FakeRay:
    """What `connect` calls of Ray: records `init`'s arguments, starts nothing."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def is_initialized(self) -> bool:
        return False

    def init(self, **kwargs: Any) -> None:
        self.calls.append(kwargs)


def test_without_an_address_a_new_local_cluster_is_started_not_the_machines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ray.init() with no address joins the cluster `ray start` recorded in /tmp/ray (and then
    refuses num_cpus): the run asks for "local", a cluster of its own, with its settings."""
    fake = _FakeRay()
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    connect(ClusterOptions(num_cpus=2))
    assert fake.calls[0]["address"] == "local"
    assert fake.calls[0]["num_cpus"] == 2
    assert fake.calls[0]["object_store_memory"] == LOCAL_OBJECT_STORE_BYTES
    assert ClusterOptions().describe() == LOCAL_CLUSTER


def test_ray_address_in_the_environment_is_joined_with_no_local_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = _FakeRay()
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.9:6379")
    connect(ClusterOptions(num_cpus=2))
    assert "address" not in fake.calls[0] and "num_cpus" not in fake.calls[0]
    assert ClusterOptions().describe() == "the Ray cluster at 10.0.0.9:6379"


def test_each_shard_gets_the_command_line_options_as_given(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    import evalsuite.service

    seen: list[RayRunRequest] = []

    def capture(request: RayRunRequest, **_: Any) -> Any:
        seen.append(request)
        raise UsageError("captured")

    monkeypatch.setattr(evalsuite.service, "execute_ray_run", capture)
    project.store_url = FAKE_PG
    key = project.root / "k.key"
    result = project.invoke(
        *BASE,
        "--epochs",
        "3",
        "-M",
        "a=1",
        "-M",
        "b=x y",
        "--key-file",
        str(key),
        "--run-id",
        "r1",
        "--executor",
        "ray",
        "--shards",
        "2",
        "--address",
        "auto",
    )
    assert result.exit_code == 2 and "captured" in result.stderr
    (request,) = seen
    args = request.run_args
    assert args[0] == "support@4.0.0"
    pairs = dict(zip(args[1::2], args[2::2], strict=False))
    assert pairs["--model"] == "evalsuite/improved"
    assert pairs["--epochs"] == "3"
    assert pairs["--key-file"] == str(key.resolve())
    assert [args[i + 1] for i, a in enumerate(args) if a == "-M"] == ["a=1", "b=x y"]
    # the executor's own options, the run id and the output flags are the Ray run's
    for own in ("--executor", "--shards", "--address", "--run-id", "--json", "--no-progress"):
        assert own not in args
    assert (request.run_id, request.shards, request.address) == ("r1", 2, "auto")


def test_a_shard_process_runs_the_cli_and_a_killed_one_is_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The body of each Ray task: the shard's command in a process of its own; a process
    ended by a signal raises `ShardLost`, which Ray retries (a worker's death it retries
    anyway)."""
    import subprocess

    from evalsuite.service import _ray_run

    ended = _ray_run.run_shard_process(1, ["--version"], {}, str(tmp_path))
    assert (ended.shard, ended.code) == (1, 0)
    assert ended.stdout.startswith("evalsuite, version")
    killed = subprocess.CompletedProcess(["x"], -9, "", "partial output")
    monkeypatch.setattr(_ray_run.subprocess, "run", lambda *a, **k: killed)
    with pytest.raises(_ray_run.ShardLost, match="shard 2's process was killed by signal 9"):
        _ray_run.run_shard_process(2, ["run"], {}, str(tmp_path))
