"""The vectorised screening function against a slow, readable loop, and its edge cases."""

from __future__ import annotations

import pickle
import random
from dataclasses import dataclass
from typing import Any

import pytest

from evalsuite._core.text import ngram_hashes, normalise_words, text_hash, word_hashes
from evalsuite.holdout._batch import pieces_of
from evalsuite.holdout._index import FingerprintSet, build_index
from evalsuite.holdout._screen import Hit, screen_documents
from evalsuite.manifest._fingerprints import NGRAM_SIZE, SHORT_MIN
from tests.holdout.corpus import documents, paragraphs, split_items_and_pool

CANARY = "evalsuite-canary unit 1234"


@dataclass
class Item:
    id: str
    texts: list[str]


def record(item: Item, split: str = "holdout") -> dict[str, Any]:
    grams: set[int] = set()
    short: set[tuple[int, int, int]] = set()
    for text in item.texts:
        hashes = word_hashes(normalise_words(text))
        grams.update(ngram_hashes(hashes, NGRAM_SIZE).tolist())
        if SHORT_MIN <= len(hashes) < NGRAM_SIZE:
            head = int(ngram_hashes(hashes[:SHORT_MIN], SHORT_MIN)[0])
            short.add((len(hashes), head, int(ngram_hashes(hashes, len(hashes))[0])))
    return {
        "id": item.id,
        "split": split,
        "text_hashes": sorted({text_hash(t) for t in item.texts}),
        "ngrams": sorted(grams),
        "short": [list(s) for s in sorted(short)],
    }


def fingerprint_set(
    items: list[Item], *, suite: str = "unit", version: str = "1.0.0"
) -> FingerprintSet:
    return FingerprintSet(suite, version, CANARY, [record(i) for i in items])


def slow_screen(docs: list[tuple[str, str]], items: list[Item], threshold: float) -> list[Hit]:
    """The plain loop: per document and item, set intersections and window scans."""
    fps = [record(i) for i in items]
    hits: list[Hit] = []
    for name, text in docs:
        words = normalise_words(text)
        hashes = word_hashes(words)
        doc_grams = set(ngram_hashes(hashes, NGRAM_SIZE).tolist())
        windows = {n: set(ngram_hashes(hashes, n).tolist()) for n in range(SHORT_MIN, NGRAM_SIZE)}
        for item, fp in zip(items, fps, strict=True):
            grams = set(fp["ngrams"])
            matched = len(grams & doc_grams)
            share = matched / max(len(grams), 1)
            shorts = sum(1 for n, _h, whole in fp["short"] if whole in windows[n])
            exact = bool(words) and text_hash(text) in fp["text_hashes"]
            if exact:
                hits.append(
                    Hit(
                        name,
                        "unit",
                        "1.0.0",
                        "holdout",
                        item.id,
                        1.0,
                        max(matched, len(grams)),
                        "exact",
                    )
                )
            elif matched and share >= threshold:
                hits.append(Hit(name, "unit", "1.0.0", "holdout", item.id, share, matched, "ngram"))
            elif shorts:
                n_short = len(fp["short"])
                overlap = share if grams else shorts / n_short
                hits.append(
                    Hit(name, "unit", "1.0.0", "holdout", item.id, overlap, shorts, "short")
                )
        if CANARY in text:
            hits.append(Hit(name, "unit", "1.0.0", None, None, 1.0, 1, "canary"))
    return hits


def key(hit: Hit) -> tuple[object, ...]:
    return (hit.document, hit.item_id, hit.how, hit.matched, round(hit.overlap, 12), hit.split)


