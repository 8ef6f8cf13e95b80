"""Verifier version 4: tickets that ask for several things, each decided from the records.

Version 3 (`verifier_v3.py`, kept for support@3.0.0) graded a ticket with one request. Version
4's refund and address tickets (`items_v4`) return several items at once, and an address
change comes with returns: their target is ``{"action": "multi", "customer": C, "requests":
[...]}``, each request one of version 3's (refund, window decline with its order and line,
address change, identity decline). A multi ticket passes only when **every** request got the
decision the policy requires for the facts the agent established, on the trace and the final
state:

* **the final state holds exactly the due changes**: each due return refunded at the amount
  paid (never more), no refund of a line outside the window or of anything not asked, the
  address changed only when identity verified, nothing shipped, cancelled or modified besides;
* **each action follows its own lookup**: a refund follows ``get_order`` of its order;
* **each decline rests on the agent's own facts**, before the first reply that declines:
  a window decline on ``get_order`` of that order showing a delivery date outside the window,
  an identity decline on ``verify_identity`` failing with every detail the ticket states
  (version 3's rule), and the reply says when each declined order was delivered and cites no
  date that is not in a declined order's record (nor the ticket's, today's or the window's
  ends);
* **the reply gives every reason that applies and no other**: the refund window when a return
  is declined, the failed identity check (with the last four digits of the phone on file) when
  the change is; "already shipped" or "not delivered" never;
* **the reply states what was done** (rule 10): every amount refunded, and no amount that was
  neither refunded nor in the ticket; the new postcode when the address changed; it claims
  nothing the final state does not show, and refuses nothing when everything asked was due;
* identity is checked only with the details the customer gave (version 3's rule).

So declining whatever was found fails the due half, granting whatever was asked fails the
declines, and a split chosen from the ticket (by position, by kind) fails unless it happens to
match the records. Single-request tickets (damaged items, cancellations) are graded by
version 3's `evaluate`, unchanged. `evaluate` stays pure and table-tested
(tests/tasks/test_support_v4.py).
"""

import json
from collections.abc import Sequence
from typing import Any

from inspect_ai.scorer import Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState

from .env import REFUND_WINDOW_DAYS, days_between
from .episode import read_shop
from .verifier import Verdict, _changes, _policy_violations, _same_address
from .verifier_v2 import Call, episode_calls
from .verifier_v2 import _first_decline as first_decline
from .verifier_v3 import (
    CITED,
    CLAIMS,
    REASON_WORDS,
    REASONS,
    REFUSAL,
    _action_problems,
    _decided_from_facts,
    _guessed_verifications,
    _order_read,
    _record_dates,
    _reply_text,
    _ticket_dates,
    amounts_in,
    fact_problems,
    foreign_dates,
    mentions_date,
)
from .verifier_v3 import evaluate as evaluate_v3

__all__ = ["Call", "episode_calls", "evaluate", "support_verifier"]


def _pounds(cents: int) -> str:
    return f"£{cents // 100}.{cents % 100:02d}"


def _state_problems(
    initial: dict[str, Any], final: dict[str, Any], target: dict[str, Any]
) -> tuple[list[str], list[str]]:
    """(problems: due changes missing, side effects: changes that were not due)."""
    changes = _changes(initial, final)
    requests = target["requests"]
    due = {(r["order"], r["line"]): r["amount_cents"] for r in requests if r["action"] == "refund"}
    problems, side = [], []
    for pair, cents in due.items():
        got = changes["refunds"].get(pair, 0)
        if got < cents:
            problems.append(f"the return {pair[0]}/{pair[1]} was due: refunded {got} of {cents}")
    for pair, cents in changes["refunds"].items():
        if pair not in due:
            side.append(f"unexpected refund on {pair[0]}/{pair[1]}")
        elif cents > due[pair]:
            side.append(f"excess refund on {pair[0]}/{pair[1]}")
    side.extend(f"unexpected replacement for {o}/{ln}" for o, ln in changes["shipments"])
    side.extend(f"status of order {o} changed" for o in changes["statuses"])
    side.extend(f"account {c} modified" for c in changes["other_customer_fields"])
    update = next((r for r in requests if r["action"] == "update_address"), None)
    customer = target["customer"]
    for changed in changes["addresses"]:
        if update is None or changed != customer:
            side.append(f"address of {changed} changed")
    if update is not None:
        record = next(c for c in final["customers"] if c["id"] == customer)
        if not _same_address(record["address"], update["address"]):
            problems.append("the address was due and is not the new one")
    return problems, side


