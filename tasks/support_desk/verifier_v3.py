"""Verifier version 3: a decline is graded on the facts the agent established (support_desk v3).

Version 2 (`verifier_v2.py`, kept for support@2.0.0) regex-searched the joined replies for the
reason the policy requires, accepted any ``list_orders`` call as the order "looked up", and
counted the identity check as done whenever ``verify_identity`` failed with the detail the
ticket states. A policy that looked the customer up, fetched any order number in the text,
verified with whatever the ticket states and answered every ticket with one canned decline
citing *both* reasons ("outside the 30-day refund window" and "could not verify your
identity") passed all 36 decline items of the dev split (issue 29). Version 3 keeps every
check of version 2 and grades a decline as a decision taken from facts:

* **the facts are the agent's own tool results**: a refund decline needs ``get_order`` of the
  ticket's order (not any order, not ``list_orders``) before the decline, and the delivery
  date in that result outside the window, and the reply says when that order was delivered
  (and cites no date that is not in that record: another order's, a list of guesses); an
  account-change decline needs ``verify_identity`` for that customer with every detail the
  ticket states (one call each: a ticket may state the postcode and the card, and one that
  matches is enough), each answering ``verified: false``, before the decline;
* **the reply gives that reason and no other**: the refund window for a refund outside it,
  the failed identity check for an unverified change; a reply that also cites a reason that
  does not apply (the other one, "already shipped", "not delivered") fails;
* **the reply claims nothing the final state does not show**: "refunded", "a replacement is
  on its way", "cancelled", "your address is updated" each need the change in the shop;
* **a request that was due is not refused**: on a refund, replacement, cancellation or
  address change the replies must not tell the customer no;
* **identity is checked only with what the customer gave**: every ``verify_identity`` call
  uses exactly one of the details the ticket states (guessing details is probing the account);
* **the reply states the record's facts** (rules 9 and 10, `fact_problems`): an identity
  decline gives the last four digits of the phone on the account (and no other number's); a
  refund the amount refunded, a cancellation the amount it refunds (no other amount but the
  ticket's); a replacement names the item (no other product); an address change the new
  postcode. These facts differ from item to item in a stratum (`items_v3`), so a reply
  copied from another item, or one merging every item's, is wrong;
* **actions follow ``get_order`` of the order acted on** (version 2 also accepted
  ``list_orders``, which shows no lines or amounts).

The steps are read from the episode's tool calls (what the agent did, with the results the
environment gave) and the final state, never from the agent's claims. `evaluate` stays pure
and table-tested (tests/tasks/test_support_v3.py).
"""

import calendar
import json
import re
from collections.abc import Sequence
from datetime import date, timedelta
from typing import Any

from inspect_ai.scorer import Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState

from .data import PRODUCTS
from .env import REFUND_WINDOW_DAYS, days_between, norm_postcode
from .episode import read_shop
from .stated import stated_details
from .verifier import Verdict, _changes
from .verifier import evaluate as evaluate_v1
from .verifier_v2 import ACTIONS, IDENTITY_REASON, WINDOW_REASON, Call, episode_calls
from .verifier_v2 import _first_decline as first_decline

__all__ = [
    "Call",
    "episode_calls",
    "evaluate",
    "fact_problems",
    "reply_problems",
    "support_verifier",
]

