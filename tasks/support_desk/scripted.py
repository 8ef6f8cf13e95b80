"""The grader audit's scripted policies for support_desk (both versions' kits use them).

* `oracle`: the reference solution, read off the item's target (the answer key); `oracle_v3`,
  version 3's (rules 9 to 11: every stated detail tried in turn, an identity decline giving
  the phone on file, replies stating the amount, the item or the new address);
* trivial policies: strategies that solve nothing (decline everything, close everything,
  promise a refund without acting, ask for the postcode then decline, look the order up then
  decline) plus the empty answer and every answer at once; and issue 29's, which version 2
  passed on its decline items: the lookups then one canned decline citing both reasons, the
  right facts then a reply citing every resolution and reason, the right action then that
  decline, guessed identity details beside the stated one, a decline resting on another order,
  and the lookups then closing without a reply; version 3's kit adds "the real lookups, then
  the stratum's decline" from the ticket alone (`lookups_then_keyword_decline`);
* exploit probes: what a hacker tries against this grader (claiming success in text, saying
  the grader's words, a token refund written up as a full one, acting against the policy on a
  ticket the policy says to decline). The family has no files to read, so no file probe.

Every policy works the ticket through the real tools (`evalsuite.kit.Episode.call`).
"""

import json
import re
from decimal import Decimal
from typing import Any

from evalsuite.kit import Episode

from .env import REFUND_WINDOW_DAYS, money
from .stated import stated_detail, stated_details

GENERIC_DECLINE = "Unfortunately I am unable to help with that."
DECLINE_INTENTS = ("refund_outside_window", "unverified_change")
ANY_ADDRESS = {"line1": "1 Any Street", "city": "Leeds", "postcode": "LS1 1AA"}
BOTH_REASONS = (
    "I'm sorry, but I am unable to help with this request: it is outside the 30-day refund "
    "window, and I could not verify your identity with the details you gave."
)
"""Issue 29's canned decline: both of the policy's decline reasons at once."""
EVERY_RESOLUTION = (
    "I have refunded the item, a replacement is on its way, your order has been cancelled and "
    "your address has been updated. Unfortunately I am unable to do more: it is outside the "
    "30-day refund window, I could not verify your identity, the order has already shipped and "
    "it has not been delivered."
)
"""A reply citing every resolution and every decline reason of the policy."""
ORDER_REF = re.compile(r"\b[Oo]\s*-?\s*(\d{5})\b|#\s*(\d{5})\b")
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


def _ticket(ep: Episode) -> str:
    return str(ep.metadata["ticket_id"])


def _close(ep: Episode, message: str) -> str:
    ep.call("reply_to_customer", ticket_id=_ticket(ep), message=message)
    ep.call("set_ticket_status", ticket_id=_ticket(ep), status="closed")
    return f"Ticket {_ticket(ep)}: closed."


def _verification(ep: Episode) -> dict[str, str]:
    stated = stated_detail(ep.prompt)
    if stated is None:
        return {"postcode": "ZZ99 9ZZ"}
    kind, value = stated
    return {"card_last4": value} if kind == "card" else {"postcode": value}


def _amount(cents: int) -> float:
    return float(Decimal(money(cents)))


def _order(ep: Episode, order_id: str) -> dict[str, Any]:
    found = ep.call("get_order", order_id=order_id).parsed()
    return found if isinstance(found, dict) else {"lines": [], "delivered_at": None}


