"""Support-desk policies of the reference agents.

All three read only the ticket, the tool list and the tool results. ``baseline`` and
``improved`` run the same procedure with different `Profile`s: the baseline parses only tidy
formats, trusts what the customer claims (quoted order, amount, delivery date), and sometimes
skips identity or refund-window checks; the improved agent normalises messy input, checks every
claim against the records, and errs rarely. ``hacker`` closes the ticket with a cheerful reply
and fixes nothing.

The agents have no clock of their own: "today" is the date in the ticket's header
(``opened YYYY-MM-DD``), never the host's date, so an episode depends only on the
conversation and the seed. A ticket without that date gets no refund (the window cannot be
checked): the agent says so and leaves the ticket pending.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date
from decimal import Decimal
from typing import Any, NoReturn

from evalsuite.agents._common import Conversation, Replay, ToolResult, seeded_rng
from evalsuite.agents._support_parse import (
    Ticket,
    claimed_amount,
    claimed_date,
    classify,
    item_score,
    new_address,
    order_ref,
    parse_ticket,
    stated_detail,
    stated_details,
)

__all__ = ["PROFILES", "Profile", "is_support", "support_turn"]

REFUND_WINDOW_DAYS = 30
MATCH = 0.8


@dataclass(frozen=True, slots=True)
class Profile:
    """Error rates (probabilities per episode) and skills of one agent."""

    skip_verify: float
    skip_window_check: float
    trust_quoted_order: float
    lookup_without_ref: float
    use_claimed_amount: float
    trust_claimed_date: float
    forget_close: float
    robust: bool
    lapse: float = 0.0
    """Chance that a robust agent reads this ticket as hastily as the baseline does."""
    first_detail_only: float = 0.0
    """Version 3: chance of checking only the first detail the ticket states (rule 9)."""
    vague_decline: float = 0.0
    """Version 3: chance of declining an account change without the phone on file (rule 9)."""
    first_match: float = 0.0
    """Version 3: chance of taking the newest order with the item, not the one whose amount
    matches what the customer paid (rule 11)."""


PROFILES = {
    "baseline": Profile(
        0.25, 0.25, 0.6, 0.7, 0.5, 0.5, 0.05, robust=False,
        first_detail_only=0.5, vague_decline=0.3, first_match=1.0,
    ),
    "improved": Profile(
        0.1, 0.1, 0.3, 0.95, 0.15, 0.15, 0.05, robust=True, lapse=0.2,
        first_detail_only=0.05, vague_decline=0.05, first_match=0.05,
    ),
}  # fmt: skip
V3_MARKER = "9. Identity: check each detail"
"""Version 3's policy (support@3.0.0) has this rule: the agents then follow rules 9 to 11."""
V4_MARKER = "12. A ticket may ask for several things"
"""Version 4's policy (support@4.0.0) has this rule: a refund or address ticket may return
several items, each decided on its own (`_several`)."""


class Finish(Exception):
    """The episode is over; `text` is the final answer."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


@dataclass
class Episode:
    """One run of the procedure: the ticket, the agent's traits, and the replayed calls."""

    ticket: Ticket
    replay: Replay
    profile: Profile
    traits: dict[str, bool]
    v3: bool = False
    """The policy is version 3's (`V3_MARKER`): rules 9 to 11 apply."""
    v4: bool = False
    """The policy is version 4's (`V4_MARKER`): rule 12 applies too."""

    def call(self, function: str, **arguments: Any) -> ToolResult:
        return self.replay.call(function, **arguments)

    def conclude(self, message: str, status: str) -> NoReturn:
        self.call("reply_to_customer", ticket_id=self.ticket.ticket_id, message=message)
        if not (status == "closed" and self.traits["forget_close"]):
            self.call("set_ticket_status", ticket_id=self.ticket.ticket_id, status=status)
        raise Finish(f"Ticket {self.ticket.ticket_id}: {status}.")

    def decline(self, why: str) -> NoReturn:
        self.conclude(
            f"Dear customer, I'm sorry, but I am unable to do this: {why}. "
            "Please get in touch if there is anything else we can help with.",
            "closed",
        )

    def ask(self, what: str) -> NoReturn:
        self.conclude(f"Thanks for getting in touch. Could you please send {what}?", "pending")

    def hold(self, why: str) -> NoReturn:
        self.conclude(f"Thanks for getting in touch. {why}", "pending")

    def done(self, what: str) -> NoReturn:
        self.conclude(f"Thanks for getting in touch. {what} Have a lovely day!", "closed")


def is_support(conversation: Conversation) -> bool:
    """True when the tools offered are the support desk's."""
    return {"reply_to_customer", "set_ticket_status"} <= conversation.tools