SHIPPED_REASON = re.compile(
    r"already (?:been )?(?:shipped|dispatched)|no longer be cancell?ed|can(?:no|')t be "
    r"cancell?ed",
    re.IGNORECASE,
)
UNDELIVERED_REASON = re.compile(r"not (?:yet )?(?:been )?delivered|has(?:n't| not) arrived", re.I)
REASONS: dict[str, re.Pattern[str]] = {
    "outside_refund_window": WINDOW_REASON,
    "identity_not_verified": IDENTITY_REASON,
}
"""The reason a decline must give (version 2's patterns: broad, so that a plain wording of the
right reason counts)."""
CITED: dict[str, re.Pattern[str]] = {
    "outside_refund_window": re.compile(
        r"refund window|return window|\b\d+[- ]day (?:refund|return)|more than \d+ days"
        r"|(?:refunds?|returns?) (?:are |is )?only (?:possible |available |allowed )?within"
        r"|outside (?:the|our) (?:\d+[- ]day )?(?:refund |return )?(?:window|period)"
        r"|too long ago",
        re.IGNORECASE,
    ),
    "identity_not_verified": re.compile(
        r"identity|\bverify (?:you|who)|(?:could not|couldn't|unable to|cannot|can't) (?:be )?"
        r"verif|not (?:be )?verified|verification (?:failed|did not|was not)|security check",
        re.IGNORECASE,
    ),
    "already_shipped": SHIPPED_REASON,
    "not_delivered": UNDELIVERED_REASON,
}
"""Every decline reason a reply can cite, by name, in the words that can only mean that reason
(narrower than `REASONS`: "does not match" may be said of a date, "within 14 days" of a reply);
a decline must cite no reason but its own."""
REASON_WORDS = {
    "outside_refund_window": "the refund window",
    "identity_not_verified": "identity not verified",
    "already_shipped": "already shipped",
    "not_delivered": "not delivered",
}

CLAIMS: dict[str, re.Pattern[str]] = {
    "a refund": re.compile(
        r"\brefunded\b|\bissued (?:you )?(?:a|the|your) refund|\bprocessed (?:a|the|your) refund"
        r"|\brefund (?:has been|was|is being) (?:issued|processed|made|sent)",
        re.IGNORECASE,
    ),
    "a replacement": re.compile(
        r"\breplacement\b[^.!?\n]*\b(?:on its way|shipped|sent|dispatched|arranged)"
        r"|\b(?:shipped|sent|dispatched|arranged) (?:you )?a replacement",
        re.IGNORECASE,
    ),
    "a cancellation": re.compile(
        r"\b(?:is|are|has been|have been|was|now)\s+cancell?ed\b"
        r"|\bhave cancell?ed\b|\bcancell?ed (?:your|the|this) order",
        re.IGNORECASE,
    ),
    "an address change": re.compile(
        r"\baddress (?:is now|is updated|was updated|has been (?:updated|changed))"
        r"|\b(?:updated|changed) (?:your|the) address",
        re.IGNORECASE,
    ),
}
"""What a reply can claim was done; each claim needs the matching change in the final state."""

REFUSAL = re.compile(
    r"\b(?:unable|not able) to (?:help|do|refund|replace|cancel|change|update|process|send"
    r"|ship|assist|offer|issue|accept|verify)\b"
    r"|\b(?:cannot|can't|can not|could not|couldn't) (?:help|do|refund|replace|cancel|change"
    r"|update|process|send|ship|assist|offer|issue|accept|verify|be)\b"
    r"|\bdeclin(?:e|ed|ing) (?:your|the|this)\b|\bnot (?:possible|eligible)\b",
    re.IGNORECASE,
)
"""A reply telling the customer no (on an item whose request was due, that is a failure)."""


MONTH = (
    r"(?P<month>January|February|March|April|May|June|July|August|September|October|November"
    r"|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?"
)
DATE_FORMS = (
    re.compile(r"\b(?P<year>\d{4})-(?P<mon>\d{1,2})-(?P<day>\d{1,2})\b"),
    re.compile(rf"\b(?P<day>\d{{1,2}})(?:st|nd|rd|th)?(?: of)? {MONTH}(?:,? (?P<year>\d{{4}}))?"),
    re.compile(rf"\b{MONTH} (?P<day>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,? (?P<year>\d{{4}}))?"),
    re.compile(r"\b(?P<day>\d{1,2})[/.](?P<mon>\d{1,2})[/.](?P<year>\d{4}|\d{2})\b"),
    re.compile(r"(?<![\d/.])(?P<day>\d{1,2})/(?P<mon>\d{1,2})(?![\d/]|\.\d)"),
)
"""How a reply (or a ticket) writes a date: ISO, ``8 June 2025``, ``June 8th``, ``8 Jun``,
``08/06/2025``, ``8/6``."""
MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
MONTHS["sept"] = 9

