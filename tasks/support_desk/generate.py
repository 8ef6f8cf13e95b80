"""Seeded generator of the support_desk items (run once before the first freeze).

    cd tasks && ../.venv/bin/python -m support_desk.generate > support_desk/items.jsonl

Versions 1 and 2 share these items (ids ``support-NNNN``); version 3 has its own
(``--version 3``: `items_v3`, ids ``support-v3-NNNN``), which share items.jsonl with version
2's dev items once frozen (docs/design/support-desk.md, "Not frozen yet"), and so has version 4
(``--version 4``: `items_v4`, ids ``support-v4-NNNN``).

Every item is one ticket with its own small shop (the customer, look-alike customers and their
orders). Intents: refund, damaged_replacement, address_change, cancel_order, and two whose right
answer is to decline: refund_outside_window, unverified_change. Conditions: `clean` (all
details right, in standard formats) and `messy` (production-like: typos, no or wrong order
number, phone instead of email, odd amount/date/address formats, claims that conflict with the
records). After `evalsuite freeze`, items.jsonl holds only the dev items; the holdout half lives
in holdout/support/<version>.vault. Regenerating would recreate the holdout's text: this example
suite protects its holdout against crawlers only (see the README's threat model).
"""

import json
import random
import sys
from datetime import date, timedelta
from typing import Any

from .data import CANCEL_REASONS, DAMAGE, REFUND_REASONS
from .env import money, state_hash
from .shopgen import World, order_ref_text, typo

CANARY = "evalsuite-canary support 79bc6501-1b89-4527-a520-43612c87051b"
SEED = 20261201
PER_STRATUM = 17
INTENTS = (
    "refund",
    "damaged_replacement",
    "address_change",
    "cancel_order",
    "refund_outside_window",
    "unverified_change",
)
CONDITIONS = ("clean", "messy")


def _amount_text(rng: random.Random, cents: int, messy: bool) -> str:
    if not messy:
        return f"£{money(cents)}"
    pounds, pence = divmod(cents, 100)
    if pounds >= 1000:
        thousands = f"{pounds // 1000}.{pounds % 1000:03d},{pence:02d}"
        return rng.choice(
            [f"{thousands} GBP", f"£{pounds // 1000},{pounds % 1000:03d}.{pence:02d}"]
        )
    return rng.choice(
        [f"£{pounds},{pence:02d}", f"{pounds},{pence:02d} GBP", f"GBP {money(cents)}",
         f"{money(cents)} quid"]
    )  # fmt: skip


def _refund_body(rng: random.Random, world: World, messy: bool, outside: bool) -> str:
    line, order = world.target_line, world.target_order
    item = line["name"].lower()
    reason = rng.choice(REFUND_REASONS)
    if not messy:
        return (
            f"Hello,\n\nI would like a refund for the {item} from order {order['id']}. {reason} "
            f"I paid {_amount_text(rng, line['paid_cents'], False)} for it.\n\nThanks,\n"
            f"{world.first_name}"
        )
    claimed = line["paid_cents"]
    if line["paid_cents"] < line["unit_price_cents"] * line["qty"]:
        claimed = line["unit_price_cents"] * line["qty"]  # the list price, not what was paid
        world.features.append("claims_list_price")
    item = typo(rng, item) if rng.random() < 0.6 else item
    ref = order_ref_text(rng, world)
    when = ""
    if outside and rng.random() < 0.7:
        fake = date.fromisoformat(world.today) - timedelta(days=rng.randint(4, 20))
        when = f" - it only arrived on {fake.day}/{fake.month}"
        world.features.append("claims_recent_delivery")
    elif rng.random() < 0.4:
        real = date.fromisoformat(order["delivered_at"])
        when = f", got it {real.day}/{real.month}/{real.year % 100:02d}"
    return (
        f"hi\n\n{reason.lower()} so i want my money back for the {item}{ref}{when}. "
        f"paid {_amount_text(rng, claimed, True)}\n\n{world.first_name.lower()}"
    )


def _damaged_body(rng: random.Random, world: World, messy: bool) -> str:
    item, damage = world.target_line["name"].lower(), rng.choice(DAMAGE)
    if not messy:
        return (
            f"Hello,\n\nThe {item} from order {world.target_order['id']} {damage}. Could you "
            f"please send a replacement?\n\nBest wishes,\n{world.first_name}"
        )
    item = typo(rng, item) if rng.random() < 0.7 else item
    return (
        f"hello?? the {item}{order_ref_text(rng, world)} {damage}!! can u send a replacement "
        f"asap, it was a present\n\n{world.first_name}"
    )


def _cancel_body(rng: random.Random, world: World, messy: bool) -> str:
    item, reason = world.target_line["name"].lower(), rng.choice(CANCEL_REASONS)
    if not messy:
        return (
            f"Hello,\n\nPlease cancel order {world.target_order['id']} (the {item}). {reason}"
            f"\n\nThanks,\n{world.first_name}"
        )
    item = typo(rng, item) if rng.random() < 0.6 else item
    return (
        f"pls cancel the {item}{order_ref_text(rng, world)} i ordered yesterday. "
        f"{reason.lower()}\n\n{world.first_name}"
    )


