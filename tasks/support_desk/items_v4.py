"""Version 4's items (support@4.0.0): every decline ticket also asks for something that is due.

    cd tasks && ../.venv/bin/python -m support_desk.generate --version 4

Version 3 (`items_v3`) made each decline a decision taken from the records, but a decline
ticket asked for one thing only, and it was refused: a policy that did all a correct agent
does and then declined whatever it found (`verify_each_then_decline_with_phone`,
`find_order_then_decline_window_dated` in tests/redteam/cheap_models.py) passed every item of
the two decline strata, 18 of 108 dev items each (docs/design/red-team.md). Version 4's items
(ids ``support-v4-NNNN``, seed `SEED`) close that by their shape:

* **A refund ticket returns `RETURNS` items at once**, each bought in its own order, named by
  the item and the amount paid (never by order number). In the ``refund`` stratum every one
  of them is inside the 30-day window; in ``refund_outside_window`` some are outside and some
  inside (`PATTERNS`: every split of the items with at least one of each, balanced in the
  stratum, in the ticket's order): the right answer refunds the ones inside and declines the
  ones outside, citing their delivery dates. Declining whatever was found fails the refunds
  that were due; refunding everything fails the declines; and which items are outside only the
  order records tell (the ticket's wording, amounts and order of items are drawn alike), so a
  split chosen from the ticket (by position, say) is right on one item in `len(PATTERNS)` of
  the stratum.
* **An address change comes with returns too**: the ticket asks for the change (stating one
  or two identity details, as version 3's do) and returns `RETURNS` items. In
  ``address_change`` the change verifies and every return is due; in ``unverified_change``
  every stated detail fails (the change is declined, citing the phone on file) and the returns
  split as in ``refund_outside_window``: at least one is due (so declining everything fails)
  and which ones only the records tell.
* **Damaged items and cancellations are version 3's tickets** (one request, which is due:
  version 3's worlds and cases), drawn anew and worded anew (`DAMAGE`, `CANCEL_REASONS`).

So every ticket whose right answer contains a decline also asks for something that is due, and
within each decline stratum the decision on each request rests on a fact only the tools reveal.
The target of a two-part ticket is ``{"action": "multi", "customer": C, "requests": [...]}``,
each request one of version 3's single targets (without ``customer``), refunds and window
declines with their ``line``; the other tickets keep version 3's target (`generate._target`).
Metadata adds ``case`` and, on a multi ticket, ``pattern`` (which returns are due).
"""

import itertools
import json
import random
from collections import Counter
from typing import Any

from .data import CITIES, PRODUCTS
from .env import REFUND_WINDOW_DAYS, state_hash
from .items_v3 import CASES as CASES_V3
from .items_v3 import (
    REFUND_REASONS,
    World3,
    _address_body,
    _amount,
    _ref,
    _subject,
)
from .shopgen import typo

SEED = 20261206
PER_STRATUM = 18
RETURNS = 5
"""How many items a refund or address ticket returns."""
PATTERNS: tuple[tuple[bool, ...], ...] = tuple(
    p for p in itertools.product((True, False), repeat=RETURNS) if any(p) and not all(p)
)
"""Which returns are due (True) in a decline stratum: every split with one of each (30)."""
MULTI_INTENTS = ("refund", "refund_outside_window", "address_change", "unverified_change")
DECLINE_INTENTS = ("refund_outside_window", "unverified_change")
CASES: dict[tuple[str, str], tuple[str, ...]] = {
    **CASES_V3,
    **{
        (i, c): ("returns",)
        for i in ("refund", "refund_outside_window")
        for c in ("clean", "messy")
    },
}
"""Refund strata have one case; the others keep version 3's (address cases: which detail
verifies)."""


class World4(World3):
    """One ticket's shop, version 4 (see the module doc)."""

    def __init__(self, rng: random.Random, intent: str, messy: bool, spec: dict[str, Any]):
        if intent not in MULTI_INTENTS:
            super().__init__(rng, intent, messy, spec)
            self.returns: list[dict[str, Any]] = []
            return
        self.spec = spec
        self.case = str(spec["case"])
        self._open_shop(rng, intent, messy, features=[self.case])
        self.ref_mode, self.ref_id = "none", ""
        self.claimed_cents = 0
        self.details: list[tuple[str, str]] = []
        self.returns = []
        pattern = tuple(spec["pattern"])
        # the returned items are bought once each (no other order of the customer holds one)
        self.bought[self.customer["id"]].update(p[1] for p in spec["products"])
        for k, due in enumerate(pattern):
            product = tuple(spec["products"][k])
            days = rng.randint(3, REFUND_WINDOW_DAYS - 3) if due else rng.randint(35, 150)
            extra = self._products(self.customer, rng.randint(0, 1))
            products = [product, *extra]
            rng.shuffle(products)
            order = self._order(self.customer, "delivered", days, products, 0.3)  # type: ignore[arg-type]
            line = next(ln for ln in order["lines"] if ln["name"] == product[1])
            self.returns.append({"order": order, "line": line, "due": due})
        for _ in range(rng.randint(0, 2)):  # other orders of a regular customer
            if rng.random() < 0.3:
                self._order(self.customer, "processing", rng.randint(0, 2))
            else:
                self._order(self.customer, "delivered", rng.randint(2, 150))
        if intent in ("address_change", "unverified_change"):
            self._address_change()