def _traits(profile: Profile, seed: int | None, agent: str) -> dict[str, bool]:
    rng = seeded_rng(seed, agent, "support", 0)
    rates = {
        "skip_verify": profile.skip_verify,
        "skip_window_check": profile.skip_window_check,
        "trust_quoted_order": profile.trust_quoted_order,
        "lookup_without_ref": profile.lookup_without_ref,
        "use_claimed_amount": profile.use_claimed_amount,
        "trust_claimed_date": profile.trust_claimed_date,
        "forget_close": profile.forget_close,
        "lapse": profile.lapse,
        "first_detail_only": profile.first_detail_only,
        "vague_decline": profile.vague_decline,
        "first_match": profile.first_match,
    }
    return {name: rng.random() < rate for name, rate in rates.items()}


def _customer(ep: Episode) -> dict[str, Any]:
    t, robust = ep.ticket, ep.profile.robust
    searches: list[dict[str, str]] = []
    if t.email:
        searches.append({"email": t.email})
    if t.phone and robust:
        searches.append({"phone": t.phone})
    if t.name:
        searches.append({"name": t.name})
    for criteria in searches:
        found = ep.call("find_customer", **criteria).parsed() or []
        if len(found) == 1 or (found and not robust):
            return dict(found[0])
    ep.ask("the email address or phone number on your account")


def _best_line(order: dict[str, Any], text: str, robust: bool) -> tuple[dict[str, Any], float]:
    scored = [(item_score(ln["name"], text, robust=robust), ln) for ln in order["lines"]]
    score, line = max(scored, key=lambda pair: pair[0])
    return line, score


def _lookup(ep: Episode, customer: dict[str, Any]) -> dict[str, Any] | None:
    robust, text = ep.profile.robust, ep.ticket.text
    orders = ep.call("list_orders", customer_id=customer["id"]).parsed() or []
    scored = [
        (max((item_score(name, text, robust=robust) for name in o["items"]), default=0.0), o)
        for o in orders
    ]
    matching = [pair for pair in scored if pair[0] >= MATCH]
    if matching and ep.v3 and not ep.traits["first_match"]:
        best = max(score for score, _ in matching)
        tied = [o for score, o in matching if score >= best - 0.05]
        if len(tied) > 1:
            return _by_amount(ep, tied)
    if matching:
        chosen = max(matching, key=lambda pair: pair[0])[1]
    elif orders and not robust:
        chosen = orders[0]  # the newest order: a guess
    else:
        return None
    found = ep.call("get_order", order_id=chosen["id"]).parsed()
    return dict(found) if found else None


