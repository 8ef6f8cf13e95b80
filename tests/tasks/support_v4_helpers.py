"""Helpers for support_desk version 4's items: generated in memory, never written to disk.

As tests/tasks/support_v3_helpers.py does for version 3 (whose playing machinery this module
reuses): version 4's items are not in tasks/support_desk/items.jsonl until support@4.0.0 is
frozen; the tests generate them (`items_v4.generate_items`, deterministic), split them as a
freeze of 4.0.0 would (`dev_ids`), and play policies and the reference agents on them without
inspect, through the shop's own dispatch table and version 4's system prompt.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable, Iterable
from functools import cache
from types import ModuleType
from typing import Any

from inspect_ai.model import ChatMessage
from inspect_ai.tool import ToolInfo

from evalsuite.agents import ReferenceAgents
from evalsuite.kit import Episode
from tests.tasks import support_helpers
from tests.tasks import support_v3_helpers as v3
from tests.tasks.support_helpers import ROOT
from tests.tasks.support_v3_helpers import Played, Turn, agent_seed, dev_ids, play, stratum

__all__ = [
    "TASK_V4",
    "Played",
    "Turn",
    "agent",
    "agent_means",
    "agent_seed",
    "converse",
    "judge_v4",
    "play",
    "score",
    "stratum",
    "v4_dev_items",
    "v4_items",
]

TASK_V4_FILE = ROOT / "tasks" / "support_desk" / "task_v4.py"
VERSION = "4.0.0"
"""The version the lead freezes version 4's items as (its split salt decides dev and holdout)."""


def load_v4(name: str = "evalsuite_runner_style_support_desk_v4") -> ModuleType:
    """The version 4 task file imported by path under `name` (runner-style), cached."""
    loaded = support_helpers._loaded
    if name not in loaded:
        spec = importlib.util.spec_from_file_location(name, TASK_V4_FILE)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        loaded[name] = module
    return loaded[name]


TASK_V4 = load_v4()
verifier_v4 = TASK_V4.verifier
items_v4 = TASK_V4.submodule("items_v4")
scripted = TASK_V4.submodule("scripted")


@cache
def _generated() -> tuple[str, ...]:
    return tuple(json.dumps(item, sort_keys=True) for item in items_v4.generate_items())


def v4_items() -> list[dict[str, Any]]:
    """Every version 4 item (a fresh copy each call)."""
    return [json.loads(line) for line in _generated()]


def v4_dev_items() -> list[dict[str, Any]]:
    """The dev half of version 4's items, as a freeze of 4.0.0 splits them."""
    items = v4_items()
    dev = dev_ids(items, VERSION)
    return [item for item in items if item["id"] in dev]


def judge_v4(item: dict[str, Any], final: dict[str, Any], calls: Any) -> Any:
    """Verifier version 4's verdict for `item` given a final state and the episode's calls."""
    return verifier_v4.evaluate(
        item["metadata"]["initial_state"],
        final,
        json.loads(item["target"]),
        ticket=item["input"],
        calls=calls,
    )


def score(item: dict[str, Any], played: Played) -> float:
    final, calls, _, _ = played
    return float(judge_v4(item, final, calls).score)


def converse(
    turn: Callable[[list[ChatMessage], list[ToolInfo]], Turn],
    item: dict[str, Any],
    max_turns: int = 39,
) -> Played:
    """`support_v3_helpers.converse` with version 4's system prompt (and room for its longer
    tickets: 39 turns, within the task's 80 messages)."""
    original = v3.TASK_V3
    v3.TASK_V3 = TASK_V4  # the system prompt is read from the module at call time
    try:
        return v3.converse(turn, item, max_turns)
    finally:
        v3.TASK_V3 = original


def agent(name: str, item: dict[str, Any], seed: int) -> Played:
    """A reference agent (`evalsuite/<name>`) on `item`, with version 4's policy."""
    api = ReferenceAgents(name)

    def turn(messages: list[ChatMessage], tools: list[ToolInfo]) -> Turn:
        found = api.turn(messages, tools, seed)
        return found.text, found.function, dict(found.arguments)

    return converse(turn, item)


def agent_means(items: Iterable[dict[str, Any]], seed: int = 0) -> dict[str, float]:
    """Mean version 4 score of each reference agent over `items`."""
    items = list(items)
    means = {}
    for name in ("baseline", "improved", "hacker"):
        scores = [score(item, agent(name, item, agent_seed(item, seed))) for item in items]
        means[name] = sum(scores) / len(scores)
    return means


def kit_scores(policy: Callable[[Episode], str], items: Iterable[dict[str, Any]]) -> list[float]:
    """A kit policy's version 4 score on each of `items`."""
    return [score(item, play(policy, item)) for item in items]
