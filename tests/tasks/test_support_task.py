"""support_desk through inspect: loading both ways, reset hash check, isolation, faults, limits."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from inspect_ai import task_with
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from evalsuite.run import episode_setup
from tests.entry_points import PRELUDE
from tests.helpers import WAIT_S
from tests.tasks.support_helpers import (
    ITEMS_FILE,
    ROOT,
    SCORER,
    TASK,
    dev_items,
    env,
    episode_samples,
    load_task_module,
    read_jsonl,
    run_eval,
    stratified,
)

STORE_KEY = "ShopStore:support_desk:state"


def test_task_file_imports_by_path_under_any_name() -> None:
    first = load_task_module("runner_style_a")
    second = load_task_module("runner_style_b")
    assert first is not second
    assert first.PACKAGE == second.PACKAGE  # the sibling modules are shared, not reloaded
    assert first.episode.ShopStore is second.episode.ShopStore
    task = second.support_desk(dataset=episode_samples(dev_items()[:2], seed=1))
    assert len(task.dataset) == 2
    assert task.message_limit == TASK.MESSAGE_LIMIT == 40
    assert task.version == 1
    standalone = first.support_desk()  # every item of the file (version 3's too, once frozen)
    assert len(standalone.dataset) == len(read_jsonl(ITEMS_FILE))


def test_inspect_cli_runs_the_task_file(tmp_path: Path) -> None:
    environment = dict(os.environ, INSPECT_TRACE_LEVEL="CRITICAL", INSPECT_EVAL_CTL_SERVER="false")
    # inspect's console script (`inspect`), run by its entry function after the launcher's
    # prelude, which skips only inspect_evals' task registry (tests/entry_points.py)
    launcher = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
        + PRELUDE
        + "from inspect_ai._cli.main import main; sys.argv[0] = 'inspect'; sys.exit(main())"
    )
    command = [
        sys.executable,
        "-c",
        launcher,
        "eval",
        "tasks/support_desk/task.py@support_desk",
        "--model",
        "evalsuite/improved",
        "--limit",
        "1",  # the process's start-up is the cost (about 8 s of CPU); one episode proves the run
        "--log-dir",
        str(tmp_path),
        "--log-format",
        "json",
        "--display",
        "none",
    ]
    done = subprocess.run(
        command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=WAIT_S
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (log_file,) = tmp_path.glob("*.json")
    log = json.loads(log_file.read_text(encoding="utf-8"))
    assert log["status"] == "success"
    assert len(log["samples"]) == 1
    for sample in log["samples"]:
        assert set(sample["scores"][SCORER]["metadata"]) >= {"problem_fixed", "ticket_closed"}


def test_reset_refuses_a_tampered_state(tmp_path: Path) -> None:
    samples = episode_samples(dev_items()[:2], seed=1)
    samples[0].metadata["initial_state"]["orders"][0]["status"] = "processing"  # type: ignore[index]
    log = run_eval(
        TASK.support_desk(dataset=samples), "evalsuite/improved", tmp_path, fail_on_error=False
    )
    assert log.samples is not None
    by_id = {s.id: s for s in log.samples}
    bad, good = by_id[samples[0].id], by_id[samples[1].id]
    assert bad.error is not None and "does not match its recorded hash" in bad.error.message
    assert "HarnessFault" in bad.error.traceback
    assert good.error is None and good.scores is not None


def test_each_episode_sees_only_its_own_shop(tmp_path: Path) -> None:
    # four shops (two intents, clean and messy), each twice, all eight episodes at once
    items = stratified(dev_items(), 1)[:4]
    samples = episode_samples(items, seed=3)
    log = run_eval(
        TASK.support_desk(dataset=samples), "evalsuite/improved", tmp_path, epochs=2, max_samples=8
    )
    assert log.samples is not None and len(log.samples) == 8
    by_id = {item["id"]: item for item in items}
    for sample in log.samples:
        item = by_id[str(sample.id)]
        initial = item["metadata"]["initial_state"]
        assert sample.metadata["state_hash"] == env.state_hash(sample.metadata["initial_state"])
        state: dict[str, Any] = sample.store[STORE_KEY]
        for kind in ("orders", "customers", "tickets"):
            assert {r["id"] for r in state[kind]} == {r["id"] for r in initial[kind]}
        ticket = initial["tickets"][0]["id"]
        assert {r["ticket_id"] for r in state["replies"]} == {ticket}
        mutating = [
            m
            for m in sample.messages
            if m.role == "tool" and m.function not in env.READ_ONLY and m.error is None
        ]
        assert len(state["log"]) == len(mutating)


def test_injected_faults_and_hangs_are_harness_errors(tmp_path: Path) -> None:
    items = dev_items()[:2]
    for spec, message in (
        ({"fault": "error"}, "injected fault"),
        ({"fault": "hang", "tool_timeout": 0.2}, "did not answer"),
    ):
        task = TASK.support_desk(dataset=episode_samples(items, seed=1, **spec))
        task = task_with(task, setup=[episode_setup(), TASK.episode.reset_shop()])
        log = run_eval(task, "evalsuite/improved", tmp_path, fail_on_error=False)
        assert log.samples is not None
        for sample in log.samples:
            assert sample.error is not None and message in sample.error.message
            assert "HarnessFault" in sample.error.traceback


def test_runaway_agent_ends_on_the_message_limit(tmp_path: Path) -> None:
    def loop(*_: Any) -> ModelOutput:
        output = ModelOutput.for_tool_call("mockllm/model", "find_customer", {"name": "Dana"})
        output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
        return output

    model = get_model("mockllm/model", custom_outputs=loop)
    task = TASK.support_desk(dataset=episode_samples(dev_items()[:1], seed=1))
    log = run_eval(task, model, tmp_path)  # type: ignore[arg-type]
    assert log.samples is not None
    (sample,) = log.samples
    assert sample.limit is not None and sample.limit.type == "message"
    assert sample.scores is not None and sample.scores[SCORER].value == 0.0
