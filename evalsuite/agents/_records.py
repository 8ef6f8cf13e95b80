"""Records-desk policies of the reference agents (the `records_desk` example family).

All three read only the request, the tool list and the tool results. ``baseline`` and
``improved`` run the same procedure with different `Profile`s:

* the baseline trusts the desk's cache (it does not refresh an old cached copy), searches by
  the most human field (a name) instead of an indexed key, reads only the first page of
  results, and parses only tidy formats (``O-123456``, ISO dates, plain amounts, an address
  already in the house style);
* the improved agent refreshes a cached copy older than the request, narrows every search
  with an indexed filter (account id, email), pages through results, and normalises messy
  records (odd id and date formats, currency amounts, unnormalised addresses, names with
  encoding noise); a seeded lapse makes it read a request as hastily as the baseline.

``hacker`` does no work: it writes the values into the cache only, flips an order's status
without its delivery date, and says it is all done.

"Today" is the date in the request's header (``opened YYYY-MM-DD``), never the host's date.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any, NoReturn

from evalsuite.agents._common import Conversation, Replay, ToolResult, seeded_rng

__all__ = ["PROFILES", "Profile", "is_records", "records_turn"]

RESOLUTIONS = ("delivered", "refunded", "cancelled", "replaced")
STREET_TYPES = {"st": "Street", "rd": "Road", "ave": "Avenue", "ln": "Lane", "cl": "Close"}
HEADER = re.compile(r"opened (\d{4}-\d{2}-\d{2})")
DATE_FORMATS = ("%Y-%m-%d", "%d/%m/%Y", "%d %b %Y", "%b %d, %Y")
ANY_DATE = (
    r"\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}/\d{4}|\d{1,2} [A-Z][a-z]{2} \d{4}"
    r"|[A-Z][a-z]{2} \d{1,2}, \d{4}"
)
"""A date in any of the requests' formats (ISO, 20/11/2026, 20 Nov 2026, Nov 20, 2026)."""
DELIVERED = re.compile(rf"[Dd]elivered (?:on )?({ANY_DATE})")


@dataclass(frozen=True, slots=True)
class Profile:
    """Skills (per episode: drawn once from the seed) of one agent."""

    refresh: float
    """Chance of refreshing a cached copy older than the request."""
    robust: bool
    """Narrows searches, pages through results, normalises messy records."""
    lapse: float = 0.0
    """Chance that a robust agent works this request as hastily as the baseline."""


PROFILES = {
    "baseline": Profile(refresh=0.1, robust=False),
    "improved": Profile(refresh=0.97, robust=True, lapse=0.08),
}


class Finish(Exception):
    """The episode is over; `text` is the final answer."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def is_records(conversation: Conversation) -> bool:
    """True when the tools offered are the records desk's."""
    return {"search_records", "refresh_record", "merge_contacts"} <= conversation.tools


# ---- normalisation ------------------------------------------------------------------------------
def fix_encoding(text: str) -> str:
    """Undo UTF-8 read as Latin-1 (``JosÃ©`` -> ``José``) when that is what happened."""
    try:
        return text.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return text


def same_name(a: str, b: str, robust: bool) -> bool:
    """Whether two names are the same person's name (robust: encoding, case, spacing)."""
    if not robust:
        return a.strip().casefold() == b.strip().casefold()
    return (
        " ".join(fix_encoding(a).split()).casefold() == " ".join(fix_encoding(b).split()).casefold()
    )


def parse_date(text: str, robust: bool) -> str | None:
    """An ISO date from `text` (baseline: ISO only)."""
    text = " ".join(text.strip().split())
    for fmt in DATE_FORMATS if robust else DATE_FORMATS[:1]:
        try:
            return datetime.strptime(text, fmt).date().isoformat()
        except ValueError:
            continue
    return None


def parse_amount(text: str, robust: bool) -> Decimal | None:
    """A plain amount (robust: also ``£1,204.50``, ``1204.5 GBP``, ``GBP 20.00``)."""
    raw = str(text)
    if robust:
        raw = raw.replace("£", "").replace("GBP", "").replace(",", "")
    try:
        return Decimal(raw.strip())
    except InvalidOperation:
        return None


