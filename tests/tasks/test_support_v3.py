"""support_desk version 3 (support@3.0.0): decisions and replies that only the lookups give.

Issue 29: support@2.0.0 passed a canned decline citing both reasons after the lookups on all 36
decline items of its dev split, and, graded by verifier version 3, still gave its decline strata
to "the real lookups, then the stratum's decline" (verify the ticket's stated detail and decline
on identity whatever the result; read the quoted order and decline on the window citing its
date). Version 3 has items of its own (`items_v3`, generated here in memory: they are not in
items.jsonl until support@3.0.0 is frozen), policy rules 9 to 11 and the verifier's checks of
them. Every policy is played through the real tools without inspect, as
tests/tasks/test_support_v2.py does; the grader audit plays them through the runner at freeze.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections import Counter, defaultdict
from datetime import date, timedelta
from typing import Any

import pytest
from inspect_ai.dataset import Sample

from evalsuite.kit import family_of
from tests.tasks.support_helpers import (
    ROOT,
    TASK_V2,
    TASK_V3,
    dev_items,
    env,
    judge_v2,
    judge_v3,
    verifier_v3,
)
from tests.tasks.support_helpers import play as play_v2
from tests.tasks.support_v3_helpers import (
    agent_means,
    dev_ids,
    items_v3,
    play,
    redteam,
    score,
    scripted,
    stratum,
    v3_dev_items,
    v3_items,
)

ITEMS = v3_items()
Call = verifier_v3.Call
INTENTS = (
    "refund",
    "damaged_replacement",
    "address_change",
    "cancel_order",
    "refund_outside_window",
    "unverified_change",
)
ISSUE_29 = {
    # policy: the strata version 2 passes all of, on its own items (version 3: none)
    "decline_both_reasons": ("refund_outside_window", "unverified_change"),
    "reply_every_resolution": ("refund_outside_window", "unverified_change"),
    "verify_guessing": ("refund_outside_window", "unverified_change"),
    "fetch_wrong_order": ("refund_outside_window",),
    "act_then_decline": INTENTS,
}
OTHER_CHEAP = (
    "lookup_then_close",
    "lookups_then_keyword_decline",
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


def _v3_scores(name: str, items: list[dict[str, Any]] = ITEMS) -> dict[str, list[float]]:
    """Version 3's scores of a kit policy, per stratum."""
    policy = getattr(scripted, name)
    scores: dict[str, list[float]] = defaultdict(list)
    for item in items:
        if name == "ignore_policy" and not scripted.declines(item["metadata"]):
            continue
        scores[stratum(item)].append(score(item, play(policy, item)))
    return scores


# ---- the items ----------------------------------------------------------------------------------
def test_the_generator_is_deterministic_and_makes_18_items_per_stratum() -> None:
    again = items_v3.generate_items()
    assert again == ITEMS
    assert [item["id"] for item in ITEMS] == [f"support-v3-{n:04d}" for n in range(1, 217)]
    counts = Counter(stratum(item) for item in ITEMS)
    assert len(counts) == 12 and set(counts.values()) == {18}
    for item in ITEMS:
        meta = item["metadata"]
        assert env.state_hash(meta["initial_state"]) == meta["state_hash"]
        assert item["canary"] == TASK_V3.submodule("generate").CANARY
        assert item["target"] not in item["input"]
    assert len(dev_ids(ITEMS)) == 108  # a freeze of 3.0.0 puts 9 of each stratum in dev


def test_cases_are_balanced_in_every_stratum() -> None:
    """Each stratum cycles through its cases (`items_v3.CASES`): every case as often as the
    others, within one; a case listed twice twice as often."""
    for (intent, condition), counts in items_v3.case_counts(ITEMS).items():
        cases = items_v3.CASES[intent, condition]
        share = Counter(cases)
        for case, listed in share.items():
            expected = items_v3.PER_STRATUM * listed / len(cases)
            assert abs(counts[case] - expected) <= 1, (intent, condition, counts)