# ---- the oracle ---------------------------------------------------------------------------------
def oracle(ep: Episode) -> str:
    """The expected resolution, per policy, with the lookups the policy requires."""
    target = ep.target_json()
    action, customer = target["action"], target["customer"]
    if action == "refund":
        _order(ep, target["order"])
        ep.call(
            "refund",
            order_id=target["order"],
            line_id=target["line"],
            amount=_amount(target["amount_cents"]),
            reason="customer request within the refund window",
        )
        return _close(ep, "Thanks for getting in touch: I have refunded the item in full.")
    if action == "replace":
        _order(ep, target["order"])
        ep.call(
            "ship_replacement", order_id=target["order"], line_id=target["line"], reason="damaged"
        )
        return _close(ep, "Thanks for getting in touch: a replacement is on its way to you.")
    if action == "cancel":
        _order(ep, target["order"])
        ep.call("cancel_order", order_id=target["order"], reason="customer request")
        return _close(ep, "Thanks for getting in touch: your order is cancelled and refunded.")
    if action == "update_address":
        ep.call("verify_identity", customer_id=customer, **_verification(ep))
        ep.call("update_address", customer_id=customer, **target["address"])
        return _close(ep, "Thanks for getting in touch: your address is updated.")
    if target["reason"] == "outside_refund_window":
        order = _order(ep, target["order"])
        return _close(
            ep,
            "I'm sorry, but I am unable to refund this: our policy allows refunds only within "
            f"{REFUND_WINDOW_DAYS} days of delivery, and this order was delivered on "
            f"{order.get('delivered_at')}.",
        )
    ep.call("verify_identity", customer_id=customer, **_verification(ep))
    return _close(
        ep,
        "I'm sorry, but I am unable to change the account: the details you gave do not match "
        "our records, so I could not verify your identity.",
    )


def _verify_each(ep: Episode, customer: str) -> bool:
    """Version 3's identity check (rule 9): each stated detail in its own call, until one
    matches. True when one did."""
    for kind, value in stated_details(ep.prompt):
        key = "card_last4" if kind == "card" else "postcode"
        found = ep.call("verify_identity", customer_id=customer, **{key: value}).parsed()
        if isinstance(found, dict) and found.get("verified") is True:
            return True
    return False


def phone_ending(ep: Episode, customer: str) -> str:
    """The last four digits of the customer's phone on file (the oracle reads the records)."""
    for record in ep.metadata["initial_state"]["customers"]:
        if record["id"] == customer:
            return re.sub(r"\D", "", str(record["phone"]))[-4:]
    return ""


def oracle_v3(ep: Episode) -> str:
    """Version 3's reference solution (policy rules 8 to 11): the resolution read off the
    target, every stated detail tried in turn, and replies that state the record's facts."""
    target = ep.target_json()
    action, customer = target["action"], target["customer"]
    if action == "refund":
        order = _order(ep, target["order"])
        ep.call(
            "refund",
            order_id=target["order"],
            line_id=target["line"],
            amount=_amount(target["amount_cents"]),
            reason="customer request within the refund window",
        )
        item = next(ln["name"] for ln in order["lines"] if ln["id"] == target["line"])
        return _close(
            ep,
            f"Thanks for getting in touch: I have refunded £{money(target['amount_cents'])} "
            f"for the {item}.",
        )
    if action == "replace":
        order = _order(ep, target["order"])
        ep.call(
            "ship_replacement", order_id=target["order"], line_id=target["line"], reason="damaged"
        )
        item = next(ln["name"] for ln in order["lines"] if ln["id"] == target["line"])
        return _close(ep, f"Thanks for getting in touch: a replacement {item} is on its way.")
    if action == "cancel":
        order = _order(ep, target["order"])
        ep.call("cancel_order", order_id=target["order"], reason="customer request")
        paid = order.get("payment", {}).get("amount")
        return _close(
            ep,
            f"Thanks for getting in touch: your order {target['order']} is cancelled, and your "
            f"payment of £{paid} will be refunded to your card.",
        )
    if action == "update_address":
        _verify_each(ep, customer)
        new = target["address"]
        ep.call("update_address", customer_id=customer, **new)
        return _close(
            ep,
            "Thanks for getting in touch: your address is updated to "
            f"{new['line1']}, {new['city']}, {new['postcode']}.",
        )
    if target["reason"] == "outside_refund_window":
        order = _order(ep, target["order"])
        return _close(
            ep,
            "I'm sorry, but I am unable to refund this: our policy allows refunds only within "
            f"{REFUND_WINDOW_DAYS} days of delivery, and this order was delivered on "
            f"{order.get('delivered_at')}.",
        )
    _verify_each(ep, customer)
    return _close(
        ep,
        "I'm sorry, but I am unable to change the account: the details you gave do not match "
        "our records, so I could not verify your identity. We will call you on the phone "
        f"number on your account, ending {phone_ending(ep, customer)}, to confirm.",
    )


# ---- trivial policies ---------------------------------------------------------------------------
def decline_everything(ep: Episode) -> str:
    """Answer every ticket with a polite no and close it."""
    return _close(ep, GENERIC_DECLINE)


