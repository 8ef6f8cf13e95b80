"""Fingerprint files: older formats still read, derived files, fast text paths equal the spec."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import numpy as np
import pytest

import evalsuite.manifest._freeze as freeze_module
from evalsuite._core.layout import Layout
from evalsuite._core.text import (
    fast_word_hashes,
    normalise_batch_v2,
    normalise_batch_v3,
    normalise_text,
    normalise_unicode_bytes,
    word_hashes_of_buffer,
    words_v2,
    words_v3,
)
from evalsuite.guard._index import BitFilter, load_index
from evalsuite.guard._screen import screen_documents
from tests.guard.conftest import decrypt_holdout, freeze_suite
from tests.guard.corpus import split_items_and_pool
from tests.helpers import Project

SHORT = "Name the capital city of France, please."


def strip_punctuation(text: str) -> str:
    return "".join(c for c in text if c.isalnum() or c.isspace())


def legacy_project(tmp_path: Path, fmt: str, monkeypatch: pytest.MonkeyPatch) -> Project:
    """A suite frozen by an evalsuite that wrote format `fmt` (as the shipped suites were)."""
    texts, _ = split_items_and_pool(6, rng=random.Random(8))
    texts = [t.replace(" ", " T-1869 ", 1) for t in texts]  # a ticket id in every item
    with monkeypatch.context() as patch:
        patch.setattr(freeze_module, "FINGERPRINT_FORMAT", fmt)
        return freeze_suite(tmp_path, [*texts, SHORT])


def fingerprint_header(project: Project) -> dict[str, object]:
    path = project.root / "manifests/demo/1.0.0.fingerprints.jsonl"
    return dict(json.loads(path.read_text(encoding="utf-8").splitlines()[0]))


@pytest.mark.parametrize("fmt", ["evalsuite-fingerprints/1", "evalsuite-fingerprints/2"])
def test_older_formats_are_still_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    project = legacy_project(tmp_path, fmt, monkeypatch)
    assert fingerprint_header(project)["format"] == fmt
    index = load_index(Layout(project.root))
    assert [p.spec for p in index.parts] == ["evalsuite-ngram/2"]
    assert index.legacy_only == ("demo@1.0.0",)
    item_id, text = sorted(decrypt_holdout(project).items())[0]
    hits = screen_documents([("d", "so " + text)], index)
    assert [(h.item_id, h.how) for h in hits] == [(item_id, "ngram")]
    short = screen_documents([("d", "Quiz: NAME THE CAPITAL CITY OF FRANCE PLEASE; go")], index)
    assert [h.how for h in short] == (["short"] if fmt.endswith("/2") else [])


def test_new_versions_are_frozen_in_format_3(tmp_path: Path) -> None:
    texts, _ = split_items_and_pool(3, rng=random.Random(9))
    project = freeze_suite(tmp_path, [*texts, SHORT])
    header = fingerprint_header(project)
    assert header["format"] == "evalsuite-fingerprints/3"
    assert (header["hash"], header["n"], header["long_min"]) == ("evalsuite-ngram/3", 8, 13)
    index = load_index(Layout(project.root))
    assert [p.spec for p in index.parts] == ["evalsuite-ngram/3"]
    assert index.legacy_only == ()
    hits = screen_documents([("d", "Quiz time! NAME THE CAPITAL CITY OF FRANCE PLEASE; go")], index)
    assert [(h.item_id, h.how, h.overlap) for h in hits] == [("doc-003", "short", 1.0)]
    assert screen_documents([("d", "Name the capital city of Spain, please.")], index) == []


def test_derived_fingerprints_bring_a_legacy_version_to_the_current_spec(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = legacy_project(tmp_path, "evalsuite-fingerprints/2", monkeypatch)
    manifest_before = (project.root / "manifests/demo/1.0.0.json").read_bytes()
    item_id, text = sorted(decrypt_holdout(project).items())[0]
    escaped = json.dumps({"t": text.replace(" ", "\n")})  # \n between every two words
    stripped = [("stripped", strip_punctuation(text)), ("escaped", escaped)]
    assert screen_documents(stripped, load_index(Layout(project.root))) == []  # the old spec
    (tmp_path / "c.txt").write_text("clean", encoding="utf-8")
    before = project.invoke("guard", str(tmp_path / "c.txt"), "--no-progress")
    assert before.exit_code == 0
    assert "demo@1.0.0 has fingerprints in an older format only" in before.stdout  # a caveat
    payload = json.loads(project.invoke("guard", str(tmp_path / "c.txt"), "--json").stdout)
    assert payload["legacy_only"] == ["demo@1.0.0"]

    written = project.invoke("fingerprints", "--json")
    assert written.exit_code == 0, written.output
    [entry] = json.loads(written.stdout)["fingerprints"]
    assert (entry["manifest"], entry["status"]) == ("demo@1.0.0", "written")
    derived = project.root / "manifests/demo/1.0.0.fingerprints.v3.jsonl"
    assert entry["path"] == str(derived)
    assert project.invoke("fingerprints", "demo@1.0.0").stdout.startswith("demo@1.0.0: unchanged")
    assert project.invoke("fingerprints", "--check").exit_code == 0

    payload = json.loads(project.invoke("guard", str(tmp_path / "c.txt"), "--json").stdout)
    assert payload["legacy_only"] == []
    assert payload["fingerprints"] == [
        {"manifest": "demo@1.0.0", "format": "evalsuite-fingerprints/2", "derived": False},
        {"manifest": "demo@1.0.0", "format": "evalsuite-fingerprints/3", "derived": True},
    ]
    index = load_index(Layout(project.root))
    assert index.legacy_only == ()
    assert [(ref, fmt, d) for ref, fmt, d in index.files] == [
        ("demo@1.0.0", "evalsuite-fingerprints/2", False),
        ("demo@1.0.0", "evalsuite-fingerprints/3", True),
    ]
    found = screen_documents([*stripped, ("verbatim", text)], index)
    assert [(h.document, h.item_id) for h in found] == [
        ("stripped", item_id),
        ("escaped", item_id),
        ("verbatim", item_id),
    ]
    # the frozen version itself is untouched, and freezing it again is still a no-op
    assert (project.root / "manifests/demo/1.0.0.json").read_bytes() == manifest_before
    again = project.invoke("freeze", "demo", "--version", "1.0.0")
    assert again.exit_code == 0 and "identical content" in again.stdout


def test_a_doctored_derived_file_is_caught_and_cannot_hide_an_item(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = legacy_project(tmp_path, "evalsuite-fingerprints/2", monkeypatch)
    assert project.invoke("fingerprints").exit_code == 0
    derived = project.root / "manifests/demo/1.0.0.fingerprints.v3.jsonl"
    item_id, text = sorted(decrypt_holdout(project).items())[0]
    lines = derived.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines[1:]]
    for record in records:
        if record["id"] == item_id:
            record["ngrams"], record["text_hashes"] = [], []  # would hide the item
    derived.write_text(
        "\n".join([lines[0], *(json.dumps(r, sort_keys=True) for r in records)]) + "\n",
        encoding="utf-8",
    )
    check = project.invoke("fingerprints", "--check", "--json")
    assert check.exit_code == 3
    assert "differs from the fingerprints" in json.loads(check.stdout)["message"]
    # the guard still screens the version's own (hash-checked) file: a copy is still found
    index = load_index(Layout(project.root))
    assert [h.item_id for h in screen_documents([("d", text)], index)] == [item_id]
    # a derived file that does not belong to the version is refused
    header = json.loads(lines[0])
    header["derived_from"]["manifest_hash"] = "sha256:" + "0" * 64
    derived.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    guard = project.invoke("guard", str(tmp_path / "project" / "tasks"), "--json")
    assert guard.exit_code == 3
    assert "fingerprints.v3.jsonl" in json.loads(guard.stdout)["message"]


def test_fingerprints_command_on_a_version_frozen_in_the_current_format(tmp_path: Path) -> None:
    texts, _ = split_items_and_pool(4, rng=random.Random(10))
    project = freeze_suite(tmp_path, texts)
    result = project.invoke("fingerprints")
    assert result.exit_code == 0 and "nothing to do" in result.stdout
    current = project.invoke("fingerprints", "demo@1.0.0", "--json")
    assert json.loads(current.stdout)["fingerprints"][0]["status"] == "current"


def test_bit_filter_has_no_false_negatives() -> None:
    rng = np.random.default_rng(0)
    for size in (0, 10, 50_000):  # byte table, then packed bits
        keys = np.unique(rng.integers(0, 2**63, size, dtype=np.uint64) * np.uint64(2))
        filt = BitFilter.of(keys)
        queries = np.concatenate([keys, rng.integers(0, 2**63, 10_000, dtype=np.uint64)])
        found = filt.candidates(queries)
        assert set(range(keys.size)) <= set(found.tolist())
        # two probes: about 0.4% of absent keys pass (one probe would pass 3%, 300 of them)
        assert found.size < keys.size + 100


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


PIECES = [
    *"ab cdéΣς.,\n\t-ÅﬁX9_\u00a0\u2028İ\ud800\\nrtbfu<>|[]/sINST中かカ한\x01\x00\x1c'\"*#`",
    *["\\u00e9", "\\u003c", "\\ud83d\\ude00", "\\uD83D\\uDE00", "<|im_end|>", "</s>", "[INST]"],
    *["<<SYS>>", "\\\\n", "\\u005cn", "ǰ", "ß", "Ⅻ", "①", "T-18699", "a.b@c.com", "**x**"],
]


@pytest.mark.parametrize("seed", range(8))
def test_batch_normalisation_equals_the_plain_definitions(seed: int) -> None:
    """Every document of a batch gets exactly the words of `words_v2`/`words_v3`."""
    rng = random.Random(seed)
    for _ in range(60):
        docs = [
            "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 40)))
            for _ in range(rng.randint(1, 8))
        ]
        if rng.random() < 0.5:  # the all-ASCII fast path
            docs = [d.encode("ascii", "ignore").decode() for d in docs]
        for batch_of, words_of in ((normalise_batch_v3, words_v3), (normalise_batch_v2, words_v2)):
            if words_of is words_v2:
                docs = [d.replace("\ud800", " ") for d in docs]
            batch = batch_of(docs)
            assert batch.offsets.size == len(docs) + 1
            assert batch.n_bytes == sum(len(d.encode("utf-8", "surrogatepass")) for d in docs)
            assert not set(batch.buffer) & set(range(1, 33))  # every gap byte is 0
            for k, doc in enumerate(docs):
                piece = batch.buffer[batch.offsets[k] : batch.offsets[k + 1] - 1]
                words = [w.decode("utf-8", "surrogatepass") for w in piece.split(b"\0") if w]
                assert words == words_of(doc), (doc, words)


LINE_PIECES = [
    *["\n", "\n", "\n\u0301", "\u0301", "e", "E", "\u00e9", "\u2026", "\ufb01", "\u0130", "\u00df"],
    *["\\u000a", "\\u000A", "\\\\u000a", "\\ud83d", "\\ude00", "\\n", "<|a", "b|>", "<s", ">"],
    *["\u4e00", "\u1100", "\u1161", "\uac00", "\u0627\u0644", "a", " ", "\u212b", "\u00c5"],
]


@pytest.mark.parametrize("seed", range(6))
def test_the_unicode_lines_of_a_batch_are_prepared_together_and_stay_exact(seed: int) -> None:
    """Many non-ASCII lines per document: combining marks at line starts (NFKC must not join
    them to the line before), Hangul jamo across a break, escapes that decode to a line break
    (then each line is prepared alone), markers cut by a break, case folds that lengthen."""
    rng = random.Random(seed)
    for _ in range(80):
        docs = [
            "".join(rng.choice(LINE_PIECES) for _ in range(rng.randint(0, 30)))
            for _ in range(rng.randint(1, 6))
        ]
        batch = normalise_batch_v3(docs)
        for k, doc in enumerate(docs):
            piece = batch.buffer[batch.offsets[k] : batch.offsets[k + 1] - 1]
            words = [w.decode("utf-8", "surrogatepass") for w in piece.split(b"\0") if w]
            assert words == words_v3(doc), (doc, words)


def test_spec_3_words() -> None:
    assert words_v3("Ticket T-18699") == words_v3("ticket t18699") == ["ticket", "t18699"]
    assert words_v3("Mail jo.doe@example.com now") == words_v3("mail jodoeexamplecom NOW")
    assert words_v3('"Hello,\\nworld"') == ["hello", "world"]
    assert words_v3("> **Bold** _move_ `code`\n- item") == ["bold", "move", "code", "item"]
    assert words_v3("<|im_start|>user\nHi there<|im_end|>") == ["user", "hi", "there"]
    assert words_v3("[INST] <<SYS>>\nBe nice\n<</SYS>>\nQ? [/INST]") == ["be", "nice", "q"]
    assert words_v3("<s>Done.</s>") == ["done"]
    assert words_v3("caf\\u00e9 CAFÉ Straße STRASSE") == ["café", "café", "strasse", "strasse"]
    assert words_v3("中文，测试") == ["中", "文", "测", "试"]
    assert words_v3("From: Ann <ann.lee@mail.example.org>") == [
        "from",
        "ann",
        "annleemailexampleorg",
    ]


def test_only_documents_that_need_it_take_the_unicode_path(monkeypatch: pytest.MonkeyPatch) -> None:
    import evalsuite._core.text as text

    seen: list[str] = []
    real = text._unicode_lines

    def spy(lines: str) -> tuple[bytes, np.ndarray, np.ndarray]:
        seen.extend(lines.split("\n"))
        return real(lines)

    monkeypatch.setattr(text, "_unicode_lines", spy)
    docs = ["plain", "has \x10 inside", "caf\u00e9\nplain line", "esc \\u00e9", "plain <|im_end|>"]
    batch = normalise_batch_v3(docs)
    # a document holding the separator makes the batch join with another control byte (no
    # Unicode path); of a document with non-ASCII lines, only those lines (without the break)
    assert set(seen) == {"caf\u00e9", "esc \\u00e9"}
    ends = batch.offsets.tolist()
    words = [batch.buffer[lo : hi - 1].split(b"\0") for lo, hi in itertools.pairwise(ends)]
    assert [[w.decode() for w in doc if w] for doc in words] == [
        ["plain"],
        ["has", "inside"],
        ["café", "plain", "line"],
        ["esc", "é"],
        ["plain"],
    ]


def test_a_batch_using_every_spare_separator_is_still_exact() -> None:
    spare = "".join(map(chr, (1, 2, 3, 4, 5, 6, 7, 8, *range(14, 28))))
    docs = [f"A{spare}b", "caf\u00e9 <s>x</s>", "T-1\\n2", ""]
    batch = normalise_batch_v3(docs)
    ends = batch.offsets.tolist()
    got = [batch.buffer[lo : hi - 1].split(b"\0") for lo, hi in itertools.pairwise(ends)]
    assert [[w.decode() for w in doc if w] for doc in got] == [words_v3(d) for d in docs]
    assert batch.n_bytes == sum(len(d.encode()) for d in docs)


def test_fingerprints_records_its_decryption_in_the_ledger_and_a_damaged_ledger_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deriving fingerprints decrypts the vault: a ``decrypt`` entry first (issue 28, point 14)."""
    from evalsuite.holdout import read_ledger

    project = legacy_project(tmp_path, "evalsuite-fingerprints/2", monkeypatch)
    ledger = Layout(project.root).ledger_file("demo")
    before = read_ledger(ledger) if ledger.exists() else []
    assert project.invoke("fingerprints", "--json").exit_code == 0
    assert project.invoke("fingerprints", "--check").exit_code == 0
    added = read_ledger(ledger)[len(before) :]
    assert [(e.kind, e.version, e.run_id, e.model) for e in added] == [
        ("decrypt", "1.0.0", "", "")
    ] * 2
    assert "evalsuite fingerprints" in added[0].reason and "--check" in added[1].reason

    derived = project.root / "manifests/demo/1.0.0.fingerprints.v3.jsonl"
    derived.unlink()
    ledger.write_text(ledger.read_text(encoding="utf-8").replace('"decrypt"', '"decrypted"', 1))
    refused = project.invoke("fingerprints", "--json")
    assert refused.exit_code == 3, refused.output
    assert not derived.exists()  # nothing decrypted, nothing written