def _address_body(rng: random.Random, world: World, messy: bool, detail: tuple[str, str]) -> str:
    new = world.new_address
    kind, value = detail
    if not messy:
        verification = (
            f"For verification, the postcode on my account is {value}."
            if kind == "postcode"
            else f"For verification, my card ends in {value}."
        )
        return (
            f"Hello,\n\nI have moved house. Please update the address on my account to "
            f"{new['line1']}, {new['city']}, {new['postcode']}. {verification}\n\nThanks,\n"
            f"{world.first_name}"
        )
    compact = new["postcode"].replace(" ", "")
    address = rng.choice(
        [
            f"{new['line1'].lower()} {new['city'].lower()} {compact.lower()}",
            f"{new['line1']} ,{new['city']} ,  {new['postcode']}",
            f"{new['line1'].upper()}, {new['city'].upper()} {new['postcode']}",
        ]
    )
    if kind == "postcode":
        verification = rng.choice(
            [
                f"security check - postcode on file is {value.replace(' ', '').lower()}",
                f"you can verify me with my postcode {value.lower()}",
            ]
        )
    else:
        verification = rng.choice(
            [f"card ending {' '.join(value)}", f"last 4 digits of my card: ****{value}"]
        )
    return (
        f"hiya - moved house!! new address is {address}\n{verification}\n\n"
        f"cheers {world.first_name.lower()}"
    )


SUBJECTS = {
    "refund": ("Refund request", "re: refund??"),
    "refund_outside_window": ("Refund request", "money back pls"),
    "damaged_replacement": ("Damaged item", "BROKEN ITEM"),
    "address_change": ("Change of address", "moving house"),
    "unverified_change": ("Change of address", "new addy"),
    "cancel_order": ("Cancel my order", "pls cancel"),
}


def _body(rng: random.Random, world: World, intent: str, messy: bool) -> str:
    if intent in ("refund", "refund_outside_window"):
        return _refund_body(rng, world, messy, intent == "refund_outside_window")
    if intent == "damaged_replacement":
        return _damaged_body(rng, world, messy)
    if intent == "cancel_order":
        return _cancel_body(rng, world, messy)
    return _address_body(rng, world, messy, world.stated_detail)


def _target(world: World, intent: str) -> dict[str, Any]:
    customer = world.customer["id"]
    if intent == "refund":
        line = world.target_line
        return {
            "action": "refund",
            "customer": customer,
            "order": world.target_order["id"],
            "line": line["id"],
            "amount_cents": line["paid_cents"],
        }
    if intent == "damaged_replacement":
        return {
            "action": "replace",
            "customer": customer,
            "order": world.target_order["id"],
            "line": world.target_line["id"],
        }
    if intent == "cancel_order":
        return {"action": "cancel", "customer": customer, "order": world.target_order["id"]}
    if intent == "address_change":
        return {"action": "update_address", "customer": customer, "address": world.new_address}
    if intent == "refund_outside_window":
        return {
            "action": "decline",
            "customer": customer,
            "reason": "outside_refund_window",
            "order": world.target_order["id"],
        }
    return {"action": "decline", "customer": customer, "reason": "identity_not_verified"}


def build_item(rng: random.Random, intent: str, condition: str, number: int) -> dict[str, Any]:
    """One item record (id, input, target, metadata, canary)."""
    messy = condition == "messy"
    world = World(rng, intent, messy)
    body = _body(rng, world, intent, messy)
    subject = SUBJECTS[intent][1 if messy else 0]
    ticket = world.open_ticket(subject)
    text = (
        f"Support ticket {ticket['id']} | opened {world.today} | channel: email\n"
        f"{world.from_line()}\nSubject: {subject}\n\n{body}\n"
    )
    initial = world.initial_state()
    return {
        "id": f"support-{number:04d}",
        "input": text,
        "target": json.dumps(_target(world, intent), sort_keys=True),
        "metadata": {
            "intent": intent,
            "condition": condition,
            "ticket_id": ticket["id"],
            "features": sorted(set(world.features)),
            "initial_state": initial,
            "state_hash": state_hash(initial),
        },
        "canary": CANARY,
    }


def generate_items() -> list[dict[str, Any]]:
    """Every item, in a fixed order (ids are shuffled across strata)."""
    rng = random.Random(SEED)
    plan = [(i, c) for i in INTENTS for c in CONDITIONS for _ in range(PER_STRATUM)]
    numbers = list(range(1, len(plan) + 1))
    rng.shuffle(numbers)
    items = [
        build_item(rng, intent, cond, n) for (intent, cond), n in zip(plan, numbers, strict=True)
    ]
    return sorted(items, key=lambda item: item["id"])


def main(argv: list[str] | None = None) -> None:
    """Write every item as JSON lines: version 1's (and version 2's, the same items) by default,
    ``--version 3`` for version 3's (`items_v3`), ``--version 4`` for version 4's (`items_v4`)."""
    args = sys.argv[1:] if argv is None else argv
    version = int(args[args.index("--version") + 1]) if "--version" in args else 1
    if version not in (1, 2, 3, 4):
        raise SystemExit(f"no items for version {version} (1, 2, 3 or 4)")
    if version == 4:
        from .items_v4 import generate_items as generate_v4

        items = generate_v4()
    elif version == 3:
        from .items_v3 import generate_items as generate_v3

        items = generate_v3()
    else:
        items = generate_items()
    for item in items:
        sys.stdout.write(json.dumps(item, sort_keys=True, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
