"""Offline models that work with every task: mockllm without a tokenizer download, and
`evalsuite/replay`, which answers from an earlier inspect log (docs/design/scorers.md)."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log

from evalsuite._core.layout import Layout
from evalsuite.manifest import load_manifest
from evalsuite.run import load_task_function
from evalsuite.run._offline import MOCKLLM_ADAPTER, MOCKLLM_DEFAULT_OUTPUT
from evalsuite.store import Store, default_store_url
from tests.e2e.conftest import copy_project
from tests.helpers import Project, json_out, write_jsonl
from tests.run.conftest import make_probe_project

SAME = ["item_id", "epoch", "outcome", "score", "checks"]


def _run(project: Project, ref: str, *args: str) -> dict[str, Any]:
    result = project.invoke("run", ref, "--no-progress", "--json", *args)
    assert result.exit_code in (0, 5), result.stderr
    return json_out(result)  # type: ignore[no-any-return]


def _attempts(project: Project, run_id: str) -> pd.DataFrame:
    store = Store(default_store_url(project.root / ".evalsuite"))
    frame = store.attempts(run_id).sort_values(["item_id", "epoch"])
    return frame.reset_index(drop=True)


def _log_dir(project: Project, run_id: str) -> Path:
    return project.root / ".evalsuite" / "logs" / run_id


# ---- mockllm ---------------------------------------------------------------------------------
def test_mockllm_default_output_is_inspects() -> None:
    from inspect_ai.model._providers.mockllm import MockLLM

    assert MockLLM.default_output == MOCKLLM_DEFAULT_OUTPUT


def test_mockllm_runs_arith_offline_without_any_download(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    attempted: list[Any] = []

    def no_network(*args: Any, **kwargs: Any) -> Any:
        attempted.append(args[1:] or kwargs)
        raise OSError("network access attempted in an offline test")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket.socket, "connect_ex", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty-tiktoken-cache"))
    project = copy_project(tmp_path / "project")
    # five dev items: every output's usage is counted without a tokenizer, first to last
    out = _run(project, "arith@1.0.0", "--model", "mockllm/model", "--limit", "5")
    assert attempted == []  # nothing tried to reach the network (no tokenizer download)
    harness = out["harness"]
    assert harness["harness_errors"] == 0
    assert harness["scored"] == harness["planned"] == 5
    assert out["valid"] is True
    assert out["mean"] == 0.0  # mockllm's default output has no 'ANSWER: n' line
    store = Store(default_store_url(project.root / ".evalsuite"))
    run = store.get_run(out["run_id"])
    assert run.spec["model_adapter"] == MOCKLLM_ADAPTER  # the spec says what was used
    assert (store.attempts(out["run_id"])["tokens"] > 0).all()  # usage was set on every output


# ---- replay: same outputs, same scores; a new grader on old outputs --------------------------
def test_replay_of_a_reference_agent_log_gives_identical_attempts(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "project")
    # two tickets of two epochs: each replayed turn by turn, matched by item and epoch
    args = ("--model", "evalsuite/baseline", "--epochs", "2", "--limit", "2")
    first = _run(project, "support@1.0.0", *args)
    assert first["harness"]["harness_errors"] == 0
    log = _log_dir(project, first["run_id"])
    replay = _run(
        project, "support@1.0.0", "--model", "evalsuite/replay", "-M", f"log={log}",
        "--epochs", "2", "--limit", "2",
    )  # fmt: skip
    assert replay["harness"]["harness_errors"] == 0
    recorded = _attempts(project, first["run_id"])
    replayed = _attempts(project, replay["run_id"])
    assert len(recorded) == 4
    pd.testing.assert_frame_equal(recorded[SAME], replayed[SAME])
    # the transcripts were replayed turn by turn: same tool calls, same final state
    assert recorded["tokens"].tolist() == replayed["tokens"].tolist()


def _parity_grader(body: str) -> str:
    """The arith task with another grader: right when the answer has the target's parity."""
    old = "        correct = answer == target.text.strip()\n"
    assert old in body
    return body.replace(old, "        correct = int(answer) % 2 == int(target.text.strip()) % 2\n")


