"""Building blocks of the item generator: one small shop ("world") per ticket."""

import random
from datetime import date, timedelta
from typing import Any

from .data import CITIES, DOMAINS, FIRST_NAMES, INWARD_LETTERS, LAST_NAMES, PRODUCTS, STREETS

ORDER_INTENTS = ("refund", "refund_outside_window", "damaged_replacement", "cancel_order")
EXPENSIVE = [p for p in PRODUCTS if p[2] >= 100000]


def typo(rng: random.Random, text: str) -> str:
    """`text` with one plausible typo in one of its longer words."""
    words = text.split(" ")
    candidates = [i for i, w in enumerate(words) if len(w) >= 5 and w.isalpha()]
    if not candidates:
        return text
    i = rng.choice(candidates)
    word = words[i]
    j = rng.randint(1, len(word) - 3)
    if rng.random() < 0.5 and word[j] != word[j + 1]:
        word = word[:j] + word[j + 1] + word[j] + word[j + 2 :]
    else:
        word = word[:j] + word[j + 1 :]
    words[i] = word
    return " ".join(words)


def order_ref_text(rng: random.Random, world: "World") -> str:
    """How a messy ticket mentions its order (or does not)."""
    mode, ref = world.ref_mode, world.ref_id
    digits = ref[2:] if ref else ""
    if mode == "none":
        return ""
    if mode == "alt":
        return rng.choice([f" (order #{digits})", f" from order no. {digits}", f", order {digits}"])
    return rng.choice([f" from order {ref}", f" (order {ref})"])


