"""Shared helpers for the support_desk and reference-agent tests.

The task file is loaded by path with importlib, as the evalsuite runner does. `simulate` plays
an agent against the shop without inspect (same dispatch table as the tools, same messages as
inspect builds), which makes exhaustive checks over every dev item take a second.
"""

from __future__ import annotations

import importlib.util
import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog
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
from evalsuite.run import EPISODE_KEY, EpisodeSpec, item_to_sample

ROOT = Path(__file__).resolve().parents[2]
TASK_FILE = ROOT / "tasks" / "support_desk" / "task.py"
ITEMS_FILE = ROOT / "tasks" / "support_desk" / "items.jsonl"
ARITH_ITEMS = ROOT / "tasks" / "arith" / "items.jsonl"
SCORER = "support_verifier"

_loaded: dict[str, ModuleType] = {}


def load_task_module(name: str = "evalsuite_runner_style_support_desk") -> ModuleType:
    """The task file imported by path under `name` (runner-style), cached per name."""
    if name not in _loaded:
        spec = importlib.util.spec_from_file_location(name, TASK_FILE)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _loaded[name] = module
    return _loaded[name]


TASK = load_task_module()
env = TASK.env
verifier = TASK.verifier


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def dev_items() -> list[dict[str, Any]]:
    """Version 1's (and 2's) items in tasks/support_desk/items.jsonl (the dev split only, once
    frozen). Later versions' (ids ``support-v3-NNNN``, ``support-v4-NNNN``) share the file once
    frozen: tests/tasks/support_v3_helpers.py and support_v4_helpers.py generate them."""
    return [
        item
        for item in read_jsonl(ITEMS_FILE)
        if not item["id"].startswith(("support-v3-", "support-v4-"))
    ]


def stratum(item: dict[str, Any]) -> tuple[str, str]:
    return item["metadata"]["intent"], item["metadata"]["condition"]


def stratified(items: Iterable[dict[str, Any]], per_stratum: int) -> list[dict[str, Any]]:
    """The first `per_stratum` items (by id) of every (intent, condition) stratum."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for item in sorted(items, key=lambda it: it["id"]):
        groups[stratum(item)].append(item)
    return [it for key in sorted(groups) for it in groups[key][:per_stratum]]


def episode_samples(
    items: Sequence[dict[str, Any]], seed: int, epoch: int = 1, **spec: Any
) -> list[Sample]:
    """Samples carrying a runner-style EpisodeSpec (per-item seed derived from `seed`)."""
    return [
        item_to_sample(
            item,
            extra={
                EPISODE_KEY: EpisodeSpec(
                    item_id=item["id"],
                    epoch=epoch,
                    seed=derive_seed(seed, item["id"], epoch),
                    **spec,
                ).model_dump()
            },
        )
        for item in items
    ]


def run_eval(task: Task, model: str, log_dir: Path, **kwargs: Any) -> EvalLog:
    """One offline eval, JSON log in `log_dir`, no display, no realtime buffer."""
    (log,) = eval(
        task,
        model=model,
        log_dir=str(log_dir),
        log_format="json",
        display="none",
        log_realtime=False,
        **kwargs,
    )
    return log


def sample_scores(log: EvalLog) -> dict[str, float]:
    assert log.samples is not None
    return {str(s.id): float(s.scores[SCORER].value) for s in log.samples}  # type: ignore[index,arg-type]


def check_rate(log: EvalLog, check: str) -> float:
    assert log.samples is not None
    values = [bool(s.scores[SCORER].metadata[check]) for s in log.samples]  # type: ignore[index]
    return sum(values) / len(values)


def mean(values: Iterable[float]) -> float:
    values = list(values)
    return sum(values) / len(values)


# ---- offline simulation (no inspect eval loop) ---------------------------------------------
def _tool_infos() -> list[ToolInfo]:
    return [ToolInfo(name=name, description=name) for name in env.TOOL_NAMES]


def simulate(
    agent: str, item: dict[str, Any], seed: int, max_turns: int = 19
) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    """Play `agent` on `item` with episode seed `seed`: (final runtime state, calls made).

    The agent gets exactly what inspect gives it: system prompt, ticket, tool results.
    """
    api = ReferenceAgents(agent)
    state = env.fresh_runtime(item["metadata"]["initial_state"])
    shop = env.Shop(state)
    messages: list[ChatMessage] = [
        ChatMessageSystem(content=TASK.SYSTEM_PROMPT),
        ChatMessageUser(content=item["input"]),
    ]
    tools, calls = _tool_infos(), []
    for _ in range(max_turns):
        turn = api.turn(messages, tools, seed)
        if turn.function is None:
            break
        call = ToolCall(id=f"c{len(messages)}", function=turn.function, arguments=turn.arguments)
        calls.append((turn.function, dict(turn.arguments)))
        messages.append(ChatMessageAssistant(content=turn.text, tool_calls=[call]))
        try:
            result = json.dumps(env.dispatch(shop, turn.function, turn.arguments), sort_keys=True)
            error = None
        except env.ShopError as exc:
            result, error = "", ToolCallError("unknown", str(exc))
        messages.append(
            ChatMessageTool(
                content=result, tool_call_id=call.id, function=call.function, error=error
            )
        )
    return state, calls


def judge(item: dict[str, Any], final: dict[str, Any]) -> Any:
    """The verifier's verdict for `item` given a final runtime state."""
    return verifier.evaluate(item["metadata"]["initial_state"], final, json.loads(item["target"]))


