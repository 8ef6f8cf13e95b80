"""Seeded item generator of the records desk (deterministic: one seed per version, one file).

    cd tasks && ../.venv/bin/python -m records_desk.generate > records_desk/items.jsonl

Version 2's items (``--version 2``) go into the same file, after version 1's dev items: the
runner reads a frozen version's dev items from the suite's item source, so records@1.0.0's
stay there. To freeze records@2.0.0 (every version 1 item retired: freeze moves them out of the
file with version 2's holdout) and put version 1's dev items back, from the project's root::

    grep -v '"id": "records-v2-' tasks/records_desk/items.jsonl > /tmp/v1-dev.jsonl
    (cd tasks && ../.venv/bin/python -m records_desk.generate --version 2) \\
        | cat /tmp/v1-dev.jsonl - > tasks/records_desk/items.jsonl
    evalsuite freeze records --version 2.0.0 $(seq -f "--retire records-%04g" 1 200)
    cat /tmp/v1-dev.jsonl tasks/records_desk/items.jsonl > /tmp/both.jsonl
    mv /tmp/both.jsonl tasks/records_desk/items.jsonl

Five intents x four conditions x `PER_STRATUM` items. Each item is a small world (three
accounts with their contacts, orders, cases and ledger entries, a cache in front of them) and
a request from the operations team. Conditions:

* ``clean``: ids given, tidy formats, the cache (if it holds the record) is fresh;
* ``messy``: no ids, or ids and dates in odd formats, unnormalised addresses, names with
  encoding noise (UTF-8 read as Latin-1), mixed date and amount formats, a look-alike
  contact, an entry posted twice, a ledger that runs over two pages;
* ``stale_cache``: the cache holds an old copy of the record the request turns on, which
  makes the work look done (or decides it wrongly); only a refresh shows the source;
* ``slow_tool``: no id; the table to search is large (``scan_rows``), so a search without an
  indexed filter runs past the search tool's time limit; a narrowed search is fast.

Version 2 (records@2.0.0, issue 29) keeps the worlds and conditions and changes what a request
gives away: version 1 always named the surviving contact of a merge first (and its e-mail
first), so "merge the second-named into the first" passed every merge item without reading
a record, and a request named the very record to change with the value to write, so a policy
that never read anything passed most fix-address and order items too. In version 2 no request
names both records of a merge, nor the record to change together with what to write: it names
a related record (the order of the contact who moved, the case of the delivered order), or the
account and what to look for; which record is named, which e-mail comes first, the wording and
the order of the facts are drawn from the item's seed and recorded in ``metadata["surface"]``;
nothing but ``created_at`` tells the surviving contact of a merge (which record lacks a phone,
has an order, carries a noisy name or an odd date format is drawn at random). Its item ids
are new (``records-v2-0001``: version 1's holdout ids stay in version 1's vault). Version 1's
items are generated exactly as before (`generate_items(1)`).

Its second pass decides everything from the records: a delivery date is the day of the
``delivered`` event in the order's carrier tracking (a request states no date, or a wrong
one); a merge also decides the survivor's address, e-mail and phone (each by its own field of
the two records: ``address_updated_at``, ``email_verified``, ``phone_confirmed_at``), written
to the survivor after the merge; a case is named through its order on an account with ten or
more open cases; and `spread_of` gives each item of a stratum its own shape of answer (town,
rank, choices, delay), so a procedure copied from one item fails on the others.
"""

import itertools
import json
import random
import sys
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from .env import DEFAULT_SCAN_ROWS, PAGE_SIZE, state_hash

SEED = 1414
SEEDS = {1: SEED, 2: 2929}
"""The generator's seed per family version."""
PER_STRATUM = 10
CANARY = "evalsuite-canary records 3f0c2a4e-9b1d-4c57-8e21-6a7d5b90c3e8"
INTENTS = ("fix_address", "merge_duplicates", "update_order_status", "close_case", "reconcile")
CONDITIONS = ("clean", "messy", "stale_cache", "slow_tool")
LARGE = 40_000

FIRST = [
    "Dana", "Priya", "Tom", "Aisha", "Marek", "Sophie", "Callum", "Nadia", "Oliver", "Grace",
    "Ravi", "Hannah", "Lewis", "Maya", "Connor", "Zara", "Ethan", "Isla", "Samuel", "Chloe",
]  # fmt: skip
ACCENTED_FIRST = ["José", "Zoë", "Renée", "Siân", "Björn", "Chloé", "Seán", "Inés"]
LAST = [
    "Whitfield", "Patel", "Okafor", "Nowak", "Harrison", "Campbell", "Ahmed", "Fletcher",
    "Lindqvist", "Brennan", "Moreno", "Sutherland", "Kowalski", "Osei", "Thornton", "Gallagher",
]  # fmt: skip
COMPANIES = [
    "Harbor Logistics", "Northgate Print", "Fenwick Joinery", "Ashdown Dental", "Kestrel Foods",
    "Marlow Textiles", "Brightwater Hotels", "Copperfield Tools", "Elmstead Farms",
    "Larkspur Florists", "Oakridge Builders", "Quayside Coffee", "Redfern Optics",
    "Silverbirch Care", "Tidewell Marine", "Westbury Cycles",
]  # fmt: skip
CITIES = [
    ("Leeds", "LS"), ("Bristol", "BS"), ("York", "YO"), ("Leicester", "LE"), ("Nottingham", "NG"),
    ("Cardiff", "CF"), ("Norwich", "NR"), ("Oxford", "OX"), ("Exeter", "EX"), ("Derby", "DE"),
    ("Newport", "NP"), ("Durham", "DH"),
]  # fmt: skip
STREET_NAMES = ["Mill", "Church", "Station", "Victoria", "Park", "Orchard", "Castle", "Queen"]
STREET_TYPES = {"Street": "St", "Road": "Rd", "Avenue": "Ave", "Lane": "Ln", "Close": "Cl"}
SUBJECTS = ["parcel not received", "item arrived damaged", "wrong item sent", "late delivery"]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def mojibake(text: str) -> str:
    """UTF-8 bytes read as Latin-1: ``José`` -> ``JosÃ©`` (encoding noise)."""
    return text.encode("utf-8").decode("latin-1")


def money(value: Decimal) -> str:
    return f"{value:.2f}"


