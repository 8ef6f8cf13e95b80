"""The compiled screening kernel and the numpy folding against their references.

`_kernel.kernel` (numba) must give exactly what the numpy path gives: the same word hashes,
n-gram and head hashes, the same filter candidates, and so the same hits; `fold_confusables`
(a numpy gather) must equal `fold_confusables_reference` (``str.translate``). The numpy path
stays in the code as the reference, and these are randomized differential tests against it.
"""

from __future__ import annotations

import random
import sys

import numpy as np
import pytest

from evalsuite._core.text import SPECS, fast_word_hashes
from evalsuite.guard import _kernel
from evalsuite.guard._confusables import fold_confusables, fold_confusables_reference, fold_table
from evalsuite.guard._index import BitFilter, build_index
from evalsuite.guard._match import _rolling, match_batch
from evalsuite.guard._screen import screen_documents
from evalsuite.manifest._fingerprints import FINGERPRINT_FORMAT
from tests.guard.test_confusables import LOOKALIKES
from tests.guard.test_screen import Item, fingerprint_set, scenario  # noqa: F401 - a fixture

pytestmark = pytest.mark.skipif(not _kernel.available(), reason="numba is not importable")


def _buffer(rng: random.Random, size: int) -> bytes:
    """A normalised buffer: words of bytes > 32 (ASCII and UTF-8) separated by 0 bytes."""
    alphabet = b"abcdefghijklmnopqrstuvwxyz0123456789" + bytes(range(128, 256))
    out = bytearray()
    while len(out) < size:
        out += bytes(rng.choice(alphabet) for _ in range(rng.choice([1, 2, 3, 5, 9, 40])))
        out += b"\x00" * rng.choice([1, 1, 1, 2, 7])
    if rng.random() < 0.5:
        out = out.rstrip(b"\x00")
    return bytes(out[: size if rng.random() < 0.5 else len(out)])


def _filter(rng: np.random.Generator, keys: np.ndarray, extra: int) -> BitFilter:
    noise = rng.integers(0, 2**63, size=extra, dtype=np.uint64) * np.uint64(2)
    every = np.sort(np.concatenate([keys, noise]))  # sorted unique, as the index holds them
    return BitFilter.of(every[np.concatenate(([True], every[1:] != every[:-1]))])


@pytest.mark.parametrize("seed", range(12))
def test_hashes_and_candidates_equal_the_numpy_path(seed: int) -> None:
    rng, nrng = random.Random(seed), np.random.default_rng(seed)
    screen = _kernel.kernel()
    assert screen is not None
    for size in (0, 1, 3, 17, 200, 5000, 60_000):
        data = _buffer(rng, size)
        n, m = rng.choice([(8, 5), (13, 5), (8, 8), (3, 2), (1, 1), (8, 0)])
        words, starts = fast_word_hashes(data, zero_gaps=True)
        grams, heads = _rolling(words, n, m or n)
        if m == 0:  # no short texts: the kernel rolls no heads
            heads = heads[:0]
        # filters holding some of the buffer's own n-grams (and many others), packed or not
        gram_filter = _filter(nrng, grams[:: rng.choice([1, 3, 50])], rng.choice([10, 300_000]))
        head_filter = _filter(nrng, heads[:: rng.choice([1, 7])], rng.choice([10, 300_000]))
        got = screen(
            np.frombuffer(data, dtype=np.uint8),
            n,
            m,
            gram_filter.table.view(np.uint8),
            np.uint64(gram_filter.shift),
            gram_filter.table.dtype != np.bool_,
            head_filter.table.view(np.uint8),
            np.uint64(head_filter.shift),
            head_filter.table.dtype != np.bool_,
        )
        gram_cand, head_cand = gram_filter.candidates(grams), head_filter.candidates(heads)
        expected = (words, starts, gram_cand, grams[gram_cand], head_cand, heads[head_cand])
        for mine, reference in zip(got, expected, strict=True):
            assert mine.dtype == reference.dtype
            assert np.array_equal(mine, reference), (seed, size, n, m)


def _noisy(text: str, rng: random.Random) -> str:
    """Case, punctuation, lookalikes, markup and escapes: what the normaliser must undo."""
    edits = [
        lambda t: t.upper(),
        lambda t: t.translate(LOOKALIKES),
        lambda t: t.replace(" ", "\n\n", 3).replace(",", " ;"),
        lambda t: "<|im_start|>user\n" + t + "<|im_end|>",
        lambda t: t.replace("e", "\\u0065").replace(" ", "\\n", 2),
        lambda t: "".join(c + "\u0301" if c in "aeiou" else c for c in t),
        lambda t: t,
    ]
    return rng.choice(edits)(text)


@pytest.mark.parametrize("seed", range(4))
def test_screens_find_the_same_hits_on_both_paths(
    seed: int, request: pytest.FixtureRequest
) -> None:
    """The scenario of tests/guard/test_screen.py, with copies of items pasted in, noisy."""
    items, docs = request.getfixturevalue("scenario")
    rng = random.Random(100 + seed)
    index = build_index([fingerprint_set(items)])
    mixed = []
    for name, text in docs:
        pasted = rng.choice(items).texts[0]
        if rng.random() < 0.4:
            text = text + "\n" + _noisy(pasted, rng)
        mixed.append((name, text))
    batch_bytes = rng.choice([4096, 1 << 16, 1 << 20])
    compiled = screen_documents(mixed, index, batch_bytes=batch_bytes)
    assert _kernel.available()
    request.getfixturevalue("numpy_path")
    assert not _kernel.available()
    reference = screen_documents(mixed, index, batch_bytes=batch_bytes)
    assert compiled == reference
    assert len({h.document for h in compiled}) >= 40


def test_batch_matches_are_the_same_on_both_paths(request: pytest.FixtureRequest) -> None:
    """The scenario of tests/guard/test_screen.py (its `scenario` fixture, imported)."""
    items, docs = request.getfixturevalue("scenario")
    index = build_index([fingerprint_set(items)])
    [part] = index.parts
    assert part.spec == SPECS[part.spec].name and FINGERPRINT_FORMAT
    texts = [d for _, d in docs]
    fast = match_batch(texts, part, compiled=True)
    slow = match_batch(texts, part, compiled=False)
    for name in ("gram_doc", "gram_item", "gram_id", "short_doc", "short_item", "short_id"):
        assert np.array_equal(getattr(fast, name), getattr(slow, name)), name
    assert fast.exact == slow.exact and fast.n_bytes == slow.n_bytes
    assert fast.gram_doc.size > 100


def test_the_numpy_fold_equals_the_translate_fold() -> None:
    rng = random.Random(5)
    lookalikes = [chr(c) for c in fold_table()]
    pool = [*lookalikes, "a", " ", "é", "\u4e00", "\U0001f600", "\ud800", "\u0301", "Z"]
    for _ in range(2000):
        text = "".join(rng.choice(pool) for _ in range(rng.randint(0, 30)))
        assert fold_confusables(text) == fold_confusables_reference(text)
    unchanged = "caf\u4e00 \U0001f600"
    assert fold_confusables(unchanged) is unchanged
    every = "".join(chr(c) for c in range(0x80, sys.maxunicode + 1, 7) if not 0xD800 <= c < 0xE000)
    assert fold_confusables(every) == fold_confusables_reference(every)
