"""Version 3's items (support@3.0.0): tickets whose right answer only the lookups give.

    cd tasks && ../.venv/bin/python -m support_desk.generate --version 3

Version 2's tickets gave their decision away to a policy that did the decline's lookups and
declined whatever they showed (issue 29; docs/design/support-desk.md): every refund outside the
window quoted its order, so reading the quoted order and declining on the window, citing its
delivery date, passed; every unverified address change stated one detail, which failed, so
verifying it and declining on identity passed. Version 3's items are new (ids
``support-v3-NNNN``, seed `SEED`) and built so that the lookups a decline needs are the ones a
correct agent makes, with results that change the answer:

* **Refunds inside and outside the window read alike.** Both strata draw their wording,
  subjects, claimed dates ("got it 3/5": a recent date either way) and amounts from the same
  distributions; only the delivery date in the order record tells them apart. A refund ticket
  never quotes its own order number: it names the item (``single``), or an item the customer
  bought twice, told apart by the amount they paid (``twice``: look-alike orders), or, messy,
  quotes the number of another of their orders (``wrong_own``) or another customer's
  (``wrong_other``). The ticket's order is never the customer's newest, and where it stands in
  the customer's list of orders is spread evenly (1 to `RANKS` newer orders, 0 to `RANKS` - 1
  older ones, each count equally often in a stratum): no guess by position is right more than
  one time in nine.
* **Address changes that verify and that do not read alike.** A ticket states one detail or
  two (the postcode on the account, the card's last four digits, in either order). The change
  is due when one of them verifies (``one_ok``; ``second_ok``: the first fails and the second
  matches; ``both_ok``), declined when both fail (``both_bad``; ``both_bad_new_postcode``: the
  "postcode on file" given is the new address's). Every unverified change states two details,
  so verifying the first one and declining is never enough (policy rule 9: every detail the
  customer gave is tried); a third of the due changes state one.
* **Every correct reply carries a fact from the records** (policy rules 9 and 10): the delivery
  date of a window decline, the last four digits of the phone on file in an identity decline,
  the amount of a refund or a cancellation, the item replaced, the new address. Within a
  stratum those facts differ from item to item (distinct products, amounts, dates, phone
  endings and new towns: `_fact`), so a reply copied from another item of the stratum is wrong.
* **Damaged items and cancellations** name their order or not, or (messy) quote another of the
  customer's orders; a cancellation has a second order in processing beside it.
* **Cases are balanced per stratum** (`CASES`: the items of a stratum cycle through its cases).

Targets keep version 2's shape (`generate._target`); metadata adds ``case``.
"""

import json
import random
from collections import Counter
from datetime import date, timedelta
from typing import Any

from .data import CITIES, PRODUCTS
from .env import REFUND_WINDOW_DAYS, money, state_hash
from .shopgen import World, typo

SEED = 20261205
REFUND_REASONS = (
    "The size is not what the listing said.",
    "The colour does not suit my room after all.",
    "It was a gift and they already had one.",
    "I found I do not really need it.",
    "The quality is not what I hoped for.",
    "It does not fit the space I bought it for.",
)
DAMAGE = (
    "reached me broken",
    "was in pieces when I unpacked it",
    "turned up cracked",
    "arrived with a deep dent",
    "came with a chip out of it",
    "was smashed in transit",
)
CANCEL_REASONS = (
    "I bought it twice by mistake.",
    "I have changed my mind.",
    "I found one I prefer.",
    "It is no longer needed.",
)
"""Version 3's own wording (version 2's tickets are frozen: a version 3 ticket written in their
words could near-copy one, which `evalsuite freeze` refuses)."""
PER_STRATUM = 18
REFUND_INTENTS = ("refund", "refund_outside_window")
ADDRESS_INTENTS = ("address_change", "unverified_change")
CASES: dict[tuple[str, str], tuple[str, ...]] = {}
"""Stratum -> the cases its items cycle through (each case's count within one of the others)."""
for _intent in REFUND_INTENTS:
    CASES[_intent, "clean"] = ("single", "twice")
    CASES[_intent, "messy"] = ("single", "twice", "wrong_own", "wrong_other")
