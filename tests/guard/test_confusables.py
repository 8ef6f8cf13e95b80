"""Copies written with Unicode lookalikes are caught (issue 28, point 15): the guard screens a
document with confusable characters folded to ASCII as well (UTS #39 confusables data,
docs/design/guard-normalisation.md, "Confusables"), and still finds all it found before."""

from __future__ import annotations

import random

import pytest

from evalsuite.guard import _screen
from evalsuite.guard._confusables import fold_all, fold_confusables, fold_table
from evalsuite.guard._index import build_index
from evalsuite.guard._screen import screen_documents
from tests.guard.test_screen import Item, fingerprint_set, key, scenario  # noqa: F401 - a fixture

LOOKALIKES = str.maketrans("aeopcxyABEHKMOPTX", "аеорсхуАВЕНКМОРТХ")
"""Latin letters and their Cyrillic twins."""

TEXT = (
    "Please compute the total cost of seven apples at three coins each, then explain to the "
    "customer why the price on the receipt is different from the price on the shelf today"
)
SHORT = "Compute seven times eight please"


def _homoglyphs(text: str) -> str:
    twin = text.translate(LOOKALIKES)
    assert twin != text and all(a == b or not b.isascii() for a, b in zip(text, twin, strict=True))
    return twin


def _index():  # type: ignore[no-untyped-def]
    return build_index([fingerprint_set([Item("long", [TEXT]), Item("short", [SHORT])])])


def test_the_fold_maps_cyrillic_and_greek_lookalikes_to_ascii() -> None:
    assert fold_confusables(_homoglyphs(TEXT)) == TEXT
    assert fold_confusables("\u0399n \u0406t") == "In It"  # capital iota and І read as I
    assert fold_confusables("\u03bf\u03bd") == "ov"  # Greek omicron, nu
    # one character for one: an ASCII letter or digit, or (a combining mark) a zero-width space
    assert all(v == "\u200b" or (v.isascii() and v.isalnum()) for v in fold_table().values())
    assert not any(chr(k).isascii() for k in fold_table())  # ASCII text is never changed


def test_a_homoglyph_copy_is_found_like_the_original() -> None:
    index = _index()
    docs = [
        ("verbatim", TEXT),
        ("cyrillic", _homoglyphs(TEXT)),
        ("in text", "Some notes first.\n\n" + _homoglyphs(TEXT) + "\n\nAnd more after."),
        ("short", _homoglyphs(SHORT)),
    ]
    found = {(h.document, h.item_id): h for h in screen_documents(docs, index)}
    assert set(found) == {
        ("verbatim", "long"),
        ("cyrillic", "long"),
        ("in text", "long"),
        ("short", "short"),
    }
    assert found["cyrillic", "long"].overlap == found["verbatim", "long"].overlap == 1.0
    assert found["short", "short"].how == "exact"


def test_a_long_document_folds_from_the_piece_that_needs_it() -> None:
    """Pieces of 4 KiB: the lookalikes start in a later piece and the copy straddles a cut."""
    filler = " ".join(f"plain filler word {k}" for k in range(400))
    document = filler + " " + _homoglyphs(TEXT) + " " + filler
    for at in range(3900, 4300, 37):  # move the copy across the first cut
        doc = document[:at] + " " + _homoglyphs(TEXT) + " " + document[at:]
        hits = screen_documents([("long doc", doc)], _index(), batch_bytes=4096)
        assert [(h.item_id, h.overlap) for h in hits] == [("long", 1.0)], at


def test_text_in_another_script_is_not_flagged() -> None:
    russian = (
        "Пожалуйста, посчитайте общую стоимость семи яблок по три монеты за каждое и "
        "объясните покупателю, почему цена в чеке отличается от цены на полке сегодня"
    )
    greek = "Παρακαλώ υπολογίστε το συνολικό κόστος επτά μήλων με τρία νομίσματα το καθένα"
    assert screen_documents([("ru", russian), ("el", greek)], _index()) == []


def test_everything_found_before_is_still_found(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scenario of tests/guard/test_screen.py (its `scenario` fixture, imported)."""
    items, docs = request.getfixturevalue("scenario")
    index = build_index([fingerprint_set(items)])
    now = {key(h) for h in screen_documents(docs, index, batch_bytes=4096)}
    monkeypatch.setattr(_screen, "fold_all", list)  # no folding: the screen before it
    before = {key(h) for h in screen_documents(docs, index, batch_bytes=4096)}
    assert before and before <= now


def test_a_copy_with_diacritics_or_combining_marks_is_found() -> None:
    """Issue 28.15: a mark on every letter (combining, which NFKC composes to 'ćhá...', or
    precomposed) left no word of the item, and the copy was screened clean."""
    combining = "".join(c + "\u0301" if c.isalpha() else c for c in TEXT)
    precomposed = TEXT.translate(str.maketrans("aeiouc", "áéíóúç"))
    assert fold_confusables(precomposed) == TEXT
    french = "Veuillez calculer le coût total de sept pommes à trois pièces chacune, puis expliquer"
    docs = [("combining", combining), ("precomposed", precomposed), ("fr", french)]
    hits = screen_documents(docs, _index())
    assert sorted((h.document, h.item_id, h.overlap) for h in hits) == [
        ("combining", "long", 1.0),
        ("precomposed", "long", 1.0),
    ]


def test_folding_a_batch_at_once_equals_folding_each_text() -> None:
    """One gather for the batch: the same texts, unchanged ones returned themselves (the
    screener copies only the others), lone surrogates at the joins left apart."""
    rng = random.Random(3)
    alphabet = ["a", "\u0430", "\u00e9", "\u4e00", "\ud800", "\udc00", " ", "\u0301", "x"]
    for size in (0, 1, 2, 7, 40):
        texts = ["".join(rng.choices(alphabet, k=rng.randint(0, 9))) for _ in range(size)]
        folded = fold_all(texts)
        assert folded == [fold_confusables(t) for t in texts]
        for text, out in zip(texts, folded, strict=True):
            assert (out is text) == (fold_confusables(text) is text)
