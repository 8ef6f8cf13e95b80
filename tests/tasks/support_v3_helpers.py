"""Helpers for support_desk version 3's items: generated in memory, never written to disk.

Version 3's items are not in tasks/support_desk/items.jsonl until support@3.0.0 is frozen (a
freeze writes the dev half there and seals the holdout half): the tests generate them
(`items_v3.generate_items`, deterministic), split them as a freeze of 3.0.0 would
(`dev_ids`), and play policies and the reference agents on them without inspect, through the
shop's own dispatch table, as tests/tasks/support_helpers.py does for version 2. `redteam`
plays the grader audit's generated red-team policies (evalsuite/audit/_redteam.py: templates
learned from the other items' passing oracle and reference episodes, leave one out within the
stratum) on the dev items, in memory.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
)
from inspect_ai.tool import ToolCall, ToolCallError, ToolInfo

from evalsuite._core.seeds import derive_seed
from evalsuite.agents import ReferenceAgents
from evalsuite.audit._redteam import GENERATED, REFERENCE_VARIANTS, generated_policies, template_of
from evalsuite.kit import Episode, NextCall, ToolResult
from evalsuite.manifest._split import split_salt, stratified_split
from tests.tasks.support_helpers import TASK_V3, env, judge_v3, verifier_v3

items_v3 = TASK_V3.submodule("items_v3")
generate = TASK_V3.submodule("generate")
scripted = TASK_V3.submodule("scripted")
Call = verifier_v3.Call
VERSION = "3.0.0"
"""The version the lead freezes version 3's items as (its split salt decides dev and holdout)."""


@cache
def _generated() -> tuple[str, ...]:
    return tuple(json.dumps(item, sort_keys=True) for item in items_v3.generate_items())


def v3_items() -> list[dict[str, Any]]:
    """Every version 3 item (a fresh copy each call)."""
    return [json.loads(line) for line in _generated()]


def stratum(item: dict[str, Any]) -> str:
    meta = item["metadata"]
    return f"support_desk/{meta['intent']}/{meta['condition']}"


def dev_ids(items: Sequence[dict[str, Any]], version: str = VERSION) -> set[str]:
    """The items a freeze of `version` puts in the dev split (the suite's salted split)."""
    sides = stratified_split(
        {item["id"]: stratum(item) for item in items},
        salt=split_salt(generate.CANARY, version),
        fraction=0.5,
    )
    return {i for i, side in sides.items() if side == "dev"}


def v3_dev_items() -> list[dict[str, Any]]:
    items = v3_items()
    dev = dev_ids(items)
    return [item for item in items if item["id"] in dev]


# ---- playing without inspect ---------------------------------------------------------------------
Played = tuple[dict[str, Any], list[Any], list[ToolResult], str]
"""(final state, the verifier's calls, the tool results as a policy sees them, final answer)."""


def _run(shop: Any, function: str, arguments: dict[str, Any]) -> tuple[str, Any, str | None]:
    try:
        found = env.dispatch(shop, function, arguments)
    except env.ShopError as exc:
        return "", None, str(exc)
    except (KeyError, TypeError) as exc:  # a missing or malformed argument: the tool's error
        return "", None, f"bad arguments: {exc}"
    return json.dumps(found, sort_keys=True), found, None


def play(policy: Callable[[Episode], str], item: dict[str, Any], max_calls: int = 40) -> Played:
    """A kit or generated policy on `item`, through the shop's dispatch table."""
    state = env.fresh_runtime(item["metadata"]["initial_state"])
    shop = env.Shop(state)
    results: list[ToolResult] = []
    calls: list[Any] = []
    answer = ""
    for _ in range(max_calls):
        episode = Episode(
            item_id=item["id"],
            epoch=1,
            seed=1,
            prompt=item["input"],
            target=item["target"],
            metadata=item["metadata"],
            tools=frozenset(env.TOOL_NAMES),
            results=list(results),
        )
        try:
            answer = policy(episode)
            break
        except NextCall as step:
            text, found, error = _run(shop, step.function, dict(step.arguments))
            results.append(ToolResult(step.function, dict(step.arguments), text, error))
            calls.append(Call(step.function, dict(step.arguments), not error, found))
    return state, calls, results, answer


Turn = tuple[str, str | None, dict[str, Any]]
"""A model's turn: (text, tool called or None, its arguments)."""


