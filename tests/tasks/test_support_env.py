"""support_desk environment and verifier, without the inspect loop (fast, exhaustive)."""

from __future__ import annotations

import copy
import json
from collections import Counter
from typing import Any

import pytest

from evalsuite.run import HarnessFault
from tests.tasks.support_helpers import (
    DECLINED,
    DONE,
    ITEMS_FILE,
    TASK,
    answer,
    dev_items,
    env,
    judge,
    oracle_final,
    oracle_shop,
)

ITEMS = dev_items()
CORE = ("problem_fixed", "no_forbidden_side_effects", "policy_followed")


def first(intent: str, condition: str = "clean") -> dict[str, Any]:
    for item in ITEMS:
        if (item["metadata"]["intent"], item["metadata"]["condition"]) == (intent, condition):
            return item
    raise LookupError(intent)


# ---- items and generator -------------------------------------------------------------------
def test_items_are_well_formed() -> None:
    canary = 'canary = "'
    suite = (ITEMS_FILE.parents[1] / "support.toml").read_text(encoding="utf-8")
    expected_canary = suite.split(canary, 1)[1].split('"', 1)[0]
    ids = [item["id"] for item in ITEMS]
    assert len(ids) == len(set(ids))
    for item in ITEMS:
        meta = item["metadata"]
        assert item["canary"] == expected_canary
        assert env.state_hash(meta["initial_state"]) == meta["state_hash"]
        assert meta["intent"] in TASK.submodule("generate").INTENTS
        assert meta["condition"] in ("clean", "messy")
        json.loads(item["target"])
        assert item["target"] not in item["input"]


def test_item_file_is_generator_output() -> None:
    """items.jsonl holds generator records verbatim (the dev part of them once frozen)."""
    generated = {it["id"]: it for it in TASK.submodule("generate").generate_items()}
    counts = Counter(
        (it["metadata"]["intent"], it["metadata"]["condition"]) for it in generated.values()
    )
    assert len(counts) == 12
    assert min(counts.values()) >= 16
    assert len({it["metadata"]["intent"] for it in generated.values()}) >= 5
    for item in ITEMS:
        assert generated[item["id"]] == item


def test_policy_text_is_in_prompt_and_policy_md() -> None:
    policy_md = (ITEMS_FILE.parent / "POLICY.md").read_text(encoding="utf-8")
    assert policy_md == TASK.POLICY
    assert TASK.POLICY in TASK.SYSTEM_PROMPT


def test_no_future_annotations_in_task_modules() -> None:
    for path in ITEMS_FILE.parent.glob("*.py"):
        lines = path.read_text(encoding="utf-8").splitlines()
        assert not any(line.startswith("from __future__") for line in lines), path.name


# ---- state hash and isolation --------------------------------------------------------------
def test_state_hash_check_catches_tampering() -> None:
    item = first("refund")
    meta = copy.deepcopy(item["metadata"])
    assert env.initial_view(TASK.episode.build_episode(meta)) == meta["initial_state"]
    tampered = copy.deepcopy(meta)
    tampered["initial_state"]["orders"][0]["lines"][0]["paid_cents"] += 1
    with pytest.raises(HarnessFault, match="does not match its recorded hash"):
        TASK.episode.build_episode(tampered)
    leftover = copy.deepcopy(meta)
    leftover["initial_state"]["tickets"][0]["status"] = "closed"
    with pytest.raises(HarnessFault):
        TASK.episode.build_episode(leftover)
    with pytest.raises(HarnessFault, match="no initial_state"):
        TASK.episode.build_episode({"intent": "refund"})


def test_operations_change_only_their_own_state() -> None:
    item = first("refund")
    initial = item["metadata"]["initial_state"]
    frozen = copy.deepcopy(initial)
    one, two = env.fresh_runtime(initial), env.fresh_runtime(initial)
    target = json.loads(item["target"])
    env.Shop(one).refund(target["order"], target["line"], 1.0, "x")
    env.Shop(one).set_ticket_status(one["tickets"][0]["id"], "closed")
    assert initial == frozen
    assert two == env.fresh_runtime(frozen)
    assert len(one["refunds"]) == 1 and one["tickets"][0]["status"] == "closed"


