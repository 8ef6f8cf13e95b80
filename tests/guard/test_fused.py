"""The fused spec /3 path (prepare on bytes, step 5 inside the compiled word pass) against the
numpy reference, on adversarial text.

`match_batch` of a spec /3 part runs `prepare_batch_v3` and `_jit.screen_prepared`;
`compiled=False` (and ``EVALSUITE_GUARD_NO_JIT=1``) runs `normalise_batch_v3` and numpy. Both
must give the same words, hashes, matches and hits: on mixed ASCII and non-ASCII documents,
confusables, JSON escapes (also read from JSONL), chat markers, separator bytes inside
documents, empty documents, very long words, and canaries at piece cuts and document
boundaries.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import evalsuite._core.text as text_module
from evalsuite._core.text import (
    NGRAM_V3,
    Scanned,
    fast_word_hashes,
    normalise_batch_v3,
    prepare_batch_v3,
    scan_v3,
    word_hashes,
    words_v3,
)
from evalsuite.guard import _kernel
from evalsuite.guard._guard import GuardOptions, guard
from evalsuite.guard._index import build_index
from evalsuite.guard._match import find_canaries, match_batch
from evalsuite.guard._screen import screen_documents
from tests.guard.test_confusables import LOOKALIKES
from tests.guard.test_screen import CANARY, Item, fingerprint_set, scenario  # noqa: F401

pytestmark = pytest.mark.skipif(not _kernel.available(), reason="numba is not importable")

_PIECES = [
    "word",
    "Word",
    "WORD.",
    "e-mail",
    "t.18699",
    "caf\u00e9",
    "c\u0430t",  # Cyrillic a
    "\u0440\u0430\u0443",  # all lookalikes
    "\u4e00\u4e8c",
    "\U0001f600",
    "a\u0301",
    "\\n",
    "\\\\n",
    "\\t",
    "\\u0065x",
    "\\ud83d\\ude00",
    "\\\\u00e9",
    "<|im_end|>",
    "<s>",
    "</s>",
    "[INST]",
    "[/inst]",
    "<<SYS>>",
    "<|a b|>",
    "<",
    "[",
    "\\",
    "x" * 300,
    "\u00e9" * 200,
    "\x01",
    "\x02",
    "\x10",  # the first separator tried
    "\x11",
    "\x00",
    "\t",
    "\r\n",
    "\u00a0",
    "\u2028",
    "\ufb01",
    "\u212b",
    "",
]


def _document(rng: random.Random) -> str:
    size = rng.choice([0, 1, 2, 5, 30, 200])
    seps = [" ", " ", " ", "\n", "", "\t", "  "]
    return "".join(rng.choice(_PIECES) + rng.choice(seps) for _ in range(size))


def _ascii_document(rng: random.Random) -> str:
    return " ".join(
        rng.choice(["alpha", "Beta,", "gamma.", "x" * 90, "<b>", "\\n"]) for _ in range(50)
    )


def _batches(seed: int) -> Iterator[list[str]]:
    rng = random.Random(seed)
    for _ in range(30):
        kind = rng.random()
        n = rng.choice([1, 2, 3, 10, 40])
        if kind < 0.2:
            yield [_ascii_document(rng) for _ in range(n)]
        else:
            yield [_document(rng) if rng.random() < 0.6 else _ascii_document(rng) for _ in range(n)]
    # every spare separator used: one document at a time
    yield ["".join(chr(c) for c in range(1, 32)) + " end", "plain text", ""]
    yield ["", "", ""]
    yield [""]


def _joined(texts: list[str]) -> tuple[bytes, int]:
    """The raw batch as the compiled scan first sees it (joined by the first separator, which
    a document may hold)."""
    first = text_module._SEPARATORS[0]
    return chr(first).join(texts).encode("utf-8", "surrogatepass"), first


def _assert_same_scan(got: Scanned, expected: Scanned) -> None:
    assert np.array_equal(got[0], expected[0])
    assert np.array_equal(got[1], expected[1]) and got[1].shape == expected[1].shape
    assert got[2] == expected[2]


_SCAN_BYTES = b"ab \\u<[\n\x01\x02\x10\xc3\xa9\xe4\xb8\x80"


@pytest.mark.parametrize("seed", range(3))
def test_the_compiled_scan_equals_the_numpy_scan_on_any_bytes(seed: int) -> None:
    """Every length around the scan's words of eight; marks at both ends, runs of them, lines
    with several non-ASCII bytes and escapes, backslashes last, separators anywhere."""
    steps = _kernel.steps()
    assert steps is not None
    scan = steps.scan
    rng = random.Random(seed)
    cases = [b"", b"\\", b"\\u", b"u\\", b"\xe9", b"\n\xe9\n", b"\x01" * 9, b"<" * 17]
    for size in [*range(40), 63, 64, 65, 500, 4097]:
        weights = [rng.random() for _ in _SCAN_BYTES]
        cases.append(bytes(rng.choices(_SCAN_BYTES, weights=weights, k=size)))
    for data in cases:
        for separator in (1, 2, 16):
            _assert_same_scan(scan(data, separator, None), scan_v3(data, separator))
            spans = scan_v3(data, separator)[1]  # gathered and spliced as the Unicode path does
            assert steps.gather(data, spans) == text_module.gather_v3(data, spans)
            done = bytes(rng.choices(_SCAN_BYTES, k=rng.choice([0, 5, 90])))
            cuts = np.sort(np.asarray(rng.choices(range(len(done) + 1), k=2 * len(spans))))
            starts, stops = cuts[0::2].astype(np.int64), cuts[1::2].astype(np.int64)
            expected = text_module.splice_v3(data, spans, done, starts, stops)
            assert steps.splice(data, spans, done, starts, stops) == expected


_MARKER_PIECES = [
    "[inst]",
    "[/INST]",
    "[insT",
    "[/inst",
    "<<SYS>>",
    "<</sys>>",
    "<<sys>",
    "<</sys",
    "<|im_end|>",
    "<s>",
    "</s>",
    "<",
    ">",
    "|",
    "/",
    "[",
    "]",
    "<|",
    "|>",
    "<<",
    ">>",
    "sys",
    "SyS",
    "inst",
    "INST",
    "im_end",
    "a",
    "Z",
    "9",
    "_",
    " ",
    "\t",
    "\x0b",
    "\n",
    "\\",
    "\\n",
    "\\t",
    "n",
    "\x01",
    "\x10",
    "\x1c",
    "\u00e9",
    "x" * 31,
    "y" * 32,
    "z" * 64,
    "w" * 65,
]


@pytest.mark.parametrize("seed", range(4))
def test_the_compiled_blanking_equals_the_regular_expressions(seed: int) -> None:
    """Markers at every length limit (64 inside <|...|>, 31 after a tag's letter), nested and
    overlapping markers, escaped letters inside markers, markers across Unicode-path lines,
    the separator and \\x01 inside <|...|>, ends of the buffer."""
    steps = _kernel.steps()
    assert steps is not None
    blank = steps.blank
    rng = random.Random(seed)
    for _ in range(400):
        text = "".join(rng.choices(_MARKER_PIECES, k=rng.choice([1, 3, 10, 40])))
        data = text.encode("utf-8")
        for separator in (1, 16):
            specials, spans, _ = scan_v3(data, separator)
            expected = text_module.blank_v3(data, separator, spans, specials)
            assert blank(data, separator, spans, specials) == expected, (text, separator)
            skip = np.asarray([sorted(rng.sample(range(len(data) + 1), 2))], dtype=np.int64)
            expected = text_module.blank_v3(data, separator, skip, specials)  # any span skipped
            assert blank(data, separator, skip, specials) == expected, (text, skip)


@pytest.mark.parametrize("seed", range(6))
def test_the_fused_word_pass_equals_the_numpy_path(seed: int) -> None:
    screen = _kernel.prepared_kernel()
    assert screen is not None
    from evalsuite.guard._jit import _prepared_words

    steps = _kernel.steps()
    assert steps is not None
    for texts in _batches(seed):
        prepared = prepare_batch_v3(texts, steps=steps)
        assert prepared == prepare_batch_v3(texts)
        for data, separator in ((prepared.data, prepared.separator), _joined(texts)):
            _assert_same_scan(steps.scan(data, separator, None), scan_v3(data, separator))
        reference = normalise_batch_v3(texts)
        hashes, doc_words, ends = _prepared_words(
            np.frombuffer(prepared.data, dtype=np.uint8),
            *_kernel.byte_tables(prepared.separator),
            prepared.separator,
            max(len(texts), 1),
        )
        words, starts = fast_word_hashes(reference.buffer, zero_gaps=True)
        assert np.array_equal(hashes, words)
        expected = np.searchsorted(starts, reference.offsets)
        assert np.array_equal(doc_words[: len(texts) + 1], expected)
        for k, text in enumerate(texts):
            start = int(ends[k - 1]) + 1 if k else 0
            got = [w.decode("utf-8", "surrogatepass") for w in prepared.words(start, int(ends[k]))]
            assert got == words_v3(text), (seed, text)
            own = hashes[doc_words[k] : doc_words[k + 1]]
            assert np.array_equal(own, word_hashes(words_v3(text)))


def _items(rng: random.Random) -> list[Item]:
    vocabulary = [f"w{k}" for k in range(400)]
    items = []
    for k in range(12):
        n = rng.choice([4, 6, 9, 20, 40])
        items.append(Item(f"i{k}", [" ".join(rng.choice(vocabulary) for _ in range(n))]))
    return items


def _adversarial(text: str, rng: random.Random) -> str:
    edits = [
        lambda t: t.upper(),
        lambda t: t.translate(LOOKALIKES),
        lambda t: t.replace(" ", "\\n", 3),
        lambda t: t.replace("w", "\\u0077"),
        lambda t: "<|im_start|>" + t.replace(" ", " <s> ", 2) + "[/INST]",
        lambda t: "\u00e9 " + t + " \u4e00",
        lambda t: t.replace(" ", ",\u00a0"),
        lambda t: "x" * 5000 + " " + t,
        lambda t: t,
    ]
    return rng.choice(edits)(text)


def _documents(rng: random.Random, items: list[Item]) -> list[tuple[str, str]]:
    docs = []
    for k in range(60):
        parts = [_document(rng) for _ in range(rng.choice([0, 1, 3]))]
        if rng.random() < 0.5:
            parts.append(_adversarial(rng.choice(items).texts[0], rng))
        if rng.random() < 0.2:
            parts.insert(rng.randrange(len(parts) + 1), CANARY)
        if rng.random() < 0.1:  # a long document, cut into pieces at about 4 KiB
            parts = [" ".join(["filler text"] * 400), *parts, " ".join(["more"] * 1200)]
            parts.insert(rng.randrange(len(parts) + 1), CANARY)
        docs.append((f"d{k}", "\n".join(parts)))
    half = len(CANARY) // 2
    docs += [("split-a", "x " + CANARY[:half]), ("split-b", CANARY[half:] + " y"), ("empty", "")]
    return docs


@pytest.mark.parametrize("seed", range(4))
def test_adversarial_screens_find_the_same_hits_on_both_paths(
    seed: int, request: pytest.FixtureRequest
) -> None:
    rng = random.Random(seed)
    items = _items(rng)
    index = build_index([fingerprint_set(items)])
    assert index.parts[0].spec == NGRAM_V3
    docs = _documents(rng, items)
    for batch_bytes in (4096, 1 << 20):
        texts = [t for _, t in docs]
        fast = match_batch(texts, index.parts[0], compiled=True)
        slow = match_batch(texts, index.parts[0], compiled=False)
        for name in ("gram_doc", "gram_item", "gram_id", "short_doc", "short_item", "short_id"):
            assert np.array_equal(getattr(fast, name), getattr(slow, name)), name
        assert fast.exact == slow.exact and fast.n_bytes == slow.n_bytes
        compiled = screen_documents(docs, index, batch_bytes=batch_bytes)
        request.getfixturevalue("numpy_path")
        assert not _kernel.available()
        reference = screen_documents(docs, index, batch_bytes=batch_bytes)
        assert compiled == reference
        assert {h.how for h in compiled} >= {"canary", "ngram"}
        assert "split-a" not in {h.document for h in compiled}


def test_jsonl_with_escapes_gives_the_same_report_on_both_paths(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    rng = random.Random(7)
    items = _items(rng)
    index = build_index([fingerprint_set(items)])
    docs = _documents(rng, items)
    path = tmp_path / "c.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for k, (_, text) in enumerate(docs):  # \uXXXX escapes for all non-ASCII, or raw UTF-8
            handle.write(json.dumps({"id": k, "text": text}, ensure_ascii=k % 2 == 0) + "\n")
    fast = guard([path], index, options=GuardOptions(batch_bytes=4096))
    request.getfixturevalue("numpy_path")
    slow = guard([path], index, options=GuardOptions(batch_bytes=4096))
    assert fast.hits == slow.hits and fast.bytes_scanned == slow.bytes_scanned
    assert fast.documents_scanned == slow.documents_scanned == len(docs)
    assert fast.hits


@pytest.mark.parametrize("seed", range(3))
def test_canaries_found_in_the_joined_batch_are_those_of_each_document(seed: int) -> None:
    """Canaries at the start and end of documents, across two documents (not a hit), holding
    the separator, non-ASCII, repeated and overlapping, empty, one character; documents that
    hold the first separator (the batch is joined again by another byte)."""
    rng = random.Random(seed)
    canaries = [CANARY, "caf\u00e9 \u4e00 mark", "aa", "a", "", "x\x10y", "\x11z"]
    pieces = [*canaries, "b", "aaa", " ", "\u00e9", "\x10", "caf", "\u00e9 \u4e00 mark", "x", "y"]
    steps = _kernel.steps()
    assert steps is not None
    for _ in range(40):
        texts = ["".join(rng.choices(pieces, k=rng.choice([0, 1, 2, 6]))) for _ in range(9)]
        part = build_index([fingerprint_set(_items(rng))]).parts[0]
        fast = match_batch(texts, part, compiled=True, canaries=canaries)
        slow = match_batch(texts, part, compiled=False, canaries=canaries)
        expected = find_canaries(texts, canaries)
        assert fast.canaries == slow.canaries == expected
        assert prepare_batch_v3(texts, steps=steps).raw is not None
    assert match_batch(["plain"], part, compiled=True).canaries is None
    across = match_batch(["ends x", "y starts"], part, compiled=True, canaries=["x\x10y"])
    assert across.canaries == []


def test_the_size_of_the_first_documents_is_counted_on_both_paths() -> None:
    """The screener counts the UTF-8 size of a batch without its folded copies (`sized`)."""
    rng = random.Random(11)
    part = build_index([fingerprint_set(_items(rng))]).parts[0]
    for _ in range(30):
        texts = [_document(rng) for _ in range(rng.randint(1, 9))]
        for sized in {0, 1, len(texts) // 2, len(texts), None}:
            first = texts if sized is None else texts[:sized]
            expected = sum(len(t.encode("utf-8", "surrogatepass")) for t in first)
            for compiled in (True, False):
                got = match_batch(texts, part, compiled=compiled, sized=sized).n_bytes
                assert got == expected, (texts, sized, compiled)
