"""The families' agent loop (`evalsuite.kit.tool_loop`) against inspect's own generate loop.

Each check runs the same episodes twice in one inspect eval each: once with the family's task
as shipped (its solver calls `tool_loop`) and once with the same task whose agent solver is
inspect's ``generate(state, tool_calls="loop", seed=episode_seed(state))``, as the families
did before. The messages, the model and tool events, the store, the scores and the limits
must be the same (docs/design/run-speed.md, "The families' agent loop").
"""

from __future__ import annotations

import traceback
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task
from inspect_ai.event import ModelEvent, StoreEvent, ToolEvent
from inspect_ai.log import EvalLog, EvalSample
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolDef

from evalsuite.run import episode_seed
from tests.helpers import count_calls
from tests.tasks import records_helpers as rh
from tests.tasks import support_helpers as sh


@solver
def inspect_loop() -> Solver:
    """What the families' agent solver was: inspect's own tool loop."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return await generate(state, tool_calls="loop", seed=episode_seed(state))

    return solve


def _with_inspect_loop(task: Task) -> Task:
    """`task` with its last solver (the agent loop) replaced by inspect's generate loop."""
    solvers = list(task.solver._solvers)  # type: ignore[attr-defined]
    return Task(
        dataset=task.dataset,
        setup=task.setup,
        solver=[*solvers[:-1], inspect_loop()],
        scorer=task.scorer,
        time_limit=task.time_limit,
        message_limit=task.message_limit,
        token_limit=task.token_limit,
        version=task.version,
    )


def _message(message: Any) -> dict[str, Any]:
    out: dict[str, Any] = message.model_dump(exclude={"id", "model"})
    return out


def _event(event: Any) -> dict[str, Any] | None:
    if isinstance(event, ModelEvent):
        return {
            "kind": "model",
            "input": [_message(m) for m in event.input],
            "tools": [t.model_dump() for t in event.tools],
            "tool_choice": str(event.tool_choice),
            "config": event.config.model_dump(),
            "output": [_message(c.message) for c in event.output.choices],
            "usage": event.output.usage.model_dump() if event.output.usage else None,
        }
    if isinstance(event, ToolEvent):
        return {
            "kind": "tool",
            "function": event.function,
            "arguments": event.arguments,
            "result": event.result,
            "error": (event.error.type, event.error.message) if event.error else None,
        }
    if isinstance(event, StoreEvent):
        return {"kind": "store", "changes": [c.model_dump() for c in event.changes]}
    return None


def _sample(sample: EvalSample) -> dict[str, Any]:
    return {
        "id": sample.id,
        "epoch": sample.epoch,
        "messages": [_message(m) for m in sample.messages],
        "events": [e for e in (_event(ev) for ev in sample.events) if e is not None],
        "scores": {k: (v.value, v.answer, v.metadata) for k, v in (sample.scores or {}).items()},
        "store": sample.store,
        "limit": sample.limit.type if sample.limit else None,
        "error": sample.error.message if sample.error else None,
        "usage": {k: v.model_dump() for k, v in sample.model_usage.items()},
    }