for _condition in ("clean", "messy"):
    CASES["damaged_replacement", _condition] = ("named", "none", "wrong_own")[
        : 2 if _condition == "clean" else 3
    ]
    CASES["cancel_order", _condition] = ("named", "none", "wrong_own")[
        : 2 if _condition == "clean" else 3
    ]
    CASES["address_change", _condition] = ("one_ok", "second_ok", "both_ok")
    CASES["unverified_change", _condition] = ("both_bad", "both_bad_new_postcode")
DETAIL_KINDS = ("postcode", "card")
RANKS = 9
"""A refund's order has 1 to `RANKS` orders of the customer placed after it and 0 to
`RANKS` - 1 before it (each count as often as the others in a stratum)."""


# ---- the world -----------------------------------------------------------------------------------
class World3(World):
    """One ticket's shop, version 3 (see the module doc). Reuses version 2's people, orders and
    ticket header (`shopgen.World`); what the ticket is about is built here."""

    def __init__(self, rng: random.Random, intent: str, messy: bool, spec: dict[str, Any]):
        self.spec = spec
        self.case = str(spec["case"])
        self._open_shop(rng, intent, messy, features=[self.case])
        self.ref_mode, self.ref_id = "none", ""
        self.claimed_cents = 0
        self.details: list[tuple[str, str]] = []
        if intent in REFUND_INTENTS:
            self._refund_orders()
        elif intent in ("damaged_replacement", "cancel_order"):
            self._action_orders()
        else:
            for _ in range(rng.randint(1, 3)):
                self._order(self.customer, "delivered", rng.randint(5, 200))
            self._address_change()

    # orders ---------------------------------------------------------------------------------
    def _target(self, status: str, days: int, discount: float) -> None:
        product = tuple(self.spec["product"])
        self.bought[self.customer["id"]].add(product[1])
        extra = self._products(self.customer, self.rng.randint(0, 2))
        products = [product, *extra]
        self.rng.shuffle(products)
        self.target_order = self._order(self.customer, status, days, products, discount)  # type: ignore[arg-type]
        self.target_line = next(ln for ln in self.target_order["lines"] if ln["name"] == product[1])

    def _refund_orders(self) -> None:
        rng = self.rng
        inside = self.intent == "refund"
        days = rng.randint(3, REFUND_WINDOW_DAYS - 3) if inside else rng.randint(35, 150)
        self._target("delivered", days, 0.6 if self.messy else 0.3)
        line = self.target_line
        if self.case == "twice":
            product = tuple(self.spec["product"])
            other_days, latest = days, 160
            if self.spec["older"] == 0 and days >= 5:  # never older when nothing may be
                latest = days - 3
            while abs(other_days - days) < 3:
                other_days = rng.randint(2, latest)
            extra = self._products(self.customer, rng.randint(0, 1))
            products = [product, *extra]
            rng.shuffle(products)
            twin = self._order(self.customer, "delivered", other_days, products)  # type: ignore[arg-type]
            while twin["placed_at"] == self.target_order["placed_at"]:  # never the same day
                earlier = date.fromisoformat(twin["placed_at"]) - timedelta(1)
                twin["placed_at"] = earlier.isoformat()
            twin_line = next(ln for ln in twin["lines"] if ln["name"] == line["name"])
            if twin_line["paid_cents"] == line["paid_cents"]:
                twin_line["paid_cents"] = round(twin_line["paid_cents"] * 0.85)
                twin["payment"]["amount_cents"] = sum(ln["paid_cents"] for ln in twin["lines"])
            self.twin = twin
        self._around_target(days)
        self.claimed_cents = line["paid_cents"]
        if (
            self.messy
            and self.case != "twice"
            and line["paid_cents"] < line["unit_price_cents"] * line["qty"]
            and rng.random() < 0.5
        ):
            self.claimed_cents = line["unit_price_cents"] * line["qty"]
            self.features.append("claims_list_price")
        if self.case.startswith("wrong_"):
            self._wrong_ref()

    def _around_target(self, days: int) -> None:
        """The customer's other orders: `spec["newer"]` placed after the ticket's (so it is never
        the newest) and `spec["older"]` before it, spread per stratum so that no position in
        the customer's list of orders tells which one the ticket is about."""
        rng, target = self.rng, self.target_order

        def count(newer: bool) -> int:
            own = [o for o in self.orders if o["customer_id"] == self.customer["id"]]
            placed = target["placed_at"]
            return sum(
                1 for o in own if (o["placed_at"] > placed if newer else o["placed_at"] < placed)
            )

        while count(True) < int(self.spec["newer"]):
            if rng.random() < 0.5:
                self._order(self.customer, "processing", rng.randint(0, 2), self._filler())
            else:
                self._order(
                    self.customer, "delivered", rng.randint(1, max(1, days - 1)), self._filler()
                )
            if self.orders[-1]["placed_at"] == target["placed_at"]:
                self.orders.pop()  # the same day: the list's order would be the file's
        while count(False) < int(self.spec["older"]):
            self._order(self.customer, "delivered", days + rng.randint(5, 120), self._filler())

    def _filler(self) -> list[tuple[str, str, int]]:
        """One or two products for another order of a regular customer (any but the ticket's
        item, which stays in its own orders only)."""
        item = self.target_line["name"]
        pool = [p for p in PRODUCTS if p[1] != item and p[2] < 100000]
        return self.rng.sample(pool, self.rng.randint(1, 2))

    def _wrong_ref(self) -> None:
        own = [
            o
            for o in self.orders
            if o["customer_id"] == self.customer["id"]
            and all(ln["name"] != self.target_line["name"] for ln in o["lines"])
        ]
        foreign = [o for o in self.orders if o["customer_id"] != self.customer["id"]]
        pool = own if self.case == "wrong_own" and own else foreign
        self.ref_mode, self.ref_id = "wrong", self.rng.choice(pool)["id"]

    def _action_orders(self) -> None:
        rng = self.rng
        if self.intent == "damaged_replacement":
            self._target("delivered", rng.randint(1, 10), 0.25)
            for _ in range(rng.randint(1, 2)):
                self._order(self.customer, "delivered", rng.randint(15, 120))
        else:
            self._target("processing", rng.randint(0, 1), 0.25)
            self._order(self.customer, "processing", rng.randint(0, 2))  # a second one in flight
            for _ in range(rng.randint(0, 2)):
                self._order(self.customer, "delivered", rng.randint(5, 90))
        if self.case == "named":
            self.ref_mode, self.ref_id = "exact", self.target_order["id"]
            if self.messy and rng.random() < 0.5:
                self.ref_mode = "alt"
        elif self.case == "wrong_own":
            self._wrong_ref()

    # address changes ------------------------------------------------------------------------
    def _address_change(self) -> None:
        rng, customer = self.rng, self.customer
        city = str(self.spec["city"])
        area = dict(CITIES)[city]
        while customer["address"]["city"] == city:
            customer["address"] = self._address()
        inward = "".join(rng.choice("ABDEFGHJLNPQRSTUWXYZ") for _ in range(2))
        self.new_address = {
            "line1": f"{rng.randint(1, 180)} {rng.choice(_STREETS)}",
            "city": city,
            "postcode": f"{area}{rng.randint(1, 20)} {rng.randint(1, 9)}{inward}",
        }
        kinds = list(DETAIL_KINDS) if self.spec["first"] == "postcode" else list(DETAIL_KINDS)[::-1]
        right = {"postcode": customer["address"]["postcode"], "card": customer["card_last4"]}
        good = {
            "one_ok": [True],
            "second_ok": [False, True],
            "both_ok": [True, True],
            "both_bad": [False, False],
            "both_bad_new_postcode": [False, False],
        }[self.case]
        for kind, ok in zip(kinds, good, strict=False):
            self.details.append((kind, right[kind] if ok else self._wrong(kind, right[kind])))

    def _wrong(self, kind: str, right: str) -> str:
        rng = self.rng
        if kind == "card":
            wrong = right
            while wrong == right:
                wrong = f"{rng.randint(0, 9999):04d}"
            return wrong
        if self.case == "both_bad_new_postcode" and self.new_address["postcode"] != right:
            self.features.append("gives_new_postcode")
            return str(self.new_address["postcode"])
        wrong = right
        while wrong == right:
            wrong = self._address(self.customer["address"]["city"])["postcode"]
        return wrong


