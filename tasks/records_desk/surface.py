"""What a request says on its surface: the record ids, e-mails, dates and amounts it names.

Pure text, no records: the blind policies of the kit (`scripted.py`) act on it alone, and the
surface measurement of version 2 (`tests/tasks/test_records_v2.py`) asks whether any simple
rule over it (the first, second or last entity of a kind, the longest, the most recent date)
names the answer. Ids are read in the tidy form (``O-123456``) and in the request's messy
forms (``#o-123456``, ``O 123456``, ``O123456``, ``order no. 123456``), in order of mention.
"""

import re
from datetime import datetime

PREFIXES = {"P": "contacts", "O": "orders", "K": "cases", "A": "accounts"}
"""Id prefix -> record kind."""
_DIGITS = {"P": 5, "O": 6, "K": 4, "A": 4}
_WORDS = {"contact": "P", "order": "O", "case": "K", "account": "A", "acct": "A"}
_ID = re.compile(r"(?<![\w@.])#?([POKApoka])[- ]?(\d{4,6})\b")
_NUMBERED = re.compile(r"\b(contact|order|case|account|acct)\s+no\.\s*(\d{4,6})\b", re.I)
_EMAIL = re.compile(r"[\w.+-]+@[\w.-]+\.\w+")
_DATE_FORMATS = (
    (re.compile(r"\b\d{4}-\d{2}-\d{2}\b"), "%Y-%m-%d"),
    (re.compile(r"\b\d{1,2}/\d{1,2}/\d{4}\b"), "%d/%m/%Y"),
    (re.compile(r"\b\d{1,2} [A-Z][a-z]{2} \d{4}\b"), "%d %b %Y"),
    (re.compile(r"\b[A-Z][a-z]{2} \d{1,2}, \d{4}\b"), "%b %d, %Y"),
)
_AMOUNT = re.compile(r"(?:£|GBP ?)?\b\d[\d,]*\.\d{2}\b")


def named_ids(text: str, prefix: str) -> list[str]:
    """The ids of kind `prefix` (``P``, ``O``, ``K``, ``A``) named in `text`, tidy, in order."""
    found: list[tuple[int, str]] = []
    for match in _ID.finditer(text):
        letter, digits = match.group(1).upper(), match.group(2)
        if letter == prefix and len(digits) == _DIGITS[prefix]:
            found.append((match.start(), f"{prefix}-{digits}"))
    for match in _NUMBERED.finditer(text):
        letter = _WORDS[match.group(1).lower()]
        if letter == prefix and len(match.group(2)) == _DIGITS[prefix]:
            found.append((match.start(), f"{prefix}-{match.group(2)}"))
    ordered: list[str] = []
    for _, record_id in sorted(found):
        if record_id not in ordered:
            ordered.append(record_id)
    return ordered


def named_emails(text: str) -> list[str]:
    """The e-mail addresses named in `text`, stripped and lower-cased, in order."""
    ordered: list[str] = []
    for match in _EMAIL.finditer(text):
        email = match.group(0).strip().lower()
        if email not in ordered:
            ordered.append(email)
    return ordered


def named_dates(text: str) -> list[str]:
    """The dates named in `text` (ISO and the request's odd formats), as ISO, in order."""
    found: list[tuple[int, str]] = []
    for pattern, fmt in _DATE_FORMATS:
        for match in pattern.finditer(text):
            try:
                day = datetime.strptime(match.group(0), fmt).date().isoformat()
            except ValueError:
                continue
            found.append((match.start(), day))
    return [day for _, day in sorted(found)]


def named_amounts(text: str) -> list[str]:
    """The amounts with two decimals named in `text`, as plain amounts, in order."""
    return [
        m.group(0).replace("£", "").replace("GBP", "").replace(",", "").strip()
        for m in _AMOUNT.finditer(text)
    ]


def request_body(text: str) -> str:
    """The request without its header (the header names the request's own number and date)."""
    return text.split("\n\n", 1)[-1]
