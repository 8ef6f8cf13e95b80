"""Shared helpers for the records_desk tests.

The task file is loaded by path with importlib, as the evalsuite runner does. `simulate` plays
a reference agent and `play` a kit policy against the records without inspect (the same
dispatch table as the tools, the same messages inspect builds; a search past its simulated
time limit is the tool error the model sees, and marks the episode as a limit), so checks
over every dev item take a second. The runner-level checks are in test_records_task.py.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
)
from inspect_ai.tool import ToolCall, ToolCallError, ToolInfo

from evalsuite.agents import ReferenceAgents

ROOT = Path(__file__).resolve().parents[2]
TASK_FILE = ROOT / "tasks" / "records_desk" / "task.py"
ITEMS_FILE = ROOT / "tasks" / "records_desk" / "items.jsonl"
TASK_V2_FILE = ROOT / "tasks" / "records_desk" / "task_v2.py"
"""Version 2 (records@2.0.0): the same records system, tools and verifier; new requests, whose
dev items share `ITEMS_FILE` with version 1's (ids ``records-v2-NNNN``)."""


def _load(name: str = "evalsuite_runner_style_records_desk", path: Path = TASK_FILE) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TASK = _load()
TASK_V2 = _load("evalsuite_runner_style_records_desk_v2", TASK_V2_FILE)
env = TASK.env
verifier = TASK.verifier
scripted = TASK.scripted
generate = TASK.submodule("generate")
TOOL_NAMES = list(TASK.tools.TIMEOUT_OUTCOME)


def _source() -> list[dict[str, Any]]:
    return [json.loads(line) for line in ITEMS_FILE.read_text().splitlines()]


def dev_items() -> list[dict[str, Any]]:
    """Version 1's dev items (records@1.0.0)."""
    return [i for i in _source() if not i["id"].startswith("records-v2-")]


def dev_items_v2() -> list[dict[str, Any]]:
    """Version 2's dev items (records@2.0.0)."""
    return [i for i in _source() if i["id"].startswith("records-v2-")]


def stratum(item: dict[str, Any]) -> str:
    return f"{item['metadata']['intent']}/{item['metadata']['condition']}"


class Outcome:
    """An offline episode's end: the final runtime state, its verdict, a tool-time limit."""

    def __init__(self, item: dict[str, Any], state: dict[str, Any], limit: bool) -> None:
        self.state = state
        self.limit = limit
        self.verdict = verifier.evaluate(
            item["metadata"]["initial_state"], state["source"], json.loads(item["target"])
        )

    @property
    def score(self) -> float:
        """What the runner records: 0 for a limit, else the verifier's value."""
        return 0.0 if self.limit else float(self.verdict.passed)


def _call(records: Any, function: str, arguments: dict[str, Any]) -> tuple[str, str | None, bool]:
    """(result text, error, ran out of time) of one tool call."""
    try:
        found = env.dispatch(records, function, dict(arguments))
    except env.RecordsError as exc:
        return "", str(exc), False
    except env.TooSlow as exc:
        return "", f"tool {function!r} did not answer within {exc.limit_s:g}s", True
    return json.dumps(found, sort_keys=True, ensure_ascii=False), None, False


def simulate(agent: str, item: dict[str, Any], seed: int, max_turns: int = 24) -> Outcome:
    """Play reference agent `agent` on `item` with episode seed `seed`."""
    api = ReferenceAgents(agent)
    state = env.fresh_runtime(item["metadata"]["initial_state"])
    records = env.Records(state)
    messages: list[ChatMessage] = [
        ChatMessageSystem(content=TASK.SYSTEM_PROMPT),
        ChatMessageUser(content=item["input"]),
    ]
    tools = [ToolInfo(name=name, description=name) for name in TOOL_NAMES]
    limit = False
    for _ in range(max_turns):
        turn = api.turn(messages, tools, seed)
        if turn.function is None:
            break
        call = ToolCall(id=f"c{len(messages)}", function=turn.function, arguments=turn.arguments)
        messages.append(ChatMessageAssistant(content=turn.text, tool_calls=[call]))
        text, error, slow = _call(records, turn.function, turn.arguments)
        limit = limit or slow
        messages.append(
            ChatMessageTool(
                content=text,
                tool_call_id=call.id,
                function=call.function,
                error=ToolCallError("unknown", error) if error else None,
            )
        )
    else:
        raise AssertionError(f"{agent} did not finish {item['id']} in {max_turns} turns")
    return Outcome(item, state, limit)


def play(policy: Callable[[Any], str], item: dict[str, Any]) -> Outcome:
    """Play a kit policy (`scripted`) on `item` without inspect."""
    from evalsuite.kit import Episode, NextCall, ToolResult

    state = env.fresh_runtime(item["metadata"]["initial_state"])
    records = env.Records(state)
    results: list[ToolResult] = []
    limit = False
    for _ in range(80):
        episode = Episode(
            item_id=item["id"],
            epoch=1,
            seed=1,
            prompt=item["input"],
            target=item["target"],
            metadata=item["metadata"],
            tools=frozenset(TOOL_NAMES),
            results=list(results),
        )
        try:
            policy(episode)
            break
        except NextCall as step:
            text, error, slow = _call(records, step.function, step.arguments)
            limit = limit or slow
            results.append(ToolResult(step.function, step.arguments, text, error))
    return Outcome(item, state, limit)


def play_redteam(name: str, item: dict[str, Any], system: str | None = None) -> Outcome:
    """Play red-team policy `name` (tests/redteam/cheap_models.py) on `item` without inspect:
    the conversation the provider would see (the prompt, its calls and their results)."""
    from evalsuite.agents._common import NextCall, Replay, read_conversation
    from tests.redteam import cheap_models

    policy = cheap_models.POLICIES[name]
    state = env.fresh_runtime(item["metadata"]["initial_state"])
    records = env.Records(state)
    messages: list[ChatMessage] = [
        ChatMessageSystem(content=system or TASK.SYSTEM_PROMPT),
        ChatMessageUser(content=item["input"]),
    ]
    tools = [ToolInfo(name=name, description=name) for name in TOOL_NAMES]
    limit = False
    for _ in range(60):
        conversation = read_conversation(messages, tools)
        try:
            policy.fn(cheap_models.Play(conversation, Replay(conversation.results)))
            break
        except NextCall as step:
            call = ToolCall(
                id=f"c{len(messages)}", function=step.function, arguments=dict(step.arguments)
            )
        except Exception:  # a final answer (`Done`) or the policy's own slip: its failure
            break
        messages.append(ChatMessageAssistant(content="", tool_calls=[call]))
        text, error, slow = _call(records, call.function, call.arguments)
        limit = limit or slow
        messages.append(
            ChatMessageTool(
                content=text,
                tool_call_id=call.id,
                function=call.function,
                error=ToolCallError("unknown", error) if error else None,
            )
        )
    return Outcome(item, state, limit)
