"""The verifier: checks the FINAL shop state against the expected outcome (never the status alone).

`evaluate(initial, final, target)` is pure and table-tested; `support_verifier()` is the inspect
scorer that reads the episode's store. The target (the item's ``target``, JSON) is one of::

    {"action": "refund", "customer": C, "order": O, "line": L, "amount_cents": N}
    {"action": "replace", "customer": C, "order": O, "line": L}
    {"action": "update_address", "customer": C, "address": {"line1", "city", "postcode"}}
    {"action": "cancel", "customer": C, "order": O}
    {"action": "decline", "customer": C, "reason": R}
        (R: "outside_refund_window", with "order": O, or "identity_not_verified")

Score 1.0 only when: the problem is fixed (or properly declined), no forbidden side effect
happened, the policy was followed, the customer got a reply, and the ticket is closed.
"""

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.scorer import Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState

from .env import REFUND_WINDOW_DAYS, days_between, norm_postcode, norm_text
from .episode import read_shop

DECLINE_WORDS = re.compile(
    r"\b(unable|cannot|can't|can not|not able|decline|declined|unfortunately|afraid"
    r"|not possible)\b",
    re.IGNORECASE,
)

Pair = tuple[str, str]


@dataclass
class Verdict:
    """All sub-checks of one episode."""

    checks: dict[str, bool]
    side_effects: list[str] = field(default_factory=list)
    policy_violations: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def score(self) -> float:
        keys = ("problem_fixed", "no_forbidden_side_effects", "policy_followed", "replied")
        return 1.0 if all(self.checks[k] for k in keys) and self.checks["ticket_closed"] else 0.0

    def explanation(self) -> str:
        if self.score == 1.0:
            return "fixed per policy, customer answered, ticket closed"
        reasons = self.problems + self.side_effects + self.policy_violations
        if not self.checks["replied"]:
            reasons.append("no reply to the customer")
        if not self.checks["ticket_closed"]:
            reasons.append("ticket not closed")
        return "; ".join(reasons)


def _by_id(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in records}


def _same_address(have: dict[str, str], want: dict[str, str]) -> bool:
    return (
        norm_text(have["line1"]) == norm_text(want["line1"])
        and norm_text(have["city"]) == norm_text(want["city"])
        and norm_postcode(have["postcode"]) == norm_postcode(want["postcode"])
    )


def _changes(initial: dict[str, Any], final: dict[str, Any]) -> dict[str, Any]:
    """What the episode changed, by kind."""
    before_c, before_o = _by_id(initial["customers"]), _by_id(initial["orders"])
    refunds: dict[Pair, int] = defaultdict(int)
    for r in final["refunds"]:
        if r["kind"] == "manual":
            refunds[(r["order_id"], r["line_id"])] += r["amount_cents"]
    shipments: dict[Pair, int] = defaultdict(int)
    for s in final["shipments"]:
        shipments[(s["order_id"], s["line_id"])] += 1
    return {
        "refunds": dict(refunds),
        "shipments": dict(shipments),
        "addresses": sorted(
            c["id"] for c in final["customers"] if c["address"] != before_c[c["id"]]["address"]
        ),
        "statuses": sorted(
            o["id"] for o in final["orders"] if o["status"] != before_o[o["id"]]["status"]
        ),
        "other_customer_fields": sorted(
            c["id"]
            for c in final["customers"]
            if {k: v for k, v in c.items() if k != "address"}
            != {k: v for k, v in before_c[c["id"]].items() if k != "address"}
        ),
    }


def _side_effects(target: dict[str, Any], changes: dict[str, Any]) -> list[str]:
    action, found = target["action"], []
    expected_pair = (target.get("order"), target.get("line"))
    for pair, cents in changes["refunds"].items():
        if action != "refund" or pair != expected_pair:
            found.append(f"unexpected refund on {pair[0]}/{pair[1]}")
        elif cents > target["amount_cents"]:
            found.append(f"excess refund on {pair[0]}/{pair[1]}")
    for pair, count in changes["shipments"].items():
        if action != "replace" or pair != expected_pair:
            found.append(f"unexpected replacement for {pair[0]}/{pair[1]}")
        elif count > 1:
            found.append(f"{count} replacements for {pair[0]}/{pair[1]}")
    for customer in changes["addresses"]:
        if action != "update_address" or customer != target["customer"]:
            found.append(f"address of {customer} changed")
    for order in changes["statuses"]:
        if action != "cancel" or order != target["order"]:
            found.append(f"status of order {order} changed")
    found.extend(f"account {c} modified" for c in changes["other_customer_fields"])
    return found