_STREETS = (
    "Mill Lane", "High Street", "Church Road", "Station Road", "Victoria Street", "Park Avenue",
    "Orchard Close", "Willow Way", "Kings Road", "Meadow View", "Castle Street", "Hawthorn Drive",
)  # fmt: skip


# ---- the ticket's text ---------------------------------------------------------------------------
def _amount(rng: random.Random, cents: int, messy: bool) -> str:
    if not messy:
        return f"£{money(cents)}"
    pounds, pence = divmod(cents, 100)
    if pounds >= 1000:
        return rng.choice(
            [f"{pounds // 1000}.{pounds % 1000:03d},{pence:02d} GBP",
             f"£{pounds // 1000},{pounds % 1000:03d}.{pence:02d}"]
        )  # fmt: skip
    return rng.choice(
        [f"£{pounds},{pence:02d}", f"{pounds},{pence:02d} GBP", f"GBP {money(cents)}",
         f"{money(cents)} quid"]
    )  # fmt: skip


def _ref(rng: random.Random, world: World3) -> str:
    """How the ticket mentions an order number (or not)."""
    if world.ref_mode == "none":
        return ""
    digits = world.ref_id[2:]
    if world.ref_mode == "alt":
        return rng.choice([f" (order #{digits})", f" from order no. {digits}", f", order {digits}"])
    return rng.choice([f" from order {world.ref_id}", f" (order {world.ref_id})"])


