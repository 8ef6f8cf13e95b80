"""Fold confusable characters (Unicode TR39) to the ASCII letters and digits they imitate.

A copy of an item written with Cyrillic or Greek lookalikes (``Cаlculаte`` with a Cyrillic
``а``) has other words than the item, so none of its n-grams match. The guard screens such a
document twice: as written, and folded (`fold_confusables`), where each non-ASCII character
that Unicode's confusables data (UTS #39, ``confusables.txt``, as shipped by the
``confusable-homoglyphs`` package) lists as a lookalike of one ASCII letter or digit becomes
that character. ASCII text is never changed, so the frozen fingerprints (text spec
``evalsuite-ngram/3``) stay valid and a document is found at least as before
(docs/design/guard-normalisation.md, "Confusables").
"""

from __future__ import annotations

import functools
import json
import sys
import unicodedata
from collections.abc import Sequence
from importlib import resources

import numpy as np
import numpy.typing as npt

__all__ = ["fold_all", "fold_confusables", "fold_confusables_reference", "fold_table"]


def _candidates(data: dict[str, list[dict[str, str]]], char: str) -> set[str]:
    """ASCII letters and digits listed as lookalikes of `char`, with theirs (``l``, ``I``)."""
    direct = {
        h["c"]
        for h in data.get(char, ())
        if len(h["c"]) == 1 and h["c"].isascii() and h["c"].isalnum()
    }
    closure = set(direct)
    for ascii_char in direct:
        closure |= {
            h["c"]
            for h in data.get(ascii_char, ())
            if len(h["c"]) == 1 and h["c"].isascii() and h["c"].isalnum()
        }
    return closure


def _pick(char: str, candidates: set[str]) -> str:
    """The candidate a reader sees: a letter of the same case first, then a letter, a digit.

    Cyrillic ``І`` (upper case) is listed with ``l``; with ``I`` among the lookalikes of
    ``l`` it folds to ``I``, which case folding then reads as the item's ``i``.
    """

    def rank(a: str) -> tuple[bool, bool, str]:
        same_case = a.isalpha() and a.isupper() == char.isupper() and a.islower() == char.islower()
        return (not same_case, not a.isalpha(), a)

    return min(candidates, key=rank)


@functools.cache
def fold_table() -> dict[int, str]:
    """Code point -> ASCII letter or digit, for every non-ASCII confusable that has one."""
    source = resources.files("confusable_homoglyphs") / "confusables.json"
    data: dict[str, list[dict[str, str]]] = json.loads(source.read_text(encoding="utf-8"))
    table: dict[int, str] = {}
    for char in data:
        if len(char) != 1 or char.isascii():
            continue
        candidates = _candidates(data, char)
        if candidates:
            table[ord(char)] = _pick(char, candidates)
    _add_diacritics(table)
    return table


_COMBINING_BLOCKS = (
    (0x0300, 0x036F),
    (0x1AB0, 0x1AFF),
    (0x1DC0, 0x1DFF),
    (0x20D0, 0x20FF),
    (0xFE20, 0xFE2F),
)
"""The combining diacritical marks blocks (not the vowel signs of Indic or Arabic scripts)."""

_INVISIBLE = "\u200b"
"""What a combining mark folds to: deleted inside a word by the text spec (step 5), and not
composed with the letter before it by NFKC, so ``a`` + U+0301 reads ``a``."""


def _add_diacritics(table: dict[int, str]) -> None:
    """Fold letters with diacritics to their base letter, and combining marks to `_INVISIBLE`.

    ``á``, ``ǎ`` fold to ``a``, ``ά`` to ``α`` and then ``a``: a copy of an item with a mark
    on every letter (``c\u0301h\u0301a\u0301...``, which NFKC composes to ``ćhá...``) has
    other words than the item. One character still becomes one character.
    """
    for low, high in _COMBINING_BLOCKS:
        for code in range(low, high + 1):
            if unicodedata.category(chr(code)) == "Mn":
                table.setdefault(code, _INVISIBLE)
    for code in range(0x80, 0x2000):
        char = chr(code)
        if code in table or not char.isalpha():
            continue
        base = "".join(
            c for c in unicodedata.normalize("NFD", char) if unicodedata.category(c) != "Mn"
        )
        if len(base) != 1 or base == char:
            continue
        folded = base if base.isascii() else table.get(ord(base))
        if folded is not None and folded != _INVISIBLE and folded.isascii() and folded.isalnum():
            table[code] = folded


def fold_confusables(text: str) -> str:
    """`text` with its confusable characters folded to ASCII (the same object when none is).

    One character becomes one character, so offsets and lengths are kept.

    Examples:
        >>> fold_confusables("C\u0430lcul\u0430te the t\u043et\u0430l")
        'Calculate the total'
        >>> text = "plain ASCII"
        >>> fold_confusables(text) is text
        True
    """
    if text.isascii():
        return text
    data = text.encode("utf-32-le", "surrogatepass")
    folded = _point_table()[np.frombuffer(data, dtype=np.uint32)].tobytes()
    if folded == data:  # one memcmp (`np.array_equal` costs more than the fold)
        return text
    return folded.decode("utf-32-le", "surrogatepass")


def fold_all(texts: Sequence[str]) -> list[str]:
    """`fold_confusables` of each text, with one gather for them all.

    The fold maps each character to one character, so the folded texts are the slices of
    the folded concatenation; a text that did not change is returned itself.
    """
    joined = "".join(texts)
    folded = fold_confusables(joined)
    if folded is joined:
        return list(texts)
    out: list[str] = []
    start = 0
    for text in texts:
        stop = start + len(text)
        piece = folded[start:stop]
        out.append(text if piece == text else piece)
        start = stop
    return out


def fold_confusables_reference(text: str) -> str:
    """`fold_confusables` with ``str.translate`` (the plain definition, for the tests)."""
    if text.isascii():
        return text
    folded = text.translate(fold_table())
    return text if folded == text else folded


@functools.cache
def _point_table() -> npt.NDArray[np.uint32]:
    """`fold_table` as an array over every code point (4.4 MB).

    One numpy gather a text: several times faster than ``str.translate`` with a dict.
    """
    table = np.arange(sys.maxunicode + 1, dtype=np.uint32)
    folds = fold_table()
    table[np.fromiter(folds, dtype=np.uint32, count=len(folds))] = [ord(c) for c in folds.values()]
    return table
