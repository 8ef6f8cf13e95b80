"""Reading a support ticket: careful (``robust``) and hasty (naive) parsers.

The careful parsers normalise what customers actually write (lower-case postcodes without a
space, ``1.249,00``, ``card ending 4 2 4 2``, an order quoted as ``#58213``, item names with
typos); the naive ones only understand the tidy formats.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from difflib import SequenceMatcher
from functools import lru_cache

__all__ = [
    "Ticket",
    "claimed_amount",
    "claimed_date",
    "classify",
    "item_score",
    "new_address",
    "order_ref",
    "parse_ticket",
    "stated_detail",
    "stated_details",
]

GAZETTEER = (
    "Aberdeen", "Bath", "Belfast", "Birmingham", "Bradford", "Brighton", "Bristol", "Cambridge",
    "Canterbury", "Cardiff", "Carlisle", "Chester", "Coventry", "Derby", "Dundee", "Durham",
    "Edinburgh", "Exeter", "Glasgow", "Gloucester", "Hull", "Inverness", "Lancaster", "Leeds",
    "Leicester", "Lincoln", "Liverpool", "London", "Manchester", "Newcastle", "Norwich",
    "Nottingham", "Oxford", "Perth", "Plymouth", "Portsmouth", "Preston", "Reading", "Salford",
    "Sheffield", "Southampton", "Stoke", "Sunderland", "Swansea", "Wakefield", "Winchester",
    "Wolverhampton", "Worcester", "York",
)  # fmt: skip

POSTCODE = re.compile(r"\b([A-Za-z]{1,2}\d[A-Za-z\d]?)\s*(\d[A-Za-z]{2})\b")
STRICT_POSTCODE = re.compile(r"\b[A-Z]{1,2}\d[A-Z\d]? \d[A-Z]{2}\b", re.I)
AMOUNT = re.compile(r"(?:£|\bgbp)\s*(\d[\d.,]*)|(\d[\d.,]*)\s*(?:gbp|quid|pounds)\b", re.I)
ADDRESS_CUE = re.compile(
    r"(?:address on my account to|new address is|change my address to|address to|"
    r"new address:)\s*(.+?)\s*(?:\.(?:\s|$)|\n|!|$)",
    re.I,
)
DAMAGE_WORDS = ("damaged", "broken", "smashed", "crack", "dented", "shattered", "replacement")


@dataclass(frozen=True, slots=True)
class Ticket:
    """The parts of a ticket an agent reads."""

    ticket_id: str
    today: str | None
    """The day the ticket was opened (``YYYY-MM-DD``), the agent's only clock; None when the
    header does not say (never the host's date: an agent's moves depend only on its input)."""
    name: str
    email: str
    phone: str
    subject: str
    body: str

    @property
    def text(self) -> str:
        """Subject and body, lower case (what intent and item matching read)."""
        return f"{self.subject}\n{self.body}".lower()


def _first(pattern: str, text: str, flags: int = 0) -> str:
    match = re.search(pattern, text, flags)
    return match.group(1).strip() if match else ""


def parse_ticket(prompt: str) -> Ticket:
    """Header fields and body of a support ticket.

    Missing fields are empty strings, except the opening date, which is None: nothing else
    in the conversation says what day it is, and the wall clock would make the agent's
    answer depend on when it runs.
    """
    head, _, body = prompt.partition("\n\n")
    sender = _first(r"^From:\s*(.*)$", head, re.M)
    return Ticket(
        ticket_id=_first(r"ticket\s+(T-\d+)", head, re.I),
        today=_first(r"opened\s+(\d{4}-\d{2}-\d{2})", head) or None,
        name=re.split(r"[<(]", sender, maxsplit=1)[0].strip(),
        email=_first(r"<([^>]+)>", sender),
        phone=_first(r"phone:\s*(.+?)\)\s*$", sender),
        subject=_first(r"^Subject:\s*(.*)$", head, re.M),
        body=body.strip(),
    )


def classify(ticket: Ticket) -> str:
    """``cancel``, ``address``, ``replace``, ``refund`` or ``unknown``."""
    text = ticket.text
    if "cancel" in text:
        return "cancel"
    if "address" in text or "moved house" in text:
        return "address"
    if any(word in text for word in DAMAGE_WORDS):
        return "replace"
    if "refund" in text or "money back" in text:
        return "refund"
    return "unknown"


def order_ref(ticket: Ticket, *, robust: bool) -> str | None:
    """The order id the customer quotes, normalised to ``O-12345``."""
    flags = re.I if robust else 0
    match = re.search(r"\bO-(\d{5})\b", ticket.body, flags)
    if match is None and robust:
        match = re.search(r"order\s*(?:#|no\.?|number)?\s*(\d{5})\b", ticket.body, re.I)
    return f"O-{match.group(1)}" if match else None


def item_score(name: str, text: str, *, robust: bool) -> float:
    """How well the product `name` matches what the customer wrote (1.0: verbatim)."""
    wanted = name.lower()
    if wanted in text:
        return 1.0
    if not robust:
        return 0.0
    words = set(re.findall(r"[a-z]+", text))  # each word once: the same maximum
    tokens = re.findall(r"[a-z]+", wanted)
    if not words or not tokens:
        return 0.0
    best = [max(_similarity(token, word) for word in words) for token in tokens]
    return sum(best) / len(best)


@lru_cache(maxsize=1 << 16)
def _similarity(token: str, word: str) -> float:
    """The difflib ratio of `token` against `word`, cached.

    A pure function of the two words; tickets share most of their words, and an agent
    matches every product against the ticket on each turn.
    """
    return SequenceMatcher(None, token, word).ratio()


def _robust_number(token: str) -> Decimal | None:
    token = token.rstrip(".,")
    if "," in token and "." in token:
        decimal_mark = "," if token.rfind(",") > token.rfind(".") else "."
        grouping = "." if decimal_mark == "," else ","
        token = token.replace(grouping, "").replace(decimal_mark, ".")
    elif "," in token:
        tail = token.rpartition(",")[2]
        token = token.replace(",", ".") if len(tail) == 2 else token.replace(",", "")
    elif "." in token and len(token.rpartition(".")[2]) == 3:
        token = token.replace(".", "")
    try:
        return Decimal(token)
    except InvalidOperation:
        return None


def claimed_amount(text: str, *, robust: bool) -> Decimal | None:
    """The amount the customer says they paid, in pounds."""
    match = AMOUNT.search(text)
    if match is None:
        return None
    token = match.group(1) or match.group(2)
    if robust:
        return _robust_number(token)
    head = re.match(r"\d+(?:\.\d+)?", token)
    return Decimal(head.group()) if head else None


def claimed_date(text: str, today: str | None) -> str | None:
    """A day/month[/year] date the customer quotes (e.g. a delivery date), as ISO.

    A date without a year is placed in the year of `today` (the last such day not after
    it); without `today` it cannot be placed and is ignored (None).
    """
    match = re.search(r"(?<![\d/])(\d{1,2})/(\d{1,2})(?:/(\d{2,4}))?(?![\d/])", text)
    if match is None:
        return None
    day, month = int(match.group(1)), int(match.group(2))
    now = date.fromisoformat(today) if today is not None else None
    if match.group(3):
        year = int(match.group(3))
        year = year + 2000 if year < 100 else year
    elif now is not None:
        year = now.year
    else:
        return None
    try:
        found = date(year, month, day)
        if not match.group(3) and now is not None and found > now:
            found = found.replace(year=year - 1)
    except ValueError:
        return None
    return found.isoformat()


def _city_split(rest: str) -> tuple[str, str]:
    lowered = rest.lower()
    for city in sorted(GAZETTEER, key=len, reverse=True):
        if lowered.endswith(" " + city.lower()):
            return rest[: -len(city)].strip(" ,"), city
    head, _, last = rest.rpartition(" ")
    return head, last


def new_address(text: str, *, robust: bool) -> dict[str, str] | None:
    """The new address the customer asks for, or None when it cannot be read."""
    cue = ADDRESS_CUE.search(text)
    if cue is None:
        return None
    segment = cue.group(1)
    if not robust:
        parts = [p.strip() for p in segment.split(",")]
        if len(parts) >= 3:
            return {"line1": parts[0], "city": parts[1], "postcode": parts[2]}
        if len(parts) == 2:
            strict = STRICT_POSTCODE.search(parts[1])
            return {
                "line1": parts[0],
                "city": parts[1],
                "postcode": strict.group() if strict else "",
            }
        return None
    codes = list(POSTCODE.finditer(segment))
    if not codes:
        return None
    code = codes[-1]
    rest = segment[: code.start()].strip(" ,")
    parts = [p.strip() for p in rest.split(",") if p.strip()]
    if len(parts) >= 2:
        line1, city = ", ".join(parts[:-1]), parts[-1]
    elif parts:
        line1, city = _city_split(parts[0])
    else:
        return None
    postcode = f"{code.group(1)} {code.group(2)}".upper()
    return {"line1": line1.title(), "city": city.title(), "postcode": postcode}


def stated_detail(text: str, *, robust: bool) -> tuple[str, str] | None:
    """The identity detail the customer gives: ("card", "4242") or ("postcode", "LS1 4AB")."""
    if re.search(r"\bcard\b", text, re.I):
        pattern = r"card[^\n]*?((?:\d\s?){3}\d)(?!\d)" if robust else r"card[^\n]*?\b(\d{4})\b"
        digits = _first(pattern, text, re.I)
        return ("card", re.sub(r"\s", "", digits)) if digits else None
    cue = re.search(r"postcode", text, re.I)
    if cue is None:
        return None
    after = text[cue.end() :]
    if robust:
        code = POSTCODE.search(after)
        return ("postcode", f"{code.group(1)} {code.group(2)}".upper()) if code else None
    strict = STRICT_POSTCODE.search(after)
    return ("postcode", strict.group()) if strict else None


POSTCODE_CUE = re.compile(
    r"postcode (?:on (?:my account|file)|we have|you have)(?: is)?|verify me with my postcode",
    re.I,
)
CARD_CUE = re.compile(
    r"card (?:ends|ending|on file ends)(?: in| with)?:?|last 4 digits of my card:?", re.I
)


def stated_details(text: str, *, robust: bool) -> list[tuple[str, str]]:
    """Every identity detail the customer gives, in the order given.

    A ticket may give the postcode and the card. The hasty reading takes tidy formats only
    (``LS1 4AB``, ``1234``).
    """
    found: list[tuple[int, tuple[str, str]]] = []
    for cue in POSTCODE_CUE.finditer(text):
        rest = text[cue.end() :].lstrip(" :-")
        code = POSTCODE.match(rest) if robust else STRICT_POSTCODE.match(rest)
        if code is None:
            continue
        value = f"{code.group(1)} {code.group(2)}".upper() if robust else code.group()
        found.append((cue.start(), ("postcode", value)))
    for cue in CARD_CUE.finditer(text):
        rest = text[cue.end() :].lstrip(" :-*#") if robust else text[cue.end() :].lstrip(" ")
        card = re.match(r"((?:\d\s?){3}\d)(?!\d)" if robust else r"(\d{4})\b", rest)
        if card:
            found.append((cue.start(), ("card", re.sub(r"\s", "", card.group(1)))))
    details: list[tuple[str, str]] = []
    for _, detail in sorted(found):
        if detail not in details:
            details.append(detail)
    return details
