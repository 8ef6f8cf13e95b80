"""Fingerprints: hashed word n-grams of every item, saved beside the manifest.

They let a training pipeline screen curricula (`evalsuite guard`) without the vault key: a
64-bit hash of a window of words does not give the window back.

Formats (every one is still read; a frozen version keeps the format it was frozen with):

- ``evalsuite-fingerprints/1``: text hashes and word 13-grams, spec ``evalsuite-ngram/2``.
- ``/2`` adds ``short`` to each record: for every text field of `SHORT_MIN` to 12 words, too
  short to have a 13-gram, ``[L, head, whole]`` with the hashes (same n-gram function) of its
  first `SHORT_MIN` words and of all its L words, so that the guard finds such a text inside
  a longer document.
- ``/3`` (current): spec ``evalsuite-ngram/3`` (insensitive to punctuation inside words,
  JSON escapes and chat-template markers) and word 8-grams of every text of `LONG_MIN` (13)
  words or more; texts of `SHORT_MIN` to 12 words are short texts as in ``/2``. See
  ``docs/design/guard-normalisation.md``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalsuite._core.ngram_ids import NGRAM_V2, NGRAM_V3
from evalsuite.manifest._items import Item
from evalsuite.manifest._split import Split

if TYPE_CHECKING:
    from evalsuite._core.text import NgramSpec

# evalsuite._core.text (numpy) is imported where fingerprints are computed, not here: `verify`
# and `suites` import this module through the manifest and need none (docs/design/startup.md)

__all__ = [
    "FINGERPRINT_FORMAT",
    "FORMATS",
    "LONG_MIN",
    "NGRAM_SIZE",
    "SHORT_MIN",
    "FingerprintFormat",
    "FingerprintRecord",
    "describe_difference",
    "file_format",
    "fingerprint_item",
    "item_texts",
    "render_fingerprints",
]

SHORT_MIN = 6
"""Texts of fewer words than this have no window fingerprint (only their exact text hash)."""
LONG_MIN = 13
"""Texts of at least this many words are fingerprinted by n-grams; shorter ones (of at least
`SHORT_MIN` words) as short texts, found only whole."""


@dataclass(frozen=True, slots=True)
class FingerprintFormat:
    """What a fingerprint file format holds and how its hashes were made."""

    name: str
    hash: str
    """The text spec (``evalsuite-ngram/2`` or ``/3``, `evalsuite._core.text`)."""
    n: int
    """N-gram size."""
    long_min: int
    """Fewest words of a text with n-grams (texts with fewer have none)."""
    short: bool
    """Records carry ``short`` entries for texts of `SHORT_MIN` to ``long_min - 1`` words."""
    legacy: bool = False
    """Formats /1 and /2, whose header does not name ``long_min`` and ``short_min``."""

    @property
    def spec(self) -> NgramSpec:
        """The text spec's implementation."""
        from evalsuite._core.text import SPECS

        return SPECS[self.hash]

    def header(self) -> dict[str, Any]:
        """Header fields that describe the format (the file adds suite, version, canary)."""
        fields: dict[str, Any] = {"format": self.name, "hash": self.hash, "n": self.n}
        if not self.legacy:
            fields.update(long_min=self.long_min, short_min=SHORT_MIN)
        return fields


FORMATS: dict[str, FingerprintFormat] = {
    f.name: f
    for f in (
        FingerprintFormat("evalsuite-fingerprints/1", NGRAM_V2, 13, 13, short=False, legacy=True),
        FingerprintFormat("evalsuite-fingerprints/2", NGRAM_V2, 13, 13, short=True, legacy=True),
        FingerprintFormat("evalsuite-fingerprints/3", NGRAM_V3, 8, LONG_MIN, short=True),
    )
}
"""Every readable format, by name."""
FINGERPRINT_FORMAT = "evalsuite-fingerprints/3"
"""The format new versions are frozen with."""
NGRAM_SIZE = FORMATS[FINGERPRINT_FORMAT].n


@dataclass(frozen=True, slots=True)
class FingerprintRecord:
    """The fingerprint of one item."""

    id: str
    split: Split
    stratum: str
    text_hashes: list[str]
    """Exact-match keys: hash of each normalised text field (input, target, files)."""
    ngrams: list[int]
    """Sorted, unique 64-bit hashes of the n-grams of the item's long texts."""
    short: list[list[int]]
    """Sorted, unique ``[L, head, whole]`` of texts of `SHORT_MIN` <= L < ``long_min``
    words (empty in format /1)."""


def _message_text(message: Any) -> str:
    if isinstance(message, dict):
        content = message.get("content", "")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(message)


