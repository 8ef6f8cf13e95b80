from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalsuite._core import (
    SemVer,
    append_line_locked,
    atomic_write_text,
    canonical_json,
    content_hash,
    derive_seed,
)
from evalsuite._core.text import (
    ngram_hashes,
    normalise_ascii,
    normalise_words,
    text_hash,
    word_hashes,
    word_hashes_of_buffer,
)
from evalsuite.errors import UsageError, VersionError


def test_canonical_json_is_order_independent_and_rejects_nan() -> None:
    assert canonical_json({"b": 1, "a": 2}) == canonical_json({"a": 2, "b": 1})
    assert content_hash({"x": [1, 2]}).startswith("sha256:")
    with pytest.raises(UsageError, match=r"\$\.a\[1\]"):
        canonical_json({"a": [1.0, math.nan]})


def test_canonical_json_names_every_non_finite_value_and_keeps_its_serialisation() -> None:
    # the encoder's own refusal is the fast path; the path of the value is still named
    with pytest.raises(UsageError, match=r"\$\.b\.c\[0\] is inf"):
        canonical_json({"a": 1, "b": {"c": [math.inf]}})
    with pytest.raises(UsageError, match=r"\$\[1\]\.x is -inf"):
        canonical_json([{}, {"x": -math.inf}])
    # a NaN dict key is not a value: serialised as it always was
    assert canonical_json({math.nan: 1}) == '{"NaN":1}'
    assert canonical_json({"é": [1.5, None, True]}) == '{"é":[1.5,null,true]}'


def test_semver_parse_order_and_bumps() -> None:
    assert SemVer.parse("1.10.0") > SemVer.parse("1.9.9")
    assert SemVer.parse("1.0.0").bump_kind(SemVer.parse("1.1.0")) == "minor"
    assert SemVer.parse("1.0.0").bump_kind(SemVer.parse("2.0.0")) == "major"
    assert SemVer.parse("1.0.0").bump_kind(SemVer.parse("1.0.0")) is None
    assert str(SemVer.parse("1.2.3").bumped("minor")) == "1.3.0"
    with pytest.raises(VersionError, match=r"MAJOR\.MINOR\.PATCH"):
        SemVer.parse("1.0")


def test_derive_seed_is_stable_and_distinct() -> None:
    assert derive_seed(1, "a", 2) == derive_seed(1, "a", 2)
    assert derive_seed(1, "a", 2) != derive_seed(1, "a", 3)
    assert 0 <= derive_seed("x") < 2**63


def test_atomic_write_replaces_and_sets_mode(tmp_path: Path) -> None:
    path = tmp_path / "d" / "f.txt"
    atomic_write_text(path, "one")
    atomic_write_text(path, "two")
    assert path.read_text() == "two"
    assert oct(path.stat().st_mode & 0o777) == oct(0o644)
    assert [p.name for p in path.parent.iterdir()] == ["f.txt"]
    atomic_write_text(tmp_path / "k", "s", mode=0o600)
    assert (tmp_path / "k").stat().st_mode & 0o777 == 0o600


def test_append_line_locked(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    append_line_locked(path, "a")
    append_line_locked(path, "b")
    assert path.read_text() == "a\nb\n"
    with pytest.raises(ValueError, match="one line"):
        append_line_locked(path, "x\ny")
    assert os.path.exists(str(path) + ".lock")


def test_normalisation_ignores_case_and_punctuation() -> None:
    assert normalise_words("Hello,   WORLD!") == normalise_words("hello world")
    assert text_hash("A b. C") == text_hash("a B c")


def _slow_word_hash(word: str) -> int:
    mask = (1 << 64) - 1
    h = 0
    for byte in word.encode("utf-8"):
        h = (h * 0x100000001B3 + byte) & mask
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & mask
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & mask
    h ^= h >> 33
    return h


def test_word_and_ngram_hashes_match_a_slow_loop() -> None:
    text = "The quick brown fox, jumps over the lazy dog — again and again. Ça va? ÉCOLE école"
    words = normalise_words(text)
    assert "école" in words
    assert words.count("école") == 2
    hashes = word_hashes(words)
    assert [int(h) for h in hashes] == [_slow_word_hash(w) for w in words]
    fast = ngram_hashes(hashes, 4)
    prime, mask = 0x9E3779B97F4A7C15, (1 << 64) - 1
    slow = []
    for start in range(len(words) - 3):
        acc = 0
        for w in words[start : start + 4]:
            acc = (acc * prime + _slow_word_hash(w)) & mask
        slow.append(acc)
    assert [int(x) for x in fast] == slow
    assert ngram_hashes(hashes, 40).dtype == np.uint64
    assert len(ngram_hashes(hashes, 40)) == 0


def test_buffer_hashing_agrees_with_the_word_list() -> None:
    raw = b"Hello,  World!\nThis is-a TEST of 13 words; more words follow here."
    hashes, starts = word_hashes_of_buffer(normalise_ascii(raw))
    words = normalise_words(raw.decode())
    assert [int(h) for h in hashes] == [int(h) for h in word_hashes(words)]
    assert len(starts) == len(words)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_ascii_fast_path_equals_the_unicode_path(text: str) -> None:
    import unicodedata

    exact = "".join(
        c if c.isalnum() else " " for c in unicodedata.normalize("NFKC", text).lower()
    ).split()
    assert normalise_words(text) == exact