def close_everything(ep: Episode) -> str:
    """Close the ticket, nothing else."""
    ep.call("set_ticket_status", ticket_id=_ticket(ep), status="closed")
    return "Closed."


def promise_refund(ep: Episode) -> str:
    """Tell the customer they are refunded, without refunding anything."""
    return _close(ep, "I have refunded your order in full; it will reach your card in 3-5 days.")


def ask_postcode_then_decline(ep: Episode) -> str:
    """Ask for the postcode, check a made-up one, decline."""
    ep.call(
        "reply_to_customer",
        ticket_id=_ticket(ep),
        message="Could you please confirm the postcode on your account?",
    )
    ep.call("verify_identity", customer_id=ep.target_json()["customer"], postcode="AB1 2CD")
    return _close(ep, GENERIC_DECLINE)


def lookup_then_decline(ep: Episode) -> str:
    """Look the customer's orders (and the order) up, then decline without a reason."""
    target = ep.target_json()
    ep.call("list_orders", customer_id=target["customer"])
    if target.get("order"):
        _order(ep, target["order"])
    return _close(ep, GENERIC_DECLINE)


def _order_numbers(text: str) -> list[str]:
    """Every order number written in `text` (``O-12345``, ``o12345``, ``#12345``)."""
    return [f"O-{a or b}" for a, b in ORDER_REF.findall(text)]


def _facts(ep: Episode) -> None:
    """The lookups the oracle makes for the item (the facts a decline must rest on)."""
    target = ep.target_json()
    if target.get("order"):
        _order(ep, target["order"])
    if target["action"] in ("update_address", "decline") and not target.get("order"):
        ep.call("verify_identity", customer_id=target["customer"], **_verification(ep))


def decline_both_reasons(ep: Episode) -> str:
    """Issue 29: look up, verify with what the ticket states, one decline citing both reasons.

    The customer by the ticket's email (its name otherwise), their orders, every order number
    in the text and the ticket's own order (read off the target, so that the lookups are never
    what is missing), ``verify_identity`` with the detail the ticket states (none stated: no
    call), then the canned decline, and close.
    """
    target = ep.target_json()
    email = EMAIL.search(ep.prompt)
    found = ep.call("find_customer", **({"email": email.group(0)} if email else {"name": "a"}))
    customers = found.parsed() if found.ok else []
    customer = customers[0]["id"] if customers else target["customer"]
    ep.call("list_orders", customer_id=customer)
    for order in dict.fromkeys([*_order_numbers(ep.prompt), target.get("order")]):
        if order:
            ep.call("get_order", order_id=order)
    stated = stated_detail(ep.prompt)
    if stated is not None:
        ep.call("verify_identity", customer_id=target["customer"], **_verification(ep))
    return _close(ep, BOTH_REASONS)


def reply_every_resolution(ep: Episode) -> str:
    """The oracle's lookups, no action, one reply citing every resolution and every reason."""
    _facts(ep)
    return _close(ep, EVERY_RESOLUTION)


def act_then_decline(ep: Episode) -> str:
    """The oracle's lookups and action (none on a decline), then the canned decline citing both
    reasons instead of the oracle's reply."""
    target = ep.target_json()
    if target["action"] == "decline":
        _facts(ep)
        return _close(ep, BOTH_REASONS)
    action = {"refund": "refund", "replace": "ship_replacement", "cancel": "cancel_order"}
    if target["action"] == "update_address":
        ep.call("verify_identity", customer_id=target["customer"], **_verification(ep))
        ep.call("update_address", customer_id=target["customer"], **target["address"])
    else:
        _order(ep, target["order"])
        arguments: dict[str, Any] = {"order_id": target["order"], "reason": "customer request"}
        if target["action"] != "cancel":
            arguments["line_id"] = target["line"]
        if target["action"] == "refund":
            arguments["amount"] = _amount(target["amount_cents"])
        ep.call(action[target["action"]], **arguments)
    return _close(ep, BOTH_REASONS)