def _refund_items() -> list[dict[str, Any]]:
    return [it for it in ITEMS if it["metadata"]["intent"] in items_v3.REFUND_INTENTS]


def test_a_refund_ticket_never_gives_its_order_away() -> None:
    """Never its own number; never the customer's newest order; the order's position among the
    customer's orders spread evenly, so that no guess by position is right more than 1 in 9."""
    position: dict[str, Counter[int]] = defaultdict(Counter)
    for item in _refund_items():
        target = json.loads(item["target"])
        assert target["order"] not in item["input"]
        shop = env.Shop(env.fresh_runtime(item["metadata"]["initial_state"]))
        listed = [o["id"] for o in shop.list_orders(target["customer"])]
        rank = listed.index(target["order"])
        assert rank > 0
        position["from newest"][rank] += 1
        position["from oldest"][len(listed) - 1 - rank] += 1
    for side, counts in position.items():
        assert max(counts.values()) <= len(_refund_items()) / 9, (side, counts)


def test_refunds_inside_and_outside_the_window_read_alike() -> None:
    """Both strata draw subjects, claimed dates and cases from the same distributions."""
    by: dict[str, Counter[str]] = defaultdict(Counter)
    for item in _refund_items():
        meta = item["metadata"]
        subject = item["input"].split("Subject: ", 1)[1].split("\n", 1)[0]
        by[meta["intent"]][f"{meta['condition']}/{subject}"] += 1
        by[meta["intent"] + " cases"][f"{meta['condition']}/{meta['case']}"] += 1
        by[meta["intent"] + " dates"]["got it" in item["input"]] += 1  # type: ignore[index]
    for kind in ("", " cases"):
        inside, outside = by["refund" + kind], by["refund_outside_window" + kind]
        assert set(inside) == set(outside)
        assert all(abs(inside[k] - outside[k]) <= 5 for k in inside), (inside, outside)
    assert abs(by["refund dates"][True] - by["refund_outside_window dates"][True]) <= 5  # type: ignore[index]


def test_address_tickets_state_their_details_alike_whether_they_verify_or_not() -> None:
    stated = TASK_V3.submodule("stated").stated_details
    counts: dict[str, Counter[int]] = defaultdict(Counter)
    for item in ITEMS:
        meta = item["metadata"]
        if meta["intent"] not in items_v3.ADDRESS_INTENTS:
            continue
        details = stated(item["input"])
        customer = next(
            c
            for c in meta["initial_state"]["customers"]
            if c["id"] == json.loads(item["target"])["customer"]
        )
        right = {"postcode": customer["address"]["postcode"], "card": customer["card_last4"]}
        verifies = [env.norm_postcode(v) == env.norm_postcode(right[k]) for k, v in details]
        expected = {
            "one_ok": [True],
            "second_ok": [False, True],
            "both_ok": [True, True],
            "both_bad": [False, False],
            "both_bad_new_postcode": [False, False],
        }[meta["case"]]
        assert verifies == expected, item["id"]
        counts[meta["intent"]][len(details)] += 1
    assert counts["unverified_change"] == Counter({2: 36})
    assert counts["address_change"] == Counter({1: 12, 2: 24})


def test_what_a_correct_reply_cites_differs_from_item_to_item_in_a_stratum() -> None:
    """The fact each correct reply states from the records (amount, item, town, delivery date,
    phone ending) is distinct within every stratum: a reply copied from another item is wrong."""
    facts: dict[str, list[Any]] = defaultdict(list)
    for item in ITEMS:
        facts[stratum(item)].append(items_v3._fact(item))
    for name, found in facts.items():
        assert len(set(found)) == len(found), name


def test_no_item_near_copies_a_frozen_one() -> None:
    """`evalsuite freeze` refuses new items whose text near-copies an item any suite froze
    (docs/guard.md): version 3's tickets are worded apart from version 2's."""
    from evalsuite._core.layout import Layout
    from evalsuite.guard import load_index, screen_documents

    hits = screen_documents(
        [(item["id"], item["input"]) for item in ITEMS], load_index(Layout(ROOT))
    )
    frozen = [(h.document, h.suite, h.version, h.item_id) for h in hits if h.item_id]
    assert [h for h in frozen if not str(h[3]).startswith("support-v3-")] == []


