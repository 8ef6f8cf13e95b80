"""Fingerprint files: format /1 still read, /2 short texts, fast text paths equal the spec."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from evalsuite._core.layout import Layout
from evalsuite._core.text import (
    fast_word_hashes,
    normalise_text,
    normalise_unicode_bytes,
    word_hashes_of_buffer,
)
from evalsuite.holdout._index import BitFilter, load_index
from evalsuite.holdout._screen import screen_documents
from evalsuite.manifest._schema import compute_manifest_hash
from tests.holdout.conftest import freeze_suite
from tests.holdout.corpus import split_items_and_pool


def test_format_1_files_are_still_read(tmp_path: Path) -> None:
    texts, _ = split_items_and_pool(4, rng=random.Random(8))
    project = freeze_suite(tmp_path, [*texts, "Name the capital city of France, please."])
    fp = project.root / "manifests/demo/1.0.0.fingerprints.jsonl"
    lines = [json.loads(line) for line in fp.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["format"] == "evalsuite-fingerprints/2"
    assert any(r["short"] for r in lines[1:])
    lines[0]["format"] = "evalsuite-fingerprints/1"
    old = [lines[0]] + [{k: v for k, v in r.items() if k != "short"} for r in lines[1:]]
    data = "\n".join(json.dumps(r, sort_keys=True) for r in old) + "\n"
    fp.write_text(data, encoding="utf-8")
    path = project.root / "manifests/demo/1.0.0.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    from evalsuite._core.hashing import sha256_bytes

    manifest["fingerprints"]["sha256"] = sha256_bytes(data.encode())
    manifest["manifest_hash"] = compute_manifest_hash(manifest)
    path.write_text(json.dumps(manifest), encoding="utf-8")
    index = load_index(Layout(project.root))
    assert index.short_heads.size == 0
    hits = screen_documents([("d", "so " + texts[1])], index)
    assert [h.how for h in hits] == ["ngram"]


def test_format_2_finds_short_items_inside_documents(tmp_path: Path) -> None:
    texts, _ = split_items_and_pool(3, rng=random.Random(9))
    short = "Name the capital city of France, please."
    project = freeze_suite(tmp_path, [*texts, short])
    index = load_index(Layout(project.root))
    hits = screen_documents([("d", "Quiz time! NAME THE CAPITAL CITY OF FRANCE PLEASE; go")], index)
    assert [(h.item_id, h.how, h.overlap) for h in hits] == [("doc-003", "short", 1.0)]
    assert screen_documents([("d", "Name the capital city of Spain, please.")], index) == []


def test_bit_filter_has_no_false_negatives() -> None:
    rng = np.random.default_rng(0)
    for size in (0, 10, 50_000):  # byte table, then packed bits
        keys = np.unique(rng.integers(0, 2**63, size, dtype=np.uint64) * np.uint64(2))
        filt = BitFilter.of(keys)
        queries = np.concatenate([keys, rng.integers(0, 2**63, 10_000, dtype=np.uint64)])
        found = filt.candidates(queries)
        assert set(range(keys.size)) <= set(found.tolist())
        assert found.size < keys.size + 1500  # about 3% of absent keys pass


@pytest.mark.parametrize("seed", range(5))
def test_fast_text_paths_equal_the_spec(seed: int) -> None:
    rng = random.Random(seed)
    alphabet = "ab cdéΣς.,\n\t-ÅﬁX9_\u00a0\u2028İ\ud800"
    for _ in range(200):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 300)))
        clean = text.replace("\ud800", " ")  # the spec's encode() rejects lone surrogates
        expected = normalise_text(clean).encode()
        assert normalise_unicode_bytes(clean) == expected
        assert normalise_unicode_bytes(text) == normalise_text(text).encode(
            "utf-8", "replace"
        ).replace(b"?", b" ")
        for block in (1, 7, 64, 1 << 18):
            h1, s1 = fast_word_hashes(expected, block=block)
            h0, s0 = word_hashes_of_buffer(expected)
            assert np.array_equal(h0, h1) and np.array_equal(s0, s1)