Day = tuple[int | None, int, int]
"""A date as written: (year or None, month, day)."""


def dates_in(text: str) -> list[list[Day]]:
    """Every date written in `text`, each as its possible readings (``03/04/2025`` reads both
    ways round; a date without a year has year None)."""
    found = []
    for form in DATE_FORMS:
        for match in form.finditer(text):
            parts = match.groupdict()
            year = int(parts["year"]) if parts.get("year") else None
            if year is not None and year < 100:
                year += 2000
            day = int(parts["day"])
            if parts.get("month"):
                readings = [(year, MONTHS[parts["month"].lower()], day)]
            elif form is DATE_FORMS[0]:
                readings = [(year, int(parts["mon"]), day)]
            else:
                readings = [(year, int(parts["mon"]), day), (year, day, int(parts["mon"]))]
            valid = [r for r in readings if _valid(r)]
            if valid:
                found.append(valid)
    return found


def _valid(reading: Day) -> bool:
    year, month, day = reading
    try:
        date(year or 2000, month, day)
    except ValueError:
        return False
    return True


def _same(reading: Day, iso: str) -> bool:
    known = date.fromisoformat(iso)
    year, month, day = reading
    return (month, day) == (known.month, known.day) and year in (None, known.year)


def mentions_date(text: str, iso: str) -> bool:
    """True when `text` names the day `iso` in any of the ways a reply writes a date."""
    return any(_same(r, iso) for readings in dates_in(text) for r in readings)


def foreign_dates(text: str, allowed: Sequence[str]) -> list[str]:
    """The dates written in `text` that are none of `allowed` (ISO days), as written."""
    return [
        "-".join(str(part) for part in readings[0] if part is not None)
        for readings in dates_in(text)
        if not any(_same(r, iso) for r in readings for iso in allowed)
    ]


def _ticket_dates(ticket: str, initial: dict[str, Any]) -> list[str]:
    """The dates the customer wrote in the ticket (a reply may quote them back), as ISO days
    (a date without a year in the year of the ticket)."""
    year = date.fromisoformat(initial["today"]).year
    found = []
    for readings in dates_in(ticket):
        for y, m, d in readings:
            try:
                found.append(date(y or year, m, d).isoformat())
            except ValueError:  # 29 February of another year
                continue
    return found


def _record_dates(order: dict[str, Any], today: str) -> list[str]:
    """The dates a window decline may cite: the order's own, the ticket's, the window's ends."""
    days = [order.get(k) for k in ("placed_at", "shipped_at", "delivered_at")] + [today]
    known = [str(d) for d in days if d]
    delivered, opened = order.get("delivered_at"), date.fromisoformat(today)
    ends = [opened - timedelta(days=n) for n in (REFUND_WINDOW_DAYS, REFUND_WINDOW_DAYS + 1)]
    if delivered:
        start = date.fromisoformat(str(delivered))
        ends += [start + timedelta(days=n) for n in (REFUND_WINDOW_DAYS, REFUND_WINDOW_DAYS + 1)]
    return known + [d.isoformat() for d in ends]


def _order_read(calls: Sequence[Call], order: str, before: int) -> Call | None:
    """The first successful ``get_order`` of `order` before call `before` (None when none)."""
    for call in calls[:before]:
        if (
            call.function == "get_order"
            and call.ok
            and str(call.arguments.get("order_id", "")).strip().upper() == order
            and isinstance(call.result, dict)
        ):
            return call
    return None