# ---- reference solutions -----------------------------------------------------------------
def oracle_shop(item: dict[str, Any]) -> Any:
    """A shop on which the expected outcome has been carried out per policy (not yet answered)."""
    shop = env.Shop(env.fresh_runtime(item["metadata"]["initial_state"]))
    target = json.loads(item["target"])
    action = target["action"]
    customer = shop.customer(target["customer"])
    if action == "refund":
        shop.refund(target["order"], target["line"], env.money(target["amount_cents"]), "test")
    elif action == "replace":
        shop.ship_replacement(target["order"], target["line"], "damaged")
    elif action == "cancel":
        shop.cancel_order(target["order"], "test")
    elif action == "update_address":
        assert shop.verify_identity(customer["id"], postcode=customer["address"]["postcode"])
        new = target["address"]
        shop.update_address(customer["id"], new["line1"], new["city"], new["postcode"])
    elif target["reason"] == "identity_not_verified":
        assert not shop.verify_identity(customer["id"], postcode="ZZ99 9ZZ")
    return shop


def answer(shop: Any, message: str, status: str = "closed") -> Any:
    ticket = shop.state["tickets"][0]["id"]
    shop.reply(ticket, message)
    shop.set_ticket_status(ticket, status)
    return shop


DONE = "All done: your request has been completed."
DECLINED = "I'm sorry, but I am unable to do this under our policy."


def oracle_final(item: dict[str, Any]) -> dict[str, Any]:
    decline = json.loads(item["target"])["action"] == "decline"
    return answer(oracle_shop(item), DECLINED if decline else DONE).state  # type: ignore[no-any-return]


Mutation = Callable[[Any, dict[str, Any]], None]


# ---- version 2 (support@2.0.0) ---------------------------------------------------------------
TASK_V2_FILE = ROOT / "tasks" / "support_desk" / "task_v2.py"


def load_v2(name: str = "evalsuite_runner_style_support_desk_v2") -> ModuleType:
    """The version 2 task file imported by path under `name` (runner-style), cached per name."""
    if name not in _loaded:
        spec = importlib.util.spec_from_file_location(name, TASK_V2_FILE)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _loaded[name] = module
    return _loaded[name]


TASK_V2 = load_v2()
verifier_v2 = TASK_V2.verifier
scripted = TASK_V2.submodule("scripted")


def _result(shop: Any, function: str, arguments: dict[str, Any]) -> tuple[str, Any, str | None]:
    try:
        found = env.dispatch(shop, function, arguments)
    except env.ShopError as exc:
        return "", None, str(exc)
    return json.dumps(found, sort_keys=True), found, None


def play(policy: Callable[[Any], str], item: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
    """Play a kit policy (`scripted`) on `item` without inspect: (final state, v2 calls)."""
    from evalsuite.kit import Episode, NextCall, ToolResult

    state = env.fresh_runtime(item["metadata"]["initial_state"])
    shop = env.Shop(state)
    results: list[ToolResult] = []
    calls = []
    for _ in range(40):
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
            policy(episode)
            break
        except NextCall as step:
            text, found, error = _result(shop, step.function, step.arguments)
            results.append(ToolResult(step.function, step.arguments, text, error))
            calls.append(verifier_v2.Call(step.function, dict(step.arguments), not error, found))
    return state, calls


def agent_episode(agent: str, item: dict[str, Any], seed: int) -> tuple[dict[str, Any], list[Any]]:
    """Play a reference agent on `item` without inspect: (final state, v2 calls)."""
    api = ReferenceAgents(agent)
    state = env.fresh_runtime(item["metadata"]["initial_state"])
    shop = env.Shop(state)
    messages: list[ChatMessage] = [
        ChatMessageSystem(content=TASK_V2.SYSTEM_PROMPT),
        ChatMessageUser(content=item["input"]),
    ]
    calls = []
    for _ in range(19):
        turn = api.turn(messages, _tool_infos(), seed)
        if turn.function is None:
            break
        call = ToolCall(id=f"c{len(messages)}", function=turn.function, arguments=turn.arguments)
        messages.append(ChatMessageAssistant(content=turn.text, tool_calls=[call]))
        text, found, error = _result(shop, turn.function, turn.arguments)
        messages.append(
            ChatMessageTool(
                content=text,
                tool_call_id=call.id,
                function=call.function,
                error=ToolCallError("unknown", error) if error else None,
            )
        )
        calls.append(verifier_v2.Call(turn.function, dict(turn.arguments), not error, found))
    return state, calls


def judge_v2(item: dict[str, Any], final: dict[str, Any], calls: Sequence[Any]) -> Any:
    """Verifier version 2's verdict for `item` given a final state and the episode's calls."""
    return verifier_v2.evaluate(
        item["metadata"]["initial_state"],
        final,
        json.loads(item["target"]),
        ticket=item["input"],
        calls=calls,
    )


# ---- version 3 (support@3.0.0) ---------------------------------------------------------------
TASK_V3_FILE = ROOT / "tasks" / "support_desk" / "task_v3.py"


def load_v3(name: str = "evalsuite_runner_style_support_desk_v3") -> ModuleType:
    """The version 3 task file imported by path under `name` (runner-style), cached per name."""
    if name not in _loaded:
        spec = importlib.util.spec_from_file_location(name, TASK_V3_FILE)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _loaded[name] = module
    return _loaded[name]


TASK_V3 = load_v3()
verifier_v3 = TASK_V3.verifier


def judge_v3(item: dict[str, Any], final: dict[str, Any], calls: Sequence[Any]) -> Any:
    """Verifier version 3's verdict for `item` given a final state and the episode's calls."""
    return verifier_v3.evaluate(
        item["metadata"]["initial_state"],
        final,
        json.loads(item["target"]),
        ticket=item["input"],
        calls=calls,
    )