class World:
    """The records of one item, built with one `random.Random`."""

    def __init__(self, rng: random.Random, number: int) -> None:
        self.rng = rng
        self.today = date(2026, 11, 1) + timedelta(days=rng.randrange(0, 29))
        self.source: dict[str, dict[str, dict[str, Any]]] = {
            kind: {} for kind in ("accounts", "contacts", "orders", "cases", "ledger")
        }
        self.cache: dict[str, dict[str, Any]] = {}
        self.scan_rows = {kind: DEFAULT_SCAN_ROWS for kind in self.source}
        self.scan_rows["accounts"] = 300
        self._ids: set[str] = set()
        self._names: set[str] = set()
        companies = rng.sample(COMPANIES, 3)
        self.accounts = [self.add_account(c) for c in companies]
        self.account = self.accounts[0]
        for account in self.accounts:
            for _ in range(3 if account is self.account else 1):
                self.add_contact(account)
            for _ in range(3 if account is self.account else 1):
                self.add_order(account, self.rng.choice(["processing", "shipped", "delivered"]))
            for _ in range(2 if account is self.account else 1):
                self.add_case(account)
            for _ in range(2):
                self.add_entry(account, "invoice")

    # ---- builders ----------------------------------------------------------------------------
    def new_id(self, prefix: str, low: int, high: int) -> str:
        while True:
            candidate = f"{prefix}-{self.rng.randrange(low, high)}"
            if candidate not in self._ids:
                self._ids.add(candidate)
                return candidate

    def person(self, accented: bool = False) -> str:
        while True:
            first = self.rng.choice(ACCENTED_FIRST if accented else FIRST)
            name = f"{first} {self.rng.choice(LAST)}"
            if name not in self._names:
                self._names.add(name)
                return name

    def address(self) -> dict[str, str]:
        city, area = self.rng.choice(CITIES)
        kind = self.rng.choice(list(STREET_TYPES))
        line1 = f"{self.rng.randrange(1, 190)} {self.rng.choice(STREET_NAMES)} {kind}"
        letters = "ABDEFGHJLNPQRSTUWXYZ"
        inward = f"{self.rng.randrange(1, 10)}{self.rng.choice(letters)}{self.rng.choice(letters)}"
        return {
            "line1": line1,
            "city": city,
            "postcode": f"{area}{self.rng.randrange(1, 20)} {inward}",
        }

    def day(self, back_from: int, back_to: int) -> str:
        return (self.today - timedelta(days=self.rng.randrange(back_from, back_to))).isoformat()

    def add_account(self, company: str) -> dict[str, Any]:
        account = {
            "id": self.new_id("A", 1000, 9999),
            "name": f"{company} Ltd",
            "balance": money(Decimal(self.rng.randrange(0, 90000)) / 100),
            "status": "active",
        }
        self.source["accounts"][account["id"]] = account
        return account

    def add_contact(
        self, account: dict[str, Any], name: str | None = None, created: str | None = None
    ) -> dict[str, Any]:
        name = name or self.person()
        user = name.split()[0].lower().encode("ascii", "ignore").decode() or "contact"
        domain = account["name"].split()[0].lower() + ".example.com"
        contact = {
            "id": self.new_id("P", 10000, 99999),
            "account_id": account["id"],
            "name": name,
            "email": f"{user}.{self.rng.randrange(10, 99)}@{domain}",
            "phone": f"07{self.rng.randrange(100, 999)} {self.rng.randrange(100000, 999999)}",
            "address": self.address(),
            "created_at": created or self.day(200, 1500),
            "status": "active",
            "merged_into": None,
        }
        self.source["contacts"][contact["id"]] = contact
        return contact

    def contacts_of(self, account: dict[str, Any]) -> list[dict[str, Any]]:
        return [c for c in self.source["contacts"].values() if c["account_id"] == account["id"]]

    def add_order(self, account: dict[str, Any], status: str) -> dict[str, Any]:
        placed = self.day(5, 60)
        while any(
            o["placed_at"] == placed and o["account_id"] == account["id"]
            for o in self.source["orders"].values()
        ):
            placed = self.day(5, 60)
        delivered = None
        if status in ("delivered", "refunded", "replaced"):
            delivered = (date.fromisoformat(placed) + timedelta(days=3)).isoformat()
        order = {
            "id": self.new_id("O", 100000, 999999),
            "account_id": account["id"],
            "contact_id": self.rng.choice(self.contacts_of(account))["id"],
            "placed_at": placed,
            "status": status,
            "delivered_on": delivered,
            "total": money(Decimal(self.rng.randrange(1500, 90000)) / 100),
        }
        self.source["orders"][order["id"]] = order
        return order

    def orders_of(self, account: dict[str, Any]) -> list[dict[str, Any]]:
        return [o for o in self.source["orders"].values() if o["account_id"] == account["id"]]

    def add_case(self, account: dict[str, Any], order: dict[str, Any] | None = None) -> dict:
        order = order or self.rng.choice(self.orders_of(account))
        used = {
            c["subject"] for c in self.source["cases"].values() if c["account_id"] == account["id"]
        }
        subject = next((s for s in SUBJECTS if s not in used), SUBJECTS[0])
        case = {
            "id": self.new_id("K", 5000, 9999),
            "account_id": account["id"],
            "contact_id": order["contact_id"],
            "order_id": order["id"],
            "subject": subject,
            "status": "open",
            "resolution": None,
        }
        self.source["cases"][case["id"]] = case
        return case

    def add_entry(self, account: dict[str, Any], kind: str, amount: str | None = None) -> dict:
        value = amount or money(Decimal(self.rng.randrange(2000, 250000)) / 100)
        prefix = "INV" if kind == "invoice" else "PAY"
        entry = {
            "id": self.new_id("E", 10000, 99999),
            "account_id": account["id"],
            "account_name": account["name"],
            "kind": kind,
            "amount": value,
            "reference": f"{prefix}-{self.rng.randrange(100000, 999999)}",
            "posted_at": self.day(1, 120),
        }
        self.source["ledger"][entry["id"]] = entry
        return entry

    def cache_fresh(self, kind: str, record: dict[str, Any]) -> None:
        self.cache[f"{kind}/{record['id']}"] = {
            "record": json.loads(json.dumps(record)),
            "cached_at": f"{self.today.isoformat()}T08:00",
        }

    def cache_stale(self, kind: str, record: dict[str, Any], changes: dict[str, Any]) -> None:
        old = json.loads(json.dumps(record))
        for key, value in changes.items():
            if key in ("line1", "city", "postcode"):
                old["address"][key] = value
            else:
                old[key] = value
        when = self.today - timedelta(days=self.rng.randrange(20, 90))
        self.cache[f"{kind}/{record['id']}"] = {
            "record": old,
            "cached_at": f"{when.isoformat()}T{self.rng.randrange(8, 18):02d}:00",
        }

    def initial_state(self) -> dict[str, Any]:
        return {
            "today": self.today.isoformat(),
            "source": self.source,
            "cache": self.cache,
            "scan_rows": self.scan_rows,
        }


