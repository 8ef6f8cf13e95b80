"""The vectorised screening function against a slow, readable loop, and its edge cases."""

from __future__ import annotations

import json
import pickle
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from evalsuite._core.text import ngram_hashes, normalise_words, word_hashes
from evalsuite.guard._batch import pieces_of
from evalsuite.guard._index import FingerprintSet, build_index
from evalsuite.guard._screen import Hit, screen_documents
from evalsuite.manifest._fingerprints import FINGERPRINT_FORMAT, FORMATS, SHORT_MIN
from tests.guard.corpus import documents, paragraphs, split_items_and_pool

CANARY = "evalsuite-canary unit 1234"
LEGACY = "evalsuite-fingerprints/2"


@dataclass
class Item:
    id: str
    texts: list[str]


def record(item: Item, fmt: str = FINGERPRINT_FORMAT, split: str = "holdout") -> dict[str, Any]:
    spec = FORMATS[fmt]
    grams: set[int] = set()
    short: set[tuple[int, int, int]] = set()
    for text in item.texts:
        hashes = word_hashes(spec.spec.words(text))
        if len(hashes) >= spec.long_min:
            grams.update(ngram_hashes(hashes, spec.n).tolist())
        elif len(hashes) >= SHORT_MIN:
            head = int(ngram_hashes(hashes[:SHORT_MIN], SHORT_MIN)[0])
            short.add((len(hashes), head, int(ngram_hashes(hashes, len(hashes))[0])))
    return {
        "id": item.id,
        "split": split,
        "text_hashes": sorted({spec.spec.text_hash(t) for t in item.texts}),
        "ngrams": sorted(grams),
        "short": [list(s) for s in sorted(short)],
    }


def fingerprint_set(
    items: list[Item], *, fmt: str = FINGERPRINT_FORMAT, suite: str = "unit", version: str = "1.0.0"
) -> FingerprintSet:
    return FingerprintSet(suite, version, CANARY, [record(i, fmt) for i in items], format=fmt)


def evidence(
    records: list[dict[str, Any]],
) -> list[tuple[set[int], set[tuple[int, ...]], set[str]]]:
    """The evidence rule in plain Python: what an item shares with another counts for neither,
    unless the item has no n-gram or short text of its own."""
    grams = Counter(g for r in records for g in set(r["ngrams"]))
    shorts = Counter(tuple(s) for r in records for s in {tuple(s) for s in r["short"]})
    exact = Counter(h for r in records for h in set(r["text_hashes"]))
    out = []
    for r in records:
        g, s, e = set(r["ngrams"]), {tuple(x) for x in r["short"]}, set(r["text_hashes"])
        own_g, own_s = {x for x in g if grams[x] == 1}, {x for x in s if shorts[x] == 1}
        if own_g or own_s:
            out.append((own_g, own_s, {x for x in e if exact[x] == 1}))
        else:
            out.append((g, s, e))
    return out


@dataclass(frozen=True)
class _Pair:
    """What the plain loop finds for one (document, item): the threshold decides the rest."""

    item_id: str
    matched: int
    share: float
    shorts: int
    exact: bool
    n_grams: int
    n_shorts: int


def slow_evidence(
    docs: list[tuple[str, str]], items: list[Item], fmt: str = FINGERPRINT_FORMAT
) -> list[tuple[str, bool, list[_Pair]]]:
    """The plain loop's costly part, which no threshold changes: per document (name, whether
    it holds the canary) and per item, set intersections and window scans."""
    spec = FORMATS[fmt]
    fps = evidence([record(i, fmt) for i in items])
    found = []
    for name, text in docs:
        words = spec.spec.words(text)
        hashes = word_hashes(words)
        doc_grams = set(ngram_hashes(hashes, spec.n).tolist())
        windows = {
            n: set(ngram_hashes(hashes, n).tolist()) for n in range(SHORT_MIN, spec.long_min)
        }
        # the document's exact-text hash is the same for every item: computed once per
        # document (per item it was 38 hashes of each document, seconds of the loop)
        doc_hash = spec.spec.text_hash(text) if words else None
        pairs = []
        for item, (grams, shorts_of, exacts) in zip(items, fps, strict=True):
            matched = len(grams & doc_grams)
            pairs.append(
                _Pair(
                    item_id=item.id,
                    matched=matched,
                    share=matched / max(len(grams), 1),
                    shorts=sum(1 for n, _h, whole in shorts_of if whole in windows[n]),
                    exact=doc_hash is not None and doc_hash in exacts,
                    n_grams=len(grams),
                    n_shorts=len(shorts_of),
                )
            )
        found.append((name, CANARY in text, pairs))
    return found


def slow_hits_at(found: list[tuple[str, bool, list[_Pair]]], threshold: float) -> list[Hit]:
    """The plain loop's verdicts at one threshold, from `slow_evidence`."""
    hits: list[Hit] = []
    for name, has_canary, pairs in found:
        for p in pairs:
            if p.exact:
                hit = Hit(
                    name,
                    "unit",
                    "1.0.0",
                    "holdout",
                    p.item_id,
                    1.0,
                    max(p.matched, p.n_grams),
                    "exact",
                )
            elif p.matched and p.share >= threshold:
                hit = Hit(name, "unit", "1.0.0", "holdout", p.item_id, p.share, p.matched, "ngram")
            elif p.shorts:
                overlap = p.share if p.n_grams else p.shorts / p.n_shorts
                hit = Hit(name, "unit", "1.0.0", "holdout", p.item_id, overlap, p.shorts, "short")
            else:
                continue
            hits.append(hit)
        if has_canary:
            hits.append(Hit(name, "unit", "1.0.0", None, None, 1.0, 1, "canary"))
    return hits