def _returns_text(rng: random.Random, world: World4) -> str:
    """The paragraph listing the returns (item and amount paid each), in the ticket's order."""
    messy = world.messy
    named = []
    for entry in world.returns:
        item = entry["line"]["name"].lower()
        if messy and rng.random() < 0.5:
            item = typo(rng, item)
        paid = _amount(rng, entry["line"]["paid_cents"], messy)
        named.append(f"the {item} ({paid})" if not messy else f"{item} - {paid}")
    reason = rng.choice(REFUND_REASONS)
    if not messy:
        listed = ", ".join(named[:-1]) + f" and {named[-1]}"
        return rng.choice(
            [
                f"I am sending back {listed}, and would like my money back for each. {reason}",
                f"Please refund {listed}: I am returning them. {reason}",
            ]
        )
    listed = "\n".join(f"- {n}" for n in named)
    return rng.choice(
        [
            f"also sending back these for a refund:\n{listed}",
            f"want refunds on these pls, {reason.lower()}\n{listed}",
        ]
    )


DAMAGE = (
    "has a split down one side",
    "showed up scratched all over",
    "was bent out of shape in the box",
    "had a broken handle when it came",
    "arrived leaking",
    "came with a shattered corner",
)
CANCEL_REASONS = (
    "My partner ordered the same thing.",
    "I picked the wrong colour.",
    "We will not need it after all.",
    "It turns out I ordered too soon.",
)
"""Version 4's own wording of damaged items and cancellations (a ticket worded as version 3's
could near-copy one, which `evalsuite freeze` refuses)."""


def _damaged_body4(rng: random.Random, world: World4) -> str:
    item, damage = world.target_line["name"].lower(), rng.choice(DAMAGE)
    if not world.messy:
        where = f", order {world.target_order['id']}," if world.case == "named" else ""
        return rng.choice(
            [
                f"Hello,\n\nThe {item}{where} I received {damage}. I would be grateful for a "
                f"replacement.\n\nThank you,\n{world.first_name}",
                f"Dear Northwind,\n\nSadly the {item}{where} {damage}. Can you send me another "
                f"one?\n\nKind regards,\n{world.first_name}",
            ]
        )
    item = typo(rng, item) if rng.random() < 0.7 else item
    return rng.choice(
        [
            f"so the {item}{_ref(rng, world)} {damage}.. can i get a new one sent\n\n"
            f"{world.first_name.lower()}",
            f"{item}{_ref(rng, world)} {damage} - replacement please!!\n\n{world.first_name}",
        ]
    )


def _cancel_body4(rng: random.Random, world: World4) -> str:
    item, reason = world.target_line["name"].lower(), rng.choice(CANCEL_REASONS)
    if not world.messy:
        if world.case == "named":
            return (
                f"Hello,\n\nPlease stop order {world.target_order['id']} (the {item}) before it "
                f"ships. {reason}\n\nThank you,\n{world.first_name}"
            )
        return (
            f"Hello,\n\nPlease stop my recent order for the {item} before it ships. {reason}"
            f"\n\nThank you,\n{world.first_name}"
        )
    item = typo(rng, item) if rng.random() < 0.6 else item
    return (
        f"pls dont send the {item}{_ref(rng, world)}, want to cancel. {reason.lower()}\n\n"
        f"{world.first_name.lower()}"
    )


def _body4(rng: random.Random, world: World4) -> str:
    if world.intent == "damaged_replacement":
        return _damaged_body4(rng, world)
    if world.intent == "cancel_order":
        return _cancel_body4(rng, world)
    returns = _returns_text(rng, world)
    if world.intent in ("refund", "refund_outside_window"):
        if not world.messy:
            return f"Good morning,\n\n{returns}\n\nMany thanks,\n{world.first_name}"
        return f"hey\n\n{returns}\n\n{world.first_name.lower()}"
    head, _, sign = _address_body(rng, world).rpartition("\n\n")
    return f"{head}\n\n{returns}\n\n{sign}"