# ---- messy formats ------------------------------------------------------------------------------
def messy_address(rng: random.Random, address: dict[str, str]) -> str:
    number, *street = address["line1"].split()
    kind = street[-1]
    words = [*street[:-1], STREET_TYPES[kind] + rng.choice(["", "."])]
    line1 = f"{number} {' '.join(words)}"
    postcode = address["postcode"].replace(" ", "")
    style = rng.randrange(3)
    if style == 0:
        parts = [line1.lower(), address["city"].lower(), postcode.lower()]
    elif style == 1:
        parts = [line1.upper(), address["city"].upper(), postcode]
    else:
        parts = [line1.lower(), address["city"], postcode.lower()]
    return " ,  ".join(parts)


def messy_email(rng: random.Random, email: str) -> str:
    user, domain = email.split("@")
    return f"  {user.capitalize()}@{domain.upper() if rng.random() < 0.5 else domain} "


def messy_date(rng: random.Random, iso: str) -> str:
    day = date.fromisoformat(iso)
    style = rng.randrange(3)
    if style == 0:
        return day.strftime("%d/%m/%Y")
    if style == 1:
        return f"{day.day} {MONTHS[day.month - 1]} {day.year}"
    return f"{MONTHS[day.month - 1]} {day.day}, {day.year}"


def messy_ref(rng: random.Random, record_id: str) -> str:
    prefix, digits = record_id.split("-")
    return rng.choice(
        [f"#{prefix.lower()}-{digits}", f"{prefix} {digits}", f"no. {digits}", f"{prefix}{digits}"]
    )


def messy_amount(rng: random.Random, amount: str) -> str:
    value = Decimal(amount)
    style = rng.randrange(4)
    if style == 0:
        return f"£{value:,.2f}"
    if style == 1:
        return f"{value.normalize():f} GBP"
    if style == 2:
        return f"GBP {value:,.2f}"
    return f" {value:.2f} "


def header(world: World, number: int) -> str:
    return (
        f"Records desk request R-{number:05d} | opened {world.today.isoformat()}\n"
        "From: operations team\n\n"
    )


# ---- intents ------------------------------------------------------------------------------------
def fix_address(world: World, condition: str) -> tuple[str, list[dict[str, Any]]]:
    rng = world.rng
    contact = world.contacts_of(world.account)[0]
    new = world.address()
    while new["city"] == contact["address"]["city"]:
        new = world.address()
    ops = [{"op": "update", "kind": "contacts", "id": contact["id"], "fields": new}]
    plain = f"{new['line1']}, {new['city']}, {new['postcode']}"
    who = f"{contact['name']} <{contact['email']}>"
    if condition == "clean":
        if rng.random() < 0.5:
            world.cache_fresh("contacts", contact)
        body = (
            f"Contact {contact['id']} ({who}) of account {world.account['id']} has moved. "
            f"New address: {plain}. Please update the record."
        )
    elif condition == "messy":
        # a look-alike: same name, another account (a search by name finds both)
        world.add_contact(world.accounts[1], name=contact["name"])
        body = (
            f"one of the contacts at {world.account['name'].upper()} sent this: "
            f"{contact['name']} ,{messy_email(rng, contact['email'])}\n"
            f"new addr = {messy_address(rng, new)}\nplease fix the record"
        )
    elif condition == "stale_cache":
        world.cache_stale("contacts", contact, dict(new))
        body = (
            f"Contact {contact['id']} ({who}) of account {world.account['id']} has moved. "
            f"New address: {plain}. Please update the record."
        )
    else:
        world.scan_rows["contacts"] = LARGE
        body = (
            f"{who} of account {world.account['name']} has moved (no contact id to hand). "
            f"New address: {plain}. Please update their contact record."
        )
    return body, ops


def merge_duplicates(world: World, condition: str) -> tuple[str, list[dict[str, Any]]]:
    rng = world.rng
    account = world.account
    name = world.person(accented=condition == "messy" and rng.random() < 0.6)
    older_day = world.day(700, 1400)
    newer_day = world.day(30, 300)
    while int(newer_day[8:]) > 19:  # day 01-19: its dd/mm/yyyy form sorts before "20.."
        newer_day = world.day(30, 300)
    survivor = world.add_contact(account, name=name, created=older_day)
    duplicate = world.add_contact(account, name=name, created=newer_day)
    survivor["phone"] = ""
    world.add_order(account, "processing")["contact_id"] = duplicate["id"]
    ops = [{"op": "merge", "survivor": survivor["id"], "duplicate": duplicate["id"]}]
    ids = f"{survivor['id']} and {duplicate['id']}"
    if condition == "clean":
        body = (
            f"Account {account['id']} has two contact records for {name}: {ids}. "
            "Please merge them per the policy."
        )
    elif condition == "messy":
        # day 01-19 in dd/mm/yyyy: the string sorts before the survivor's ISO date
        duplicate["created_at"] = date.fromisoformat(newer_day).strftime("%d/%m/%Y")
        duplicate["name"] = mojibake(name) if name != mojibake(name) else f"  {name.upper()} "
        body = (
            f"{name} seems to be on account {account['id']} twice "
            f"({messy_email(rng, survivor['email'])}/{messy_email(rng, duplicate['email'])}). "
            "Merge the duplicate please."
        )
    elif condition == "stale_cache":
        world.cache_stale(
            "contacts", duplicate, {"status": "merged", "merged_into": survivor["id"]}
        )
        body = (
            f"Account {account['id']} has two contact records for {name}: {ids}. "
            "Please merge them per the policy (a merge was attempted before; check it held)."
        )
    else:
        world.scan_rows["contacts"] = LARGE
        body = (
            f"{name} has two contact records on account {account['id']} (ids not to hand). "
            "Please merge them per the policy."
        )
    return body, ops


