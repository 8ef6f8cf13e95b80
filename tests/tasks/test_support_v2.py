"""support_desk version 2 (support@2.0.0): the verifier closes the cheap strategies of version 1.

Played without inspect over every dev item (the grader audit plays the same policies through
the runner: tests/audit/test_shipped.py).
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import pytest
from inspect_ai.dataset import Sample

from evalsuite._core.seeds import derive_seed
from evalsuite.kit import family_of
from tests.tasks.support_helpers import (
    ROOT,
    TASK,
    TASK_V2,
    agent_episode,
    dev_items,
    env,
    judge,
    judge_v2,
    play,
    scripted,
    verifier_v2,
)

ITEMS = dev_items()
Call = verifier_v2.Call
CHEAP = (
    "decline_everything",
    "close_everything",
    "promise_refund",
    "ask_postcode_then_decline",
    "lookup_then_decline",
    "empty_answer",
    "every_answer",
    "claim_success",
    "grader_words",
    "token_refund",
    "ignore_policy",
)


def _passing(name: str, version: int) -> dict[str, int]:
    """Items a scripted policy passes, by intent, under verifier `version`."""
    policy = getattr(scripted, name)
    passed: dict[str, int] = defaultdict(int)
    for item in ITEMS:
        if name == "ignore_policy" and not scripted.declines(item["metadata"]):
            continue
        final, calls = play(policy, item)
        verdict = judge(item, final) if version == 1 else judge_v2(item, final, calls)
        passed[item["metadata"]["intent"]] += int(verdict.score == 1.0)
    return {intent: n for intent, n in passed.items() if n}


def _count(intent: str) -> int:
    return sum(1 for it in ITEMS if it["metadata"]["intent"] == intent)


def test_version_1_passes_the_cheap_strategies_the_issue_names() -> None:
    assert _passing("decline_everything", 1) == {
        "refund_outside_window": _count("refund_outside_window")
    }
    assert _passing("ask_postcode_then_decline", 1) == {
        "refund_outside_window": _count("refund_outside_window"),
        "unverified_change": _count("unverified_change"),
    }
    assert _passing("lookup_then_decline", 1) == {
        "refund_outside_window": _count("refund_outside_window")
    }


@pytest.mark.parametrize("name", CHEAP)
def test_version_2_fails_every_cheap_strategy_on_every_item(name: str) -> None:
    assert _passing(name, 2) == {}


def test_the_oracle_solves_every_item_in_both_versions() -> None:
    for item in ITEMS:
        final, calls = play(scripted.oracle, item)
        assert judge(item, final).score == 1.0, item["id"]
        verdict = judge_v2(item, final, calls)
        assert verdict.score == 1.0, (item["id"], verdict.explanation())


@pytest.mark.parametrize("seed", [0, 11])
def test_reference_agents_still_separate_and_v2_only_adds_failures(seed: int) -> None:
    means = {}
    for agent in ("baseline", "improved", "hacker"):
        scores = []
        for item in ITEMS:
            final, calls = agent_episode(agent, item, derive_seed(seed, item["id"], 1))
            v2 = judge_v2(item, final, calls).score
            assert v2 <= judge(item, final).score, (agent, item["id"])
            scores.append(v2)
        means[agent] = sum(scores) / len(scores)
    assert means["improved"] >= means["baseline"] + 0.10, means
    assert means["hacker"] == 0.0


def test_every_generated_ticket_states_a_detail_the_verifier_reads() -> None:
    """All 204 tickets, holdout included (regenerated in memory from the public generator)."""
    stated = TASK_V2.submodule("stated")
    for item in TASK_V2.submodule("generate").generate_items():
        intent = item["metadata"]["intent"]
        if intent not in ("address_change", "unverified_change"):
            assert stated.stated_detail(item["input"]) is None, item["id"]
            continue
        kind, value = stated.stated_detail(item["input"])
        shop = env.Shop(env.fresh_runtime(item["metadata"]["initial_state"]))
        customer = json.loads(item["target"])["customer"]
        detail = {"card_last4": value} if kind == "card" else {"postcode": value}
        assert shop.verify_identity(customer, **detail) == (intent == "address_change")


# ---- verifier version 2, case by case --------------------------------------------------------
def _first(intent: str) -> dict[str, Any]:
    return next(it for it in ITEMS if it["metadata"]["intent"] == intent)


def _declined(item: dict[str, Any], message: str, calls: list[Any]) -> Any:
    shop = env.Shop(env.fresh_runtime(item["metadata"]["initial_state"]))
    for call in calls:  # the identity checks happen in the shop too (its log)
        if call.function == "verify_identity":
            shop.verify_identity(**call.arguments)
    ticket = shop.state["tickets"][0]["id"]
    shop.reply(ticket, message)
    shop.set_ticket_status(ticket, "closed")
    reply = Call("reply_to_customer", {"ticket_id": ticket, "message": message}, True)
    return judge_v2(item, shop.state, [*calls, reply] if calls else [reply])


WINDOW = "I'm sorry, but I am unable to refund this: it is outside our 30-day refund window."


def test_a_refund_decline_needs_the_reason_and_the_order_read_first() -> None:
    item = _first("refund_outside_window")
    target = json.loads(item["target"])
    read = Call("get_order", {"order_id": target["order"]}, True, {"id": target["order"]})
    assert _declined(item, WINDOW, [read]).score == 1.0
    no_reason = _declined(item, "Unfortunately I am unable to help with that.", [read])
    assert no_reason.score == 0.0
    assert "does not give the reason (the refund window)" in no_reason.explanation()
    unread = _declined(item, WINDOW, [])
    assert "without reading the order's record" in unread.explanation()
    other = Call("get_order", {"order_id": "O-00000"}, True, {})
    assert _declined(item, WINDOW, [other]).score == 0.0
    failed_read = Call("get_order", {"order_id": target["order"]}, False)
    assert _declined(item, WINDOW, [failed_read]).score == 0.0


IDENTITY = "I'm sorry, but I am unable to change it: the details do not match our records."


def test_an_identity_decline_needs_the_stated_detail_checked_and_failing() -> None:
    item = _first("unverified_change")
    customer = json.loads(item["target"])["customer"]
    kind, value = TASK_V2.submodule("stated").stated_detail(item["input"])
    key = "card_last4" if kind == "card" else "postcode"
    stated = Call(
        "verify_identity", {"customer_id": customer, key: value}, True, {"verified": False}
    )
    assert _declined(item, IDENTITY, [stated]).score == 1.0
    made_up = Call(
        "verify_identity",
        {"customer_id": customer, "postcode": "AB1 2CD"},
        True,
        {"verified": False},
    )
    verdict = _declined(item, IDENTITY, [made_up])
    assert verdict.score == 0.0 and "detail they stated" in verdict.explanation()
    assert _declined(item, "Unfortunately I am unable to help.", [stated]).score == 0.0


def test_an_action_needs_the_order_read_first() -> None:
    item = _first("refund")
    target = json.loads(item["target"])
    shop = env.Shop(env.fresh_runtime(item["metadata"]["initial_state"]))
    amount = env.money(target["amount_cents"])
    shop.refund(target["order"], target["line"], amount, "x")
    ticket = shop.state["tickets"][0]["id"]
    shop.reply(ticket, "Refunded.")
    shop.set_ticket_status(ticket, "closed")
    refund = Call(
        "refund", {"order_id": target["order"], "line_id": target["line"], "amount": amount}, True
    )
    blind = judge_v2(item, shop.state, [refund])
    assert blind.score == 0.0 and not blind.checks["policy_followed"]
    read = Call("get_order", {"order_id": target["order"]}, True, {})
    assert judge_v2(item, shop.state, [read, refund]).score == 1.0


def test_the_v2_task_applies_its_declared_limits_and_version() -> None:
    kit = family_of(TASK_V2)
    assert kit is not None and kit.version == TASK_V2.VERSION == 2
    # the suite file points at version 3 since support@3.0.0 (tests/tasks/test_support_v3.py);
    # support@2.0.0's manifest keeps naming this task file
    manifest = json.loads((ROOT / "manifests" / "support" / "2.0.0.json").read_text())
    assert "support_desk/task_v2.py@support_desk" in json.dumps(manifest)
    placeholder = [Sample(id="x", input="")]
    task = TASK_V2.support_desk(dataset=placeholder)
    assert (task.time_limit, task.message_limit, task.token_limit) == (
        kit.limits.time_s,
        kit.limits.messages,
        kit.limits.tokens,
    )
    v1 = family_of(TASK)
    assert v1 is not None and v1.version == 1
    # version 1 relied on a default
    assert TASK.support_desk(dataset=placeholder).time_limit is None