def target_of(world: World4, intent: str) -> dict[str, Any]:
    """The item's target: version 3's for a single request, a ``multi`` one otherwise."""
    from .generate import _target

    if not world.returns:
        return _target(world, intent)
    requests: list[dict[str, Any]] = []
    if intent == "address_change":
        requests.append({"action": "update_address", "address": world.new_address})
    elif intent == "unverified_change":
        requests.append({"action": "decline", "reason": "identity_not_verified"})
    for entry in world.returns:
        order, line = entry["order"], entry["line"]
        if entry["due"]:
            requests.append(
                {
                    "action": "refund",
                    "order": order["id"],
                    "line": line["id"],
                    "amount_cents": line["paid_cents"],
                }
            )
        else:
            requests.append(
                {
                    "action": "decline",
                    "reason": "outside_refund_window",
                    "order": order["id"],
                    "line": line["id"],
                }
            )
    return {"action": "multi", "customer": world.customer["id"], "requests": requests}


def spread(rng: random.Random) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Per stratum, what each item is assigned: its case (cycled, so balanced), its due pattern
    (distinct in the stratum, drawn from `PATTERNS`), its products (distinct within the
    ticket), a new town and the first detail kind."""
    from .generate import CONDITIONS, INTENTS

    plan: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for intent in INTENTS:
        for condition in CONDITIONS:
            cases = CASES[intent, condition]
            assigned = [cases[k % len(cases)] for k in range(PER_STRATUM)]
            rng.shuffle(assigned)
            if intent in DECLINE_INTENTS:
                patterns = rng.sample(PATTERNS, PER_STRATUM)  # distinct, no position favoured
            else:
                patterns = [(True,) * RETURNS] * PER_STRATUM
            main = rng.sample(PRODUCTS, PER_STRATUM)  # distinct in the stratum (version 3's)
            cheap = [p for p in PRODUCTS if p[2] < 100000]
            drawn = [
                [main[k], *rng.sample([p for p in cheap if p != main[k]], RETURNS)]
                for k in range(PER_STRATUM)
            ]
            towns = rng.sample([c for c, _ in CITIES], PER_STRATUM)
            plan[intent, condition] = [
                {
                    "case": assigned[k],
                    "pattern": list(patterns[k]),
                    "product": list(drawn[k][0]),  # a damaged or cancelled item (version 3's)
                    "products": [list(p) for p in drawn[k][1:]],  # the returns
                    "city": towns[k],
                    "first": rng.choice(("postcode", "card")),
                    "newer": 1 + k % 9,
                    "older": k % 9,
                }
                for k in range(PER_STRATUM)
            ]
    return plan


def build_item(
    intent: str, condition: str, number: int, spec: dict[str, Any], seed: str
) -> dict[str, Any]:
    """One version 4 item record (id, input, target, metadata, canary)."""
    from .generate import CANARY

    rng = random.Random(seed)
    messy = condition == "messy"
    world = World4(rng, intent, messy, spec)
    body = _body4(rng, world)
    subject = _subject(rng, intent, messy)
    ticket = world.open_ticket(subject)
    text = (
        f"Support ticket {ticket['id']} | opened {world.today} | channel: email\n"
        f"{world.from_line()}\nSubject: {subject}\n\n{body}\n"
    )
    initial = world.initial_state()
    metadata: dict[str, Any] = {
        "intent": intent,
        "condition": condition,
        "case": world.case,
        "ticket_id": ticket["id"],
        "features": sorted(set(world.features)),
        "initial_state": initial,
        "state_hash": state_hash(initial),
    }
    if world.returns:
        metadata["pattern"] = "".join("d" if e["due"] else "x" for e in world.returns)
    return {
        "id": f"support-v4-{number:04d}",
        "input": text,
        "target": json.dumps(target_of(world, intent), sort_keys=True),
        "metadata": metadata,
        "canary": CANARY,
    }


def generate_items() -> list[dict[str, Any]]:
    """Every version 4 item, sorted by id (ids shuffled across strata)."""
    from .generate import CONDITIONS, INTENTS

    rng = random.Random(SEED)
    plan = spread(rng)
    strata = [(i, c) for i in INTENTS for c in CONDITIONS]
    numbers = list(range(1, len(strata) * PER_STRATUM + 1))
    rng.shuffle(numbers)
    items = []
    for s, (intent, condition) in enumerate(strata):
        for k, spec in enumerate(plan[intent, condition]):
            number = numbers[s * PER_STRATUM + k]
            seed = f"{SEED}:{intent}:{condition}:{k}"
            items.append(build_item(intent, condition, number, spec, seed))
    return sorted(items, key=lambda item: item["id"])


def pattern_counts(items: list[dict[str, Any]]) -> dict[tuple[str, str], Counter[str]]:
    """Per stratum, how many of its items have each due pattern (multi tickets only)."""
    counts: dict[tuple[str, str], Counter[str]] = {}
    for item in items:
        meta = item["metadata"]
        if "pattern" in meta:
            counts.setdefault((meta["intent"], meta["condition"]), Counter())[meta["pattern"]] += 1
    return counts