def update_order_status(world: World, condition: str) -> tuple[str, list[dict[str, Any]]]:
    rng = world.rng
    order = world.add_order(world.account, "shipped")
    delivered = date.fromisoformat(order["placed_at"]) + timedelta(days=rng.randrange(2, 5))
    on = delivered.isoformat()
    fields = {"status": "delivered", "delivered_on": on}
    ops = [{"op": "update", "kind": "orders", "id": order["id"], "fields": fields}]
    if condition == "clean":
        if rng.random() < 0.5:
            world.cache_fresh("orders", order)
        body = (
            f"The carrier confirms that order {order['id']} was delivered on {on}. "
            "Please update the order."
        )
    elif condition == "messy":
        body = (
            f"carrier says order {messy_ref(rng, order['id'])} got delivered "
            f"{messy_date(rng, on)}, can you update it"
        )
    elif condition == "stale_cache":
        world.cache_stale("orders", order, fields)
        body = (
            f"The carrier confirms that order {order['id']} was delivered on {on}. "
            "Please update the order."
        )
    else:
        world.scan_rows["orders"] = LARGE
        body = (
            f"The carrier confirms that the order placed on {order['placed_at']} by account "
            f"{world.account['id']} was delivered on {on} (no order number to hand). "
            "Please update the order."
        )
    return body, ops


def close_case(world: World, condition: str) -> tuple[str, list[dict[str, Any]]]:
    rng = world.rng
    status = rng.choice(["delivered", "refunded", "cancelled", "replaced"])
    order = world.add_order(world.account, status)
    case = world.add_case(world.account, order)
    ops = [{"op": "close", "case": case["id"], "resolution": status}]
    if condition == "clean":
        if rng.random() < 0.5:
            world.cache_fresh("orders", order)
        body = (
            f"Case {case['id']} (order {order['id']}) is finished. Close it with the right "
            "resolution per the policy."
        )
    elif condition == "messy":
        order["status"] = rng.choice(
            [f"{status.capitalize()} ", status.upper(), f"{status} (per carrier)", f" {status}"]
        )
        body = (
            f"case {messy_ref(rng, case['id'])} (re order {messy_ref(rng, order['id'])}) can be "
            "closed now, right resolution pls"
        )
    elif condition == "stale_cache":
        wrong = rng.choice(
            [s for s in ("delivered", "refunded", "cancelled", "replaced") if s != status]
        )
        world.cache_stale("orders", order, {"status": wrong})
        body = (
            f"Case {case['id']} (order {order['id']}) is finished. Close it with the right "
            "resolution per the policy."
        )
    else:
        world.scan_rows["cases"] = LARGE
        body = (
            f"The open case on account {world.account['id']} about '{case['subject']}' is "
            "finished (no case number to hand). Close it with the right resolution per the "
            "policy."
        )
    return body, ops


def reconcile(world: World, condition: str) -> tuple[str, list[dict[str, Any]]]:
    rng = world.rng
    account = world.account
    for entry in [e for e in world.source["ledger"].values() if e["account_id"] == account["id"]]:
        del world.source["ledger"][entry["id"]]
    count = (
        rng.randrange(PAGE_SIZE + 3, 2 * PAGE_SIZE)
        if condition == "messy"
        else (rng.randrange(4, PAGE_SIZE - 1))
    )
    entries = [
        world.add_entry(account, "invoice" if i % 3 != 2 else "payment") for i in range(count)
    ]
    if condition == "messy":
        for entry in entries:
            entry["amount"] = messy_amount(rng, entry["amount"])
        twin = rng.choice(entries[: PAGE_SIZE - 1])
        copy = world.add_entry(account, twin["kind"], twin["amount"])
        copy["reference"], copy["posted_at"] = twin["reference"], twin["posted_at"]
        entries.append(copy)
    seen: set[str] = set()
    total = Decimal(0)
    for entry in sorted(world.source["ledger"].values(), key=lambda e: e["id"]):
        if entry["account_id"] != account["id"] or entry["reference"] in seen:
            continue
        seen.add(entry["reference"])
        value = Decimal(
            entry["amount"].replace("£", "").replace("GBP", "").replace(",", "").strip()
        )
        total += value if entry["kind"] == "invoice" else -value
    right = money(total)
    wrong = money(total + Decimal(rng.choice([-1, 1]) * rng.randrange(500, 40000)) / 100)
    account["balance"] = wrong
    ops = [{"op": "update", "kind": "accounts", "id": account["id"], "fields": {"balance": right}}]
    ask = "Please reconcile its balance against the ledger."
    if condition == "clean":
        if rng.random() < 0.5:
            world.cache_fresh("accounts", account)
        body = f"Account {account['id']} ({account['name']}) looks off. {ask}"
    elif condition == "messy":
        body = f"acct {messy_ref(rng, account['id'])} balance is wrong?? {ask}"
    elif condition == "stale_cache":
        world.cache_stale("accounts", account, {"balance": right})
        body = f"Account {account['id']} ({account['name']}) looks off. {ask}"
    else:
        world.scan_rows["ledger"] = LARGE
        body = f"The account of {account['name']} looks off (account number not to hand). {ask}"
    return body, ops


BUILDERS = {
    "fix_address": fix_address,
    "merge_duplicates": merge_duplicates,
    "update_order_status": update_order_status,
    "close_case": close_case,
    "reconcile": reconcile,
}


# ---- version 2: requests that give nothing away by position, order, wording or length ----------
EVENT_HOURS = {
    "label created": (8, 12),
    "collected": (12, 18),
    "in transit": (6, 22),
    "delivery attempted": (9, 18),
    "out for delivery": (6, 9),
    "delivered": (10, 19),
}
MERGE_CHOICES = ("address", "email", "phone")
"""What a version 2 merge decides besides its direction, each by its own field of the two
records: the newer address (``address_updated_at``), the verified e-mail (``email_verified``),
the phone confirmed last (``phone_confirmed_at``)."""