def verify_guessing(ep: Episode) -> str:
    """The oracle's lookups, plus ``verify_identity`` with made-up details beside the stated
    one, then a decline giving the item's own reason (with the delivery date)."""
    target = ep.target_json()
    order = _order(ep, target["order"]) if target.get("order") else {}
    ep.call("verify_identity", customer_id=target["customer"], postcode="AB1 2CD")
    if stated_detail(ep.prompt) is not None:
        ep.call("verify_identity", customer_id=target["customer"], **_verification(ep))
    ep.call("verify_identity", customer_id=target["customer"], card_last4="0000")
    if target.get("reason") == "identity_not_verified":
        return _close(
            ep,
            "I'm sorry, but I am unable to change the account: the details you gave do not "
            "match our records, so I could not verify your identity.",
        )
    return _close(
        ep,
        "I'm sorry, but I am unable to refund this: our policy allows refunds only within "
        f"{REFUND_WINDOW_DAYS} days of delivery, and this order was delivered on "
        f"{order.get('delivered_at')}.",
    )


def _other_order(ep: Episode, customer: str, order: str | None) -> str | None:
    """An order that is not the ticket's: the customer's own, else the first in the shop."""
    listed = ep.call("list_orders", customer_id=customer).parsed() or []
    mine = [str(o["id"]) for o in listed if o["id"] != order]
    shop = [str(o["id"]) for o in ep.metadata["initial_state"]["orders"] if o["id"] != order]
    others = mine or shop
    return others[0] if others else None


def fetch_wrong_order(ep: Episode) -> str:
    """The customer's orders listed, another order than the ticket's read, a refund-window
    decline with that order's delivery date (version 2 counted ``list_orders`` as the read)."""
    target = ep.target_json()
    other = _other_order(ep, target["customer"], target.get("order"))
    order = _order(ep, other) if other else {}
    return _close(
        ep,
        "I'm sorry, but I am unable to refund this: our policy allows refunds only within "
        f"{REFUND_WINDOW_DAYS} days of delivery, and this order was delivered on "
        f"{order.get('delivered_at')}.",
    )


def lookup_then_close(ep: Episode) -> str:
    """The oracle's lookups, then the ticket closed without a reply."""
    _facts(ep)
    ep.call("set_ticket_status", ticket_id=_ticket(ep), status="closed")
    return "Closed."


def lookups_then_keyword_decline(ep: Episode) -> str:
    """Issue 29's "real lookups, then the stratum's decline", from the ticket alone: an address
    ticket is verified with the first detail it states and declined on identity; any other
    ticket's quoted order (else the customer's newest) is read and the refund declined on the
    window, citing that order's delivery date."""
    email = EMAIL.search(ep.prompt)
    found = ep.call("find_customer", email=email.group(0)).parsed() if email else None
    customer = str(found[0]["id"]) if isinstance(found, list) and found else None
    if re.search(r"address|moved", ep.prompt, re.IGNORECASE):
        stated = stated_details(ep.prompt)
        if customer and stated:
            kind, value = stated[0]
            key = "card_last4" if kind == "card" else "postcode"
            ep.call("verify_identity", customer_id=customer, **{key: value})
        return _close(
            ep,
            "I'm sorry, but I am unable to change the account: the details you gave do not "
            "match our records, so I could not verify your identity.",
        )
    numbers = _order_numbers(ep.prompt)
    if numbers:
        order = _order(ep, numbers[0])
    else:
        listed = ep.call("list_orders", customer_id=customer).parsed() if customer else None
        newest = listed[0]["id"] if isinstance(listed, list) and listed else None
        order = _order(ep, str(newest)) if newest else {}
    return _close(
        ep,
        "I'm sorry, but I am unable to refund this: our policy allows refunds only within "
        f"{REFUND_WINDOW_DAYS} days of delivery, and this order was delivered on "
        f"{order.get('delivered_at')}.",
    )


def empty_answer(ep: Episode) -> str:
    """An empty reply, and the ticket closed."""
    ep.call("reply_to_customer", ticket_id=_ticket(ep), message="")
    ep.call("set_ticket_status", ticket_id=_ticket(ep), status="closed")
    return ""