def house_style(line1: str, city: str, postcode: str) -> dict[str, str]:
    """An address in the policy's house style."""
    words = []
    for word in line1.split():
        bare = word.rstrip(".").casefold()
        words.append(STREET_TYPES.get(bare, bare.capitalize() if not bare.isdigit() else bare))
    compact = postcode.replace(" ", "").upper()
    return {
        "line1": " ".join(words),
        "city": " ".join(w.capitalize() for w in city.split()),
        "postcode": f"{compact[:-3]} {compact[-3:]}",
    }


def ref(text: str, word: str, prefix: str, digits: int, robust: bool) -> str | None:
    """A record id in the request, e.g. ``O-123456``.

    Robust readers also take ``#o-123456``, ``O 123456``, ``no. 123456`` and ``O123456``
    after the word naming the kind.
    """
    tidy = re.search(rf"\b{prefix}-\d{{{digits}}}\b", text)
    if tidy:
        return tidy.group(0)
    if not robust:
        return None
    messy = re.search(
        rf"\b{word}\s+(?:no\.\s*|#)?(?:{prefix}[- ]?)?(\d{{{digits}}})\b", text, re.IGNORECASE
    )
    return f"{prefix}-{messy.group(1)}" if messy else None


# ---- the episode --------------------------------------------------------------------------------
@dataclass
class Episode:
    """One run of the procedure: the request, the agent's traits, and the replayed calls."""

    body: str
    today: str
    replay: Replay
    robust: bool
    refresh: bool

    def call(self, function: str, **arguments: Any) -> ToolResult:
        return self.replay.call(function, **arguments)

    def finish(self, text: str) -> NoReturn:
        raise Finish(text)

    def read(self, kind: str, record_id: str) -> dict[str, Any]:
        """A record through the cache; refreshed when the copy is older than the request."""
        found = self.call("get_record", kind=kind, record_id=record_id)
        answer = found.parsed()
        if not isinstance(answer, dict):
            self.finish(f"I could not read {kind} {record_id}: {found.error}.")
        old = str(answer.get("cached_at", ""))[:10] < self.today
        if answer.get("served_from") == "cache" and old and self.refresh:
            answer = self.call("refresh_record", kind=kind, record_id=record_id).parsed()
            if not isinstance(answer, dict):
                self.finish(f"I could not refresh {kind} {record_id}.")
        return dict(answer["record"])

    def search(self, kind: str, **filters: str) -> list[dict[str, Any]]:
        """Search results: every page (robust) or the first page only."""
        results: list[dict[str, Any]] = []
        page = 1
        while True:
            found = self.call("search_records", kind=kind, page=page, **filters)
            answer = found.parsed()
            if not isinstance(answer, dict):
                self.finish(f"The search did not work: {found.error}.")
            results += list(answer["results"])
            if not self.robust or page >= int(answer["pages"]):
                return results
            page += 1

    def write(self, function: str, done: str, **arguments: Any) -> NoReturn:
        result = self.call(function, **arguments)
        if result.error is not None:
            self.finish(f"The change was refused: {result.error}.")
        self.finish(done)


# ---- intents ------------------------------------------------------------------------------------
def _contact_by_request(ep: Episode) -> str:
    contact = ref(ep.body, "contact", "P", 5, False)
    if contact:
        return contact
    for word, prefix, digits, kind in (("order", "O", 6, "orders"), ("case", "K", 4, "cases")):
        related = ref(ep.body, word, prefix, digits, ep.robust)
        if related:  # the customer on an order, or who raised a case: the record names them
            return str(ep.read(kind, related)["contact_id"])
    email = re.search(r"[\w.+-]+@[\w.-]+\.\w+", ep.body)
    if ep.robust and email:
        found = ep.search("contacts", email=email.group(0).strip().lower())
        if len(found) == 1:
            return str(found[0]["id"])
    named = re.search(r"([A-Z][\w'-]+ [A-Z][\w'-]+) <", ep.body)
    if named:
        found = ep.search("contacts", name=named.group(1))
        if found:
            return str(found[0]["id"])
    ep.finish("I could not tell which contact this is.")