class WorldV2(World):
    """Version 2's world: a case's subject is drawn, not the first one unused; every contact
    carries the dates and flags a merge decides by, every order its carrier tracking; `spread`
    is what the item's stratum assigns it (`spread_of`: the new town, the target's rank, the
    merge's choices), so no two items of a stratum share the shape of their answer."""

    def __init__(self, rng: random.Random, number: int, spread: dict[str, Any]) -> None:
        self.spread = spread
        super().__init__(rng, number)

    def add_contact(
        self, account: dict[str, Any], name: str | None = None, created: str | None = None
    ) -> dict[str, Any]:
        contact = super().add_contact(account, name, created)
        contact["address_updated_at"] = self.day(10, 900)
        contact["email_verified"] = self.rng.random() < 0.5
        contact["phone_confirmed_at"] = self.day(10, 900)
        return contact

    def add_order(self, account: dict[str, Any], status: str) -> dict[str, Any]:
        order = super().add_order(account, status)
        placed = date.fromisoformat(order["placed_at"])
        delivered = None
        if order["delivered_on"]:
            late = placed + timedelta(days=self.rng.randrange(2, 16))
            delivered = min(late, self.today - timedelta(days=1))
            order["delivered_on"] = delivered.isoformat()
        order["tracking"] = self.tracking(placed, delivered, shipped=status != "processing")
        return order

    def tracking(
        self, placed: date, delivered: date | None, *, shipped: bool = True
    ) -> list[dict[str, str]]:
        """The carrier's scan events of an order, oldest first (timestamps, not dates)."""
        days = [("label created", placed)]
        if shipped:
            days += [("collected", placed + timedelta(days=1))]
            days += [("in transit", placed + timedelta(days=2))]
        if delivered is not None:
            if (delivered - placed).days > 3 and self.rng.random() < 0.4:
                days.append(("delivery attempted", delivered - timedelta(days=1)))
            days += [("out for delivery", delivered), ("delivered", delivered)]
        events = []
        for event, day in days:
            if day > self.today:
                break
            low, high = EVENT_HOURS[event]
            hour, minute = self.rng.randrange(low, high), self.rng.randrange(60)
            events.append({"at": f"{day.isoformat()}T{hour:02d}:{minute:02d}", "event": event})
        return events

    def add_case(
        self, account: dict[str, Any], order: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        order = order or self.rng.choice(self.orders_of(account))
        used = {
            c["subject"] for c in self.source["cases"].values() if c["account_id"] == account["id"]
        }
        free = [s for s in SUBJECTS if s not in used] or SUBJECTS
        case = {
            "id": self.new_id("K", 5000, 9999),
            "account_id": account["id"],
            "contact_id": order["contact_id"],
            "order_id": order["id"],
            "subject": self.rng.choice(free),
            "status": "open",
            "resolution": None,
        }
        self.source["cases"][case["id"]] = case
        return case

    def swap_ids(self, kind: str, one: str, other: str) -> None:
        """Swap the ids of two records of `kind` (and every reference to them)."""
        table = self.source[kind]
        a, b = table.pop(one), table.pop(other)
        a["id"], b["id"] = other, one
        table[other], table[one] = a, b
        field = {"contacts": "contact_id", "cases": "case_id"}[kind]
        for records in self.source.values():
            for record in records.values():
                if record.get(field) == one:
                    record[field] = other
                elif record.get(field) == other:
                    record[field] = one


def spread_of(version: int) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Per stratum, what each of its items is assigned (version 2): a distinct new town (a
    fix_address item), a distinct rank of the target among the account's open cases (a
    close_case item), a distinct combination of a merge's four binary choices (whether the
    survivor has the lower id; whether it takes the duplicate's address, e-mail, phone), and
    which of a merge's two records the request names (each on half the stratum's items), a
    distinct number of days between an order's placing and its delivery (2 to 21). A
    procedure copied from one item of a stratum (the audit's structural copies of a reference
    agent's episodes) then writes another town, picks another case, or makes another choice on
    every other item of the stratum; and each merge choice is balanced within the stratum."""
    rng = random.Random(f"{SEEDS[version]}:spread")
    combos = [
        dict(zip(("lower_survives", *MERGE_CHOICES), bits, strict=True))
        for bits in itertools.product((False, True), repeat=4)
    ]
    spread = {}
    for intent in INTENTS:
        for condition in CONDITIONS:
            cities = rng.sample(CITIES, PER_STRATUM)
            ranks = rng.sample(range(PER_STRATUM), PER_STRATUM)
            merges = rng.sample(combos, PER_STRATUM)
            half = ["survivor", "duplicate"] * (PER_STRATUM // 2)
            named = rng.sample(half, len(half))
            delays = rng.sample(range(2, 22), PER_STRATUM)
            spread[intent, condition] = [
                {
                    "city": cities[k],
                    "rank": ranks[k],
                    "merge": merges[k],
                    "named": named[k],
                    "delay": delays[k],
                }
                for k in range(PER_STRATUM)
            ]
    return spread


def _say(rng: random.Random, *templates: str, **facts: str) -> tuple[str, int]:
    """One of `templates`, drawn, filled in with `facts`; and which one (recorded)."""
    index = rng.randrange(len(templates))
    return templates[index].format(**facts), index


def _order_of(world: World, contact: dict[str, Any]) -> dict[str, Any]:
    """A new order of `contact` (a record a request can name instead of the contact)."""
    order = world.add_order(world.account, world.rng.choice(["processing", "shipped", "delivered"]))
    order["contact_id"] = contact["id"]
    return order


def _new_address(world: WorldV2, old: dict[str, str]) -> dict[str, str]:
    """A new address in the town the stratum assigns (distinct within the stratum)."""
    city, area = world.spread["city"]
    new = world.address()
    new["city"] = city
    new["postcode"] = f"{area}{world.rng.randrange(1, 20)} {new['postcode'].split()[1]}"
    if old["city"] == city:  # the contact lived elsewhere before
        other, other_area = world.rng.choice([c for c in CITIES if c[0] != city])
        old["city"] = other
        old["postcode"] = f"{other_area}{world.rng.randrange(1, 20)} {old['postcode'].split()[1]}"
    return new


def fix_address_v2(
    world: WorldV2, condition: str
) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
    """The contact is named through another record (its order, its case) or by e-mail and
    name: the request never names the contact's id, and any contact of the account may be it.
    The new town is the one the stratum assigns the item (`spread_of`)."""
    rng = world.rng
    contact = rng.choice(world.contacts_of(world.account))
    new = _new_address(world, contact["address"])
    ops = [{"op": "update", "kind": "contacts", "id": contact["id"], "fields": new}]
    plain = f"{new['line1']}, {new['city']}, {new['postcode']}"
    who = f"{contact['name']} <{contact['email']}>"
    account = world.account
    by = rng.choice(["order", "case", "email"]) if condition != "slow_tool" else "email"
    order = _order_of(world, contact) if by in ("order", "case") else None
    case = world.add_case(account, order) if by == "case" and order else None
    if condition == "messy":
        # a look-alike: same name, another account (a search by name finds both)
        world.add_contact(world.accounts[1], name=contact["name"])
        if order is None:
            ref = f"{contact['name']} ,{messy_email(rng, contact['email'])}"
        elif case is None:
            ref = f"the customer on order {messy_ref(rng, order['id'])}"
        else:
            ref = f"the customer behind case {messy_ref(rng, case['id'])}"
        body, template = _say(
            rng,
            "one of the contacts at {company} sent this: {ref}\nnew addr = {addr}\n"
            "please fix the record",
            "new addr = {addr}\nfor {ref} ({company})\npls fix their contact record",
            company=account["name"].upper(),
            ref=ref,
            addr=messy_address(rng, new),
        )
        return body, ops, {"template": template, "named": by}
    if condition == "stale_cache":
        world.cache_stale("contacts", contact, dict(new))
    elif condition == "clean" and rng.random() < 0.5:
        world.cache_fresh("contacts", contact)
    if condition == "slow_tool":
        world.scan_rows["contacts"] = LARGE
        ref = f"{who} of account {account['name']} (no contact id to hand)"
    elif order is None:
        ref = f"{who} of account {account['id']}"
    elif case is None:
        ref = f"The customer on order {order['id']} (account {account['id']})"
    else:
        ref = f"The customer who raised case {case['id']} (account {account['id']})"
    body, template = _say(
        rng,
        "{ref} has moved. New address: {addr}. Please update their contact record.",
        "New address for a contact: {addr}. {ref} has moved; please update the contact record.",
        "Please update a contact's address. {ref} has moved to {addr}.",
        ref=ref,
        addr=plain,
    )
    return body, ops, {"template": template, "named": by}


def _merge_choices(
    world: WorldV2, survivor: dict[str, Any], duplicate: dict[str, Any], choice: dict[str, bool]
) -> dict[str, str]:
    """Set the fields a merge's three choices turn on (the record whose value is kept has the
    later date, or the verified flag); the duplicate's values the survivor is to take."""
    for what, key in (("address", "address_updated_at"), ("phone", "phone_confirmed_at")):
        days = sorted(world.day(10, 700) for _ in range(2))
        while days[0] == days[1]:
            days = sorted(world.day(10, 700) for _ in range(2))
        kept, other = (duplicate, survivor) if choice[what] else (survivor, duplicate)
        kept[key], other[key] = days[1], days[0]
    duplicate["email_verified"], survivor["email_verified"] = choice["email"], not choice["email"]
    fields: dict[str, str] = {}
    if choice["address"]:
        fields.update(duplicate["address"])
    if choice["email"]:
        fields["email"] = duplicate["email"]
    if choice["phone"]:
        fields["phone"] = duplicate["phone"]
    return fields