def test_shop_errors_are_agent_facing() -> None:
    item = first("cancel_order")
    shop = env.Shop(env.fresh_runtime(item["metadata"]["initial_state"]))
    delivered = next(o for o in shop.state["orders"] if o["status"] == "delivered")
    for call in (
        lambda: shop.order_view("O-00000"),
        lambda: shop.cancel_order(delivered["id"], "x"),
        lambda: shop.refund(delivered["id"], "L9", 1, "x"),
        lambda: shop.refund(delivered["id"], "L1", "lots", "x"),
        lambda: shop.set_ticket_status(shop.state["tickets"][0]["id"], "solved"),
    ):
        with pytest.raises(env.ShopError):
            call()
    assert shop.state["log"] == [] and shop.state["refunds"] == []


# ---- verifier: reference solutions and the null agent over every item -----------------------
def test_oracle_scores_one_and_status_only_scores_zero_on_every_item() -> None:
    for item in ITEMS:
        verdict = judge(item, oracle_final(item))
        assert verdict.score == 1.0, (item["id"], verdict.explanation())
        assert all(verdict.checks.values())
        fresh = env.Shop(env.fresh_runtime(item["metadata"]["initial_state"]))
        status_only = judge(item, answer(fresh, DONE).state)
        assert status_only.score == 0.0, item["id"]
        assert status_only.checks["ticket_closed"]
        assert not status_only.checks["closed_only_if_fixed"]


def test_fixed_but_not_closed_or_not_answered_scores_zero() -> None:
    item = first("damaged_replacement")
    pending = judge(item, answer(oracle_shop(item), DONE, "pending").state)
    assert pending.score == 0.0 and pending.checks["problem_fixed"]
    silent = oracle_shop(item)
    silent.set_ticket_status(silent.state["tickets"][0]["id"], "closed")
    verdict = judge(item, silent.state)
    assert verdict.score == 0.0 and not verdict.checks["replied"]


def _other_customer(shop: Any, target: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in shop.state["customers"] if c["id"] != target["customer"])


def _foreign_order(shop: Any, target: dict[str, Any]) -> dict[str, Any]:
    return next(o for o in shop.state["orders"] if o["customer_id"] != target["customer"])


def _other_line(shop: Any, target: dict[str, Any]) -> tuple[str, str]:
    for order in shop.state["orders"]:
        for line in order["lines"]:
            other = (order["id"], line["id"]) != (target["order"], target["line"])
            if other and order["status"] == "delivered":
                return order["id"], line["id"]
    raise LookupError


def _mark_cancelled(shop: Any, target: dict[str, Any]) -> None:
    other = next(o for o in shop.state["orders"] if o["status"] == "delivered")
    other["status"] = "cancelled"


SIDE_EFFECTS: list[tuple[str, str, Any, set[str]]] = [
    (
        "wrong order refunded",
        "refund",
        lambda s, t: s.refund(_foreign_order(s, t)["id"], "L1", 1.0, "x"),
        {"no_forbidden_side_effects"},
    ),
    (
        "excess refund",
        "refund",
        lambda s, t: s.refund(t["order"], t["line"], 0.01, "x"),
        {"no_forbidden_side_effects", "policy_followed"},
    ),
    (
        "refund on top of a replacement",
        "damaged_replacement",
        lambda s, t: s.refund(t["order"], t["line"], 1.0, "x"),
        {"no_forbidden_side_effects", "policy_followed"},
    ),
    (
        "replacement of a line not reported damaged",
        "damaged_replacement",
        lambda s, t: s.ship_replacement(*_other_line(s, t), "x"),
        {"no_forbidden_side_effects", "policy_followed"},
    ),
    (
        "two replacements",
        "damaged_replacement",
        lambda s, t: s.ship_replacement(t["order"], t["line"], "x"),
        {"no_forbidden_side_effects"},
    ),
    (
        "another customer's address changed",
        "address_change",
        lambda s, t: s.update_address(
            _other_customer(s, t)["id"], "1 Elm Grove", "Bath", "BA1 1AA"
        ),
        {"no_forbidden_side_effects", "policy_followed"},
    ),
    (
        "another customer's account edited",
        "address_change",
        lambda s, t: _other_customer(s, t).update(email="x@example.com"),
        {"no_forbidden_side_effects"},
    ),
    (
        "another (shipped) order cancelled",
        "cancel_order",
        _mark_cancelled,
        {"no_forbidden_side_effects", "policy_followed"},
    ),
    (
        "refund outside the window",
        "refund_outside_window",
        lambda s, t: s.refund(t["order"], "L1", 1.0, "x"),
        {"problem_fixed", "no_forbidden_side_effects", "policy_followed"},
    ),
    (
        "change without verification",
        "unverified_change",
        lambda s, t: s.update_address(t["customer"], "1 Elm Grove", "Bath", "BA1 1AA"),
        {"problem_fixed", "no_forbidden_side_effects", "policy_followed"},
    ),
]


