"""The simulated shop: state layout, canonical hash, and the operations behind the tools.

Pure Python (no inspect): the generator, the tools and the verifier share it. A shop state is a
JSON object::

    {"today": "2025-06-16",
     "customers": [{"id", "name", "email", "phone", "address": {"line1", "city", "postcode"},
                    "card_last4"}],
     "orders": [{"id", "customer_id", "placed_at", "status", "shipped_at", "delivered_at",
                 "lines": [{"id", "sku", "name", "qty", "unit_price_cents", "paid_cents"}],
                 "payment": {"method", "card_last4", "amount_cents"}}],
     "tickets": [{"id", "subject", "opened_at", "status"}]}

The *initial* state (exactly that) is stored in the item's metadata with its hash. At run time
the episode's state adds the records the agent's actions create: ``refunds``, ``shipments``,
``replies`` and an ordered ``log`` of every verifying or mutating operation.
"""

import copy
import hashlib
import json
import re
from datetime import date
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

REFUND_WINDOW_DAYS = 30
ORDER_STATUSES = ("processing", "shipped", "delivered", "cancelled")
TICKET_STATUSES = ("open", "pending", "closed")
RUNTIME_KEYS = ("refunds", "shipments", "replies", "log")
INITIAL_KEYS = ("today", "customers", "orders", "tickets")

State = dict[str, Any]


class ShopError(Exception):
    """A condition the agent should see and cope with (the tools turn it into a ToolError)."""


def canonical_json(obj: Any) -> str:
    """Sorted keys, no white space, UTF-8, no NaN: the one serialisation that is hashed."""
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def state_hash(state: State) -> str:
    """``sha256:<hex>`` of the canonical JSON of an (initial) shop state."""
    return "sha256:" + hashlib.sha256(canonical_json(state).encode("utf-8")).hexdigest()


def initial_view(runtime: State) -> State:
    """The initial-state part of a runtime state (what the hash covers)."""
    return {key: runtime[key] for key in INITIAL_KEYS if key in runtime}


def fresh_runtime(initial: State) -> State:
    """A new runtime state: a deep copy of `initial` plus empty action records."""
    runtime = copy.deepcopy(initial)
    for key in RUNTIME_KEYS:
        runtime[key] = []
    return runtime


def money(cents: int) -> str:
    """``3599`` -> ``"35.99"``."""
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    return f"{sign}{cents // 100}.{cents % 100:02d}"