def key(hit: Hit) -> tuple[object, ...]:
    return (hit.document, hit.item_id, hit.how, hit.matched, round(hit.overlap, 12), hit.split)


def fragment(text: str, rng: random.Random) -> str:
    words = text.split()
    start = rng.randint(0, len(words) // 2)
    return " ".join(words[start : start + rng.randint(5, len(words))])


TEMPLATE = (
    "Dear customer, thank you for writing to the help desk. We answer every message within "
    "two working days, and we keep a record of it."
)


@pytest.fixture(scope="module")
def scenario() -> tuple[list[Item], list[tuple[str, str]]]:
    rng = random.Random(3)
    texts, clean = split_items_and_pool(30, rng=rng, min_words=20)
    shorts = ["Return the sum of the two numbers.", "Name the capital city of France today please."]
    items = [Item(f"i{k}", [t, f"answer {k}"]) for k, t in enumerate(texts)]
    items += [Item("short-0", [shorts[0]]), Item("short-1", [shorts[1], "Paris"])]
    # a templated family: a shared preamble (not evidence), a shared short text, duplicates
    for k in range(4):
        items.append(
            Item(f"tpl-{k}", [TEMPLATE + " " + texts[k][:120], "Kind regards, the desk team."])
        )
    items += [Item("dup-a", [texts[9] + " dup"]), Item("dup-b", [texts[9] + " dup"])]
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
    docs[31] = TEMPLATE + " Kind regards, the desk team."  # shared text only: no hit
    docs[34] = "intro " + texts[9] + " dup"  # both duplicates
    docs[37] = TEMPLATE.replace(",", "") + " " + texts[2][:120]
    docs[40] = json.dumps({"prompt": texts[6].replace(", ", ",\n")})
    return items, [(f"d{k}", d) for k, d in enumerate(docs)]


@pytest.fixture(scope="module")
def slow_hits(
    scenario: tuple[list[Item], list[tuple[str, str]]],
) -> Callable[[float, str], list[Hit]]:
    """The plain loop's hits for the scenario: the loop runs once per format (it depends on neither
    the batch size nor the threshold, and the current format's loop costs seconds a call),
    its verdicts once per (threshold, format) (docs/design/test-speed.md)."""
    items, docs = scenario
    found: dict[str, list[tuple[str, bool, list[_Pair]]]] = {}

    def hits(threshold: float, fmt: str) -> list[Hit]:
        if fmt not in found:
            found[fmt] = slow_evidence(docs, items, fmt)
        return slow_hits_at(found[fmt], threshold)

    return hits


@pytest.mark.parametrize("fmt", [FINGERPRINT_FORMAT, LEGACY])
@pytest.mark.parametrize("threshold", [0.05, 0.2, 0.6, 1.0])
@pytest.mark.parametrize("batch_bytes", [4096, 1 << 20])
def test_vectorised_screen_equals_slow_loop(
    scenario: tuple[list[Item], list[tuple[str, str]]],
    slow_hits: Callable[[float, str], list[Hit]],
    threshold: float,
    batch_bytes: int,
    fmt: str,
) -> None:
    items, docs = scenario
    index = build_index([fingerprint_set(items, fmt=fmt)])
    fast = screen_documents(docs, index, threshold=threshold, batch_bytes=batch_bytes)
    slow = slow_hits(threshold, fmt)
    assert sorted(map(key, fast)) == sorted(map(key, slow))
    assert {h.how for h in slow} >= {"ngram", "exact", "short", "canary"}


def test_text_shared_by_several_items_is_not_evidence(
    scenario: tuple[list[Item], list[tuple[str, str]]],
) -> None:
    items, docs = scenario
    index = build_index([fingerprint_set(items)])
    found = {(h.document, h.item_id) for h in screen_documents(docs, index)}
    assert not {i for d, i in found if d == "d31"}  # the template alone flags nobody
    # duplicates have nothing of their own: all of it counts, for both, and for i9, which
    # they contain whole
    assert {i for d, i in found if d == "d34"} == {"dup-a", "dup-b", "i9"}
    assert {i for d, i in found if d == "d37"} >= {"tpl-2"}  # its own part still counts
    assert not {i for d, i in found if d == "d37"} & {"tpl-0", "tpl-1", "tpl-3"}


def test_current_spec_reads_punctuation_json_and_chat_markers_away(
    scenario: tuple[list[Item], list[tuple[str, str]]],
) -> None:
    items, _ = scenario
    text = items[6].texts[0]
    stripped = "".join(c for c in text if c.isalnum() or c.isspace())
    chat = "<|im_start|>user\n" + text.replace(" ", "  ") + "<|im_end|>"
    edited = [("plain", stripped), ("json", json.dumps(text)), ("chat", chat)]
    current = build_index([fingerprint_set(items)])
    assert {(h.document, h.item_id) for h in screen_documents(edited, current)} == {
        (name, "i6") for name, _ in edited
    }
    # both parts in one index (a legacy version with its derived file): one hit per item
    both = build_index([fingerprint_set(items, fmt=LEGACY), fingerprint_set(items)])
    assert [p.spec for p in both.parts] == ["evalsuite-ngram/3", "evalsuite-ngram/2"]
    merged = screen_documents([*edited, ("verbatim", text)], both)
    assert sorted((h.document, h.item_id, h.overlap) for h in merged) == sorted(
        [(name, "i6", 1.0) for name, _ in edited] + [("verbatim", "i6", 1.0)]
    )


@pytest.mark.parametrize("fmt", [FINGERPRINT_FORMAT, LEGACY])
def test_long_document_in_pieces_counts_each_gram_once(
    scenario: tuple[list[Item], list[tuple[str, str]]], fmt: str
) -> None:
    items, docs = scenario
    index = build_index([fingerprint_set(items, fmt=fmt)])
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