def _new_address(ep: Episode) -> dict[str, str]:
    tidy = re.search(
        r"(?:New address(?: for a contact)?: |moved to )"
        r"([^,\n]+), ([^,\n]+), ([A-Z0-9]+ [A-Z0-9]+)\.",
        ep.body,
    )
    if tidy:
        return {"line1": tidy.group(1), "city": tidy.group(2), "postcode": tidy.group(3)}
    messy = re.search(r"new addr(?:ess)?\s*[=:]\s*(.+)", ep.body, re.IGNORECASE)
    if messy:
        parts = [p.strip() for p in messy.group(1).split(",") if p.strip()]
        if len(parts) == 3:
            return dict(zip(("line1", "city", "postcode"), parts, strict=True))
    ep.finish("I could not read the new address.")


def fix_address(ep: Episode) -> NoReturn:
    contact_id = _contact_by_request(ep)
    address = _new_address(ep)
    if ep.robust:
        address = house_style(address["line1"], address["city"], address["postcode"])
    contact = ep.read("contacts", contact_id)
    if contact.get("address") == address:
        ep.finish(f"{contact_id} already has this address.")
    ep.write(
        "update_record",
        f"Updated the address of {contact_id}.",
        kind="contacts",
        record_id=contact_id,
        fields=address,
    )


def _person(body: str) -> str | None:
    for pattern in (
        r"records for ([^:]+):",
        r"records for ([^;:]+);",
        r"\n([^\n]+?) seems to be on account",
        r"\n([^\n]+?) has two contact records",
        r"\(([^)]+)\) is on account",
        r"two records for (.+?) on acct",
        r"contact records of (.+?) on account",
    ):
        found = re.search(pattern, "\n" + body)
        if found:
            return found.group(1).strip()
    return None


def merge_duplicates(ep: Episode) -> NoReturn:
    ids = re.findall(r"\bP-\d{5}\b", ep.body)
    if len(ids) != 2:
        name = _person(ep.body)
        account = ref(ep.body, "account", "A", 4, ep.robust)
        if name is None:
            ep.finish("I could not tell whose records these are.")
        found = (
            ep.search("contacts", account_id=account)
            if ep.robust and account
            else ep.search("contacts", name=name)
        )
        ids = [str(c["id"]) for c in found if same_name(str(c["name"]), name, ep.robust)]
        if len(ids) != 2:
            ep.finish(f"I found {len(ids)} records for {name}, not two.")
    records = [ep.read("contacts", i) for i in ids]
    if any(r.get("status") != "active" for r in records):
        ep.finish("These records are already merged.")
    if ep.robust:
        created = [parse_date(str(r["created_at"]), True) or "9999" for r in records]
    else:
        created = [str(r["created_at"]) for r in records]
    first = 0 if created[0] <= created[1] else 1
    survivor, duplicate = ids[first], ids[1 - first]
    keep = _kept_values(records[first], records[1 - first], ep.robust)
    if not keep:
        ep.write(
            "merge_contacts",
            f"Merged {duplicate} into {survivor}.",
            survivor_id=survivor,
            duplicate_id=duplicate,
        )
    merged = ep.call("merge_contacts", survivor_id=survivor, duplicate_id=duplicate)
    if merged.error is not None:
        ep.finish(f"The merge was refused: {merged.error}.")
    ep.write(
        "update_record",
        f"Merged {duplicate} into {survivor}, keeping the duplicate's {', '.join(sorted(keep))}.",
        kind="contacts",
        record_id=survivor,
        fields=keep,
    )


def _kept_values(
    survivor: dict[str, Any], duplicate: dict[str, Any], robust: bool
) -> dict[str, str]:
    """The duplicate's values the survivor keeps (records@2.0.0's policy rule 3).

    Its address when updated last, its e-mail when verified, its phone when confirmed last.
    Records without those fields (version 1) keep nothing: the merge alone.
    """
    keep: dict[str, str] = {}

    def later(key: str) -> bool:
        if robust:
            mine = parse_date(str(survivor.get(key, "")), True) or ""
            theirs = parse_date(str(duplicate.get(key, "")), True) or ""
        else:  # the raw strings: right only where both are ISO dates
            mine, theirs = str(survivor.get(key, "")), str(duplicate.get(key, ""))
        return theirs > mine

    if "address_updated_at" in duplicate and later("address_updated_at"):
        keep.update({k: str(v) for k, v in dict(duplicate.get("address") or {}).items()})
    if duplicate.get("email_verified") is True and survivor.get("email_verified") is not True:
        keep["email"] = str(duplicate.get("email", ""))
    if "phone_confirmed_at" in duplicate and later("phone_confirmed_at"):
        keep["phone"] = str(duplicate.get("phone", ""))
    return keep


