"""A tool timeout is a harness error or a labelled limit, as the family declares (issue 13/14)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalSample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import Score, Scorer, Target, accuracy, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver, use_tools
from inspect_ai.tool import Tool, tool

from evalsuite._core.layout import Layout
from evalsuite.manifest import KeySpec
from evalsuite.run import (
    EPISODE_KEY,
    GUARDED_KEY,
    EpisodeSpec,
    RunSpec,
    ToolTimeLimit,
    classify_sample,
    episode_setup,
    guarded_call,
    run_suite,
)
from evalsuite.store import Store, default_store_url
from tests.helpers import Project


def _slow(on_timeout: Any) -> Tool:
    @tool(name="slow_search")
    def slow_search() -> Tool:
        async def execute(query: str) -> str:
            """Search, slowly.

            Args:
                query: What to look for.
            """

            async def work() -> str:
                await anyio.sleep(5)
                return "found"

            return await guarded_call("slow_search", work, on_timeout=on_timeout)

        return execute

    return slow_search()


@scorer(metrics=[accuracy()])
def always_one() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=1.0)

    return score


def _outputs(messages: list[Any], *_: Any) -> ModelOutput:
    if len(messages) < 3:
        out = ModelOutput.for_tool_call("mockllm/model", "slow_search", {"query": "everything"})
    else:
        out = ModelOutput.from_content("mockllm/model", "gave up")
    out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return out


@solver
def _loop() -> Solver:
    async def solve(state: TaskState, generate_: Generate) -> TaskState:
        return await generate_(state, tool_calls="loop")

    return solve


def _episode(tmp_path: Path, on_timeout: str) -> EvalSample:
    spec = EpisodeSpec(item_id="i1", epoch=1, seed=1, tool_timeout=0.2)
    task = Task(
        dataset=[Sample(id="i1::1", input="find it", metadata={EPISODE_KEY: spec.model_dump()})],
        setup=[episode_setup()],
        solver=[use_tools(_slow(on_timeout)), _loop()],
        scorer=always_one(),
    )
    model = get_model("mockllm/model", custom_outputs=_outputs)
    (log,) = inspect_eval(
        task, model=model, log_dir=str(tmp_path), display="none", log_format="json"
    )
    assert log.samples is not None
    return log.samples[0]


def test_a_model_bound_tool_timeout_is_a_labelled_limit(tmp_path: Path) -> None:
    sample = _episode(tmp_path, "limit")
    assert sample.error is None
    tool_message = next(m for m in sample.messages if m.role == "tool")
    assert "did not answer within 0.2s" in (
        tool_message.error.message if tool_message.error else ""
    )
    assert sample.store[GUARDED_KEY] == ["slow_search:limit"]
    classified = classify_sample(sample)
    assert (classified.outcome, classified.score, classified.limit_type) == (
        "limit",
        0.0,
        "tool_time",
    )
    assert classified.reason == "tool time limit: slow_search (0.2s)"


def test_a_tool_fault_timeout_stays_a_harness_error(tmp_path: Path) -> None:
    sample = _episode(tmp_path, "harness_error")
    assert sample.error is not None and "did not answer within 0.2s" in sample.error.message
    assert classify_sample(sample).outcome == "harness_error"


def test_a_run_can_name_its_items_and_keep_its_log_to_a_header(probe_project: Project) -> None:
    layout = Layout(probe_project.root)
    store = Store(default_store_url(layout.state))
    keys = KeySpec(key_dir=Path("/none"))
    spec = RunSpec(
        suite="probe",
        version="1.0.0",
        model="fakeagent/x",
        items=["beta-001", "alpha-000"],
        log_samples=False,
    )
    result = run_suite(layout, spec, keys=keys, store=store, progress=False)
    frame = store.attempts(result.run.run_id)
    assert sorted(frame["item_id"]) == ["alpha-000", "beta-001"]
    assert result.health.planned == 2
    unknown = spec.model_copy(update={"items": ["nope"]})
    with pytest.raises(Exception, match="has no dev item"):
        run_suite(layout, unknown, keys=keys, store=store, progress=False)


def _simulated(on_timeout: Any) -> Tool:
    @tool(name="slow_search")
    def slow_search() -> Tool:
        async def execute(query: str) -> str:
            """Search; its latency is simulated (12 s against an 8 s limit), never slept.

            Args:
                query: What to look for.
            """

            async def work() -> str:
                raise ToolTimeLimit(12.0, 8.0)

            return await guarded_call("slow_search", work, on_timeout=on_timeout)

        return execute

    return slow_search()


@pytest.mark.parametrize("on_timeout", ["limit", "harness_error"])
def test_a_simulated_tool_time_limit_counts_against_the_tools_own_limit(
    tmp_path: Path, on_timeout: str
) -> None:
    """A tool that simulates its latency (records_desk) raises `ToolTimeLimit`: the same
    outcome as a real timeout, labelled with the tool's own limit, not the runner's."""
    spec = EpisodeSpec(item_id="i1", epoch=1, seed=1)  # the runner's timeout: 30 s
    task = Task(
        dataset=[Sample(id="i1::1", input="find it", metadata={EPISODE_KEY: spec.model_dump()})],
        setup=[episode_setup()],
        solver=[use_tools(_simulated(on_timeout)), _loop()],
        scorer=always_one(),
    )
    model = get_model("mockllm/model", custom_outputs=_outputs)
    (log,) = inspect_eval(
        task, model=model, log_dir=str(tmp_path), display="none", log_format="json"
    )
    assert log.samples is not None
    sample = log.samples[0]
    classified = classify_sample(sample)
    if on_timeout == "limit":
        assert (classified.outcome, classified.limit_type) == ("limit", "tool_time")
        assert classified.reason == "tool time limit: slow_search (8s)"
    else:
        assert classified.outcome == "harness_error"
        assert sample.error is not None and "did not answer within 8s" in sample.error.message