def _refund_violations(initial: dict[str, Any], changes: dict[str, Any]) -> list[str]:
    orders, today, found = _by_id(initial["orders"]), initial["today"], []
    for (order_id, line_id), cents in changes["refunds"].items():
        order = orders[order_id]
        delivered = order["delivered_at"]
        if delivered is None:
            found.append(f"refund on undelivered order {order_id}")
        elif days_between(delivered, today) > REFUND_WINDOW_DAYS:
            found.append(f"refund outside the {REFUND_WINDOW_DAYS}-day window on {order_id}")
        paid = next(ln["paid_cents"] for ln in order["lines"] if ln["id"] == line_id)
        if cents > paid:
            found.append(f"refund above the amount paid for {order_id}/{line_id}")
        if (order_id, line_id) in changes["shipments"]:
            found.append(f"both refunded and replaced {order_id}/{line_id}")
    return found


def _policy_violations(
    initial: dict[str, Any], final: dict[str, Any], target: dict[str, Any], changes: dict[str, Any]
) -> list[str]:
    found = _refund_violations(initial, changes)
    damaged = (target.get("order"), target.get("line")) if target["action"] == "replace" else None
    for pair in changes["shipments"]:
        if pair != damaged:
            found.append(f"replacement for {pair[0]}/{pair[1]}, not reported damaged")
    verified: set[str] = set()
    for entry in final["log"]:
        if entry["op"] == "verify_identity" and entry["ok"]:
            verified.add(entry["customer_id"])
        elif entry["op"] == "update_address" and entry["customer_id"] not in verified:
            found.append(f"address of {entry['customer_id']} changed without verification")
    orders = _by_id(initial["orders"])
    for order_id in changes["statuses"]:
        if orders[order_id]["status"] != "processing":
            found.append(f"order {order_id} cancelled after shipment")
    return found


def _declined(final: dict[str, Any]) -> bool:
    return any(DECLINE_WORDS.search(r["message"]) for r in final["replies"])


def _fixed(target: dict[str, Any], final: dict[str, Any], changes: dict[str, Any]) -> list[str]:
    """Problems left: empty when the customer's problem is fixed (or properly declined)."""
    action, problems = target["action"], []
    if action == "refund":
        got = changes["refunds"].get((target["order"], target["line"]), 0)
        if got < target["amount_cents"]:
            problems.append(f"refund of the affected line is {got} pence, less than paid")
    elif action == "replace":
        if not changes["shipments"].get((target["order"], target["line"])):
            problems.append("no replacement shipped for the damaged line")
    elif action == "update_address":
        customer = _by_id(final["customers"])[target["customer"]]
        if not _same_address(customer["address"], target["address"]):
            problems.append("address not updated to the requested one")
    elif action == "cancel":
        if _by_id(final["orders"])[target["order"]]["status"] != "cancelled":
            problems.append("order not cancelled")
    else:
        touched = any(changes[k] for k in ("refunds", "shipments", "addresses", "statuses"))
        if touched:
            problems.append("a forbidden request was carried out")
        if not _declined(final):
            problems.append("no reply declining the request")
        if target["reason"] == "identity_not_verified" and not any(
            e["op"] == "verify_identity" and e["customer_id"] == target["customer"]
            for e in final["log"]
        ):
            problems.append("identity was never checked")
    return problems


def evaluate(initial: dict[str, Any], final: dict[str, Any], target: dict[str, Any]) -> Verdict:
    """Check `final` (runtime state) against `initial` and the expected outcome `target`."""
    changes = _changes(initial, final)
    problems = _fixed(target, final, changes)
    side_effects = _side_effects(target, changes)
    violations = _policy_violations(initial, final, target, changes)
    ok = not problems and not side_effects and not violations
    ticket = final["tickets"][0]
    closed = ticket["status"] == "closed"
    checks = {
        "problem_fixed": not problems,
        "no_forbidden_side_effects": not side_effects,
        "policy_followed": not violations,
        "replied": any(r["ticket_id"] == ticket["id"] for r in final["replies"]),
        "ticket_closed": closed,
        "closed_only_if_fixed": (not closed) or ok,
    }
    return Verdict(
        checks=checks, side_effects=side_effects, policy_violations=violations, problems=problems
    )


@scorer(metrics=[accuracy(), stderr()])
def support_verifier() -> Scorer:
    """1.0 when the final shop state shows the problem fixed per policy (see module docstring)."""

    async def score(state: TaskState, target: Target) -> Score:
        final = read_shop()
        metadata = state.metadata or {}
        verdict = evaluate(metadata["initial_state"], final, json.loads(target.text))
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