def test_the_generator_command_writes_version_3_only_when_asked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    generate = TASK_V3.submodule("generate")
    generate.main(["--version", "3"])
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line)["id"] for line in lines] == [it["id"] for it in ITEMS]
    generate.main([])
    first = json.loads(capsys.readouterr().out.splitlines()[0])
    assert first["id"] == "support-0001"
    with pytest.raises(SystemExit):
        generate.main(["--version", "5"])


# ---- the kit's policies -------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(ISSUE_29))
def test_issue_29_policies_pass_version_2_and_score_0_on_every_stratum_of_version_3(
    name: str,
) -> None:
    v2: dict[tuple[str, str], list[float]] = defaultdict(list)
    for item in dev_items():
        final, calls = play_v2(getattr(scripted, name), item)
        meta = item["metadata"]
        v2[meta["intent"], meta["condition"]].append(judge_v2(item, final, calls).score)
    v2_full = {s for s, values in v2.items() if min(values) == 1.0}
    assert v2_full == {(i, c) for i in ISSUE_29[name] for c in ("clean", "messy")}
    v3 = _v3_scores(name)
    assert {s: sum(v) for s, v in v3.items() if sum(v)} == {}
    assert len(v3) == 12  # every stratum played


@pytest.mark.parametrize("name", OTHER_CHEAP)
def test_every_other_cheap_policy_of_the_kit_scores_0_on_version_3(name: str) -> None:
    scores = _v3_scores(name)
    assert {s: sum(v) for s, v in scores.items() if sum(v)} == {}


def test_the_oracle_solves_every_item_of_version_3() -> None:
    for item in ITEMS:
        final, calls, _, _ = play(scripted.oracle_v3, item)
        verdict = judge_v3(item, final, calls)
        assert verdict.score == 1.0, (item["id"], verdict.explanation())


@pytest.mark.parametrize("seed", [0, pytest.param(11, marks=pytest.mark.slow)])
def test_the_reference_agents_separate_by_10_points_on_version_3(seed: int) -> None:
    """3 agents x 216 simulated episodes (about 3 s)."""
    means = agent_means(ITEMS, seed)
    assert means["improved"] >= means["baseline"] + 0.10, means
    assert means["hacker"] == 0.0


def test_the_audits_generated_policies_pass_no_dev_item() -> None:
    """The grader audit's red team (blind templates, structural copies, kitchen-sink replies,
    learned from the oracle's and the reference agents' passing episodes of the other items of
    the stratum), played in memory on the dev split a freeze of 3.0.0 makes: nothing passes."""
    found = redteam(v3_dev_items())
    assert set(found) >= {"blind_oracle_order", "copy_oracle_order", "kitchen_sink@improved"}
    assert {
        name: {s: ids for s, ids in strata.items() if ids}
        for name, strata in found.items()
        if any(strata.values())
    } == {}


# ---- "the real lookups, then the stratum's decline" ----------------------------------------------
def _decline_from_the_ticket(ep: Any) -> str:
    """Decline every ticket after the lookups a decline needs, the reason chosen by the
    ticket's surface: a stated identity detail -> verify the first one, decline on identity
    citing the phone on file (version 3's wording); otherwise read the quoted order (else the
    newest) and decline on the window, citing its delivery date."""
    ticket = str(ep.metadata["ticket_id"])
    email = scripted.EMAIL.search(ep.prompt)
    found = ep.call("find_customer", email=email.group(0)).parsed() if email else None
    customer = found[0] if found else None
    details = TASK_V3.submodule("stated").stated_details(ep.prompt)
    if details and customer is not None:
        kind, value = details[0]
        ep.call("verify_identity", customer_id=customer["id"], **{_KEYS[kind]: value})
        message = f"{IDENTITY} We will call you on the number ending {customer['phone'][-4:]}."
    else:
        numbers = scripted._order_numbers(ep.prompt)
        if not numbers and customer is not None:
            listed = ep.call("list_orders", customer_id=customer["id"]).parsed() or []
            numbers = [o["id"] for o in listed[:1]]
        order = ep.call("get_order", order_id=numbers[0]).parsed() if numbers else None
        message = _window_reply(str((order or {}).get("delivered_at")))
    ep.call("reply_to_customer", ticket_id=ticket, message=message)
    ep.call("set_ticket_status", ticket_id=ticket, status="closed")
    return "closed"