def _refund_body(rng: random.Random, world: World3) -> str:
    line, messy = world.target_line, world.messy
    item = line["name"].lower()
    reason = rng.choice(REFUND_REASONS)
    if not messy:
        paid = _amount(rng, world.claimed_cents, False)
        return rng.choice(
            [
                f"Good morning,\n\nI am returning the {item} and would like my money back. "
                f"{reason} It cost me {paid}.\n\nMany thanks,\n{world.first_name}",
                f"Hi there,\n\n{reason} Please refund the {item}; I paid {paid} for it.\n\n"
                f"Best,\n{world.first_name}",
            ]
        )
    item = typo(rng, item) if rng.random() < 0.6 else item
    when = ""
    if rng.random() < 0.5:
        if world.intent == "refund":
            got = date.fromisoformat(world.target_order["delivered_at"])
        else:  # a recent date either way: the ticket never tells the window
            got = world.today_date - timedelta(days=rng.randint(3, 20))
            world.features.append("claims_recent_delivery")
        when = f", got it {got.day}/{got.month}"
    amount = _amount(rng, world.claimed_cents, True)
    return rng.choice(
        [
            f"hey\n\n{reason.lower()} can i get a refund on the {item}{_ref(rng, world)}{when}? "
            f"it was {amount}\n\n{world.first_name.lower()}",
            f"hey\n\nrefund for the {item}{_ref(rng, world)} please{when}. {reason.lower()} "
            f"cost me {amount}\n\n{world.first_name.lower()}",
        ]
    )


def _damaged_body(rng: random.Random, world: World3) -> str:
    item, damage = world.target_line["name"].lower(), rng.choice(DAMAGE)
    if not world.messy:
        where = f" (order {world.target_order['id']})" if world.case == "named" else ""
        return (
            f"Hi,\n\nMy {item}{where} {damage}. Please could you send a replacement?\n\n"
            f"Regards,\n{world.first_name}"
        )
    item = typo(rng, item) if rng.random() < 0.7 else item
    return (
        f"ugh the {item}{_ref(rng, world)} {damage}!!! need a replacement pls\n\n{world.first_name}"
    )