def _both(
    task_fn: Any, samples: list[Any], model: str, tmp: Path, *, epochs: int = 2, **limits: Any
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    logs: list[EvalLog] = []
    for name, task in (
        ("tool_loop", task_fn(dataset=samples)),
        ("inspect_loop", _with_inspect_loop(task_fn(dataset=samples))),
    ):
        logs.append(sh.run_eval(task, model, tmp / name, epochs=epochs, **limits))
    ours, theirs = ([_sample(s) for s in log.samples or []] for log in logs)
    return ours, theirs


@pytest.mark.parametrize("agent", ["evalsuite/baseline", "evalsuite/improved"])
def test_the_support_loop_records_what_inspects_generate_loop_records(
    agent: str, tmp_path: Path
) -> None:
    # one clean ticket of each of the six intents, one epoch: the second epoch's seeds (the
    # episode seed of (item, epoch)) are compared in the records and limits tests below
    items = sh.stratified(sh.dev_items(), per_stratum=1)[::2]
    samples = sh.episode_samples(items, seed=3)
    ours, theirs = _both(sh.TASK_V2.support_desk, samples, agent, tmp_path, epochs=1)
    assert len(ours) == len(items)
    assert any(e["kind"] == "tool" for s in ours for e in s["events"])
    assert ours == theirs


def test_the_records_loop_records_what_inspects_generate_loop_records(tmp_path: Path) -> None:
    items = sorted(rh.dev_items(), key=lambda it: it["id"])[::20]
    samples = sh.episode_samples(items, seed=5)
    ours, theirs = _both(rh.TASK.records_desk, samples, "evalsuite/baseline", tmp_path)
    assert len(ours) == 2 * len(items)
    assert ours == theirs


@pytest.mark.parametrize(
    ("limits", "kind"),
    [({"message_limit": 7}, "message"), ({"token_limit": 3_000}, "token")],
)
def test_limits_end_the_loop_as_they_end_inspects_loop(
    limits: dict[str, int], kind: str, tmp_path: Path
) -> None:
    items = sh.stratified(sh.dev_items(), per_stratum=1)[:2]  # two episodes of two epochs
    samples = sh.episode_samples(items, seed=3)
    ours, theirs = _both(sh.TASK_V2.support_desk, samples, "evalsuite/baseline", tmp_path, **limits)
    assert len(ours) == 2 * len(items)
    assert {s["limit"] for s in ours} == {kind}
    assert ours == theirs


def test_tool_definitions_are_built_once_per_episode(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """inspect's loop rebuilds a `ToolDef` of every tool at each tool execution
    (``tool_defs``); the family loop builds them once per episode."""
    built: list[str] = []
    original = ToolDef.__init__

    def counting(self: ToolDef, tool: Any, *args: Any, **kwargs: Any) -> None:
        original(self, tool, *args, **kwargs)
        # the innermost of the three callers that builds it
        for frame in reversed(traceback.extract_stack(limit=12)):
            if frame.name in ("tool_loop", "prepare_tools", "tool_defs"):
                built.append(frame.name)
                break

    monkeypatch.setattr(ToolDef, "__init__", counting)
    items = sh.stratified(sh.dev_items(), per_stratum=1)[:3]
    samples = sh.episode_samples(items, seed=3)
    tools = len(sh.TASK_V2.tools.support_tools())
    counts: dict[str, Counter[str]] = {}
    turns: dict[str, int] = {}
    for name, task in (
        ("tool_loop", sh.TASK_V2.support_desk(dataset=samples)),
        ("inspect_loop", _with_inspect_loop(sh.TASK_V2.support_desk(dataset=samples))),
    ):
        built.clear()
        log = sh.run_eval(task, "evalsuite/baseline", tmp_path / name)
        assert log.samples is not None
        turns[name] = sum(1 for s in log.samples for e in s.events if isinstance(e, ModelEvent))
        counts[name] = Counter(built)
    assert turns["tool_loop"] == turns["inspect_loop"] > 3 * len(items)
    # the model is called with the tools as inspect's loop calls it (prepare_tools builds
    # them from a cached description); execute_tools no longer rebuilds them
    assert counts["tool_loop"] == Counter(
        {"tool_loop": tools * len(items), "prepare_tools": tools * turns["tool_loop"]}
    )
    assert counts["inspect_loop"]["prepare_tools"] == tools * turns["inspect_loop"]
    assert counts["inspect_loop"]["tool_defs"] >= tools * (turns["inspect_loop"] - len(items))


@pytest.mark.parametrize("family", ["support_desk", "records_desk"])
def test_tool_calls_read_and_write_the_episode_state_by_key(
    family: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The episode's state is bound as a `StoreModel` once, by its reset; the tools and the
    verifier read and write it by its store keys (they bound it at every call, and a
    `StoreModel` re-validates itself at every field it sets)."""
    if family == "support_desk":
        module, items = sh.TASK_V2, sh.stratified(sh.dev_items(), per_stratum=1)[:3]
        model_cls, task_fn = module.episode.ShopStore, module.support_desk
    else:
        module, items = rh.TASK, sorted(rh.dev_items(), key=lambda it: it["id"])[:3]
        model_cls, task_fn = module.episode.RecordsStore, module.records_desk
    bound = count_calls(monkeypatch, model_cls, "model_post_init")
    log = sh.run_eval(
        task_fn(dataset=sh.episode_samples(items, seed=3)), "evalsuite/baseline", tmp_path
    )
    assert log.samples is not None and len(log.samples) == len(items)
    tools = sum(1 for s in log.samples for e in s.events if isinstance(e, ToolEvent))
    assert tools > 2 * len(items)
    assert all(s.scores for s in log.samples)
    # the reset binds the model once and re-validates it at each of the fields it sets (the
    # state, its hash, and support_desk's item id): per episode, whatever its tool calls
    per_reset = {"support_desk": 1 + 3, "records_desk": 1 + 2}[family]
    assert len(bound) == per_reset * len(items)