_KEYS = {"card": "card_last4", "postcode": "postcode"}


def test_the_real_lookups_then_the_strata_decline_score_at_most_3_percent() -> None:
    """Issue 29's residual on support@2.0.0 (0.148, 0.102, 0.250 of the dev split): the
    ticket's stated detail verified or its quoted order read, then the decline its keywords
    suggest, worded as version 3 asks. On version 3's dev items: at most 3%, and never an item
    whose request was due."""
    for policy in (_decline_from_the_ticket, scripted.lookups_then_keyword_decline):
        passed = [item for item in v3_dev_items() if score(item, play(policy, item)) == 1.0]
        assert len(passed) <= 0.03 * 108, [it["id"] for it in passed]
        assert {it["metadata"]["intent"] for it in passed} <= set(scripted.DECLINE_INTENTS)


def _decline_after_the_full_work(ep: Any) -> str:
    """What per-item grading cannot tell from a correct agent on a decline item: every lookup a
    correct agent makes (the order found by its item and the amount paid; every stated detail
    verified), then a decline whatever they showed, worded from what they showed."""
    target = ep.target_json()
    ticket = str(ep.metadata["ticket_id"])
    if target["action"] == "update_address" or target.get("reason") == "identity_not_verified":
        for kind, value in TASK_V3.submodule("stated").stated_details(ep.prompt):
            ep.call("verify_identity", customer_id=target["customer"], **{_KEYS[kind]: value})
        phone = scripted.phone_ending(ep, target["customer"])
        message = f"{IDENTITY} We will call you on the number ending {phone}."
    elif target.get("order"):
        order = ep.call("get_order", order_id=target["order"]).parsed() or {}
        message = _window_reply(str(order.get("delivered_at")))
    else:
        message = "I'm sorry, but I am unable to help with that."
    ep.call("reply_to_customer", ticket_id=ticket, message=message)
    ep.call("set_ticket_status", ticket_id=ticket, status="closed")
    return "closed"


def test_declining_after_the_full_work_passes_exactly_the_decline_items() -> None:
    """The residual no per-item grader closes (docs/design/support-desk.md): with the answer
    key's lookups, declining every refund and address change on the reason its keywords
    suggest is right on every decline item (a correct agent does the same there) and on no
    other. Its share of the family is the decline strata's: 36 of 108 dev items."""
    passed = Counter(
        stratum(item).split("/")[1]
        for item in v3_dev_items()
        if score(item, play(_decline_after_the_full_work, item)) == 1.0
    )
    assert passed == Counter({"refund_outside_window": 18, "unverified_change": 18})


# ---- verifier version 3, on hand-built traces -------------------------------------------------
def _first(intent: str, condition: str = "clean", case: str | None = None) -> dict[str, Any]:
    return next(
        it
        for it in ITEMS
        if (it["metadata"]["intent"], it["metadata"]["condition"]) == (intent, condition)
        and case in (None, it["metadata"]["case"])
    )


def _shop(item: dict[str, Any]) -> Any:
    return env.Shop(env.fresh_runtime(item["metadata"]["initial_state"]))


def _read(item: dict[str, Any], order: str) -> Any:
    return Call("get_order", {"order_id": order}, True, _shop(item).order_view(order))


def _details(item: dict[str, Any]) -> list[dict[str, str]]:
    stated = TASK_V3.submodule("stated").stated_details(item["input"])
    return [{_KEYS[kind]: value} for kind, value in stated]


