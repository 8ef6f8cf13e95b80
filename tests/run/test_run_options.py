"""`run` speaks inspect (issue 11.6): every eval() option `run` takes reaches inspect, is
recorded in the run's spec as used, and the options that would change what is measured are
refused with the reason (docs/design/foreign-tasks.md, "Run options")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

import tests.run.foreign_tasks  # noqa: F401  (registers the fakeecho model)
from evalsuite.store import Store, default_store_url
from tests.helpers import Project, json_out
from tests.run.test_foreign_tasks import make


def frozen(tmp_path: Path, extra: str = "") -> Project:
    project = make(tmp_path, extra=extra)
    result = project.invoke("freeze", "desk", "--version", "1.0.0")
    assert result.exit_code == 0, result.stderr
    return project


def test_every_run_option_reaches_inspect_and_is_recorded(tmp_path: Path) -> None:
    project = frozen(tmp_path, extra='run_args = ["sandbox_type"]\n')
    log_dir = tmp_path / "my-logs"
    result = project.invoke(
        "run", "desk@1.0.0", "--model", "fakeecho/x", "--no-progress", "--json",
        "-T", "sandbox_type=local",
        "--temperature", "0.5", "--max-tokens", "33", "--max-connections", "3",
        "-G", "top_p=0.75", "-G", "stop_seqs=[\"END\"]",
        "--sandbox", "local", "--log-dir", str(log_dir),
        "--model-base-url", "http://localhost:9/v1",
        "--max-samples", "2", "--max-subprocesses", "2", "--max-sandboxes", "4",
        "--max-tasks", "1", "--no-sandbox-cleanup",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    run = json_out(result)
    store = Store(default_store_url(project.root / ".evalsuite"))
    spec = store.get_run(run["run_id"]).spec
    # recorded with the run: what it used
    assert spec["task_args"] == {"sandbox_type": "local"}
    assert spec["generate_config"] == {
        "temperature": 0.5,
        "max_tokens": 33,
        "max_connections": 3,
        "top_p": 0.75,
        "stop_seqs": ["END"],
    }
    assert spec["sandbox"] == "local" and spec["log_dir"] == str(log_dir)
    assert spec["model_base_url"] == "http://localhost:9/v1"
    assert (spec["max_samples"], spec["max_subprocesses"]) == (2, 2)
    assert (spec["max_sandboxes"], spec["max_tasks"]) == (4, 1)
    assert spec["sandbox_cleanup"] is False
    # reached inspect: the log inspect wrote, in the directory asked for
    logs = sorted(log_dir.glob("*.json"))
    assert logs, "inspect wrote no log in --log-dir"
    assert not (project.root / ".evalsuite" / "logs" / run["run_id"]).exists()
    log = read_eval_log(str(logs[0]))
    assert log.eval.task_args["sandbox_type"] == "local"
    assert log.eval.sandbox is not None and log.eval.sandbox.type == "local"
    assert log.eval.model_base_url == "http://localhost:9/v1"
    generate = log.eval.model_generate_config
    assert (generate.temperature, generate.max_tokens) == (0.5, 33)
    assert (generate.max_connections, generate.top_p) == (3, 0.75)
    assert generate.stop_seqs == ["END"]
    config = log.eval.config
    assert (config.max_samples, config.max_subprocesses) == (2, 2)
    assert (config.max_sandboxes, config.max_tasks) == (4, 1)
    assert config.sandbox_cleanup is False
    # and reached the model (the fakeecho model reports the settings it was called with)
    frame = store.attempts(run["run_id"])
    checks = [json.loads(c) for c in frame["checks"]]
    assert {(c["temperature"], c["max_tokens"]) for c in checks} == {(0.5, 33)}
    # `runs --json` lists the run with its recorded settings
    listed = json_out(project.invoke("runs", "--json"))
    assert any(r["run_id"] == run["run_id"] for r in listed)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["-G", "seed=3"], "'seed' is not allowed in a run: evalsuite gives every (item, epoch)"),
        (["-G", "cache=true"], "'cache' is not allowed in a run"),
        (["-G", "system_message=hi"], "'system_message' is not allowed in a run"),
        (["-G", "best_of=3"], "'best_of' is not allowed in a run"),
        (["-G", "colour=3"], "'colour' is not a generation setting of inspect"),
        (["-G", "temperature=warm"], "generation settings are not valid: temperature"),
        (["-G", "temperature"], "-G expects KEY=VALUE"),
        (["--temperature", "0.1", "-G", "temperature=0.2"], "--temperature and -G temperature"),
        (["-T", "queue=tech"], "-T queue: task arguments can change what is measured"),
        (["-T", "queue"], "-T expects KEY=VALUE"),
        (["--max-tokens", "0"], "--max-tokens"),
        (["--split", "holdout", "--log-dir", "logs"], "a holdout run never writes logs"),
    ],
)
def test_options_that_change_what_is_measured_are_refused(
    tmp_path: Path, args: list[str], words: str
) -> None:
    project = frozen(tmp_path)
    result = project.invoke("run", "desk@1.0.0", "--model", "fakeecho/x", "--no-progress", *args)
    assert result.exit_code == 2, result.output
    assert words in " ".join((result.stderr or result.output).split())
    # nothing was stored: no run, no look at the holdout
    assert json_out(project.invoke("runs", "--json")) == []


def test_a_frozen_task_argument_names_what_was_frozen(tmp_path: Path) -> None:
    project = frozen(
        tmp_path, extra='task_args = {queue = "billing"}\nrun_args = ["sandbox_type"]\n'
    )
    result = project.invoke(
        "run", "desk@1.0.0", "--model", "fakeecho/x", "--no-progress", "-T", "queue=tech"
    )
    assert result.exit_code == 2
    message = " ".join(result.stderr.split())
    assert "desk@1.0.0 froze triage.queue='billing'" in message
    assert "run_args may be set at run time (sandbox_type)" in message


def test_resume_refuses_new_options(tmp_path: Path) -> None:
    project = frozen(tmp_path)
    result = project.invoke("run", "--resume", "r-x", "--temperature", "0.3")
    assert result.exit_code == 2
    assert "drop generate_config" in result.stderr and "runs as it was started" in result.stderr