def item_texts(item: Item) -> list[str]:
    """The text fields of an item that a curriculum could contain."""
    texts: list[str] = []
    if isinstance(item.input, str):
        texts.append(item.input)
    else:
        texts.extend(_message_text(m) for m in item.input)
    texts.extend([item.target] if isinstance(item.target, str) else item.target)
    if item.files:
        texts.extend(item.text_files().values())
    return [t for t in texts if t.strip()]


def fingerprint_item(
    item: Item, *, split: Split, stratum: str, format: str = FINGERPRINT_FORMAT
) -> FingerprintRecord:
    """Fingerprint one item in `format` (see `evalsuite._core.text` for the hashing specs)."""
    from evalsuite._core.text import ngram_hashes

    fmt = FORMATS[format]
    texts = item_texts(item)
    grams: set[int] = set()
    short: set[tuple[int, int, int]] = set()
    for text in texts:
        hashes = fmt.spec.word_hashes(text)
        if len(hashes) >= fmt.long_min:
            grams.update(int(h) for h in ngram_hashes(hashes, fmt.n))
        elif fmt.short and len(hashes) >= SHORT_MIN:
            head = int(ngram_hashes(hashes[:SHORT_MIN], SHORT_MIN)[0])
            whole = int(ngram_hashes(hashes, len(hashes))[0])
            short.add((len(hashes), head, whole))
    return FingerprintRecord(
        id=item.id,
        split=split,
        stratum=stratum,
        text_hashes=sorted({fmt.spec.text_hash(t) for t in texts}),
        ngrams=sorted(grams),
        short=[list(s) for s in sorted(short)],
    )


def render_fingerprints(
    records: Iterable[FingerprintRecord],
    *,
    suite: str,
    version: str,
    canary: str,
    format: str = FINGERPRINT_FORMAT,
    extra: Mapping[str, Any] | None = None,
) -> str:
    """The fingerprint file: a header line, then one JSON line per item sorted by id.

    Deterministic: the same records give the same bytes (keys sorted, items sorted by id,
    hashes sorted), whatever the order of `records`, the hash seed or the platform.

    Args:
        records: Item fingerprints, made in `format`.
        suite: Suite name.
        version: Suite version.
        canary: The suite's canary.
        format: File format (`FORMATS`).
        extra: More header fields (derived fingerprint files record what they derive from).
    """
    fmt = FORMATS[format]
    header = {**fmt.header(), "suite": suite, "version": version, "canary": canary}
    header.update(extra or {})
    lines = [json.dumps(header, sort_keys=True)]
    for record in sorted(records, key=lambda r: r.id):
        fields: dict[str, Any] = {
            "id": record.id,
            "split": record.split,
            "stratum": record.stratum,
            "text_hashes": record.text_hashes,
            "ngrams": record.ngrams,
        }
        if fmt.short:
            fields["short"] = record.short
        lines.append(json.dumps(fields, sort_keys=True))
    return "\n".join(lines) + "\n"


def file_format(text: str) -> str | None:
    """The format a fingerprint file's header names, if it is a readable one."""
    first = text.split("\n", 1)[0]
    try:
        header = json.loads(first)
    except ValueError:
        return None
    name = header.get("format") if isinstance(header, dict) else None
    return name if isinstance(name, str) and name in FORMATS else None


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe_difference(old: str | None, new: str) -> str:
    """What differs between two fingerprint files, field by field (hashes only, no text)."""
    if old is None:
        return "the frozen file is missing"
    old_lines, new_lines = old.splitlines(), new.splitlines()
    if not old_lines or not new_lines:
        return "one of the files is empty"
    found: list[str] = []
    try:
        old_header, new_header = json.loads(old_lines[0]), json.loads(new_lines[0])
    except ValueError:
        return "the frozen file's header is not valid JSON"
    for key in sorted(set(old_header) | set(new_header)):
        if old_header.get(key) != new_header.get(key):
            found.append(
                f"header {key}: {_short(old_header.get(key))} -> {_short(new_header.get(key))}"
            )
    try:
        old_records = {r["id"]: r for r in map(json.loads, old_lines[1:]) if isinstance(r, dict)}
        new_records = {r["id"]: r for r in map(json.loads, new_lines[1:]) if isinstance(r, dict)}
    except (ValueError, KeyError, TypeError):
        return "; ".join([*found, "the frozen file's item records are not valid"])
    differing = sorted(
        i for i in set(old_records) | set(new_records) if old_records.get(i) != new_records.get(i)
    )
    if differing:
        first = differing[0]
        a, b = old_records.get(first, {}), new_records.get(first, {})
        fields = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        found.append(
            f"{len(differing)} item record(s) differ, first {first!r} in field(s) {fields}"
        )
    return "; ".join(found) or "the files differ only in layout (white space or key order)"