class World:
    """The shop of one ticket: the customer, look-alikes, their orders, and the ticket."""

    def __init__(self, rng: random.Random, intent: str, messy: bool) -> None:
        self._open_shop(rng, intent, messy, features=[])
        self.ref_mode, self.ref_id = "exact", ""
        if intent in ORDER_INTENTS:
            self._target_orders()
        else:
            for _ in range(rng.randint(1, 3)):
                self._order(self.customer, "delivered", rng.randint(5, 200))
            self._address_change()

    # people -------------------------------------------------------------------------------

    def _open_shop(
        self, rng: random.Random, intent: str, messy: bool, *, features: list[str]
    ) -> None:
        """Today, the customer (messy identity or not) and the look-alikes: every version's
        first draws, in this order (a version's generator reproduces its frozen items)."""
        self.rng, self.intent, self.messy = rng, intent, messy
        self.today_date = date(2025, 2, 1) + timedelta(days=rng.randint(0, 300))
        self.today = self.today_date.isoformat()
        self.features: list[str] = features
        self.used: set[str] = set()
        self.customers: list[dict[str, Any]] = []
        self.orders: list[dict[str, Any]] = []
        self.tickets: list[dict[str, Any]] = []
        self.bought: dict[str, set[str]] = {}
        self.identity = "clean"
        if messy:
            self.identity = rng.choices(["email_case", "typo_name", "no_email_phone"], [3, 3, 4])[0]
            self.features.append(self.identity)
        self.customer = self._customer()
        self.first_name = self.customer["name"].split()[0]
        self._distractors()

    def _id(self, prefix: str, digits: int) -> str:
        while True:
            ident = f"{prefix}{self.rng.randint(10 ** (digits - 1), 10**digits - 1)}"
            if ident not in self.used:
                self.used.add(ident)
                return ident

    def _address(self, avoid_city: str = "") -> dict[str, str]:
        city, area = self.rng.choice([c for c in CITIES if c[0] != avoid_city])
        inward = "".join(self.rng.choice(INWARD_LETTERS) for _ in range(2))
        return {
            "line1": f"{self.rng.randint(1, 180)} {self.rng.choice(STREETS)}",
            "city": city,
            "postcode": f"{area}{self.rng.randint(1, 20)} {self.rng.randint(1, 9)}{inward}",
        }

    def _customer(self, name: str | None = None) -> dict[str, Any]:
        rng = self.rng
        name = name or f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
        first, last = name.lower().split()
        suffix = rng.choice(["", "", str(rng.randint(1, 99))])
        customer = {
            "id": self._id("C-", 4),
            "name": name,
            "email": f"{first}.{last}{suffix}@{rng.choice(DOMAINS)}",
            "phone": f"07{rng.randint(100, 999)} {rng.randint(100000, 999999)}",
            "address": self._address(),
            "card_last4": f"{rng.randint(0, 9999):04d}",
        }
        self.customers.append(customer)
        self.bought[customer["id"]] = set()
        return customer

    def _distractors(self) -> None:
        if self.identity == "no_email_phone" and self.rng.random() < 0.7:
            twin = self._customer(self.customer["name"])
            self._order(twin, "delivered", self.rng.randint(2, 60))
            self.features.append("same_name_customer")
        for _ in range(self.rng.randint(2, 3)):
            other = self._customer()
            for _ in range(self.rng.randint(1, 2)):
                self._order(other, "delivered", self.rng.randint(2, 120))

    def from_line(self) -> str:
        c = self.customer
        if self.identity == "email_case":
            local, domain = c["email"].split("@")
            return f"From: {c['name']} <{local.title()}@{domain.capitalize()}>"
        if self.identity == "typo_name":
            return f"From: {_typo_name(self.rng, c['name'])} <{c['email']}>"
        if self.identity == "no_email_phone":
            digits = c["phone"].replace(" ", "")
            phone = self.rng.choice(
                [
                    f"+44 {digits[1:5]} {digits[5:]}",
                    digits,
                    f"({digits[:5]}) {digits[5:8]} {digits[8:]}",
                ]
            )
            return f"From: {c['name']} (web form, phone: {phone})"
        return f"From: {c['name']} <{c['email']}>"

    # orders ---------------------------------------------------------------------------------
    def _products(self, customer: dict[str, Any], count: int) -> list[tuple[str, str, int]]:
        mine = self.bought[customer["id"]]
        pool = [p for p in PRODUCTS if p[1] not in mine and p not in EXPENSIVE]
        chosen = self.rng.sample(pool, count)
        mine.update(p[1] for p in chosen)
        return chosen

    def _order(
        self,
        customer: dict[str, Any],
        status: str,
        days_ago: int,
        products: list[tuple[str, str, int]] | None = None,
        discount: float = 0.25,
    ) -> dict[str, Any]:
        rng, today = self.rng, self.today_date
        products = products or self._products(customer, rng.randint(1, 3))
        if status == "processing":
            placed, shipped, delivered = today - timedelta(days=days_ago), None, None
        else:
            delivered = today - timedelta(days=days_ago)
            shipped = delivered - timedelta(days=rng.randint(1, 3))
            placed = shipped - timedelta(days=rng.randint(0, 2))
        lines = []
        for number, (sku, name, price) in enumerate(products, start=1):
            qty = 1 if rng.random() < 0.85 or price > 20000 else 2
            paid = price * qty
            if rng.random() < discount:
                paid = round(paid * rng.choice([0.8, 0.85, 0.9]))
            lines.append(
                {"id": f"L{number}", "sku": sku, "name": name, "qty": qty,
                 "unit_price_cents": price, "paid_cents": paid}
            )  # fmt: skip
        order = {
            "id": self._id("O-", 5),
            "customer_id": customer["id"],
            "placed_at": placed.isoformat(),
            "status": status,
            "shipped_at": shipped.isoformat() if shipped else None,
            "delivered_at": delivered.isoformat() if delivered else None,
            "lines": lines,
            "payment": {
                "method": "card",
                "card_last4": customer["card_last4"],
                "amount_cents": sum(line["paid_cents"] for line in lines),
            },
        }
        self.orders.append(order)
        return order

    def _target_orders(self) -> None:
        rng, intent, messy = self.rng, self.intent, self.messy
        status, days = {
            "refund": ("delivered", rng.randint(3, 25)),
            "refund_outside_window": ("delivered", rng.randint(40, 150)),
            "damaged_replacement": ("delivered", rng.randint(1, 10)),
            "cancel_order": ("processing", rng.randint(0, 1)),
        }[intent]
        mine = self.bought[self.customer["id"]]
        if messy and intent == "refund" and rng.random() < 0.3:
            main = rng.choice(EXPENSIVE)
            mine.add(main[1])
            extra = self._products(self.customer, rng.randint(0, 1))
        else:
            main, *extra = self._products(self.customer, rng.randint(1, 3))
        products = [main, *extra]
        rng.shuffle(products)
        discount = 0.6 if messy and intent in ("refund", "refund_outside_window") else 0.25
        self.target_order = self._order(self.customer, status, days, products, discount)
        self.target_line = next(ln for ln in self.target_order["lines"] if ln["name"] == main[1])
        for _ in range(rng.randint(1, 3) if messy else rng.randint(0, 2)):
            if intent == "cancel_order" and rng.random() < 0.4:
                self._order(self.customer, "processing", rng.randint(0, 2))
            else:
                newer = rng.random() < 0.6
                self._order(self.customer, "delivered", max(1, days - 10) if newer else days + 30)
        if messy:
            self._messy_ref()

    def _messy_ref(self) -> None:
        rng = self.rng
        self.ref_mode = rng.choices(["none", "wrong", "alt"], [4, 35 / 10, 25 / 10])[0]
        self.ref_id = self.target_order["id"]
        self.features.append(f"order_ref_{self.ref_mode}")
        if self.ref_mode != "wrong":
            return
        own = [o for o in self.orders if o["customer_id"] == self.customer["id"]]
        others = [o for o in own if o is not self.target_order]
        foreign = [o for o in self.orders if o["customer_id"] != self.customer["id"]]
        kind = rng.choice(["typo", "other_own", "other_customer"])
        if kind == "other_own" and others:
            self.ref_id = rng.choice(others)["id"]
        elif kind == "other_customer" and foreign:
            self.ref_id = rng.choice(foreign)["id"]
        else:
            kind = "typo"
            digits = list(self.target_order["id"][2:])
            while "O-" + "".join(digits) in self.used or "".join(digits) == self.ref_id[2:]:
                i = rng.randint(0, len(digits) - 2)
                digits[i], digits[i + 1] = digits[i + 1], digits[i]
                if digits[i] == digits[i + 1]:
                    digits[i] = str((int(digits[i]) + 1) % 10)
            self.ref_id = "O-" + "".join(digits)
        self.features.append(f"wrong_ref_{kind}")

    # address changes ------------------------------------------------------------------------
    def _address_change(self) -> None:
        rng, customer = self.rng, self.customer
        self.new_address = self._address(avoid_city=customer["address"]["city"])
        use_card = rng.random() < 0.4
        if self.intent == "address_change":
            self.stated_detail = (
                ("card", customer["card_last4"])
                if use_card
                else ("postcode", customer["address"]["postcode"])
            )
            return
        if use_card:
            wrong = customer["card_last4"]
            while wrong == customer["card_last4"]:
                wrong = f"{rng.randint(0, 9999):04d}"
            self.stated_detail = ("card", wrong)
        elif rng.random() < 0.5:
            self.stated_detail = ("postcode", self.new_address["postcode"])
            self.features.append("gives_new_postcode")
        else:
            self.stated_detail = (
                "postcode",
                self._address(customer["address"]["city"])["postcode"],
            )

    # ticket and state -------------------------------------------------------------------------
    def open_ticket(self, subject: str) -> dict[str, Any]:
        ticket = {"id": self._id("T-", 5), "subject": subject, "opened_at": self.today}
        ticket["status"] = "open"
        self.tickets.append(ticket)
        return ticket

    def initial_state(self) -> dict[str, Any]:
        return {
            "today": self.today,
            "customers": sorted(self.customers, key=lambda c: c["id"]),
            "orders": sorted(self.orders, key=lambda o: o["id"]),
            "tickets": list(self.tickets),
        }


def _typo_name(rng: random.Random, name: str) -> str:
    first, last = name.split()
    return f"{typo(rng, first) if len(first) >= 5 else first.lower()} {typo(rng, last)}"