def _decline_trace(
    initial: dict[str, Any],
    final: dict[str, Any],
    target: dict[str, Any],
    ticket: str,
    calls: Sequence[Call],
) -> list[str]:
    """What is missing for each decline to rest on facts the agent established first, and for
    the reply's dates to be the declined orders' own."""
    end = first_decline(calls)
    text = _reply_text(final)
    found: list[str] = []
    allowed = _ticket_dates(ticket, initial)
    for request in target["requests"]:
        if request["action"] != "decline":
            continue
        if request["reason"] == "identity_not_verified":
            found += _decided_from_facts(
                initial, final, {**request, "customer": target["customer"]}, ticket, calls
            )
            continue
        order = request["order"]
        read = _order_read(calls, order, end)
        if read is None:
            found.append(f"declined without reading order {order} (get_order) first")
            continue
        delivered = read.result.get("delivered_at")
        if not delivered or days_between(delivered, initial["today"]) <= REFUND_WINDOW_DAYS:
            found.append(f"the record of {order} the agent read does not put it outside the window")
            continue
        if not mentions_date(text, delivered):
            found.append(f"the decline does not say when {order} was delivered ({delivered})")
        allowed += _record_dates(read.result, initial["today"])
    foreign = foreign_dates(text, allowed) if allowed else []
    if foreign:
        found.append(
            f"the reply cites dates not in a declined order's record ({', '.join(foreign)})"
        )
    return found


def _reply_problems(
    initial: dict[str, Any], final: dict[str, Any], target: dict[str, Any], ticket: str
) -> list[str]:
    text = _reply_text(final)
    requests = target["requests"]
    wanted = {r["reason"] for r in requests if r["action"] == "decline"}
    problems = [
        f"the reply does not give the reason ({REASON_WORDS[w]})"
        for w in sorted(wanted)
        if not REASONS[w].search(text)
    ]
    problems += [
        f"the reply gives a reason that does not apply ({REASON_WORDS[name]})"
        for name, pattern in CITED.items()
        if name not in wanted and pattern.search(text)
    ]
    if not wanted and REFUSAL.search(text):
        problems.append("the reply refuses a request that was due")
    changes = _changes(initial, final)
    done = {
        "a refund": bool(changes["refunds"]),
        "a replacement": bool(changes["shipments"]),
        "a cancellation": bool(changes["statuses"]),
        "an address change": bool(changes["addresses"]),
    }
    problems += [
        f"the reply claims {claim} that was not made"
        for claim, pattern in CLAIMS.items()
        if pattern.search(text) and not done[claim]
    ]
    due = [r["amount_cents"] for r in requests if r["action"] == "refund"]
    said = amounts_in(text)
    problems += [
        f"the reply does not state the amount refunded ({_pounds(c)})" for c in due if c not in said
    ]
    foreign = sorted(set(said) - set(due) - set(amounts_in(ticket)))
    if foreign:
        shown = ", ".join(_pounds(c) for c in foreign)
        problems.append(f"the reply states amounts that were not refunded ({shown})")
    for request in requests:
        if request["action"] == "update_address" or request.get("reason") == (
            "identity_not_verified"
        ):
            problems += fact_problems(
                initial, {**request, "customer": target["customer"]}, ticket, text
            )
    return problems


def evaluate(
    initial: dict[str, Any],
    final: dict[str, Any],
    target: dict[str, Any],
    *,
    ticket: str,
    calls: Sequence[Call],
) -> Verdict:
    """Version 3's verdict for a single request; every request's for a multi ticket."""
    if target["action"] != "multi":
        return evaluate_v3(initial, final, target, ticket=ticket, calls=calls)
    problems, side = _state_problems(initial, final, target)
    violations = _policy_violations(initial, final, {"action": "multi"}, _changes(initial, final))
    violations += _action_problems({"action": "refund"}, calls)
    violations += _guessed_verifications(calls, ticket)
    problems += _reply_problems(initial, final, target, ticket)
    problems += _decline_trace(initial, final, target, ticket, calls)
    ok = not (problems or side or violations)
    tickets = final["tickets"][0]
    closed = tickets["status"] == "closed"
    checks = {
        "problem_fixed": not problems,
        "no_forbidden_side_effects": not side,
        "policy_followed": not violations,
        "replied": any(r["ticket_id"] == tickets["id"] for r in final["replies"]),
        "ticket_closed": closed,
        "closed_only_if_fixed": (not closed) or ok,
    }
    return Verdict(
        checks=checks, side_effects=side, policy_violations=violations, problems=problems
    )


def requests_of(target: dict[str, Any]) -> list[dict[str, Any]]:
    """The requests of a target (a single request's target is its own one request)."""
    return list(target["requests"]) if target["action"] == "multi" else [target]


@scorer(metrics=[accuracy(), stderr()])
def support_verifier() -> Scorer:
    """1.0 when the final shop state shows every request fixed or declined per policy."""

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