def _cancel_body(rng: random.Random, world: World3) -> str:
    item, reason = world.target_line["name"].lower(), rng.choice(CANCEL_REASONS)
    if not world.messy:
        if world.case == "named":
            return (
                f"Hi,\n\nCould you cancel order {world.target_order['id']} please? It is the "
                f"{item}. {reason}\n\nRegards,\n{world.first_name}"
            )
        return (
            f"Hi,\n\nCould you cancel the {item} I ordered a moment ago? {reason}\n\n"
            f"Regards,\n{world.first_name}"
        )
    item = typo(rng, item) if rng.random() < 0.6 else item
    return (
        f"hiya can u cancel the {item}{_ref(rng, world)} asap. {reason.lower()}\n\n"
        f"{world.first_name}"
    )


def _detail_text(rng: random.Random, kind: str, value: str, messy: bool) -> str:
    if not messy:
        return (
            f"the postcode on my account is {value}"
            if kind == "postcode"
            else f"my card ends in {value}"
        )
    if kind == "postcode":
        return rng.choice(
            [
                f"security check - postcode on file is {value.replace(' ', '').lower()}",
                f"you can verify me with my postcode {value.lower()}",
            ]
        )
    return rng.choice([f"card ending {' '.join(value)}", f"last 4 digits of my card: ****{value}"])


def _address_body(rng: random.Random, world: World3) -> str:
    new, messy = world.new_address, world.messy
    texts = [_detail_text(rng, kind, value, messy) for kind, value in world.details]
    if not messy:
        return (
            f"Hi,\n\nWe have just moved. Please change the address on my account to "
            f"{new['line1']}, {new['city']}, {new['postcode']}. To confirm it is me, "
            f"{' and '.join(texts)}.\n\nRegards,\n{world.first_name}"
        )
    compact = new["postcode"].replace(" ", "")
    address = rng.choice(
        [
            f"{new['line1'].lower()} {new['city'].lower()} {compact.lower()}",
            f"{new['line1']} ,{new['city']} ,  {new['postcode']}",
            f"{new['line1'].upper()}, {new['city'].upper()} {new['postcode']}",
        ]
    )
    lines = "\n".join(texts)
    return f"just moved!! my new address is {address}\n{lines}\n\nta {world.first_name.lower()}"


SUBJECTS = {
    "refund": (("Refund request", "Return for a refund"), ("re: refund??", "money back pls")),
    "damaged_replacement": (("Damaged item",), ("BROKEN ITEM",)),
    "cancel_order": (("Cancel my order",), ("pls cancel",)),
    "address": (("Change of address",), ("moving house", "new addy")),
}
"""Subjects by kind of request (clean, messy): both strata of a kind draw from the same ones."""


def _body(rng: random.Random, world: World3) -> str:
    if world.intent in REFUND_INTENTS:
        return _refund_body(rng, world)
    if world.intent == "damaged_replacement":
        return _damaged_body(rng, world)
    if world.intent == "cancel_order":
        return _cancel_body(rng, world)
    return _address_body(rng, world)


def _subject(rng: random.Random, intent: str, messy: bool) -> str:
    kind = (
        "refund" if intent in REFUND_INTENTS else "address" if intent in ADDRESS_INTENTS else intent
    )
    return rng.choice(SUBJECTS[kind][1 if messy else 0])


