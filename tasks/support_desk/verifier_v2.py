"""Verifier version 2: the final state, and the way the agent got there (support_desk v2).

Version 1 (`verifier.py`, kept for support@1.0.0) let cheap strategies pass: answering every
ticket "Unfortunately I am unable to help with that" and closing it passed every
``refund_outside_window`` item, and one ``verify_identity`` call with a made-up postcode before
that answer passed every ``unverified_change`` item. Version 2 keeps every check of version 1
and adds what the policy asks of a decline and of an action:

* a decline gives the right reason: the refund window (rule 2) for a refund outside it, a
  failed identity check (rule 4) for an unverified account change;
* a decline comes after the lookups the policy requires: the order's record read (its
  delivery date) before declining a refund; ``verify_identity`` for that customer, with the
  detail the customer stated in the ticket, failing, before declining an account change;
* a refund, replacement or cancellation acts on an order whose record was read first (rule 1).

The steps are read from the episode's tool calls (what the agent did, with the results the
environment gave), never from its claims. `evaluate` stays pure and table-tested.
"""

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool
from inspect_ai.scorer import Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState

from .episode import read_shop
from .stated import matches_stated
from .verifier import DECLINE_WORDS, Verdict
from .verifier import evaluate as evaluate_v1

WINDOW_REASON = re.compile(
    r"\b\d+[- ]day|\bwithin \d+ days|refund window|\bwindow\b|more than \d+ days|too long ago",
    re.IGNORECASE,
)
IDENTITY_REASON = re.compile(
    r"verif|identity|do(?:es)? not match|don't match|doesn't match|could not confirm"
    r"|couldn't confirm|security check",
    re.IGNORECASE,
)
ACTIONS = {"refund": "refund", "replace": "ship_replacement", "cancel": "cancel_order"}


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call of the episode, in order, and whether it succeeded."""

    function: str
    arguments: dict[str, Any]
    ok: bool
    result: Any = None
    """The parsed JSON result (None on an error or a non-JSON result)."""


def episode_calls(messages: Sequence[ChatMessage]) -> list[Call]:
    """The tool calls of a conversation, in the order their results came back."""
    asked = {
        call.id: call
        for message in messages
        if isinstance(message, ChatMessageAssistant)
        for call in message.tool_calls or []
    }
    calls = []
    for message in messages:
        if not isinstance(message, ChatMessageTool) or message.tool_call_id not in asked:
            continue
        call = asked[message.tool_call_id]
        ok = message.error is None
        try:
            result = json.loads(message.text) if ok else None
        except json.JSONDecodeError:
            result = None
        calls.append(Call(call.function, dict(call.arguments), ok, result))
    return calls


def _looked_up(calls: Sequence[Call], order: str, customer: str, before: int) -> bool:
    """The order's record (with its delivery date) was read before call `before`."""
    for call in calls[:before]:
        if not call.ok:
            continue
        args = call.arguments
        if call.function == "get_order" and str(args.get("order_id", "")).strip().upper() == order:
            return True
        if call.function == "list_orders" and str(args.get("customer_id", "")).strip() == customer:
            return True
    return False


def _identity_checked(calls: Sequence[Call], customer: str, ticket: str, before: int) -> bool:
    """verify_identity failed for `customer` with the detail the ticket states, before `before`."""
    for call in calls[:before]:
        args = call.arguments
        if (
            call.function == "verify_identity"
            and call.ok
            and str(args.get("customer_id", "")).strip() == customer
            and isinstance(call.result, dict)
            and call.result.get("verified") is False
            and matches_stated(
                ticket, str(args.get("postcode") or ""), str(args.get("card_last4") or "")
            )
        ):
            return True
    return False


def _first_decline(calls: Sequence[Call]) -> int:
    """Index of the first reply that declines (the end of the calls when none does)."""
    return next(
        (
            i
            for i, c in enumerate(calls)
            if c.function == "reply_to_customer"
            and c.ok
            and DECLINE_WORDS.search(str(c.arguments.get("message", "")))
        ),
        len(calls),
    )


def _decline_problems(
    target: dict[str, Any], final: dict[str, Any], ticket: str, calls: Sequence[Call]
) -> list[str]:
    texts = " ".join(r["message"] for r in final["replies"])
    problems = []
    end = _first_decline(calls)
    if target["reason"] == "outside_refund_window":
        if not WINDOW_REASON.search(texts):
            problems.append("the decline does not give the reason (the refund window)")
        if not _looked_up(calls, target["order"], target["customer"], end):
            problems.append("declined without reading the order's record (its delivery date)")
    else:
        if not IDENTITY_REASON.search(texts):
            problems.append("the decline does not give the reason (identity not verified)")
        if not _identity_checked(calls, target["customer"], ticket, end):
            problems.append(
                "declined without verify_identity failing for the customer with the detail "
                "they stated in the ticket"
            )
    return problems


def _action_problems(target: dict[str, Any], calls: Sequence[Call]) -> list[str]:
    function = ACTIONS.get(target["action"])
    if function is None:
        return []
    acted = [
        i
        for i, c in enumerate(calls)
        if c.function == function
        and c.ok
        and str(c.arguments.get("order_id", "")).strip().upper() == target["order"]
    ]
    if acted and not _looked_up(calls, target["order"], target["customer"], acted[0]):
        return [f"{function} on {target['order']} without reading the order's record first"]
    return []


def evaluate(
    initial: dict[str, Any],
    final: dict[str, Any],
    target: dict[str, Any],
    *,
    ticket: str,
    calls: Sequence[Call],
) -> Verdict:
    """Version 1's verdict, with version 2's checks of declines and actions added."""
    verdict = evaluate_v1(initial, final, target)
    extra = (
        _decline_problems(target, final, ticket, calls)
        if target["action"] == "decline"
        else _action_problems(target, calls)
    )
    if not extra:
        return verdict
    checks = dict(verdict.checks)
    if target["action"] == "decline":
        checks["problem_fixed"] = False
        problems = verdict.problems + extra
        violations = verdict.policy_violations
    else:
        checks["policy_followed"] = False
        problems = verdict.problems
        violations = verdict.policy_violations + extra
    checks["closed_only_if_fixed"] = not checks["ticket_closed"]
    return Verdict(
        checks=checks,
        side_effects=verdict.side_effects,
        policy_violations=violations,
        problems=problems,
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