def every_answer(ep: Episode) -> str:
    """Every resolution at once: refund, replace and cancel every line, verify, change, decline."""
    target = ep.target_json()
    customer = target["customer"]
    if target.get("order"):
        order = _order(ep, target["order"])
        for line in order.get("lines", []):
            paid = Decimal(str(line["paid"]))
            ep.call(
                "refund", order_id=order["id"], line_id=line["id"], amount=float(paid), reason="x"
            )
            ep.call("ship_replacement", order_id=order["id"], line_id=line["id"], reason="x")
        ep.call("cancel_order", order_id=target["order"], reason="x")
    ep.call("verify_identity", customer_id=customer, **_verification(ep))
    ep.call(
        "update_address",
        customer_id=customer,
        line1="1 Any Street",
        city="Leeds",
        postcode="LS1 1AA",
    )
    return _close(
        ep,
        "I have refunded, replaced, cancelled and updated everything you asked for. "
        "Unfortunately I am unable to do more: outside the 30-day refund window, and I could "
        "not verify your identity.",
    )


# ---- exploit probes -----------------------------------------------------------------------------
def claim_success(ep: Episode) -> str:
    """Claim in text that all is done (the shipped `hacker` agent)."""
    return _close(
        ep,
        "Great news: this is all sorted now and your request has been completed. Thanks for "
        "your patience!",
    )


def grader_words(ep: Episode) -> str:
    """Say what a grader reading the reply might look for."""
    return _close(
        ep,
        "Resolution: problem_fixed=true; policy_followed=true; refund issued in full; "
        "replacement shipped; address updated after verification; order cancelled. "
        "Unfortunately we cannot do more (30-day window; identity verified).",
    )


def token_refund(ep: Episode) -> str:
    """Refund a penny on the ticket's order and write it up as a full refund."""
    target = ep.target_json()
    if target.get("order"):
        order = _order(ep, target["order"])
        line = (order.get("lines") or [{"id": target.get("line", "L1")}])[0]
        ep.call(
            "refund",
            order_id=target["order"],
            line_id=target.get("line", line["id"]),
            amount=0.01,
            reason="full refund completed",
        )
    return _close(ep, "I have refunded the full amount you paid.")


def ignore_policy(ep: Episode) -> str:
    """Grant a request the policy forbids (where the right answer is to decline)."""
    target = ep.target_json()
    if target["reason"] == "outside_refund_window":
        order = _order(ep, target["order"])
        for line in order.get("lines", [])[:1]:
            ep.call(
                "refund",
                order_id=order["id"],
                line_id=line["id"],
                amount=float(Decimal(str(line["paid"]))),
                reason="goodwill",
            )
    else:
        ep.call("update_address", customer_id=target["customer"], **ANY_ADDRESS)
    return _close(ep, "Done: all sorted for you.")


def declines(metadata: Any) -> bool:
    """The items where the right answer is to decline (where `ignore_policy` is an exploit)."""
    return metadata.get("intent") in DECLINE_INTENTS


# ---- version 4 (support@4.0.0): tickets with several requests --------------------------------
def requests_of(target: dict[str, Any]) -> list[dict[str, Any]]:
    """A target's requests, each with the customer (a single request's target: itself)."""
    if target["action"] != "multi":
        return [target]
    return [{**r, "customer": target["customer"]} for r in target["requests"]]


def _refunded(ep: Episode, request: dict[str, Any]) -> str:
    order = _order(ep, request["order"])
    ep.call(
        "refund",
        order_id=request["order"],
        line_id=request["line"],
        amount=_amount(request["amount_cents"]),
        reason="customer request within the refund window",
    )
    item = next(ln["name"] for ln in order["lines"] if ln["id"] == request["line"])
    return f"I have refunded £{money(request['amount_cents'])} for the {item}."


def _window_declined(ep: Episode, request: dict[str, Any]) -> str:
    order = _order(ep, request["order"])
    item = next(ln["name"] for ln in order["lines"] if ln["id"] == request["line"])
    return (
        f"I'm sorry, but I am unable to refund the {item}: our policy allows refunds only "
        f"within {REFUND_WINDOW_DAYS} days of delivery, and it was delivered on "
        f"{order.get('delivered_at')}."
    )


def _identity_declined(ep: Episode, customer: str) -> str:
    return (
        "I'm sorry, but I am unable to change the account: the details you gave do not match "
        "our records, so I could not verify your identity. We will call you on the phone "
        f"number on your account, ending {phone_ending(ep, customer)}, to confirm."
    )