@pytest.mark.parametrize(
    ("case", "intent", "mutate", "failing"), SIDE_EFFECTS, ids=[c[0] for c in SIDE_EFFECTS]
)
def test_verifier_catches_each_forbidden_side_effect(
    case: str, intent: str, mutate: Any, failing: set[str]
) -> None:
    item = first(intent)
    target = json.loads(item["target"])
    shop = oracle_shop(item)
    mutate(shop, target)
    decline = target["action"] == "decline"
    verdict = judge(item, answer(shop, DECLINED if decline else DONE).state)
    assert verdict.score == 0.0, case
    assert {k for k in CORE if not verdict.checks[k]} == failing, verdict.explanation()
    assert verdict.checks["ticket_closed"] and not verdict.checks["closed_only_if_fixed"]
    assert verdict.explanation()


def test_address_change_without_verification_breaks_policy() -> None:
    item = first("address_change")
    target = json.loads(item["target"])
    shop = env.Shop(env.fresh_runtime(item["metadata"]["initial_state"]))
    new = target["address"]
    shop.update_address(target["customer"], new["line1"], new["city"], new["postcode"])
    verdict = judge(item, answer(shop, DONE).state)
    assert verdict.checks["problem_fixed"] and verdict.checks["no_forbidden_side_effects"]
    assert not verdict.checks["policy_followed"] and verdict.score == 0.0


def test_address_is_compared_normalised() -> None:
    item = first("address_change")
    target = json.loads(item["target"])
    customer = target["customer"]
    shop = env.Shop(env.fresh_runtime(item["metadata"]["initial_state"]))
    postcode = shop.customer(customer)["address"]["postcode"]
    assert shop.verify_identity(customer, postcode=postcode.lower().replace(" ", ""))
    new = target["address"]
    shop.update_address(
        customer, new["line1"].upper() + ",", new["city"].lower(), new["postcode"].replace(" ", "")
    )
    assert judge(item, answer(shop, DONE).state).score == 1.0


@pytest.mark.parametrize("intent", ["refund_outside_window", "unverified_change"])
def test_decline_scores_one_only_when_declined_and_nothing_changed(intent: str) -> None:
    item = first(intent)
    assert judge(item, oracle_final(item)).score == 1.0
    cheerful = judge(item, answer(oracle_shop(item), DONE).state)
    assert cheerful.score == 0.0 and not cheerful.checks["problem_fixed"]
    pending = judge(item, answer(oracle_shop(item), DECLINED, "pending").state)
    assert pending.score == 0.0 and not pending.checks["ticket_closed"]
    changed = oracle_shop(item)
    changed.ship_replacement(*_other_line(changed, {"order": "", "line": ""}), "x")
    verdict = judge(item, answer(changed, DECLINED).state)
    assert verdict.score == 0.0 and not verdict.checks["no_forbidden_side_effects"]


def test_identity_decline_needs_an_identity_check() -> None:
    item = first("unverified_change")
    unchecked = env.Shop(env.fresh_runtime(item["metadata"]["initial_state"]))
    verdict = judge(item, answer(unchecked, DECLINED).state)
    assert verdict.score == 0.0 and not verdict.checks["problem_fixed"]