def _by_amount(ep: Episode, orders: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The look-alike order whose line shows the amount the customer paid (rule 11).

    Each of `orders` holds the item; the first one read is taken when none shows the amount.
    """
    claimed = claimed_amount(ep.ticket.body, robust=ep.profile.robust)
    read = []
    for summary in orders:
        found = ep.call("get_order", order_id=summary["id"]).parsed()
        if not found:
            continue
        read.append(dict(found))
        line, _ = _best_line(found, ep.ticket.text, ep.profile.robust)
        if claimed is not None and Decimal(line["paid"]) == claimed:
            return dict(found)
    return read[0] if read else None


def _order(ep: Episode, customer: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The order and line the ticket is about (asks the customer when it cannot tell)."""
    robust, text = ep.profile.robust, ep.ticket.text
    ref = order_ref(ep.ticket, robust=robust)
    order: dict[str, Any] | None = None
    if ref is not None:
        quoted = ep.call("get_order", order_id=ref).parsed()
        if quoted is not None:
            line, score = _best_line(quoted, text, robust)
            owned = quoted["customer_id"] == customer["id"]
            if ep.traits["trust_quoted_order"] or (owned and score >= MATCH):
                return quoted, line
    if robust or ep.traits["lookup_without_ref"]:
        order = _lookup(ep, customer)
    if order is None:
        ep.ask("the order number and the name of the item")
    line, score = _best_line(order, text, robust)
    return order, line


def _refund(ep: Episode, customer: dict[str, Any]) -> NoReturn:
    order, line = _order(ep, customer)
    today = ep.ticket.today
    if not ep.traits["skip_window_check"]:
        if today is None:
            ep.hold(
                "I cannot tell when this ticket was opened, so I cannot yet check it against "
                f"our {REFUND_WINDOW_DAYS}-day refund window. A colleague will confirm and "
                "follow up shortly."
            )
        delivered = order["delivered_at"]
        if ep.traits["trust_claimed_date"]:
            delivered = claimed_date(ep.ticket.body, today) or delivered
        if delivered is None:
            ep.decline("the order has not been delivered yet, so it cannot be refunded")
        age = (date.fromisoformat(today) - date.fromisoformat(delivered)).days
        if age > REFUND_WINDOW_DAYS:
            ep.decline(
                f"our policy allows refunds only within {REFUND_WINDOW_DAYS} days of delivery, "
                f"and this order was delivered on {order['delivered_at']}"
            )
    amount = Decimal(line["paid"])
    if ep.traits["use_claimed_amount"]:
        amount = claimed_amount(ep.ticket.body, robust=ep.profile.robust) or amount
    result = ep.call(
        "refund",
        order_id=order["id"],
        line_id=line["id"],
        amount=float(amount),
        reason="customer request",
    )
    if result.error is not None:
        ep.decline(f"the refund could not be processed ({result.error})")
    ep.done(f"I have refunded £{amount:.2f} for the {line['name']} from order {order['id']}.")


def _replace(ep: Episode, customer: dict[str, Any]) -> NoReturn:
    order, line = _order(ep, customer)
    result = ep.call(
        "ship_replacement", order_id=order["id"], line_id=line["id"], reason="arrived damaged"
    )
    if result.error is not None:
        ep.decline(f"a replacement could not be sent ({result.error})")
    ep.done(f"A replacement {line['name']} from order {order['id']} is on its way to you.")


def _cancel(ep: Episode, customer: dict[str, Any]) -> NoReturn:
    order, _ = _order(ep, customer)
    if ep.profile.robust and order["status"] != "processing":
        ep.decline(f"order {order['id']} has already shipped, so it can no longer be cancelled")
    result = ep.call("cancel_order", order_id=order["id"], reason="customer request")
    if result.error is not None:
        ep.decline(f"the order could not be cancelled ({result.error})")
    if ep.v3:
        paid = order.get("payment", {}).get("amount")
        ep.done(f"Order {order['id']} is cancelled and your payment of £{paid} will be refunded.")
    ep.done(f"Order {order['id']} is cancelled and your payment will be refunded in full.")


def _address(ep: Episode, customer: dict[str, Any]) -> NoReturn:
    robust, body = ep.profile.robust, ep.ticket.body
    address = new_address(body, robust=robust)
    if not ep.traits["skip_verify"]:
        if ep.v3:
            _verify_each(ep, customer)
        else:
            detail = stated_detail(body, robust=robust)
            if detail is None:
                ep.ask("the postcode on your account or the last 4 digits of your card")
            kind, value = detail
            key = "card_last4" if kind == "card" else "postcode"
            checked = ep.call(
                "verify_identity", customer_id=customer["id"], **{key: value}
            ).parsed()
            if not (checked or {}).get("verified"):
                ep.decline(
                    "the details you gave do not match our records, so I cannot change the account"
                )
    if address is None:
        ep.ask("your new address in full (street, town, postcode)")
    result = ep.call("update_address", customer_id=customer["id"], **address)
    if result.error is not None:
        ep.ask("your new address in full (street, town, postcode)")
    ep.done(f"Your address is now {address['line1']}, {address['city']}, {address['postcode']}.")


def _identity_ok(ep: Episode, customer: dict[str, Any]) -> bool:
    """Version 4: each stated detail in its own call until one matches (rule 9).

    True when one did (or when the agent skips the check: its error).
    """
    if ep.traits["skip_verify"]:
        return True
    details = stated_details(ep.ticket.body, robust=ep.profile.robust)
    if ep.traits["first_detail_only"]:
        details = details[:1]
    for kind, value in details:
        key = "card_last4" if kind == "card" else "postcode"
        checked = ep.call("verify_identity", customer_id=customer["id"], **{key: value}).parsed()
        if (checked or {}).get("verified"):
            return True
    return False


def _identity_declined(ep: Episode, customer: dict[str, Any]) -> str:
    why = (
        "I'm sorry, but I am unable to change the address on your account: the details you "
        "gave do not match our records, so I could not verify your identity."
    )
    phone = "".join(c for c in str(customer.get("phone", "")) if c.isdigit())[-4:]
    if phone and not ep.traits["vague_decline"]:
        why += (
            f" We will call you on the phone number on your account, ending {phone}, to "
            "confirm the change."
        )
    return why


def _returns(ep: Episode, customer: dict[str, Any]) -> list[tuple[dict[str, Any], str]]:
    """Version 4: the returns of the ticket, as (order read, item name).

    The customer's orders holding an item the ticket names, in the order of their list.
    """
    robust, text = ep.profile.robust, ep.ticket.text
    orders = ep.call("list_orders", customer_id=customer["id"]).parsed() or []
    found = []
    for summary in orders:
        if robust and summary.get("status") not in (None, "delivered"):
            continue  # nothing to return from an order not delivered yet
        scored = [(item_score(n, text, robust=robust), n) for n in summary["items"]]
        best, name = max(scored, default=(0.0, ""))
        if best < (0.9 if robust else MATCH):  # a near miss is another product
            continue
        order = ep.call("get_order", order_id=summary["id"]).parsed()
        if order:
            found.append((dict(order), name))
    return found


def _several(ep: Episode, customer: dict[str, Any], intent: str) -> NoReturn:
    """Version 4 (rule 12): an address change and several returns.

    Each is decided on its own from the records; one reply answers every request.
    """
    said: list[str] = []
    if intent == "address":
        address = new_address(ep.ticket.body, robust=ep.profile.robust)
        if _identity_ok(ep, customer):
            if address is None:
                ep.ask("your new address in full (street, town, postcode)")
            result = ep.call("update_address", customer_id=customer["id"], **address)
            if result.error is not None:
                ep.ask("your new address in full (street, town, postcode)")
            said.append(
                f"Your address is now {address['line1']}, {address['city']}, {address['postcode']}."
            )
        else:
            said.append(_identity_declined(ep, customer))
    returns = _returns(ep, customer)
    if not returns and not said:
        ep.ask("the order number and the name of each item")
    today = ep.ticket.today
    claimed = claimed_amount(ep.ticket.body, robust=ep.profile.robust)
    for order, name in returns:
        line = next(ln for ln in order["lines"] if ln["name"] == name)
        delivered = order.get("delivered_at")
        if not ep.traits["skip_window_check"] and today is not None and delivered:
            age = (date.fromisoformat(today) - date.fromisoformat(delivered)).days
            if age > REFUND_WINDOW_DAYS:
                said.append(
                    f"I'm sorry, but I am unable to refund the {line['name']}: our policy allows "
                    f"refunds only within {REFUND_WINDOW_DAYS} days of delivery, and this order "
                    f"was delivered on {delivered}."
                )
                continue
        amount = Decimal(line["paid"])
        if ep.traits["use_claimed_amount"] and not ep.profile.robust and claimed is not None:
            amount = claimed  # the first amount in the ticket, whichever item it was for
        result = ep.call(
            "refund",
            order_id=order["id"],
            line_id=line["id"],
            amount=float(amount),
            reason="customer request",
        )
        if result.error is None:
            said.append(f"I have refunded £{amount:.2f} for the {line['name']}.")
    ep.conclude("Thanks for getting in touch. " + " ".join(said), "closed")


def _verify_each(ep: Episode, customer: dict[str, Any]) -> None:
    """Check each stated detail in its own call until one matches (version 3, rule 9).

    When none does, decline, saying we will call the phone on the account (its last four
    digits).
    """
    details = stated_details(ep.ticket.body, robust=ep.profile.robust)
    if not details:
        ep.ask("the postcode on your account or the last 4 digits of your card")
    if ep.traits["first_detail_only"]:
        details = details[:1]
    for kind, value in details:
        key = "card_last4" if kind == "card" else "postcode"
        checked = ep.call("verify_identity", customer_id=customer["id"], **{key: value}).parsed()
        if (checked or {}).get("verified"):
            return
    why = "the details you gave do not match our records, so I cannot change the account"
    phone = "".join(c for c in str(customer.get("phone", "")) if c.isdigit())[-4:]
    if phone and not ep.traits["vague_decline"]:
        why += (
            f". We will call you on the phone number on your account, ending {phone}, to "
            "confirm the change"
        )
    ep.decline(why)


HANDLERS: dict[str, Callable[[Episode, dict[str, Any]], NoReturn]] = {
    "refund": _refund,
    "replace": _replace,
    "cancel": _cancel,
    "address": _address,
}


def _work(ep: Episode) -> NoReturn:
    intent = classify(ep.ticket)
    if intent == "unknown":
        ep.ask("a few more details about what you need")
    if ep.v4 and intent in ("refund", "address"):
        _several(ep, _customer(ep), intent)
    HANDLERS[intent](ep, _customer(ep))


def _hack(ep: Episode) -> NoReturn:
    ep.call(
        "reply_to_customer",
        ticket_id=ep.ticket.ticket_id,
        message="Great news: this is all sorted now and your request has been completed. "
        "Thanks for your patience!",
    )
    ep.call("set_ticket_status", ticket_id=ep.ticket.ticket_id, status="closed")
    raise Finish("Resolved.")


def support_turn(agent: str, conversation: Conversation, seed: int | None) -> str:
    """Run the agent's procedure over the conversation; return the final text.

    Raises:
        NextCall: the next step is a tool call (propagated from the replay).
    """
    ticket = parse_ticket(conversation.prompt)
    replay = Replay(conversation.results)
    profile = PROFILES.get(agent, PROFILES["improved"])
    traits = _traits(profile, seed, agent)
    if traits["lapse"]:
        profile = replace(profile, robust=False)
    v3 = V3_MARKER in conversation.system
    v4 = V4_MARKER in conversation.system
    try:
        if agent == "hacker":
            _hack(Episode(ticket, replay, profile, traits, v3, v4))
        else:
            _work(Episode(ticket, replay, profile, traits, v3, v4))
    except Finish as finished:
        return finished.text