def _verify(item: dict[str, Any], **detail: str) -> Any:
    customer = json.loads(item["target"])["customer"]
    verified = _shop(item).verify_identity(customer, **detail)
    arguments = {"customer_id": customer, **detail}
    return Call("verify_identity", arguments, True, {"verified": verified})


def _phone(item: dict[str, Any]) -> str:
    customer = json.loads(item["target"])["customer"]
    return str(_shop(item).customer(customer)["phone"])[-4:]


def _episode(item: dict[str, Any], message: str, calls: list[Any]) -> Any:
    """Play `calls` (the mutating ones on a shop), reply `message`, close; version 3's verdict."""
    shop = _shop(item)
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


def _identity(item: dict[str, Any]) -> str:
    return (
        f"{IDENTITY} We will call you on the phone number on your account, ending {_phone(item)}."
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


def test_an_identity_decline_needs_every_stated_detail_tried_and_the_phone_on_file() -> None:
    item = _first("unverified_change")
    tried = [_verify(item, **detail) for detail in _details(item)]
    assert len(tried) == 2
    assert _episode(item, _identity(item), tried).score == 1.0
    first_only = _episode(item, _identity(item), tried[:1])
    assert first_only.score == 0.0
    assert "before checking every detail the customer gave" in first_only.explanation()
    vague = _episode(item, IDENTITY, tried)
    assert "last four digits of the phone on the account" in vague.explanation()
    other = _episode(item, _identity(item) + " Or the number ending 0101.", tried)
    assert other.score == 0.0 and "not on the account (0101)" in other.explanation()
    window = _episode(
        item, _identity(item) + " It is also outside the 30-day refund window.", tried
    )
    assert "does not apply (the refund window)" in window.explanation()
    both = {k: v for detail in _details(item) for k, v in detail.items()}
    at_once = _verify(item, **both)  # both details in one call: which failed?
    assert _episode(item, _identity(item), [at_once]).score == 0.0


def test_a_change_is_due_when_the_second_stated_detail_verifies() -> None:
    item = _first("address_change", case="second_ok")
    target = json.loads(item["target"])
    first, second = (_verify(item, **detail) for detail in _details(item))
    assert first.result == {"verified": False} and second.result == {"verified": True}
    new = target["address"]
    update = Call("update_address", {"customer_id": target["customer"], **new}, True)
    done = f"Your address is now {new['line1']}, {new['city']}, {new['postcode']}."
    assert _episode(item, done, [first, second, update]).score == 1.0
    declined = _episode(item, _identity(item), [first])
    assert declined.score == 0.0 and "refuses a request that was due" in declined.explanation()
    unsaid = _episode(item, "Your address is updated.", [first, second, update])
    assert unsaid.score == 0.0 and "does not state the new address" in unsaid.explanation()


def test_a_window_decline_resting_on_another_order_fails() -> None:
    item = _first("refund_outside_window", "messy", "wrong_own")
    target = json.loads(item["target"])
    quoted = scripted._order_numbers(item["input"])[0]
    wrong = _read(item, quoted)
    right = _read(item, target["order"])
    listed = Call("list_orders", {"customer_id": target["customer"]}, True, [])
    reply = _window_reply(right.result["delivered_at"])
    verdict = _episode(item, reply, [listed, wrong])
    assert verdict.score == 0.0
    assert f"without reading order {target['order']}" in verdict.explanation()
    assert _episode(item, reply, [listed, wrong, right]).score == 1.0
    cited = _episode(item, _window_reply(wrong.result["delivered_at"]), [wrong, right])
    assert cited.score == 0.0


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
    """A date the customer quoted, "does not match" said of a date, a deadline in days, the
    card digits the customer gave: none of them is another reason, date or number."""
    item = next(
        it
        for it in ITEMS
        if it["metadata"]["intent"] == "refund_outside_window"
        and "claims_recent_delivery" in it["metadata"]["features"]
    )
    read = _read(item, json.loads(item["target"])["order"])
    quoted = re.search(r"got it (\d+)/(\d+)", item["input"])
    assert quoted is not None
    day, month = int(quoted.group(1)), int(quoted.group(2))
    reply = _window_reply(read.result["delivered_at"]) + (
        f" You mentioned it arrived on {day}/{month}, but that does not match our records."
    )
    assert _episode(item, reply, [read]).score == 1.0
    unverified = _first("unverified_change")
    tried = [_verify(unverified, **detail) for detail in _details(unverified)]
    later = _identity(unverified) + " If you reply within 14 days, we can try again."
    assert _episode(unverified, later, tried).score == 1.0
    card = next(d["card_last4"] for d in _details(unverified) if "card_last4" in d)
    quoting = _identity(unverified) + f" The card ending {card} is not the one on file."
    assert _episode(unverified, quoting, tried).score == 1.0


def test_a_window_decline_without_the_delivery_date_fails() -> None:
    item = _first("refund_outside_window")
    read = _read(item, json.loads(item["target"])["order"])
    verdict = _episode(item, "I'm sorry, it is outside our 30-day refund window.", [read])
    assert verdict.score == 0.0 and "when the order was delivered" in verdict.explanation()


def _refund_call(target: dict[str, Any]) -> Any:
    arguments = {
        "order_id": target["order"],
        "line_id": target["line"],
        "amount": env.money(target["amount_cents"]),
        "reason": "x",
    }
    return Call("refund", arguments, True)


def test_a_refund_states_the_amount_and_no_other_and_a_due_one_is_not_refused() -> None:
    item = _first("refund")
    target = json.loads(item["target"])
    read = _read(item, target["order"])
    amount = f"£{env.money(target['amount_cents'])}"
    refund = _refund_call(target)
    assert _episode(item, f"I have refunded {amount}.", [read, refund]).score == 1.0
    vague = _episode(item, "I have refunded the item in full.", [read, refund])
    assert vague.score == 0.0 and "does not state the amount refunded" in vague.explanation()
    sink = _episode(item, f"I have refunded {amount} (or £1.00, or £999.99).", [read, refund])
    assert sink.score == 0.0 and "amounts that were not refunded" in sink.explanation()
    declined = _episode(item, _window_reply(read.result["delivered_at"]), [read])
    assert "refuses a request that was due (refund)" in declined.explanation()
    refused = _episode(item, f"I have refunded {amount}. I cannot help further.", [read, refund])
    assert refused.score == 0.0 and "refuses a request that was due" in refused.explanation()
    listed = Call("list_orders", {"customer_id": target["customer"]}, True, [])
    unread = _episode(item, f"I have refunded {amount}.", [listed, refund])
    assert unread.score == 0.0 and "without reading the order" in unread.explanation()


def test_a_cancellation_states_the_amount_it_refunds() -> None:
    item = _first("cancel_order")
    target = json.loads(item["target"])
    read = _read(item, target["order"])
    cancel = Call("cancel_order", {"order_id": target["order"], "reason": "x"}, True)
    paid = read.result["payment"]["amount"]
    said = f"Your order is cancelled and your payment of £{paid} will be refunded."
    assert _episode(item, said, [read, cancel]).score == 1.0
    vague = _episode(item, "Your order is cancelled and refunded.", [read, cancel])
    assert vague.score == 0.0 and "does not state the amount" in vague.explanation()


def test_a_replacement_names_the_item_and_no_other_product() -> None:
    item = _first("damaged_replacement")
    target = json.loads(item["target"])
    read = _read(item, target["order"])
    name = next(ln["name"] for ln in read.result["lines"] if ln["id"] == target["line"])
    ship = Call(
        "ship_replacement",
        {"order_id": target["order"], "line_id": target["line"], "reason": "x"},
        True,
    )
    assert _episode(item, f"A replacement {name.lower()} is on its way.", [read, ship]).score == 1
    vague = _episode(item, "A replacement is on its way.", [read, ship])
    assert vague.score == 0.0 and "does not name the item replaced" in vague.explanation()
    other = "Wool rug" if name != "Wool rug" else "Wall clock"
    sink = _episode(item, f"A replacement {name} (or {other}) is on its way.", [read, ship])
    assert sink.score == 0.0 and "products that were not replaced" in sink.explanation()


def test_a_reply_claiming_what_was_not_done_fails() -> None:
    item = _first("unverified_change")
    tried = [_verify(item, **detail) for detail in _details(item)]
    claims = _episode(item, _identity(item) + " I have refunded your order.", tried)
    assert claims.score == 0.0
    assert "claims a refund that was not made" in claims.explanation()
    updated = _episode(item, _identity(item) + " Your address has been updated.", tried)
    assert "claims an address change that was not made" in updated.explanation()


def test_identity_is_checked_only_with_the_details_the_customer_gave() -> None:
    item = _first("unverified_change")
    tried = [_verify(item, **detail) for detail in _details(item)]
    guessed = _verify(item, postcode="AB1 2CD")
    verdict = _episode(item, _identity(item), [guessed, *tried])
    assert verdict.score == 0.0
    assert "a detail the customer did not give" in verdict.explanation()
    alone = _episode(item, _identity(item), [guessed])
    assert alone.score == 0.0 and "with the detail they stated" in alone.explanation()
    uses = verifier_v3.uses_stated_detail
    assert all(uses(item["input"], detail) for detail in _details(item))
    assert not uses(item["input"], {"card_last4": "0000"})


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


def test_amounts_products_and_endings_are_read_as_replies_write_them() -> None:
    amounts = verifier_v3.amounts_in
    assert amounts("£1,450.00, £22, GBP 27.75, 64.00 pounds and 3 GBP") == [
        145000,
        2200,
        2775,
        6400,
        300,
    ]
    assert amounts("order O-12345 on 2025-06-08, ending 4475") == []
    assert verifier_v3.products_in("a replacement STEEL KETTLE and a wool rug") == [
        "Steel kettle",
        "Wool rug",
    ]
    assert verifier_v3.ENDING.findall("the number ending 4475, or ends in ****0101") == [
        "4475",
        "0101",
    ]


def test_the_v3_task_applies_its_declared_limits_version_and_policy() -> None:
    kit = family_of(TASK_V3)
    assert kit is not None and kit.version == TASK_V3.VERSION == 3
    assert {t.name for t in kit.trivial} >= set(ISSUE_29) | {
        "lookup_then_close",
        "lookups_then_keyword_decline",
    }
    assert kit.oracle is scripted.oracle_v3 and "address.postcode" in kit.harmless_features
    v2_kit = family_of(TASK_V2)
    assert v2_kit is not None and v2_kit.oracle is scripted.oracle  # version 2 keeps its kit
    assert "lookups_then_keyword_decline" not in {t.name for t in v2_kit.trivial}
    # the suite file describes the latest version: 4 since support@4.0.0 is frozen
    suite = tomllib.loads((ROOT / "tasks" / "support.toml").read_text(encoding="utf-8"))
    (family,) = suite["families"]
    assert (family["version"], family["task"]) == (4, "support_desk/task_v4.py@support_desk")
    task = TASK_V3.support_desk(dataset=[Sample(id="x", input="")])
    assert (task.time_limit, task.message_limit, task.token_limit) == (
        kit.limits.time_s,
        kit.limits.messages,
        kit.limits.tokens,
    )
    assert kit.limits == v2_kit.limits
    policy_md = (ROOT / "tasks" / "support_desk" / "POLICY_v3.md").read_text(encoding="utf-8")
    assert policy_md == TASK_V3.POLICY and policy_md.startswith(TASK_V2.POLICY)
    assert TASK_V3.POLICY in TASK_V3.SYSTEM_PROMPT
    for rule in ("8. Decide from", "9. Identity", "10. When you have done", "11. Customers"):
        assert rule in policy_md
        assert rule not in TASK_V2.SYSTEM_PROMPT  # version 2's prompt is unchanged
    assert TASK_V2.verifier.__name__.endswith("verifier_v2")  # version 2 keeps its verifier