def fragment(text: str, rng: random.Random) -> str:
    words = text.split()
    start = rng.randint(0, len(words) // 2)
    return " ".join(words[start : start + rng.randint(5, len(words))])


@pytest.fixture(scope="module")
def scenario() -> tuple[list[Item], list[tuple[str, str]]]:
    rng = random.Random(3)
    texts, clean = split_items_and_pool(30, rng=rng, min_words=20)
    shorts = ["Return the sum of the two numbers.", "Name the capital city of France today please."]
    items = [Item(f"i{k}", [t, f"answer {k}"]) for k, t in enumerate(texts)]
    items += [Item("short-0", [shorts[0]]), Item("short-1", [shorts[1], "Paris"])]
    docs = documents(clean, 300, rng=rng)
    for k in range(0, 300, 3):
        pasted = rng.choice(texts)
        docs[k] += "\n" + rng.choice([pasted, pasted.upper(), fragment(pasted, rng)])
    docs[1] += " Ünïcödé — “quoted” ﬁne text: " + texts[0].replace(" ", " \u00a0")
    docs[4] = f"ends with {CANARY}"
    docs[7] = "answer 3"  # exact copy of a short target
    docs[10] = f"... {shorts[0].lower()} and more ..."
    docs[13] = "Paris"
    docs[16] = ""
    docs[19] = "!!! ??? ..."
    docs[22] = texts[5]
    docs[25] = " ".join([texts[2]] * 40)  # long: cut into pieces
    docs[28] = shorts[1].upper() + " " + " ".join(rng.sample(clean, 3))
    return items, [(f"d{k}", d) for k, d in enumerate(docs)]


@pytest.mark.parametrize("threshold", [0.05, 0.2, 0.6, 1.0])
@pytest.mark.parametrize("batch_bytes", [4096, 1 << 20])
def test_vectorised_screen_equals_slow_loop(
    scenario: tuple[list[Item], list[tuple[str, str]]], threshold: float, batch_bytes: int
) -> None:
    items, docs = scenario
    index = build_index([fingerprint_set(items)])
    fast = screen_documents(docs, index, threshold=threshold, batch_bytes=batch_bytes)
    slow = slow_screen(docs, items, threshold)
    assert sorted(map(key, fast)) == sorted(map(key, slow))
    assert {h.how for h in slow} >= {"ngram", "exact", "short", "canary"}


def test_long_document_in_pieces_counts_each_gram_once(
    scenario: tuple[list[Item], list[tuple[str, str]]],
) -> None:
    items, docs = scenario
    index = build_index([fingerprint_set(items)])
    name, text = docs[25]
    small = screen_documents([(name, text)], index, batch_bytes=4096)
    whole = screen_documents([(name, text)], index, batch_bytes=1 << 20)
    assert len(text) > 4096
    assert [key(h) for h in small] == [key(h) for h in whole]
    assert [(h.item_id, h.overlap) for h in small] == [("i2", 1.0)]


def test_pieces_overlap_so_no_gram_or_canary_at_a_cut_is_missed() -> None:
    rng = random.Random(11)
    words = [
        rng.choice(["alpha", "beta", "Gamma,", "--", "delta.", "é", "x_y"]) for _ in range(5000)
    ]
    text = " ".join(words) + " " + CANARY + " " + " ".join(words[:50])
    for size in (4096, 5000, 7777):
        pieces = list(
            pieces_of(
                "t",
                iter([text[i : i + 1000] for i in range(0, len(text), 1000)]),
                size=size,
                overlap_words=12,
                overlap_chars=len(CANARY),
            )
        )
        assert pieces[-1].final and not any(p.final for p in pieces[:-1])
        assert [p.part for p in pieces] == list(range(len(pieces)))
        full = ngram_hashes(word_hashes(normalise_words(text)), 13).tolist()
        seen: set[int] = set()
        for p in pieces:
            seen.update(ngram_hashes(word_hashes(normalise_words(p.text)), 13).tolist())
        assert set(full) <= seen
        assert any(CANARY in p.text for p in pieces)
        # stitching the pieces back without their overlaps gives the text
        assert "".join(p.text[p.overlap :] for p in pieces) == text


def test_canary_across_a_document_boundary_is_not_a_hit() -> None:
    index = build_index([fingerprint_set([])])
    half = len(CANARY) // 2
    docs = [("a", "x " + CANARY[:half]), ("b", CANARY[half:] + " y"), ("c", CANARY)]
    assert [(h.document, h.how) for h in screen_documents(docs, index)] == [("c", "canary")]


def test_ngram_across_a_document_boundary_is_not_a_hit() -> None:
    text = " ".join(f"w{k}" for k in range(13))
    index = build_index([fingerprint_set([Item("x", [text])])])
    split = [
        ("a", " ".join(f"w{k}" for k in range(6))),
        ("b", " ".join(f"w{k}" for k in range(6, 13))),
    ]
    assert screen_documents(split, index) == []
    assert [h.how for h in screen_documents([("c", "pre " + text)], index)] == ["ngram"]


def test_index_pickles_and_screening_is_pure() -> None:
    texts = [p for p in paragraphs() if len(p.split()) > 30][:20]
    index = build_index([fingerprint_set([Item(f"i{k}", [t]) for k, t in enumerate(texts)])])
    clone = pickle.loads(pickle.dumps(index))
    docs = [("a", "zz " + texts[3]), ("b", "clean")]
    assert screen_documents(docs, clone) == screen_documents(docs, index)
    assert screen_documents(docs, index) == screen_documents(docs, index)


def test_empty_inputs() -> None:
    index = build_index([])
    assert screen_documents([], index) == []
    assert screen_documents([("a", "")], index) == []