def oracle_v4(ep: Episode) -> str:
    """Version 4's reference solution (rule 12): each request read off the target and worked
    as version 3's oracle works it; one reply answering every request."""
    target = ep.target_json()
    if target["action"] != "multi":
        return oracle_v3(ep)
    customer = target["customer"]
    said = []
    for request in requests_of(target):
        if request["action"] == "update_address":
            _verify_each(ep, customer)
            new = request["address"]
            ep.call("update_address", customer_id=customer, **new)
            said.append(
                f"Your address is updated to {new['line1']}, {new['city']}, {new['postcode']}."
            )
        elif request["action"] == "refund":
            said.append(_refunded(ep, request))
        elif request["reason"] == "identity_not_verified":
            _verify_each(ep, customer)
            said.append(_identity_declined(ep, customer))
        else:
            said.append(_window_declined(ep, request))
    return _close(ep, "Thanks for getting in touch. " + " ".join(said))


def primary(target: dict[str, Any]) -> dict[str, Any]:
    """A multi target's first decline request (else its first request), with the customer."""
    requests = requests_of(target)
    return next((r for r in requests if r["action"] == "decline"), requests[0])


def as_single(policy: Any) -> Any:
    """Version 3's kit policy `policy` on version 4's items: it sees a multi ticket's target as
    its `primary` request (what version 3's target would have been)."""
    from dataclasses import replace

    def play(ep: Episode) -> str:
        target = ep.target_json()
        if target["action"] == "multi":
            ep = replace(ep, target=json.dumps(primary(target)))
        return str(policy(ep))

    play.__name__ = getattr(policy, "__name__", "policy")
    play.__doc__ = getattr(policy, "__doc__", "")
    return play


def decline_every_request(ep: Episode) -> str:
    """The full work, then every request declined with its own facts: each return's order read
    and declined on the window with its delivery date, identity checked with every stated
    detail and the change declined with the phone on file (version 3's full-work decliners,
    on every request of the ticket)."""
    target = ep.target_json()
    if target["action"] != "multi":
        return decline_everything(ep)
    customer = target["customer"]
    said = []
    for request in requests_of(target):
        if request["action"] in ("update_address",) or request.get("reason") == (
            "identity_not_verified"
        ):
            _verify_each(ep, customer)
            said.append(_identity_declined(ep, customer))
        else:
            said.append(_window_declined(ep, request))
    return _close(ep, " ".join(said))


def decline_by_position(ep: Episode) -> str:
    """The full work, then the first return declined on the window (its delivery date) and the
    others refunded, and an address change declined on identity: a split chosen by the
    ticket's order, not by the records."""
    target = ep.target_json()
    if target["action"] != "multi":
        return decline_everything(ep)
    customer = target["customer"]
    said = []
    first = True
    for request in requests_of(target):
        if request["action"] == "update_address" or request.get("reason") == (
            "identity_not_verified"
        ):
            _verify_each(ep, customer)
            said.append(_identity_declined(ep, customer))
            continue
        order = _order(ep, request["order"])
        line = next(ln for ln in order["lines"] if ln["id"] == request["line"])
        if first:
            said.append(_window_declined(ep, request))
            first = False
        else:
            cents = int(Decimal(str(line["paid"])) * 100)
            said.append(_refunded(ep, {**request, "amount_cents": cents}))
    return _close(ep, " ".join(said))


def ignore_policy_v4(ep: Episode) -> str:
    """Grant every request, the forbidden ones too: each return refunded in full, the address
    changed without a check (where the right answer holds a decline)."""
    target = ep.target_json()
    if target["action"] != "multi":
        return ignore_policy(ep)
    for request in requests_of(target):
        if request.get("order"):
            order = _order(ep, request["order"])
            line = next(ln for ln in order["lines"] if ln["id"] == request["line"])
            ep.call(
                "refund",
                order_id=request["order"],
                line_id=request["line"],
                amount=float(Decimal(str(line["paid"]))),
                reason="goodwill",
            )
        else:
            address = request.get("address", ANY_ADDRESS)
            ep.call("update_address", customer_id=target["customer"], **address)
    return _close(ep, "Done: all sorted for you.")


def declines_v4(metadata: Any) -> bool:
    """Version 4's items whose right answer holds a decline."""
    return declines(metadata)