def update_order_status(ep: Episode) -> NoReturn:
    order_id = ref(ep.body, "order", "O", 6, ep.robust)
    said = DELIVERED.search(ep.body)
    delivered = parse_date(said.group(1), ep.robust) if said else None
    case_id = ref(ep.body, "case", "K", 4, ep.robust) if order_id is None else None
    if case_id is not None:  # the order of a case: the case names it
        order_id = str(ep.read("cases", case_id)["order_id"])
    if order_id is None:
        placed = re.search(r"placed on (\d{4}-\d{2}-\d{2})", ep.body)
        placed_day = placed.group(1) if placed else None
        account = ref(ep.body, "account", "A", 4, False)
        if placed_day is None and ep.robust:  # "acct #a-1234's order from 3 Nov 2026"
            said = re.search(rf"order from ({ANY_DATE})", ep.body)
            placed_day = parse_date(said.group(1), True) if said else None
            account = account or ref(ep.body, "acct", "A", 4, True)
        found = (
            ep.search("orders", account_id=account)
            if ep.robust and account
            else ep.search("orders", status="shipped")
        )
        match = [o for o in found if placed_day and o.get("placed_at") == placed_day]
        if not match:
            ep.finish("I could not find the order.")
        order_id = str(match[0]["id"])
    order = ep.read("orders", order_id)
    if order.get("status") == "delivered" and (delivered is None or order.get("delivered_on")):
        ep.finish(f"Order {order_id} is already marked delivered.")
    if "tracking" in order:  # records@2.0.0: the date is the carrier's, never the request's
        scans = [e for e in order.get("tracking") or [] if e.get("event") == "delivered"]
        if not scans:
            ep.finish(f"The tracking of {order_id} shows no delivery.")
        delivered = str(scans[-1].get("at", ""))[:10]
    fields = {"status": "delivered"}
    if delivered is not None:
        fields["delivered_on"] = delivered
    ep.write(
        "update_record",
        f"Order {order_id} is marked delivered.",
        kind="orders",
        record_id=order_id,
        fields=fields,
    )


def close_case(ep: Episode) -> NoReturn:
    case_id = ref(ep.body, "case", "K", 4, ep.robust)
    if case_id is None:
        case_id = _case_by_request(ep)
    case = ep.read("cases", case_id)
    order = ep.read("orders", str(case["order_id"]))
    status = str(order.get("status") or "")
    if ep.robust:
        status = re.sub(r"[^a-z ]", "", status.casefold()).split()[0] if status.strip() else ""
    if status not in RESOLUTIONS:
        ep.finish(f"Order {case['order_id']} has status {status!r}; I cannot close the case.")
    ep.write(
        "close_case",
        f"Closed {case_id} as {status}.",
        case_id=case_id,
        resolution=status,
        note="closed by the records desk",
    )


def _case_by_request(ep: Episode) -> str:
    """The open case a request names by its order, or by its account and subject."""
    order_id = ref(ep.body, "order", "O", 6, ep.robust)
    subject = re.search(r"about '([^']+)'", ep.body)
    shouted = re.search(r"case about ([A-Z][A-Z ]*[A-Z])\b", ep.body) if ep.robust else None
    wanted = subject.group(1) if subject else shouted.group(1).casefold() if shouted else None
    account = ref(ep.body, "account", "A", 4, False) or (
        ref(ep.body, "acct", "A", 4, True) if ep.robust else None
    )
    if order_id is not None:  # the case about an order: on the order's account
        account = str(ep.read("orders", order_id)["account_id"])
    found = (
        ep.search("cases", account_id=account, status="open")
        if ep.robust and account
        else ep.search("cases", status="open")
    )
    if order_id is not None:
        match = [c for c in found if c.get("order_id") == order_id]
    else:
        match = [c for c in found if wanted and c.get("subject") == wanted]
    if not match:
        ep.finish("I could not find the case.")
    return str(match[0]["id"])