def _detail_of(arguments: dict[str, Any]) -> tuple[str, str] | None:
    """The one detail a ``verify_identity`` call gives (None: none, or both at once)."""
    postcode = str(arguments.get("postcode") or "").strip()
    card = re.sub(r"\D", "", str(arguments.get("card_last4") or ""))
    if bool(postcode) == bool(card):
        return None
    return ("postcode", norm_postcode(postcode)) if postcode else ("card", card[-4:])


def _stated(ticket: str) -> list[tuple[str, str]]:
    """The details the ticket states, normalised as `_detail_of` returns them."""
    return [
        (kind, norm_postcode(value) if kind == "postcode" else value)
        for kind, value in stated_details(ticket)
    ]


def uses_stated_detail(ticket: str, arguments: dict[str, Any]) -> bool:
    """True when a ``verify_identity`` call gives exactly one detail, one the ticket states.

    Only that detail: a postcode beside a stated card (or the reverse) is a guess too, and so is
    one call with both stated details at once (it cannot tell which of them failed).
    """
    detail = _detail_of(arguments)
    return detail is not None and detail in _stated(ticket)


def _guessed_verifications(calls: Sequence[Call], ticket: str) -> list[str]:
    return [
        f"verify_identity for {call.arguments.get('customer_id')} with a detail the customer "
        "did not give in the ticket"
        for call in calls
        if call.function == "verify_identity" and call.ok
        if not uses_stated_detail(ticket, call.arguments)
    ]


def _reply_text(final: dict[str, Any]) -> str:
    """Every reply on the episode's ticket, joined."""
    ticket_id = final["tickets"][0]["id"]
    return " ".join(r["message"] for r in final["replies"] if r["ticket_id"] == ticket_id)


def _decided_from_facts(
    initial: dict[str, Any],
    final: dict[str, Any],
    target: dict[str, Any],
    ticket: str,
    calls: Sequence[Call],
) -> list[str]:
    """What is missing for the decline to rest on facts the agent established first."""
    end = first_decline(calls)
    if target["reason"] == "outside_refund_window":
        read = _order_read(calls, target["order"], end)
        if read is None:
            return [
                f"declined without reading order {target['order']} (get_order: its delivery "
                "date) first"
            ]
        delivered = read.result.get("delivered_at") if isinstance(read.result, dict) else None
        if not delivered or days_between(delivered, initial["today"]) <= REFUND_WINDOW_DAYS:
            return ["the order the agent read does not put the refund outside the window"]
        text = _reply_text(final)
        if not mentions_date(text, delivered):
            return [f"the decline does not say when the order was delivered ({delivered})"]
        allowed = _record_dates(read.result, initial["today"]) + _ticket_dates(ticket, initial)
        foreign = foreign_dates(text, allowed)
        if foreign:
            return [
                f"the decline cites dates that are not in the order's record ({', '.join(foreign)})"
            ]
        return []
    customer = target["customer"]
    failed = set()
    for call in calls[:end]:
        if (
            call.function == "verify_identity"
            and call.ok
            and str(call.arguments.get("customer_id", "")).strip() == customer
            and uses_stated_detail(ticket, call.arguments)
            and isinstance(call.result, dict)
            and call.result.get("verified") is False
        ):
            failed.add(_detail_of(call.arguments))
    stated = _stated(ticket)
    if not stated or not failed:
        return [
            "declined without verify_identity failing for the customer with the detail they "
            "stated in the ticket"
        ]
    untried = [kind for kind, value in stated if (kind, value) not in failed]
    if untried:
        return [
            "declined before checking every detail the customer gave (not tried: "
            f"{', '.join(untried)})"
        ]
    return []


