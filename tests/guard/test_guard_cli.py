"""Acceptance tests of `evalsuite guard` on a frozen suite and a docstring curriculum."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from evalsuite.cli._common import make_context
from evalsuite.cli._guard_cmd import guard_cmd
from tests.guard.conftest import CANARY, Frozen, freeze_suite
from tests.guard.corpus import documents, split_items_and_pool
from tests.helpers import write_jsonl

N_DOCS = 1200
N_PLANTED = 25


def run_guard(root: Path, *args: str) -> Result:
    return CliRunner().invoke(guard_cmd, list(args), obj=make_context(root), catch_exceptions=False)


def light_edit(text: str, kind: str, rng: random.Random) -> str:
    """Case, punctuation, or one changed word: what a scraper or a paraphrasing pass does."""
    if kind == "case":
        return text.upper() if rng.random() < 0.5 else text.swapcase()
    if kind == "punct":
        return "> " + text.replace(",", " ;").replace(". ", "! ").replace(":", " --") + " ..."
    tokens = text.split(" ")
    alpha = [k for k, t in enumerate(tokens) if t.isalpha() and t.lower() != "zebra"]
    tokens[rng.choice(alpha)] = "zebra"
    return " ".join(tokens)


def plant(doc: str, text: str, rng: random.Random) -> str:
    parts = doc.split("\n\n")
    parts.insert(rng.randint(0, len(parts)), text)
    return "\n\n".join(parts)


@pytest.fixture(scope="module")
def curriculum(frozen: Frozen, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    rng = random.Random(7)
    docs = documents(frozen.clean, N_DOCS, rng=rng)
    chosen = rng.sample(sorted(frozen.holdout), N_PLANTED)
    where = rng.sample(range(N_DOCS), N_PLANTED)
    kinds = ["none", "case", "punct", "word", "word"]
    planted = list(docs)
    expected: set[tuple[str, str]] = set()
    out = tmp_path_factory.mktemp("curriculum")
    for k, (item_id, at) in enumerate(zip(chosen, where, strict=True)):
        text = frozen.holdout[item_id]
        kind = kinds[k % len(kinds)]
        planted[at] = plant(docs[at], text if kind == "none" else light_edit(text, kind, rng), rng)
        expected.add((f"{out / 'dirty.jsonl'}:{at + 1}", item_id))
    write_jsonl(out / "dirty.jsonl", [{"text": d, "n": k} for k, d in enumerate(planted)])
    write_jsonl(out / "clean.jsonl", [{"text": d, "n": k} for k, d in enumerate(docs)])
    return {"dir": out, "expected": expected, "docs": docs}


def test_exactly_the_planted_holdout_items_are_flagged(
    frozen: Frozen, curriculum: dict[str, object]
) -> None:
    out = curriculum["dir"]
    assert isinstance(out, Path)
    result = run_guard(frozen.root, str(out / "dirty.jsonl"), "--json")
    assert result.exit_code == 4, result.output
    payload = json.loads(result.stdout)
    found = {(h["document"], h["item_id"]) for h in payload["contaminated"]}
    assert found == curriculum["expected"]
    assert {h["split"] for h in payload["contaminated"]} == {"holdout"}
    assert {h["how"] for h in payload["contaminated"]} == {"ngram"}
    assert all(0.2 <= h["overlap"] <= 1 for h in payload["contaminated"])
    assert payload["documents_scanned"] == N_DOCS
    assert payload["manifests"] == ["demo@1.0.0"]
    assert "ContaminationError" not in result.stdout  # stdout stays one JSON document


def test_clean_curriculum_passes_with_no_false_positives(
    frozen: Frozen, curriculum: dict[str, object]
) -> None:
    out = curriculum["dir"]
    assert isinstance(out, Path)
    result = run_guard(frozen.root, str(out / "clean.jsonl"), "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["contaminated"] == []
    assert payload["documents_scanned"] == N_DOCS >= 1000
    docs = curriculum["docs"]
    assert isinstance(docs, list)
    assert payload["bytes_scanned"] == sum(len(d.encode()) for d in docs)
    assert payload["seconds"] >= 0


def test_table_output_names_document_item_and_overlap(frozen: Frozen, tmp_path: Path) -> None:
    item_id, text = sorted(frozen.holdout.items())[0]
    (tmp_path / "leak.txt").write_text("Intro.\n\n" + text + "\n\nOutro.", encoding="utf-8")
    result = run_guard(frozen.root, str(tmp_path), "--no-progress")
    assert result.exit_code == 4
    assert item_id in result.stdout and "demo@1.0.0" in result.stdout
    assert "1.00" in result.stdout and "holdout" in result.stdout
    assert "overlap frozen evaluation items" in result.stderr
    assert text[:40] not in result.stdout + result.stderr  # never prints item text


def test_dev_items_are_screened_too(frozen: Frozen, tmp_path: Path) -> None:
    dev = sorted(set(frozen.texts) - set(frozen.holdout))[0]
    write_jsonl(tmp_path / "c.jsonl", [{"body": frozen.texts[dev]}])
    result = run_guard(frozen.root, str(tmp_path / "c.jsonl"), "--field", "body", "--json")
    assert result.exit_code == 4
    [hit] = json.loads(result.stdout)["contaminated"]
    assert (hit["item_id"], hit["split"], hit["how"]) == (dev, "dev", "exact")


def test_canary_in_raw_text_is_contamination(frozen: Frozen, tmp_path: Path) -> None:
    write_jsonl(tmp_path / "c.jsonl", [{"text": "ok"}, {"text": f"BENCHMARK DATA {CANARY} x"}])
    result = run_guard(frozen.root, str(tmp_path / "c.jsonl"), "--json")
    assert result.exit_code == 4
    [hit] = json.loads(result.stdout)["contaminated"]
    assert hit["document"].endswith("c.jsonl:2")
    assert (hit["how"], hit["item_id"], hit["suite"]) == ("canary", None, "demo")


def test_threshold_option(frozen: Frozen, tmp_path: Path) -> None:
    item_id, text = sorted(frozen.holdout.items())[1]
    words = text.split()
    half = " ".join(words[: len(words) // 2 + 6])  # a bit over half the 13-grams
    write_jsonl(tmp_path / "c.jsonl", [{"text": half}])
    low = run_guard(frozen.root, str(tmp_path / "c.jsonl"), "--json", "--threshold", "0.3")
    high = run_guard(frozen.root, str(tmp_path / "c.jsonl"), "--json", "--threshold", "0.9")
    assert low.exit_code == 4 and high.exit_code == 0
    [hit] = json.loads(low.stdout)["contaminated"]
    assert hit["item_id"] == item_id and 0.3 <= hit["overlap"] < 0.9
    bad = run_guard(frozen.root, str(tmp_path / "c.jsonl"), "--threshold", "0")
    assert bad.exit_code == 2


def test_suite_option_filters_manifests(frozen: Frozen, tmp_path: Path) -> None:
    texts, _ = split_items_and_pool(6, rng=random.Random(99))
    other = freeze_suite(tmp_path / "other", texts, name="other")
    # copy `demo`'s frozen files into the second project: two suites to choose from
    for sub in ("manifests/demo", "holdout/demo"):
        src, dst = frozen.root / sub, other.root / sub
        dst.mkdir(parents=True)
        for f in src.iterdir():
            (dst / f.name).write_bytes(f.read_bytes())
    write_jsonl(tmp_path / "c.jsonl", [{"text": texts[0]}])
    everything = run_guard(other.root, str(tmp_path / "c.jsonl"), "--json")
    assert json.loads(everything.stdout)["manifests"] == ["demo@1.0.0", "other@1.0.0"]
    assert everything.exit_code == 4
    only_demo = run_guard(other.root, str(tmp_path / "c.jsonl"), "--json", "--suite", "demo")
    assert only_demo.exit_code == 0
    assert json.loads(only_demo.stdout)["manifests"] == ["demo@1.0.0"]
    pinned = run_guard(other.root, str(tmp_path / "c.jsonl"), "--json", "--suite", "other@1.0.0")
    assert pinned.exit_code == 4
    missing = run_guard(other.root, str(tmp_path / "c.jsonl"), "--suite", "other@2.0.0")
    assert missing.exit_code == 2 and "not frozen" in missing.stderr
    unknown = run_guard(other.root, str(tmp_path / "c.jsonl"), "--suite", "nope")
    assert unknown.exit_code == 2


def test_tampered_fingerprint_file_is_refused(tmp_path: Path) -> None:
    texts, _ = split_items_and_pool(6, rng=random.Random(5))
    project = freeze_suite(tmp_path, texts)
    path = project.root / "manifests/demo/1.0.0.fingerprints.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    record["ngrams"] = record["ngrams"][1:]  # drop a fingerprint: would hide an item
    path.write_text("\n".join([lines[0], json.dumps(record), *lines[2:]]) + "\n")
    write_jsonl(tmp_path / "c.jsonl", [{"text": "hello"}])
    result = run_guard(project.root, str(tmp_path / "c.jsonl"), "--json")
    assert result.exit_code == 3
    payload = json.loads(result.stdout)
    assert payload["error"] == "ManifestTamperedError"
    assert "fingerprints.jsonl" in payload["message"] and "restore" in payload["message"]


@pytest.mark.parametrize(
    ("name", "content", "needle"),
    [
        ("c.jsonl", '{"text": "a"}\n{"body": "b"}\n', "c.jsonl:2: no field 'text'"),
        ("c.jsonl", '{"text": "a"}\nnot json\n', "c.jsonl:2: not valid JSON"),
        ("c.jsonl", '{"text": 3}\n', "holds int"),
        ("c.csv", "text\nhello\n", "unknown curriculum format"),
    ],
)
def test_bad_input_is_a_clear_usage_error(
    frozen: Frozen, tmp_path: Path, name: str, content: str, needle: str
) -> None:
    (tmp_path / name).write_text(content, encoding="utf-8")
    result = run_guard(frozen.root, str(tmp_path / name))
    assert result.exit_code == 2
    assert needle in result.stderr


def test_missing_path_and_no_manifests(frozen: Frozen, tmp_path: Path) -> None:
    result = run_guard(frozen.root, str(tmp_path / "nope.jsonl"))
    assert result.exit_code == 2 and "does not exist" in result.stderr
    (tmp_path / "a.txt").write_text("hello", encoding="utf-8")
    empty = run_guard(tmp_path, str(tmp_path / "a.txt"))
    assert empty.exit_code == 2 and "no frozen manifests" in empty.stderr


def test_progress_bar_path_and_skipped_files(frozen: Frozen, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("clean text " * 3000, encoding="utf-8")
    (tmp_path / "b.bin").write_bytes(b"\x00")
    result = run_guard(frozen.root, str(tmp_path), "--batch-bytes", "4096")
    assert result.exit_code == 0, result.output
    assert "clean" in result.stdout and "screened 1 documents" in result.stdout
    assert "skipped (unknown format)" in result.stdout and "b.bin" in result.stdout  # caveats