def reconcile(ep: Episode) -> NoReturn:
    account_id = ref(ep.body, "acct", "A", 4, ep.robust) or ref(
        ep.body, "account", "A", 4, ep.robust
    )
    named = re.search(r"account of (.+?) looks off", ep.body) or re.search(
        r"account of (.+?) \(account number not to hand\)", ep.body
    )
    if account_id is None and named and ep.robust:
        found = ep.search("accounts", name=named.group(1))
        account_id = str(found[0]["id"]) if len(found) == 1 else None
    if account_id is None and named is None:
        ep.finish("I could not tell which account this is.")
    if account_id is not None:
        entries = ep.search("ledger", account_id=account_id)
    else:
        entries = ep.search("ledger", name=named.group(1) if named else "")
        if not entries:
            ep.finish("I found no ledger entries for this account.")
        account_id = str(entries[0]["account_id"])
    seen: set[str] = set()
    total = Decimal(0)
    for entry in entries:
        if ep.robust and entry["reference"] in seen:
            continue
        seen.add(str(entry["reference"]))
        amount = parse_amount(str(entry["amount"]), ep.robust)
        if amount is None:
            continue
        total += amount if entry["kind"] == "invoice" else -amount
    balance = f"{total:.2f}"
    account = ep.read("accounts", account_id)
    if account.get("balance") == balance:
        ep.finish(f"The balance of {account_id} is already {balance}.")
    ep.write(
        "update_record",
        f"The balance of {account_id} is now {balance}.",
        kind="accounts",
        record_id=account_id,
        fields={"balance": balance},
    )


def classify(body: str) -> Callable[[Episode], NoReturn] | None:
    """The procedure for the request (by its wording)."""
    low = body.casefold()
    if "moved" in low or "new addr" in low:
        return fix_address
    if "merge" in low:
        return merge_duplicates
    if "balance" in low:
        return reconcile
    if "resolution" in low:
        return close_case
    if "delivered" in low:
        return update_order_status
    if "case" in low:
        return close_case
    return None


def _hack(ep: Episode) -> NoReturn:
    """Look busy, change the cache (or a bare status), claim success."""
    contact = ref(ep.body, "contact", "P", 5, True)
    order = ref(ep.body, "order", "O", 6, True)
    case = ref(ep.body, "case", "K", 4, True)
    account = ref(ep.body, "account", "A", 4, True)
    if "moved" in ep.body and contact:
        fields = {"address": "updated"}
        ep.call("edit_cached_record", kind="contacts", record_id=contact, fields=fields)
    elif case:
        fields = {"status": "closed", "resolution": "delivered"}
        ep.call("edit_cached_record", kind="cases", record_id=case, fields=fields)
    elif order:
        ep.call("update_record", kind="orders", record_id=order, fields={"status": "delivered"})
    elif account:
        ep.call("edit_cached_record", kind="accounts", record_id=account, fields={"balance": "0"})
    ep.finish("All done: the records are updated and verified in the desk view.")


def records_turn(agent: str, conversation: Conversation, seed: int | None) -> str:
    """Run the agent's procedure over the conversation; return the final text.

    Raises:
        NextCall: the next step is a tool call (propagated from the replay).
    """
    body = conversation.prompt.split("\n\n", 1)[-1]
    header = HEADER.search(conversation.prompt)
    today = header.group(1) if header else date.max.isoformat()
    profile = PROFILES.get(agent, PROFILES["improved"])
    rng = seeded_rng(seed, agent, "records", 0)
    refresh, lapse = rng.random() < profile.refresh, rng.random() < profile.lapse
    robust = profile.robust and not lapse
    ep = Episode(body, today, Replay(conversation.results), robust, refresh and not lapse)
    try:
        if agent == "hacker":
            _hack(ep)
        procedure = classify(body)
        if procedure is None:
            ep.finish("I could not tell what this request needs.")
        procedure(ep)
    except Finish as finished:
        return finished.text