def merge_duplicates_v2(
    world: WorldV2, condition: str
) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
    """At most one of the two records is named, and which one is drawn; only ``created_at``
    tells the survivor (the extra order, a noisy name and the odd date formats fall on either
    record). The survivor then keeps, of the two records', the address updated last, the
    verified e-mail and the phone confirmed last, each written to it after the merge when the
    duplicate's is the one to keep: which ones, and whether the survivor has the lower id, the
    stratum assigns (`spread_of`: four binary choices, a distinct combination per item)."""
    rng = world.rng
    account = world.account
    choice = world.spread["merge"]
    name = world.person(accented=condition == "messy" and rng.random() < 0.6)
    older_day = world.day(700, 1400)
    newer_day = world.day(30, 300)
    survivor = world.add_contact(account, name=name, created=older_day)
    duplicate = world.add_contact(account, name=name, created=newer_day)
    if (survivor["id"] < duplicate["id"]) != choice["lower_survives"]:
        world.swap_ids("contacts", survivor["id"], duplicate["id"])
    pair = {"survivor": survivor, "duplicate": duplicate}
    world.add_order(account, "processing")["contact_id"] = rng.choice([survivor, duplicate])["id"]
    fields = _merge_choices(world, survivor, duplicate, choice)
    ops: list[dict[str, Any]] = [
        {"op": "merge", "survivor": survivor["id"], "duplicate": duplicate["id"]}
    ]
    if fields:
        ops.append({"op": "update", "kind": "contacts", "id": survivor["id"], "fields": fields})
    takes = [what for what in MERGE_CHOICES if choice[what]]
    named = world.spread["named"]
    one = pair[named]["id"]
    surface: dict[str, Any] = {"named": named, "takes": takes}
    if condition == "messy":
        for record in (survivor, duplicate):  # every date in odd formats: none marks a record
            for key in ("created_at", "address_updated_at", "phone_confirmed_at"):
                record[key] = messy_date(rng, record[key])
        noisy = rng.choice([survivor, duplicate])
        noisy["name"] = mojibake(name) if name != mojibake(name) else f"  {name.upper()} "
        first, second = (survivor, duplicate) if named == "survivor" else (duplicate, survivor)
        emails = f"{messy_email(rng, first['email'])}/{messy_email(rng, second['email'])}"
        body, template = _say(
            rng,
            "{name} seems to be on account {account} twice ({emails}). Merge the duplicate please.",
            "two records for {name} on acct {account}?? ({emails}) pls merge",
            name=name,
            account=account["id"],
            emails=emails,
        )
        return body, ops, {**surface, "template": template, "first_email": named}
    if condition == "stale_cache":
        # a merge was tried before: one of the two cached copies says it held (either way)
        if rng.random() < 0.5:
            world.cache_stale(
                "contacts", duplicate, {"status": "merged", "merged_into": survivor["id"]}
            )
        else:
            world.cache_stale(
                "contacts", survivor, {"status": "merged", "merged_into": duplicate["id"]}
            )
    if condition == "slow_tool":
        world.scan_rows["contacts"] = LARGE
        body, template = _say(
            rng,
            "{name} has two contact records on account {account} (ids not to hand). Please "
            "merge them per the policy.",
            "Please merge the two contact records of {name} on account {account} per the "
            "policy (no contact ids to hand).",
            name=name,
            account=account["id"],
        )
        return body, ops, {**surface, "template": template, "named": None}
    note = " (a merge was attempted before; check it held)" if condition == "stale_cache" else ""
    body, template = _say(
        rng,
        "Account {account} has two contact records for {name}; one of them is {one}. Please "
        "merge them per the policy{note}.",
        "{one} ({name}) is on account {account} twice. Please merge the duplicate records per "
        "the policy{note}.",
        "{name} has two contact records on account {account}, {one} among them. Please merge "
        "them per the policy{note}.",
        name=name,
        account=account["id"],
        one=one,
        note=note,
    )
    return body, ops, {**surface, "template": template}