MONEY = re.compile(
    r"£\s?(?P<a>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<ap>\d{2}))?(?!\d)"
    r"|\bGBP\s?(?P<b>\d+)(?:\.(?P<bp>\d{2}))?(?!\d)"
    r"|(?<![\d.,])(?P<c>\d+)(?:\.(?P<cp>\d{2}))?\s?(?:GBP|pounds)\b",
    re.IGNORECASE,
)
"""An amount of money as a reply writes it (``£1,450.00``, ``£22``, ``GBP 27.75``, ``64.00
pounds``)."""
ENDING = re.compile(
    r"\b(?:ending|ends)(?: in| with)?:?\s*(?:\*+|…|\.{3})?\s*(\d{4})(?!\d)", re.IGNORECASE
)
"""The last four digits of a number as a reply gives them (``ending 4475``, ``ends in 4475``)."""


def amounts_in(text: str) -> list[int]:
    """Every amount of money written in `text`, in pence."""
    found = []
    for match in MONEY.finditer(text):
        whole = match.group("a") or match.group("b") or match.group("c")
        pence = match.group("ap") or match.group("bp") or match.group("cp") or "00"
        found.append(int(whole.replace(",", "")) * 100 + int(pence))
    return found


def _names(text: str) -> str:
    return " " + " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split()) + " "


def products_in(text: str) -> list[str]:
    """The catalogue's products a text names (by their full name, any case)."""
    words = _names(text)
    return [name for _, name, _ in PRODUCTS if _names(name) in words]


def _paid_cents(initial: dict[str, Any], order: str) -> int:
    found = next(o for o in initial["orders"] if o["id"] == order)
    return int(found["payment"]["amount_cents"])


def fact_problems(
    initial: dict[str, Any], target: dict[str, Any], ticket: str, text: str
) -> list[str]:
    """What the replies fail to say from the records (policy rules 9 and 10), or say wrongly.

    An identity decline gives the last four digits of the phone on the account and no other
    number's; a refund states the amount refunded and a cancellation the amount it refunds,
    with no other amount (but the ticket's); a replacement names the item replaced and no
    other product; an address change states the new postcode.
    """
    action = target["action"]
    if action == "decline" and target["reason"] == "identity_not_verified":
        customer = next(c for c in initial["customers"] if c["id"] == target["customer"])
        phone = re.sub(r"\D", "", customer["phone"])[-4:]
        endings = ENDING.findall(text)
        allowed = {phone} | {value for kind, value in stated_details(ticket) if kind == "card"}
        found = []
        if phone not in endings:
            found.append(
                "the identity decline does not give the last four digits of the phone on the "
                f"account ({phone})"
            )
        foreign = sorted(set(endings) - allowed)
        if foreign:
            found.append(
                f"the reply gives digits of a number not on the account ({', '.join(foreign)})"
            )
        return found
    if action in ("refund", "cancel"):
        due = (
            target["amount_cents"] if action == "refund" else _paid_cents(initial, target["order"])
        )
        said = amounts_in(text)
        found = []
        if due not in said:
            found.append(
                f"the reply does not state the amount refunded (£{due // 100}.{due % 100:02d})"
            )
        foreign = sorted(set(said) - {due} - set(amounts_in(ticket)))
        if foreign:
            shown = ", ".join(f"£{c // 100}.{c % 100:02d}" for c in foreign)
            found.append(f"the reply states amounts that were not refunded ({shown})")
        return found
    if action == "replace":
        order = next(o for o in initial["orders"] if o["id"] == target["order"])
        item = next(ln["name"] for ln in order["lines"] if ln["id"] == target["line"])
        named = products_in(text)
        found = []
        if item not in named:
            found.append(f"the reply does not name the item replaced ({item})")
        others = [name for name in named if name != item]
        if others:
            found.append(f"the reply names products that were not replaced ({', '.join(others)})")
        return found
    if action == "update_address":
        wanted = norm_postcode(target["address"]["postcode"])
        written = {norm_postcode(" ".join(m.groups())) for m in _POSTCODE.finditer(text)}
        if wanted not in written:
            return [f"the reply does not state the new address ({target['address']['postcode']})"]
    return []


