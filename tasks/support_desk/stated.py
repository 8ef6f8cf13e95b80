"""What the customer states to prove who they are (read by verifier version 2 and the oracle).

Policy rule 4: an account change needs ``verify_identity`` with "a detail the customer gave in
the ticket". The ticket offers it in one clause (``For verification, the postcode on my account
is ...``, ``security check - postcode on file is ...``, ``card ending 1 2 3 4``, ...); this
module finds that clause and its value, so that a verification with a detail the customer never
gave (a made-up postcode) is told apart from the one the policy asks for.
"""

import re

from .env import norm_postcode

CLAUSE = re.compile(
    r"(verification|security check|verify me|postcode on (?:my account|file)|card end"
    r"|last 4 digits)(?P<rest>[^\n]*)",
    re.IGNORECASE,
)
POSTCODE = re.compile(r"\b([A-Za-z]{1,2}\d[A-Za-z\d]?)\s*(\d[A-Za-z]{2})\b")
CARD = re.compile(r"(?<!\d)((?:\d[\s*]?){3}\d)(?!\d)")


def stated_detail(ticket: str) -> tuple[str, str] | None:
    """The detail offered for verification: ``("postcode", "LS12 3AB")``, ``("card", "0123")``.

    None when the ticket offers none.
    """
    for match in CLAUSE.finditer(ticket):
        clause = match.group(0)
        if re.search(r"\bcard\b|digits", clause, re.IGNORECASE):
            card = CARD.search(match.group("rest"))
            if card:
                return "card", re.sub(r"\D", "", card.group(1))
            continue
        code = POSTCODE.search(match.group("rest"))
        if code:
            return "postcode", f"{code.group(1)} {code.group(2)}".upper()
    return None


def matches_stated(ticket: str, postcode: str = "", card_last4: str = "") -> bool:
    """True when a verification used exactly the detail the ticket offers."""
    stated = stated_detail(ticket)
    if stated is None:
        return False
    kind, value = stated
    if kind == "postcode":
        return bool(postcode.strip()) and norm_postcode(postcode) == norm_postcode(value)
    return bool(card_last4.strip()) and re.sub(r"\D", "", card_last4)[-4:] == value


POSTCODE_CUE = re.compile(
    r"postcode (?:on (?:my account|file)|we have|you have)(?: is)?|verify me with my postcode",
    re.IGNORECASE,
)
CARD_CUE = re.compile(
    r"card (?:ends|ending|on file ends)(?: in| with)?:?|last 4 digits of my card:?", re.IGNORECASE
)


def stated_details(ticket: str) -> list[tuple[str, str]]:
    """Every detail the ticket offers for verification, in the order it states them (version 3:
    a ticket may give the postcode and the card): ``[("postcode", "LS12 3AB"), ("card",
    "0123")]``. Empty when it offers none.

    Each value is read right after its own cue (``postcode on my account is``, ``card ends
    in``...), so the new address a ticket asks for is never taken for a detail.
    """
    found: list[tuple[int, tuple[str, str]]] = []
    for cue in POSTCODE_CUE.finditer(ticket):
        code = POSTCODE.match(ticket[cue.end() :].lstrip(" :-"))
        if code:
            found.append((cue.start(), ("postcode", f"{code.group(1)} {code.group(2)}".upper())))
    for cue in CARD_CUE.finditer(ticket):
        card = CARD.match(ticket[cue.end() :].lstrip(" :-*#"))
        if card:
            found.append((cue.start(), ("card", re.sub(r"\D", "", card.group(1)))))
    details: list[tuple[str, str]] = []
    for _, detail in sorted(found):
        if detail not in details:
            details.append(detail)
    return details