def update_order_status_v2(
    world: WorldV2, condition: str
) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
    """The order is named through its case, or by the account and the day it was placed; the
    request states no delivery date, or the customer's recollection or the carrier's estimate,
    never the date delivered: that is only in the order's tracking (its ``delivered`` event)."""
    rng = world.rng
    account = world.account
    order = world.add_order(account, "shipped")
    taken = {o["placed_at"] for o in world.orders_of(account) if o is not order}
    while True:  # delivered 1-19 days ago, the stratum's delay (2-21 days) after it was placed
        delivered = world.today - timedelta(days=rng.randrange(1, 20))
        placed = delivered - timedelta(days=world.spread["delay"])
        if not {placed.isoformat(), delivered.isoformat()} & taken:
            break
    order["placed_at"] = placed.isoformat()
    order["tracking"] = world.tracking(placed, delivered)
    on = delivered.isoformat()
    fields = {"status": "delivered", "delivered_on": on}
    ops = [{"op": "update", "kind": "orders", "id": order["id"], "fields": fields}]
    wrong = delivered + timedelta(days=rng.choice([-3, -2, -1, 1, 2, 3]))
    if wrong <= placed or wrong > world.today:
        wrong = delivered + timedelta(days=1) if wrong <= placed else delivered - timedelta(days=1)
    said = rng.choice(["none", "think", "estimate"])
    by = rng.choice(["case", "placed"]) if condition != "slow_tool" else "placed"
    case = world.add_case(account, order) if by == "case" else None
    if condition == "stale_cache":  # an earlier edit marked it delivered on the wrong day
        old = {"status": "delivered", "delivered_on": wrong.isoformat()}
        world.cache_stale("orders", order, {**old, "tracking": order["tracking"][:-2]})
    elif condition == "clean" and rng.random() < 0.5:
        world.cache_fresh("orders", order)
    surface = {"named": by, "said": said}
    if condition == "messy":
        if case is not None:
            ref = f"the parcel for case {messy_ref(rng, case['id'])}"
        else:
            ref = (
                f"acct {messy_ref(rng, account['id'])}'s order from "
                f"{messy_date(rng, order['placed_at'])}"
            )
        note = {
            "none": "",
            "think": f" (cust thinks {messy_date(rng, wrong.isoformat())})",
            "estimate": f" (carrier eta was {messy_date(rng, wrong.isoformat())})",
        }[said]
        body, template = _say(
            rng,
            "customer says {ref} got delivered{note}, can you update the order from the tracking",
            "delivered apparently{note}: {ref}. pls update the order per the tracking",
            ref=ref,
            note=note,
        )
        return body, ops, {**surface, "template": template}
    if condition == "slow_tool":
        world.scan_rows["orders"] = LARGE
    if case is not None:
        ref = f"the order of case {case['id']}"
    else:
        ref = f"the order placed on {order['placed_at']} by account {account['id']}"
    note = {
        "none": "",
        "think": f" (they think it came on {wrong.isoformat()})",
        "estimate": f" (the carrier's estimate was {wrong.isoformat()})",
    }[said]
    tail = " (no order number to hand)" if condition == "slow_tool" else ""
    body, template = _say(
        rng,
        "The customer says {ref} was delivered{note}{tail}. Please update the order from the "
        "carrier's tracking on it.",
        "Delivered, the customer says{note}: {ref}{tail}. Please update the order per the "
        "carrier's tracking.",
        ref=ref,
        note=note,
        tail=tail,
    )
    return body, ops, {**surface, "template": template}


def close_case_v2(
    world: WorldV2, condition: str
) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
    """The case is named through its order (never by its id) on a busy account: 10 to 12 open
    cases, the target's rank among them (by id, as a search lists them) the one the stratum
    assigns (`spread_of`); finding it takes the case whose ``order_id`` is the order."""
    rng = world.rng
    account = world.account
    status = rng.choice(["delivered", "refunded", "cancelled", "replaced"])
    others = world.orders_of(account)
    order = world.add_order(account, status)
    for _ in range(PER_STRATUM + rng.randrange(0, 3) - 3):
        world.add_case(account, rng.choice(others))
    case = world.add_case(account, order)
    open_ids = sorted(
        c["id"]
        for c in world.source["cases"].values()
        if c["account_id"] == account["id"] and c["status"] == "open"
    )
    ranked = open_ids[world.spread["rank"]]
    if ranked != case["id"]:
        world.swap_ids("cases", case["id"], ranked)
    ops = [{"op": "close", "case": case["id"], "resolution": status}]
    if condition == "messy":
        order["status"] = rng.choice(
            [f"{status.capitalize()} ", status.upper(), f"{status} (per carrier)", f" {status}"]
        )
        body, template = _say(
            rng,
            "the case re order {ref} can be closed now, right resolution pls",
            "pls close the case about order {ref} with the right resolution, its done",
            ref=messy_ref(rng, order["id"]),
        )
        return body, ops, {"template": template, "named": "order"}
    if condition == "clean" and rng.random() < 0.5:
        world.cache_fresh("orders", order)
    elif condition == "stale_cache":
        wrong = rng.choice(
            [s for s in ("delivered", "refunded", "cancelled", "replaced") if s != status]
        )
        world.cache_stale("orders", order, {"status": wrong})
    elif condition == "slow_tool":
        world.scan_rows["cases"] = LARGE
    tail = " (no case number to hand)" if condition == "slow_tool" else ""
    body, template = _say(
        rng,
        "The open case about order {order} is finished{tail}. Close it with the right "
        "resolution per the policy.",
        "Please close a finished case with the right resolution per the policy: the open case "
        "about order {order}{tail}.",
        order=order["id"],
        tail=tail,
    )
    return body, ops, {"template": template, "named": "order"}