def test_replay_scores_a_changed_grader_on_the_recorded_outputs(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "project")
    # ten items of two epochs: the replay matches each recorded output by item and epoch
    args = ("--epochs", "2", "--limit", "10")
    first = _run(project, "arith@1.0.0", "--model", "evalsuite/baseline", *args)
    log = _log_dir(project, first["run_id"])
    # the new grader, in another checkout of the project
    regraded = copy_project(tmp_path / "regraded")
    task = regraded.root / "tasks" / "arith" / "task.py"
    task.write_text(_parity_grader(task.read_text(encoding="utf-8")), encoding="utf-8")
    replay = _run(
        regraded, "arith@1.0.0", "--model", "evalsuite/replay", "-M", f"log={log}", *args
    )  # fmt: skip
    assert replay["harness"]["harness_errors"] == 0
    expected = {}
    for file in log.glob("*.json"):
        for sample in read_eval_log(str(file)).samples or []:
            found = re.findall(r"ANSWER:\s*(-?\d+)\s*$", sample.output.completion, re.MULTILINE)
            expected[str(sample.id)] = float(
                bool(found) and int(found[-1]) % 2 == int(str(sample.target)) % 2
            )
    replayed = _attempts(regraded, replay["run_id"])
    got = {f"{r.item_id}::{r.epoch}": r.score for r in replayed.itertuples()}
    assert got == expected
    recorded = _attempts(project, first["run_id"])
    assert recorded["score"].tolist() != replayed["score"].tolist()  # the grader did change


# ---- replay never answers wrongly: divergence, other items, no recording ----------------------
def test_replay_refuses_diverged_conversations_other_inputs_and_missing_samples(
    tmp_path: Path,
) -> None:
    project = make_probe_project(tmp_path, n_per_stratum=4)
    first = _run(project, "probe@1.0.0", "--model", "fakeagent/x", "--limit", "3")
    log = _log_dir(project, first["run_id"])
    items = project.root / "tasks" / "probe" / "items.jsonl"
    records = [json.loads(line) for line in items.read_text(encoding="utf-8").splitlines()]
    ids = sorted(r["id"] for r in records)
    by_id = {r["id"]: r for r in records}
    # first recorded item: its tool returns something else now; second: its input changed
    diverged, reworded = ids[0], ids[1]
    key = next(iter(by_id[diverged]["metadata"]["table"]))
    by_id[diverged]["metadata"]["table"][key] = "a-different-value"
    by_id[reworded]["input"] += " (reworded)"
    write_jsonl(items, [by_id[i] for i in ids])
    frozen = project.invoke("freeze", "probe", "--version", "2.0.0")
    assert frozen.exit_code == 0, frozen.stderr
    replay = _run(project, "probe@2.0.0", "--model", "evalsuite/replay", "-M", f"log={log}")
    assert replay["valid"] is False
    replayed = _attempts(project, replay["run_id"])
    reasons = dict(zip(replayed["item_id"], replayed["reason"], strict=True))
    outcomes = dict(zip(replayed["item_id"], replayed["outcome"], strict=True))
    assert outcomes[diverged] == "harness_error"
    assert "diverged from the recording at model turn 2" in reasons[diverged]
    assert "the result of tool call 'call-0' (lookup)) differs" in reasons[diverged]
    assert outcomes[reworded] == "harness_error"
    assert "the log is of other items" in reasons[reworded]
    assert outcomes[ids[2]] == "scored"  # unchanged and recorded: replayed
    for item in ids[3:]:
        assert outcomes[item] == "harness_error"
        assert "no recorded output for item" in reasons[item]


def test_replay_needs_a_log(tmp_path: Path) -> None:
    project = make_probe_project(tmp_path, n_per_stratum=2)
    result = project.invoke("run", "probe@1.0.0", "--model", "evalsuite/replay", "--no-progress")
    assert result.exit_code == 2
    assert "needs -M log=PATH" in result.stderr
    missing = project.invoke(
        "run", "probe@1.0.0", "--model", "evalsuite/replay", "-M", "log=nowhere", "--no-progress"
    )
    assert missing.exit_code == 2
    assert "does not exist" in missing.stderr


def test_replay_of_a_plain_inspect_eval_log_matches_by_sample_id_and_epoch(
    tmp_path: Path,
) -> None:
    project = copy_project(tmp_path / "project")
    layout = Layout(project.root)
    family = load_manifest(layout, "arith", "1.0.0").families[0]
    task = load_task_function(layout, "arith", family)()  # standalone: the dev items
    dev = {i.id for i in load_manifest(layout, "arith", "1.0.0").items_by_split("dev")}
    assert {str(s.id) for s in task.dataset} == dev
    # the first ten dev items by id, the ones `run --limit 10` takes
    first_ten = sorted(dev)[:10]
    (log,) = inspect_eval(
        task,
        model="evalsuite/baseline",
        epochs=2,
        sample_id=first_ten,
        log_dir=str(tmp_path / "plain-logs"),
        display="none",
        log_level="error",
    )
    recorded = {(str(s.id), s.epoch): s.scores["final_answer"].value for s in log.samples or []}
    assert {sid for sid, _ in recorded} == set(first_ten)
    replay = _run(
        project, "arith@1.0.0", "--model", "evalsuite/replay",
        "-M", f"log={tmp_path / 'plain-logs'}", "--epochs", "2", "--limit", "10",
    )  # fmt: skip
    assert replay["harness"]["harness_errors"] == 0
    replayed = _attempts(project, replay["run_id"])
    assert {(r.item_id, r.epoch): r.score for r in replayed.itertuples()} == recorded