def converse(
    turn: Callable[[list[ChatMessage], list[ToolInfo]], Turn],
    item: dict[str, Any],
    max_turns: int = 19,
) -> Played:
    """A model (`turn`: the conversation so far -> its next turn) on `item`, with version 3's
    system prompt, the way inspect feeds it: the ticket, then each call's result."""
    state = env.fresh_runtime(item["metadata"]["initial_state"])
    shop = env.Shop(state)
    messages: list[ChatMessage] = [
        ChatMessageSystem(content=TASK_V3.SYSTEM_PROMPT),
        ChatMessageUser(content=item["input"]),
    ]
    tools = [ToolInfo(name=n, description=n) for n in env.TOOL_NAMES]
    calls: list[Any] = []
    results: list[ToolResult] = []
    answer = ""
    for _ in range(max_turns):
        text, function, arguments = turn(messages, tools)
        if function is None:
            answer = text
            break
        call = ToolCall(id=f"c{len(messages)}", function=function, arguments=arguments)
        messages.append(ChatMessageAssistant(content=text, tool_calls=[call]))
        found_text, found, error = _run(shop, function, dict(arguments))
        messages.append(
            ChatMessageTool(
                content=found_text,
                tool_call_id=call.id,
                function=call.function,
                error=ToolCallError("unknown", error) if error else None,
            )
        )
        calls.append(Call(function, dict(arguments), not error, found))
        results.append(ToolResult(function, dict(arguments), found_text, error))
    return state, calls, results, answer


def agent(name: str, item: dict[str, Any], seed: int) -> Played:
    """A reference agent (`evalsuite/<name>`) on `item`."""
    api = ReferenceAgents(name)

    def turn(messages: list[ChatMessage], tools: list[ToolInfo]) -> Turn:
        found = api.turn(messages, tools, seed)
        return found.text, found.function, dict(found.arguments)

    return converse(turn, item)


def score(item: dict[str, Any], played: Played) -> float:
    final, calls, _, _ = played
    return float(judge_v3(item, final, calls).score)


def agent_seed(item: dict[str, Any], seed: int = 0) -> int:
    """The episode seed the runner gives `item` in epoch 1 of a run with `seed`."""
    return derive_seed(seed, item["id"], 1)


def agent_means(items: Iterable[dict[str, Any]], seed: int = 0) -> dict[str, float]:
    """Mean version 3 score of each reference agent over `items`."""
    items = list(items)
    means = {}
    for name in ("baseline", "improved", "hacker"):
        scores = [score(item, agent(name, item, agent_seed(item, seed))) for item in items]
        means[name] = sum(scores) / len(scores)
    return means


# ---- the audit's generated red-team policies, in memory ---------------------------------------
def redteam(
    items: Sequence[dict[str, Any]],
    seed: int = 0,
    *,
    oracle: Callable[[Episode], str] | None = None,
    agent_fn: Callable[[str, dict[str, Any], int], Played] | None = None,
    score_fn: Callable[[dict[str, Any], Played], float] | None = None,
) -> dict[str, dict[str, list[str]]]:
    """Every generated policy the grader audit plays, on every item of `items` (the dev split),
    learned from the passing oracle and reference episodes of the other items of its stratum.

    Version 3's oracle, agents' conversation and verifier unless `oracle`, `agent_fn` and
    `score_fn` are given (tests/tasks/support_v4_helpers.py gives version 4's).
    Returns policy -> stratum -> the items it passed (empty lists: it passed none).
    """
    oracle = oracle or scripted.oracle_v3
    run_agent = agent_fn or agent
    judge = score_fn or score
    sources: dict[str, tuple[dict[str, Any], tuple[str, ...]]] = {}
    episodes: dict[str, Callable[[dict[str, Any]], Played]] = {
        "oracle": lambda item: play(oracle, item),
        "baseline": lambda item: run_agent("baseline", item, agent_seed(item, seed)),
        "improved": lambda item: run_agent("improved", item, agent_seed(item, seed)),
    }
    for source, run in episodes.items():
        templates: dict[str, list[tuple[str, Any]]] = defaultdict(list)
        for item in items:
            played = run(item)
            if judge(item, played) == 1.0:
                _, _, results, answer = played
                templates[stratum(item)].append(
                    (item["id"], template_of(item["input"], results, answer))
                )
        sources[source] = (templates, GENERATED if source == "oracle" else REFERENCE_VARIANTS)
    passed: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for item in items:
        for source, (templates, variants) in sources.items():
            others = [t for other, t in templates[stratum(item)] if other != item["id"]]
            made = generated_policies(item["input"], others, variants)
            for variant, policy in made.items():
                name = variant if source == "oracle" else f"{variant}@{source}"
                hit = judge(item, play(policy, item)) > 0
                passed[name][stratum(item)] += [item["id"]] if hit else []
    return {name: dict(strata) for name, strata in passed.items()}
