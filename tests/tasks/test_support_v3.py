"""support_desk version 3 (support@3.0.0): a decline is graded on the facts the agent established.

Issue 29: support@2.0.0 passed a canned decline citing both reasons after the lookups on all 36
decline items of the dev split. Every cheap policy of the kit is played here through the real
tools over every dev item (without inspect, as tests/tasks/test_support_v2.py does; the grader
audit plays the same policies through the runner at freeze, and the slow test at the end plays a
sample of them through it), under verifier versions 2 and 3.
"""

from __future__ import annotations

import json
import tomllib
from collections import defaultdict
from datetime import date, timedelta
from typing import Any

import pytest
from inspect_ai.dataset import Sample

from evalsuite._core.seeds import derive_seed
from evalsuite.kit import family_of
from tests.tasks.support_helpers import (
    ROOT,
    TASK_V2,
    TASK_V3,
    agent_episode,
    dev_items,
    env,
    judge_v2,
    judge_v3,
    play,
    scripted,
    verifier_v3,
)

ITEMS = dev_items()
Call = verifier_v3.Call
ISSUE_29 = {
    # policy: the strata version 2 passes all of (version 3: none)
    "decline_both_reasons": ("refund_outside_window", "unverified_change"),
    "reply_every_resolution": ("refund_outside_window", "unverified_change"),
    "verify_guessing": ("refund_outside_window", "unverified_change"),
    "fetch_wrong_order": ("refund_outside_window",),
    "act_then_decline": (
        "refund",
        "damaged_replacement",
        "address_change",
        "cancel_order",
        "refund_outside_window",
        "unverified_change",
    ),
}
OTHER_CHEAP = (
    "lookup_then_close",
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


def _scores(name: str) -> dict[int, dict[tuple[str, str], list[float]]]:
    """Scores of a kit policy per version (2, 3) and stratum (intent, condition)."""
    policy = getattr(scripted, name)
    scores: dict[int, dict[tuple[str, str], list[float]]] = {
        2: defaultdict(list),
        3: defaultdict(list),
    }
    for item in ITEMS:
        if name == "ignore_policy" and not scripted.declines(item["metadata"]):
            continue
        final, calls = play(policy, item)
        stratum = (item["metadata"]["intent"], item["metadata"]["condition"])
        scores[2][stratum].append(judge_v2(item, final, calls).score)
        scores[3][stratum].append(judge_v3(item, final, calls).score)
    return scores


@pytest.mark.parametrize("name", sorted(ISSUE_29))
def test_issue_29_policies_pass_version_2_and_score_0_on_every_stratum_of_version_3(
    name: str,
) -> None:
    scores = _scores(name)
    v2_full = {s for s, values in scores[2].items() if min(values) == 1.0}
    assert v2_full == {(i, c) for i in ISSUE_29[name] for c in ("clean", "messy")}
    assert {s: sum(v) for s, v in scores[3].items() if sum(v)} == {}
    assert len(scores[3]) == 12  # every stratum played


@pytest.mark.parametrize("name", OTHER_CHEAP)
def test_every_other_cheap_policy_of_the_kit_scores_0_on_version_3(name: str) -> None:
    scores = _scores(name)
    assert {s: sum(v) for s, v in scores[3].items() if sum(v)} == {}


def test_the_oracle_solves_every_item_of_version_3() -> None:
    for item in ITEMS:
        final, calls = play(scripted.oracle, item)
        verdict = judge_v3(item, final, calls)
        assert verdict.score == 1.0, (item["id"], verdict.explanation())


@pytest.mark.parametrize(
    "seed", [pytest.param(0, marks=pytest.mark.slow), 11]
)  # 3 agents x 108 simulated episodes each (about 1.5 s)
def test_reference_agents_still_separate_and_v3_only_adds_failures(seed: int) -> None:
    means = {}
    for agent in ("baseline", "improved", "hacker"):
        scores = []
        for item in ITEMS:
            final, calls = agent_episode(agent, item, derive_seed(seed, item["id"], 1))
            v3 = judge_v3(item, final, calls).score
            assert v3 <= judge_v2(item, final, calls).score, (agent, item["id"])
            scores.append(v3)
        means[agent] = sum(scores) / len(scores)
    assert means["improved"] >= means["baseline"] + 0.10, means
    assert means["hacker"] == 0.0


def _decline_from_the_ticket(ep: Any) -> str:
    """Decline every ticket after the lookups a decline needs, the reason chosen by the
    ticket's surface: a stated identity detail -> verify it, decline on identity; otherwise
    read the quoted order and decline on the window, citing its delivery date."""
    ticket = str(ep.metadata["ticket_id"])
    email = scripted.EMAIL.search(ep.prompt)
    found = ep.call("find_customer", email=email.group(0)).parsed() if email else None
    customer = found[0]["id"] if found else None
    detail = TASK_V3.submodule("stated").stated_detail(ep.prompt)
    if detail is not None and customer is not None:
        kind, value = detail
        ep.call("verify_identity", customer_id=customer, **{_KEYS[kind]: value})
        message = IDENTITY
    else:
        numbers = scripted._order_numbers(ep.prompt)
        order = ep.call("get_order", order_id=numbers[0]).parsed() if numbers else None
        message = _window_reply(str((order or {}).get("delivered_at")))
    ep.call("reply_to_customer", ticket_id=ticket, message=message)
    ep.call("set_ticket_status", ticket_id=ticket, status="closed")
    return "closed"


_KEYS = {"card": "card_last4", "postcode": "postcode"}


def test_declining_everything_after_the_real_lookups_scores_only_where_declining_is_right() -> None:
    """The residual that per-item grading cannot close (docs/design/support-desk.md): on a
    decline item, a policy that does the decline's own lookups and declines is indistinguishable
    from one that decided. On the dev split it passes 25 of the 36 decline items (15 of the 18
    unverified changes: where the ticket's e-mail finds the customer; 10 of the 18 refunds
    outside the window: where the quoted order is the ticket's); it never passes an item whose
    request was due."""
    passed: dict[str, int] = defaultdict(int)
    for item in ITEMS:
        final, calls = play(_decline_from_the_ticket, item)
        passed[item["metadata"]["intent"]] += int(judge_v3(item, final, calls).score == 1.0)
    assert set(k for k, v in passed.items() if v) <= set(scripted.DECLINE_INTENTS)
    assert sum(passed.values()) == 25


# ---- verifier version 3, on hand-built traces -------------------------------------------------
def _first(intent: str, condition: str = "clean") -> dict[str, Any]:
    return next(
        it
        for it in ITEMS
        if it["metadata"]["intent"] == intent and it["metadata"]["condition"] == condition
    )


def _read(item: dict[str, Any], order: str) -> Any:
    shop = env.Shop(env.fresh_runtime(item["metadata"]["initial_state"]))
    return Call("get_order", {"order_id": order}, True, shop.order_view(order))


def _stated(item: dict[str, Any]) -> dict[str, str]:
    kind, value = TASK_V3.submodule("stated").stated_detail(item["input"])
    return {"card_last4": value} if kind == "card" else {"postcode": value}


def _verify(item: dict[str, Any], **detail: str) -> Any:
    customer = json.loads(item["target"])["customer"]
    shop = env.Shop(env.fresh_runtime(item["metadata"]["initial_state"]))
    verified = shop.verify_identity(customer, **detail)
    arguments = {"customer_id": customer, **detail}
    return Call("verify_identity", arguments, True, {"verified": verified})


def _episode(item: dict[str, Any], message: str, calls: list[Any]) -> Any:
    """Play `calls` (the mutating ones on a shop), reply `message`, close; version 3's verdict."""
    shop = env.Shop(env.fresh_runtime(item["metadata"]["initial_state"]))
    for call in calls:
        if call.function not in env.READ_ONLY:
            env.dispatch(shop, call.function, call.arguments)
    ticket = shop.state["tickets"][0]["id"]
    shop.reply(ticket, message)
    shop.set_ticket_status(ticket, "closed")
    reply = Call("reply_to_customer", {"ticket_id": ticket, "message": message}, True)
    return judge_v3(item, shop.state, [*calls, reply])


def _window_reply(delivered: str) -> str:
    return (
        "I'm sorry, but I am unable to refund this: our policy allows refunds only within 30 "
        f"days of delivery, and this order was delivered on {delivered}."
    )


IDENTITY = (
    "I'm sorry, but I am unable to change the account: the details you gave do not match our "
    "records."
)


def test_a_correct_window_decline_passes_in_any_date_format() -> None:
    item = _first("refund_outside_window")
    target = json.loads(item["target"])
    read = _read(item, target["order"])
    delivered = read.result["delivered_at"]
    assert _episode(item, _window_reply(delivered), [read]).score == 1.0
    day = date.fromisoformat(delivered)
    for written in (f"{day.day} {day:%B %Y}", f"{day:%B} {day.day}", f"{day:%d/%m/%Y}"):
        assert _episode(item, _window_reply(written), [read]).score == 1.0, written


def test_a_window_decline_citing_both_reasons_fails() -> None:
    item = _first("refund_outside_window")
    read = _read(item, json.loads(item["target"])["order"])
    both = _window_reply(read.result["delivered_at"]) + " I could not verify your identity."
    verdict = _episode(item, both, [read])
    assert verdict.score == 0.0
    assert "a reason that does not apply (identity not verified)" in verdict.explanation()


def test_an_identity_decline_citing_the_window_too_fails() -> None:
    item = _first("unverified_change")
    stated = _verify(item, **_stated(item))
    assert _episode(item, IDENTITY, [stated]).score == 1.0
    verdict = _episode(item, IDENTITY + " It is also outside the 30-day refund window.", [stated])
    assert verdict.score == 0.0
    assert "does not apply (the refund window)" in verdict.explanation()


def test_a_window_decline_resting_on_another_order_fails() -> None:
    item = _first("refund_outside_window", "messy")
    target = json.loads(item["target"])
    others = [o["id"] for o in item["metadata"]["initial_state"]["orders"]]
    wrong = _read(item, next(o for o in others if o != target["order"]))
    right = _read(item, target["order"])
    listed = Call("list_orders", {"customer_id": target["customer"]}, True, [])
    reply = _window_reply(right.result["delivered_at"])
    verdict = _episode(item, reply, [listed, wrong])  # version 2 took list_orders as the read
    assert verdict.score == 0.0
    assert f"without reading order {target['order']}" in verdict.explanation()
    assert judge_v2_passes(item, reply, [listed, wrong])
    assert _episode(item, reply, [listed, wrong, right]).score == 1.0
    other_date = wrong.result["delivered_at"]
    if other_date and other_date != right.result["delivered_at"]:
        cited = _episode(item, _window_reply(other_date), [wrong, right])
        assert cited.score == 0.0


def judge_v2_passes(item: dict[str, Any], message: str, calls: list[Any]) -> bool:
    """Version 2's verdict on the same episode (the hole version 3 closes)."""
    shop = env.Shop(env.fresh_runtime(item["metadata"]["initial_state"]))
    ticket = shop.state["tickets"][0]["id"]
    shop.reply(ticket, message)
    shop.set_ticket_status(ticket, "closed")
    reply = Call("reply_to_customer", {"ticket_id": ticket, "message": message}, True)
    return bool(judge_v2(item, shop.state, [*calls, reply]).score == 1.0)


def test_a_window_decline_citing_dates_not_in_the_record_fails() -> None:
    """A kitchen-sink reply listing every delivery date seen in the stratum names the right
    one too; version 3 takes only the order's own dates, the ticket's and the window's ends."""
    item = _first("refund_outside_window")
    read = _read(item, json.loads(item["target"])["order"])
    delivered = date.fromisoformat(read.result["delivered_at"])
    sink = _window_reply(f"{delivered:%Y-%m-%d}, 2025-01-02 or 3 March 2025")
    verdict = _episode(item, sink, [read])
    assert verdict.score == 0.0 and "dates that are not in the order's record" in (
        verdict.explanation()
    )
    end = delivered + timedelta(days=30)
    fair = _window_reply(f"{delivered:%d %B %Y}; the window closed on {end:%d %B}")
    assert _episode(item, fair, [read]).score == 1.0


def test_fair_wordings_of_a_decline_pass() -> None:
    """A date the customer quoted, "does not match" said of a date, a deadline in days: none of
    them is another reason or a foreign date."""
    item = next(it for it in ITEMS if it["id"] == "support-0008")  # "it only arrived on 26/4"
    read = _read(item, json.loads(item["target"])["order"])
    reply = _window_reply(read.result["delivered_at"]) + (
        " You mentioned it arrived on 26 April, but that does not match our records."
    )
    assert _episode(item, reply, [read]).score == 1.0
    unverified = _first("unverified_change")
    stated = _verify(unverified, **_stated(unverified))
    later = IDENTITY + " If you reply within 14 days with the card on file, we can try again."
    assert _episode(unverified, later, [stated]).score == 1.0


def test_a_window_decline_without_the_delivery_date_fails() -> None:
    item = _first("refund_outside_window")
    read = _read(item, json.loads(item["target"])["order"])
    verdict = _episode(item, "I'm sorry, it is outside our 30-day refund window.", [read])
    assert verdict.score == 0.0 and "when the order was delivered" in verdict.explanation()


def test_a_due_refund_declined_fails_and_so_does_a_refusal_after_acting() -> None:
    item = _first("refund")
    target = json.loads(item["target"])
    read = _read(item, target["order"])
    delivered = read.result["delivered_at"]
    declined = _episode(item, _window_reply(delivered), [read])
    assert declined.score == 0.0
    assert "refuses a request that was due (refund)" in declined.explanation()
    refund = Call(
        "refund",
        {
            "order_id": target["order"],
            "line_id": target["line"],
            "amount": env.money(target["amount_cents"]),
            "reason": "x",
        },
        True,
    )
    assert _episode(item, "I have refunded the item in full.", [read, refund]).score == 1.0
    refused = _episode(item, _window_reply(delivered), [read, refund])
    assert refused.score == 0.0 and "refuses a request that was due" in refused.explanation()
    listed = Call("list_orders", {"customer_id": target["customer"]}, True, [])
    unread = _episode(item, "I have refunded the item in full.", [listed, refund])
    assert unread.score == 0.0 and "without reading the order" in unread.explanation()


def test_a_reply_claiming_what_was_not_done_fails() -> None:
    item = _first("unverified_change")
    stated = _verify(item, **_stated(item))
    claims = _episode(item, IDENTITY + " I have refunded your order.", [stated])
    assert claims.score == 0.0
    assert "claims a refund that was not made" in claims.explanation()
    updated = _episode(item, IDENTITY + " Your address has been updated.", [stated])
    assert "claims an address change that was not made" in updated.explanation()


def test_identity_is_checked_only_with_the_detail_the_customer_gave() -> None:
    item = _first("unverified_change")
    stated = _verify(item, **_stated(item))
    guessed = _verify(item, postcode="AB1 2CD")
    verdict = _episode(item, IDENTITY, [guessed, stated])
    assert verdict.score == 0.0
    assert "a detail the customer did not give" in verdict.explanation()
    alone = _episode(item, IDENTITY, [guessed])
    assert alone.score == 0.0 and "with the detail they stated" in alone.explanation()
    verify = verifier_v3.uses_stated_detail
    assert verify(item["input"], _stated(item))
    assert not verify(item["input"], {**_stated(item), "card_last4": "0000", "postcode": "X"})


def test_dates_are_read_in_the_formats_replies_use() -> None:
    mentions = verifier_v3.mentions_date
    for text in (
        "2025-06-08",
        "8 June 2025",
        "June 8th",
        "8th of Jun",
        "08/06/2025",
        "8.6.25",
        "8/6",
    ):
        assert mentions(f"delivered on {text}.", "2025-06-08"), text
    for text in ("2025-06-18", "18 June", "June 9", "08/07/2025", "8 June 2024", "£8.06"):
        assert not mentions(f"delivered on {text}.", "2025-06-08"), text
    foreign = verifier_v3.foreign_dates("on 8 June, not 9 June or 2025-06-10", ["2025-06-08"])
    assert sorted(foreign) == ["2025-6-10", "6-9"]


def test_the_v3_task_applies_its_declared_limits_version_and_policy() -> None:
    kit = family_of(TASK_V3)
    assert kit is not None and kit.version == TASK_V3.VERSION == 3
    assert {t.name for t in kit.trivial} >= set(ISSUE_29) | {"lookup_then_close"}
    # the suite file moves to version 3 when support@3.0.0 is frozen, which waits for it to
    # pass the adversarial audit (docs/design/support-desk.md, "Not frozen yet")
    suite = tomllib.loads((ROOT / "tasks" / "support.toml").read_text(encoding="utf-8"))
    (family,) = suite["families"]
    assert (family["version"], family["task"]) in {
        (2, "support_desk/task_v2.py@support_desk"),
        (3, "support_desk/task_v3.py@support_desk"),
    }
    task = TASK_V3.support_desk(dataset=[Sample(id="x", input="")])
    assert (task.time_limit, task.message_limit, task.token_limit) == (
        kit.limits.time_s,
        kit.limits.messages,
        kit.limits.tokens,
    )
    assert kit.limits == family_of(TASK_V2).limits  # type: ignore[union-attr]
    policy_md = (ROOT / "tasks" / "support_desk" / "POLICY_v3.md").read_text(encoding="utf-8")
    assert policy_md == TASK_V3.POLICY and policy_md.startswith(TASK_V2.POLICY)
    assert TASK_V3.POLICY in TASK_V3.SYSTEM_PROMPT and "8. Decide from" in policy_md
    assert "8. Decide from" not in TASK_V2.SYSTEM_PROMPT  # version 2's prompt is unchanged
    assert TASK_V2.verifier.__name__.endswith("verifier_v2")  # version 2 keeps its verifier