# ---- items ---------------------------------------------------------------------------------------
def spread(rng: random.Random) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Per stratum, what each of its `PER_STRATUM` items is assigned: its case (cycled, so that
    cases are balanced), a distinct product (order strata), a distinct new town (address strata)
    and which detail kind the ticket states first."""
    from .generate import CONDITIONS, INTENTS

    plan: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for intent in INTENTS:
        for condition in CONDITIONS:
            cases = CASES[intent, condition]
            assigned = [cases[k % len(cases)] for k in range(PER_STRATUM)]
            rng.shuffle(assigned)
            products = rng.sample(PRODUCTS, PER_STRATUM)
            towns = rng.sample([c for c, _ in CITIES], PER_STRATUM)
            newer = [1 + k % RANKS for k in range(PER_STRATUM)]
            older = [k % RANKS for k in range(PER_STRATUM)]
            rng.shuffle(newer)
            rng.shuffle(older)
            plan[intent, condition] = [
                {
                    "case": assigned[k],
                    "product": list(products[k]),
                    "city": towns[k],
                    "first": rng.choice(DETAIL_KINDS),
                    "newer": newer[k],
                    "older": older[k],
                }
                for k in range(PER_STRATUM)
            ]
    return plan


def _fact(item: dict[str, Any]) -> Any:
    """What a correct reply to `item` cites from the records (distinct within a stratum)."""
    target = json.loads(item["target"])
    state = item["metadata"]["initial_state"]
    orders = {o["id"]: o for o in state["orders"]}
    customers = {c["id"]: c for c in state["customers"]}
    action = target["action"]
    if action == "refund":
        return ("amount", target["amount_cents"])
    if action == "cancel":
        return ("amount", orders[target["order"]]["payment"]["amount_cents"])
    if action == "replace":
        order = orders[target["order"]]
        return ("item", next(ln["name"] for ln in order["lines"] if ln["id"] == target["line"]))
    if action == "update_address":
        return ("town", target["address"]["city"])
    if target["reason"] == "outside_refund_window":
        return ("delivered", orders[target["order"]]["delivered_at"])
    return ("phone", customers[target["customer"]]["phone"][-4:])


def build_item(
    intent: str, condition: str, number: int, spec: dict[str, Any], seed: str
) -> dict[str, Any]:
    """One version 3 item record (id, input, target, metadata, canary)."""
    from .generate import CANARY, _target

    rng = random.Random(seed)
    messy = condition == "messy"
    world = World3(rng, intent, messy, spec)
    body = _body(rng, world)
    subject = _subject(rng, intent, messy)
    ticket = world.open_ticket(subject)
    text = (
        f"Support ticket {ticket['id']} | opened {world.today} | channel: email\n"
        f"{world.from_line()}\nSubject: {subject}\n\n{body}\n"
    )
    initial = world.initial_state()
    return {
        "id": f"support-v3-{number:04d}",
        "input": text,
        "target": json.dumps(_target(world, intent), sort_keys=True),
        "metadata": {
            "intent": intent,
            "condition": condition,
            "case": world.case,
            "ticket_id": ticket["id"],
            "features": sorted(set(world.features)),
            "initial_state": initial,
            "state_hash": state_hash(initial),
        },
        "canary": CANARY,
    }


def generate_items() -> list[dict[str, Any]]:
    """Every version 3 item, sorted by id (ids shuffled across strata)."""
    from .generate import CONDITIONS, INTENTS

    rng = random.Random(SEED)
    plan = spread(rng)
    strata = [(i, c) for i in INTENTS for c in CONDITIONS]
    numbers = list(range(1, len(strata) * PER_STRATUM + 1))
    rng.shuffle(numbers)
    items = []
    for s, (intent, condition) in enumerate(strata):
        facts: set[Any] = set()
        for k, spec in enumerate(plan[intent, condition]):
            number = numbers[s * PER_STRATUM + k]
            attempt = 0
            while True:  # a fact another item of the stratum already cites: draw the world again
                item = build_item(
                    intent, condition, number, spec, f"{SEED}:{intent}:{condition}:{k}:{attempt}"
                )
                fact = _fact(item)
                if fact not in facts:
                    break
                attempt += 1
            facts.add(fact)
            items.append(item)
    return sorted(items, key=lambda item: item["id"])


def case_counts(items: list[dict[str, Any]]) -> dict[tuple[str, str], Counter[str]]:
    """Per stratum, how many of its items have each case."""
    counts: dict[tuple[str, str], Counter[str]] = {}
    for item in items:
        meta = item["metadata"]
        counts.setdefault((meta["intent"], meta["condition"]), Counter())[meta["case"]] += 1
    return counts