_POSTCODE = re.compile(r"\b([A-Za-z]{1,2}\d[A-Za-z\d]?)\s*(\d[A-Za-z]{2})\b")


def reply_problems(
    initial: dict[str, Any], final: dict[str, Any], target: dict[str, Any]
) -> list[str]:
    """What the replies say that the facts do not support (pure: replies and state only)."""
    text = _reply_text(final)
    problems = []
    if target["action"] == "decline":
        wanted = target["reason"]
        if not REASONS[wanted].search(text):
            problems.append(f"the decline does not give the reason ({REASON_WORDS[wanted]})")
        problems.extend(
            f"the reply gives a reason that does not apply ({REASON_WORDS[name]})"
            for name, pattern in CITED.items()
            if name != wanted and pattern.search(text)
        )
    elif REFUSAL.search(text):
        problems.append(f"the reply refuses a request that was due ({target['action']})")
    changes = _changes(initial, final)
    cancelled = bool(changes["statuses"])
    done = {
        "a refund": bool(changes["refunds"]) or cancelled,
        "a replacement": bool(changes["shipments"]),
        "a cancellation": cancelled,
        "an address change": bool(changes["addresses"]),
    }
    problems.extend(
        f"the reply claims {claim} that was not made"
        for claim, pattern in CLAIMS.items()
        if pattern.search(text) and not done[claim]
    )
    return problems


def _action_problems(target: dict[str, Any], calls: Sequence[Call]) -> list[str]:
    function = ACTIONS.get(target["action"])
    found = []
    for index, call in enumerate(calls):
        if call.function != function or not call.ok:
            continue
        order = str(call.arguments.get("order_id", "")).strip().upper()
        if _order_read(calls, order, index) is None:
            found.append(f"{function} on {order} without reading the order (get_order) first")
    return found


def evaluate(
    initial: dict[str, Any],
    final: dict[str, Any],
    target: dict[str, Any],
    *,
    ticket: str,
    calls: Sequence[Call],
) -> Verdict:
    """Version 1's verdict, with version 3's checks of the trace and the replies added."""
    verdict = evaluate_v1(initial, final, target)
    decline = target["action"] == "decline"
    replies = reply_problems(initial, final, target) + fact_problems(
        initial, target, ticket, _reply_text(final)
    )
    trace = (
        _decided_from_facts(initial, final, target, ticket, calls)
        if decline
        else _action_problems(target, calls)
    )
    violations = _guessed_verifications(calls, ticket)
    if decline:
        replies, trace = replies + trace, []
    if not (replies or trace or violations):
        return verdict
    checks = dict(verdict.checks)
    if replies:
        checks["problem_fixed"] = False
    if trace or violations:
        checks["policy_followed"] = False
    checks["closed_only_if_fixed"] = not checks["ticket_closed"]
    return Verdict(
        checks=checks,
        side_effects=verdict.side_effects,
        policy_violations=verdict.policy_violations + trace + violations,
        problems=verdict.problems + replies,
    )


@scorer(metrics=[accuracy(), stderr()])
def support_verifier() -> Scorer:
    """1.0 when the final shop state shows the problem fixed per policy (see module docstring)."""

    async def score(state: TaskState, target: Target) -> Score:
        final = read_shop()
        metadata = state.metadata or {}
        verdict = evaluate(
            metadata["initial_state"],
            final,
            json.loads(target.text),
            ticket=state.input_text,
            calls=episode_calls(state.messages),
        )
        return Score(
            value=verdict.score,
            answer=final["tickets"][0]["status"],
            explanation=verdict.explanation(),
            metadata={
                **verdict.checks,
                "problems": verdict.problems,
                "side_effects": verdict.side_effects,
                "policy_violations": verdict.policy_violations,
                "intent": metadata.get("intent"),
                "condition": metadata.get("condition"),
            },
        )

    return score
