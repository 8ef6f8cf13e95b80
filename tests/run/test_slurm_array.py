"""scripts/slurm/run_array.sh, the job array script of docs/scale.md, run without Slurm.

The script's tasks are run here as Slurm would run them, with the array variables set by
hand (`SLURM_ARRAY_TASK_ID`, `SLURM_ARRAY_TASK_COUNT`, `SLURM_ARRAY_JOB_ID`), against a
throwaway PostgreSQL store: task 1 is killed mid-shard (`EVALSUITE_FAULT_KILL_SHARD`) and
requeued, tasks 2 and 3 run at once. `evalsuite runs` shows each shard's progress on the
way, and the run equals the same run made by one local process. Five CLI processes of
several seconds of CPU each: `slow` (`make slow`); the script's refusals are quick.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evalsuite.run import KILL_SHARD_ENV
from tests.helpers import REPO, WAIT_S, Project, json_out
from tests.pg import PgServer
from tests.run.conftest import STABLE

SCRIPT = REPO / "scripts" / "slurm" / "run_array.sh"
RUN = ("support@4.0.0", "--model", "evalsuite/improved", "--epochs", "2", "--seed", "3")
LIMIT = ("--limit", "6")  # 6 items x 2 epochs = 12 attempts, 4 per shard of 3


def _project(tmp_path: Path, store_url: str | None) -> Project:
    root = tmp_path / "project"
    for part in ("tasks", "manifests", "holdout"):
        shutil.copytree(
            REPO / part,
            root / part,
            ignore=shutil.ignore_patterns("__pycache__", "*.lock", "ACCESS.jsonl"),
        )
    return Project(root=root, key_dir=tmp_path / "keys", store_url=store_url)


def _program(tmp_path: Path) -> Path:
    """An `evalsuite` of this checkout, for the script's ``$EVALSUITE``."""
    program = tmp_path / "bin" / "evalsuite"
    program.parent.mkdir()
    code = (
        f"import sys; sys.path.insert(0, {str(REPO)!r}); from evalsuite.cli import main; "
        "sys.argv[0] = 'evalsuite'; main()"
    )
    program.write_text(f'#!/bin/sh\nexec {sys.executable} -c "{code}" "$@"\n')
    program.chmod(0o755)
    return program


def _task(
    project: Project, program: Path, task: int, count: int, extra: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    """Array task `task` of `count`, as `sbatch --array=1-COUNT` starts it."""
    env = {
        **os.environ,
        "SLURM_ARRAY_TASK_ID": str(task),
        "SLURM_ARRAY_TASK_COUNT": str(count),
        "SLURM_ARRAY_TASK_MIN": "1",
        "SLURM_ARRAY_JOB_ID": "4242",
        "EVALSUITE_STORE": str(project.store_url),
        "EVALSUITE_ROOT": str(project.root),
        "EVALSUITE_KEY_DIR": str(project.key_dir),
        "EVALSUITE": str(program),
        **(extra or {}),
    }
    return subprocess.Popen(
        ["bash", str(SCRIPT), *RUN, *LIMIT],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _ended(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=WAIT_S)
    return proc.returncode, out, err


def _listed(project: Project, run_id: str) -> dict[str, Any]:
    listed = {r["run_id"]: r for r in json_out(project.invoke("runs", "--json"))}
    return listed[run_id]


def _progress(entry: dict[str, Any]) -> list[tuple[int, str, int, int]]:
    return [(s["shard"], s["status"], s["done"], s["planned"]) for s in entry["shards"]]


@pytest.mark.slow
@pytest.mark.postgres
def test_the_job_array_script_fills_one_run_that_runs_shows_shard_by_shard(
    tmp_path: Path, pg: PgServer
) -> None:
    project = _project(tmp_path, pg.new_database())
    program = _program(tmp_path)
    local = project.invoke("run", *RUN, *LIMIT, "--run-id", "local", "--no-progress", "--json")
    assert local.exit_code == 0, local.stderr
    run_id = "run-4242"  # the script's default: run-<array job id>

    # task 1 is killed after two stored attempts of its four
    code, _, err = _ended(_task(project, program, 1, 3, {KILL_SHARD_ENV: "1:2"}))
    assert code == -9, err[-2000:]
    entry = _listed(project, run_id)
    assert entry["status"] == "running"
    assert _progress(entry) == [(1, "running", 2, 4), (2, "waiting", 0, 4), (3, "waiting", 0, 4)]
    table = project.invoke("runs").stdout
    assert "running · 0/3 shards complete · 2/12 attempts · 0 error(s)" in table

    # Slurm requeues it: the same command resumes the shard
    code, out, err = _ended(_task(project, program, 1, 3))
    assert code == 0, err[-2000:]
    assert json.loads(out)["run_complete"] is False
    assert _progress(_listed(project, run_id))[0] == (1, "complete", 4, 4)

    # tasks 2 and 3 at once
    finished = [_ended(p) for p in [_task(project, program, i, 3) for i in (2, 3)]]
    assert [c for c, _, _ in finished] == [0, 0], [e[-1500:] for _, _, e in finished]
    assert any(json.loads(out)["run_complete"] for _, out, _ in finished)
    entry = _listed(project, run_id)
    assert (entry["status"], entry["valid"], entry["shards"]) == ("complete", True, None)

    store = project.store()
    ours = store.attempts(run_id)[STABLE].sort_values(["item_id", "epoch"])
    theirs = store.attempts("local")[STABLE].sort_values(["item_id", "epoch"])
    assert len(ours) == 12
    pd.testing.assert_frame_equal(ours.reset_index(drop=True), theirs.reset_index(drop=True))
    score = json_out(project.invoke("score", run_id, "--json"))
    reference = json_out(project.invoke("score", "local", "--json"))
    assert json.dumps(score).replace(run_id, "<run>") == json.dumps(reference).replace(
        "local", "<run>"
    )


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        ({"SLURM_ARRAY_TASK_ID": ""}, "SLURM_ARRAY_TASK_ID is not set"),
        ({"SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_ID": "0"}, "must count from 1"),
        ({"EVALSUITE_STORE": "sqlite:///x.sqlite"}, "cannot share a SQLite file"),
    ],
)
def test_the_script_refuses_what_cannot_make_one_run(
    tmp_path: Path, variables: dict[str, str], expected: str
) -> None:
    project = Project(root=tmp_path, key_dir=tmp_path / "keys", store_url="postgresql://x@/y")
    proc = _task(project, tmp_path / "no-such-program", 1, 2, variables)
    code, _, err = _ended(proc)
    assert code == 2
    assert expected in err