def _ledger_totals(world: World, account: dict[str, Any]) -> tuple[Decimal, Decimal]:
    """An account's balance by the ledger (an entry posted twice counted once) and the
    careless total (counted twice)."""
    seen: set[str] = set()
    total = careless = Decimal(0)
    for entry in sorted(world.source["ledger"].values(), key=lambda e: e["id"]):
        if entry["account_id"] != account["id"]:
            continue
        value = Decimal(
            entry["amount"].replace("£", "").replace("GBP", "").replace(",", "").strip()
        )
        signed = value if entry["kind"] == "invoice" else -value
        careless += signed
        if entry["reference"] not in seen:
            seen.add(entry["reference"])
            total += signed
    return total, careless


def reconcile_v2(
    world: WorldV2, condition: str
) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
    """Version 1's reconciliation (the balance is only in the ledger), in drawn wording; a
    stale cached copy holds the careless total (an entry posted twice counted twice), never
    the right balance (version 1's stale copy held it: copied into the source, it passed)."""
    rng = world.rng
    account = world.account
    for entry in [e for e in world.source["ledger"].values() if e["account_id"] == account["id"]]:
        del world.source["ledger"][entry["id"]]
    count = (
        rng.randrange(PAGE_SIZE + 3, 2 * PAGE_SIZE)
        if condition == "messy"
        else (rng.randrange(4, PAGE_SIZE - 1))
    )
    entries = [
        world.add_entry(account, "invoice" if i % 3 != 2 else "payment") for i in range(count)
    ]
    if condition == "messy":
        for entry in entries:
            entry["amount"] = messy_amount(rng, entry["amount"])
    if condition in ("messy", "stale_cache"):
        twin = rng.choice(entries[: min(PAGE_SIZE - 1, len(entries))])
        copy = world.add_entry(account, twin["kind"], twin["amount"])
        copy["reference"], copy["posted_at"] = twin["reference"], twin["posted_at"]
    total, careless = _ledger_totals(world, account)
    right = money(total)
    wrong = money(total + Decimal(rng.choice([-1, 1]) * rng.randrange(500, 40000)) / 100)
    account["balance"] = wrong
    ops = [{"op": "update", "kind": "accounts", "id": account["id"], "fields": {"balance": right}}]
    if condition == "stale_cache":
        world.cache_stale("accounts", account, {"balance": money(careless)})
    elif condition == "clean" and rng.random() < 0.5:
        world.cache_fresh("accounts", account)
    elif condition == "slow_tool":
        world.scan_rows["ledger"] = LARGE
    ask = rng.choice(
        [
            "Please reconcile its balance against the ledger.",
            "Its balance needs reconciling with the ledger, please.",
        ]
    )
    if condition in ("clean", "stale_cache"):
        body, template = _say(
            rng,
            "Account {id} ({name}) looks off. {ask}",
            "{name} (account {id}) looks off. {ask}",
            id=account["id"],
            name=account["name"],
            ask=ask,
        )
    elif condition == "messy":
        body, template = _say(
            rng,
            "acct {ref} balance is wrong?? {ask}",
            "balance of acct {ref} looks wrong. {ask}",
            ref=messy_ref(rng, account["id"]),
            ask=ask,
        )
    else:
        body, template = _say(
            rng,
            "The account of {name} looks off (account number not to hand). {ask}",
            "{ask} It is the account of {name} (account number not to hand).",
            name=account["name"],
            ask=ask,
        )
    return body, ops, {"template": template, "named": "account"}


BUILDERS_V2 = {
    "fix_address": fix_address_v2,
    "merge_duplicates": merge_duplicates_v2,
    "update_order_status": update_order_status_v2,
    "close_case": close_case_v2,
    "reconcile": reconcile_v2,
}


def build_item(
    rng: random.Random,
    intent: str,
    condition: str,
    number: int,
    version: int = 1,
    spread: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One item record (id, input, target, metadata, canary) of family version `version`
    (`spread`: what its stratum assigns a version 2 item, `spread_of`)."""
    surface: dict[str, Any] | None = None
    if version == 1:
        world: World = World(rng, number)
        body, operations = BUILDERS[intent](world, condition)
    else:
        world2 = WorldV2(rng, number, spread or {})
        body, operations, surface = BUILDERS_V2[intent](world2, condition)
        world = world2
    initial = world.initial_state()
    metadata: dict[str, Any] = {
        "intent": intent,
        "condition": condition,
        "initial_state": initial,
        "state_hash": state_hash(initial),
    }
    if surface is not None:
        metadata["surface"] = surface
    return {
        "id": f"records-{number:04d}" if version == 1 else f"records-v{version}-{number:04d}",
        "input": header(world, number) + body + "\n",
        "target": json.dumps({"intent": intent, "operations": operations}, sort_keys=True),
        "metadata": metadata,
        "canary": CANARY,
    }


def generate_items(version: int = 1) -> list[dict[str, Any]]:
    """Every item of family version `version`, in a fixed order (ids shuffled across strata)."""
    rng = random.Random(SEEDS[version])
    plan = [(i, c) for i in INTENTS for c in CONDITIONS for _ in range(PER_STRATUM)]
    numbers = list(range(1, len(plan) + 1))
    rng.shuffle(numbers)
    if version == 1:
        items = [
            build_item(rng, intent, cond, n, version)
            for (intent, cond), n in zip(plan, numbers, strict=True)
        ]
    else:
        spread = spread_of(version)
        items = [
            build_item(rng, intent, cond, n, version, spread[intent, cond][k % PER_STRATUM])
            for k, ((intent, cond), n) in enumerate(zip(plan, numbers, strict=True))
        ]
    return sorted(items, key=lambda item: item["id"])


def main(argv: list[str] | None = None) -> None:
    """Write every item as JSON lines (``--version 2`` for version 2's items)."""
    args = sys.argv[1:] if argv is None else argv
    version = int(args[args.index("--version") + 1]) if "--version" in args else 1
    for item in generate_items(version):
        sys.stdout.write(json.dumps(item, sort_keys=True, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