def to_cents(amount: float | int | str) -> int:
    """An amount in pounds (number or plain decimal string) in whole pence.

    Raises:
        ShopError: the amount is not a plain number.
    """
    try:
        value = Decimal(str(amount).strip())
    except InvalidOperation:
        raise ShopError(f"amount {amount!r} is not a number (use e.g. 35.99)") from None
    if not value.is_finite():
        raise ShopError(f"amount {amount!r} is not a finite number")
    return int((value * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def norm_email(text: str) -> str:
    return text.strip().lower()


def norm_phone(text: str) -> str:
    digits = re.sub(r"\D", "", text)
    if digits.startswith("44"):
        digits = "0" + digits[2:]
    return digits


def norm_postcode(text: str) -> str:
    return re.sub(r"\s+", "", text).upper()


def norm_text(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text).casefold().split())


def days_between(earlier: str, later: str) -> int:
    return (date.fromisoformat(later) - date.fromisoformat(earlier)).days


class Shop:
    """Operations on one episode's runtime state (the dict is changed in place)."""

    def __init__(self, state: State) -> None:
        self.state = state

    # lookups -------------------------------------------------------------------------------
    def customer(self, customer_id: str) -> dict[str, Any]:
        for customer in self.state["customers"]:
            if customer["id"] == customer_id.strip():
                return dict(customer)
        raise ShopError(f"customer {customer_id!r} not found")

    def order(self, order_id: str) -> dict[str, Any]:
        for order in self.state["orders"]:
            if order["id"] == order_id.strip().upper():
                return dict(order)
        raise ShopError(f"order {order_id!r} not found")

    def _mutable(self, kind: str, ident: str) -> dict[str, Any]:
        for record in self.state[kind]:
            if record["id"] == ident:
                return record  # type: ignore[no-any-return]
        raise ShopError(f"{kind[:-1]} {ident!r} not found")

    @staticmethod
    def line(order: dict[str, Any], line_id: str) -> dict[str, Any]:
        for line in order["lines"]:
            if line["id"] == line_id.strip().upper():
                return dict(line)
        known = ", ".join(f"{ln['id']} ({ln['name']})" for ln in order["lines"])
        raise ShopError(f"order {order['id']} has no line {line_id!r} (lines: {known})")

    def _log(self, op: str, **fields: Any) -> None:
        self.state["log"].append({"seq": len(self.state["log"]) + 1, "op": op, **fields})

    # read-only views ------------------------------------------------------------------------
    def find_customer(
        self, email: str = "", name: str = "", phone: str = ""
    ) -> list[dict[str, Any]]:
        if not (email.strip() or name.strip() or phone.strip()):
            raise ShopError("give at least one of email, name or phone")
        found = []
        for customer in self.state["customers"]:
            if email.strip() and norm_email(email) != norm_email(customer["email"]):
                continue
            if phone.strip() and norm_phone(phone)[-10:] != norm_phone(customer["phone"])[-10:]:
                continue
            if name.strip():
                wanted, have = norm_text(name).split(), norm_text(customer["name"]).split()
                if not all(token in have for token in wanted):
                    continue
            found.append(
                {
                    "id": customer["id"],
                    "name": customer["name"],
                    "email": customer["email"],
                    "phone": customer["phone"],
                    "city": customer["address"]["city"],
                }
            )
        return found

    def order_view(self, order_id: str) -> dict[str, Any]:
        order = self.order(order_id)
        return {
            "id": order["id"],
            "customer_id": order["customer_id"],
            "placed_at": order["placed_at"],
            "status": order["status"],
            "shipped_at": order["shipped_at"],
            "delivered_at": order["delivered_at"],
            "lines": [
                {
                    "id": ln["id"],
                    "sku": ln["sku"],
                    "name": ln["name"],
                    "qty": ln["qty"],
                    "unit_price": money(ln["unit_price_cents"]),
                    "paid": money(ln["paid_cents"]),
                }
                for ln in order["lines"]
            ],
            "payment": {
                "method": order["payment"]["method"],
                "amount": money(order["payment"]["amount_cents"]),
            },
            "refunded": [
                {"line_id": r["line_id"], "amount": money(r["amount_cents"])}
                for r in self.state["refunds"]
                if r["order_id"] == order["id"]
            ],
            "currency": "GBP",
        }

    def list_orders(self, customer_id: str) -> list[dict[str, Any]]:
        customer = self.customer(customer_id)
        orders = [o for o in self.state["orders"] if o["customer_id"] == customer["id"]]
        orders.sort(key=lambda o: o["placed_at"], reverse=True)
        return [
            {
                "id": o["id"],
                "placed_at": o["placed_at"],
                "status": o["status"],
                "delivered_at": o["delivered_at"],
                "items": [ln["name"] for ln in o["lines"]],
                "total": money(o["payment"]["amount_cents"]),
            }
            for o in orders
        ]

    # verification and actions ------------------------------------------------------------------
    def verify_identity(self, customer_id: str, postcode: str = "", card_last4: str = "") -> bool:
        customer = self.customer(customer_id)
        if not (postcode.strip() or card_last4.strip()):
            raise ShopError("give the postcode or the last 4 card digits the customer stated")
        ok = True
        if postcode.strip():
            ok = ok and norm_postcode(postcode) == norm_postcode(customer["address"]["postcode"])
        if card_last4.strip():
            ok = ok and re.sub(r"\D", "", card_last4)[-4:] == customer["card_last4"]
        self._log("verify_identity", customer_id=customer["id"], ok=ok)
        return ok

    def refund(
        self, order_id: str, line_id: str, amount: float | str, reason: str
    ) -> dict[str, Any]:
        order = self.order(order_id)
        line = self.line(order, line_id)
        cents = to_cents(amount)
        if cents <= 0:
            raise ShopError("refund amount must be positive")
        if order["status"] == "cancelled":
            raise ShopError(f"order {order['id']} is cancelled; its payment was already refunded")
        record = {
            "id": f"R-{len(self.state['refunds']) + 1}",
            "order_id": order["id"],
            "line_id": line["id"],
            "amount_cents": cents,
            "reason": reason,
            "kind": "manual",
        }
        self.state["refunds"].append(record)
        self._log("refund", order_id=order["id"], line_id=line["id"], amount_cents=cents)
        return record

    def ship_replacement(self, order_id: str, line_id: str, reason: str) -> dict[str, Any]:
        order = self.order(order_id)
        line = self.line(order, line_id)
        if order["status"] not in ("shipped", "delivered"):
            raise ShopError(f"order {order['id']} has status {order['status']}: nothing to replace")
        record = {
            "id": f"S-{len(self.state['shipments']) + 1}",
            "order_id": order["id"],
            "line_id": line["id"],
            "qty": line["qty"],
            "reason": reason,
        }
        self.state["shipments"].append(record)
        self._log("ship_replacement", order_id=order["id"], line_id=line["id"])
        return record

    def update_address(self, customer_id: str, line1: str, city: str, postcode: str) -> None:
        customer = self._mutable("customers", customer_id.strip())
        if not (line1.strip() and city.strip() and postcode.strip()):
            raise ShopError("line1, city and postcode are all required")
        customer["address"] = {"line1": line1.strip(), "city": city.strip(), "postcode": postcode}
        self._log("update_address", customer_id=customer["id"])

    def cancel_order(self, order_id: str, reason: str) -> dict[str, Any]:
        order = self._mutable("orders", self.order(order_id)["id"])
        if order["status"] != "processing":
            raise ShopError(
                f"order {order['id']} has status {order['status']} and can no longer be cancelled"
            )
        order["status"] = "cancelled"
        record = {
            "id": f"R-{len(self.state['refunds']) + 1}",
            "order_id": order["id"],
            "line_id": None,
            "amount_cents": order["payment"]["amount_cents"],
            "reason": reason,
            "kind": "cancellation",
        }
        self.state["refunds"].append(record)
        self._log("cancel_order", order_id=order["id"])
        return record

    def reply(self, ticket_id: str, message: str) -> None:
        ticket = self._mutable("tickets", ticket_id.strip().upper())
        if not message.strip():
            raise ShopError("the reply is empty")
        self.state["replies"].append({"ticket_id": ticket["id"], "message": message})
        self._log("reply_to_customer", ticket_id=ticket["id"])

    def set_ticket_status(self, ticket_id: str, status: str) -> None:
        ticket = self._mutable("tickets", ticket_id.strip().upper())
        wanted = status.strip().lower()
        if wanted not in TICKET_STATUSES:
            raise ShopError(f"status must be one of {', '.join(TICKET_STATUSES)}")
        ticket["status"] = wanted
        self._log("set_ticket_status", ticket_id=ticket["id"], status=wanted)


READ_ONLY = frozenset({"find_customer", "get_order", "list_orders"})
TOOL_NAMES = (
    "find_customer",
    "get_order",
    "list_orders",
    "verify_identity",
    "refund",
    "ship_replacement",
    "update_address",
    "cancel_order",
    "reply_to_customer",
    "set_ticket_status",
)


def dispatch(shop: Shop, name: str, args: dict[str, Any]) -> Any:
    """Run tool `name` on `shop`: the JSON-ready result (the inspect tools and tests share it).

    Raises:
        ShopError: the agent should see this (unknown ids, bad amounts, not cancellable...).
    """
    text = {k: v for k, v in args.items() if isinstance(v, str)}
    if name == "find_customer":
        return shop.find_customer(
            text.get("email", ""), text.get("name", ""), text.get("phone", "")
        )
    if name == "get_order":
        return shop.order_view(args["order_id"])
    if name == "list_orders":
        return shop.list_orders(args["customer_id"])
    if name == "verify_identity":
        ok = shop.verify_identity(
            args["customer_id"], text.get("postcode", ""), text.get("card_last4", "")
        )
        return {"verified": ok}
    if name == "refund":
        return shop.refund(args["order_id"], args["line_id"], args["amount"], args["reason"])
    if name == "ship_replacement":
        return shop.ship_replacement(args["order_id"], args["line_id"], args["reason"])
    if name == "update_address":
        shop.update_address(args["customer_id"], args["line1"], args["city"], args["postcode"])
        return {"updated": True}
    if name == "cancel_order":
        return shop.cancel_order(args["order_id"], args["reason"])
    if name == "reply_to_customer":
        shop.reply(args["ticket_id"], args["message"])
        return {"sent": True}
    if name == "set_ticket_status":
        shop.set_ticket_status(args["ticket_id"], args["status"])
        return {"status": args["status"].strip().lower()}
    raise ShopError(f"unknown tool {name!r}")
