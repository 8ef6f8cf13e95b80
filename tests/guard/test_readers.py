"""Every input format, directories, and large text files read in overlapping pieces."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evalsuite._core.layout import Layout
from evalsuite.errors import NotFoundError, UsageError
from evalsuite.guard._guard import GuardOptions, guard
from evalsuite.guard._index import load_index
from evalsuite.guard._readers import find_sources, read_source
from tests.guard.conftest import Frozen
from tests.helpers import write_jsonl


def leaked(frozen: Frozen) -> tuple[str, str]:
    return sorted(frozen.holdout.items())[2]


def hits(frozen: Frozen, paths: list[Path], **options: Any) -> set[tuple[str, str | None]]:
    index = load_index(Layout(frozen.root))
    report = guard(paths, index, options=GuardOptions(**options))
    return {(h.document, h.item_id) for h in report.hits}


def test_jsonl_and_gzipped_jsonl(frozen: Frozen, tmp_path: Path) -> None:
    item_id, text = leaked(frozen)
    write_jsonl(tmp_path / "a.jsonl", [{"text": "clean"}, {"text": "x " + text}])
    with gzip.open(tmp_path / "b.jsonl.gz", "wt", encoding="utf-8") as handle:
        handle.write(json.dumps({"text": text}) + "\n\n")
    assert hits(frozen, [tmp_path / "a.jsonl", tmp_path / "b.jsonl.gz"]) == {
        (f"{tmp_path / 'a.jsonl'}:2", item_id),
        (f"{tmp_path / 'b.jsonl.gz'}:1", item_id),
    }


def test_chat_messages_field(frozen: Frozen, tmp_path: Path) -> None:
    item_id, text = leaked(frozen)
    messages = [{"role": "user", "content": text}, {"role": "assistant", "content": "ok"}]
    write_jsonl(tmp_path / "chat.jsonl", [{"messages": messages}])
    found = hits(frozen, [tmp_path / "chat.jsonl"], field="messages")
    assert found == {(f"{tmp_path / 'chat.jsonl'}:1", item_id)}


def test_parquet(frozen: Frozen, tmp_path: Path) -> None:
    item_id, text = leaked(frozen)
    table = pa.table({"body": ["clean"] * 1500 + ["pre " + text], "n": list(range(1501))})
    pq.write_table(table, tmp_path / "c.parquet", row_group_size=400)
    found = hits(frozen, [tmp_path / "c.parquet"], field="body")
    assert found == {(f"{tmp_path / 'c.parquet'}#1500", item_id)}
    with pytest.raises(UsageError, match="no column 'text'"):
        hits(frozen, [tmp_path / "c.parquet"])
    pq.write_table(pa.table({"text": ["a", None]}), tmp_path / "n.parquet")
    with pytest.raises(UsageError, match=r"n.parquet#1: field 'text' holds NoneType"):
        hits(frozen, [tmp_path / "n.parquet"])


def test_saved_hf_datasets(frozen: Frozen, tmp_path: Path) -> None:
    import datasets

    item_id, text = leaked(frozen)
    datasets.disable_progress_bars()
    ds = datasets.Dataset.from_dict({"text": ["clean"] * 2100 + [text]})
    ds.save_to_disk(str(tmp_path / "single"))
    dd = datasets.DatasetDict({"train": ds, "test": datasets.Dataset.from_dict({"text": [text]})})
    dd.save_to_disk(str(tmp_path / "dict"))
    assert hits(frozen, [tmp_path / "single", tmp_path / "dict"]) == {
        (f"{tmp_path / 'single'}#2100", item_id),
        (f"{tmp_path / 'dict' / 'train'}#2100", item_id),
        (f"{tmp_path / 'dict' / 'test'}#0", item_id),
    }


def test_text_files_and_directories(frozen: Frozen, tmp_path: Path) -> None:
    item_id, text = leaked(frozen)
    (tmp_path / "corpus" / "deep" / ".hidden").mkdir(parents=True)
    (tmp_path / "corpus" / "a.txt").write_text("clean text", encoding="utf-8")
    (tmp_path / "corpus" / "deep" / "b.md").write_text("# Title\n\n" + text, encoding="utf-8")
    (tmp_path / "corpus" / "deep" / ".hidden" / "c.txt").write_text(text, encoding="utf-8")
    (tmp_path / "corpus" / "deep" / "data.bin").write_bytes(b"\x00\x01")
    sources, skipped = find_sources([tmp_path / "corpus"])
    assert [s.kind for s in sources] == ["text", "text"]
    assert [(s.path, s.reason) for s in skipped] == [
        (tmp_path / "corpus" / "deep" / "data.bin", "unknown format")
    ]
    assert hits(frozen, [tmp_path / "corpus"]) == {(str(tmp_path / "corpus/deep/b.md"), item_id)}
    (tmp_path / "notes").write_text(text, encoding="utf-8")
    with pytest.raises(UsageError, match="unknown curriculum format"):
        find_sources([tmp_path / "notes"])
    assert hits(frozen, [tmp_path / "notes"], format="text") == {(str(tmp_path / "notes"), item_id)}
    with pytest.raises(NotFoundError):
        find_sources([tmp_path / "missing"])


@pytest.mark.parametrize("shift", range(0, 400, 37))
def test_item_across_a_chunk_boundary_of_a_large_text_file(
    frozen: Frozen, tmp_path: Path, shift: int
) -> None:
    """The file is read in 4 KiB pieces; the item straddles the first cut at many offsets."""
    item_id, text = leaked(frozen)
    filler = " ".join(f"filler{k}" for k in range(3000))
    cut_at = 4096 - len(text) // 2 - shift
    body = filler[:cut_at] + " " + text + " " + filler[cut_at:]
    (tmp_path / "big.txt").write_text(body, encoding="utf-8")
    index = load_index(Layout(frozen.root))
    report = guard([tmp_path / "big.txt"], index, options=GuardOptions(batch_bytes=4096))
    assert [(h.item_id, h.overlap, h.how) for h in report.hits] == [(item_id, 1.0, "ngram")]
    assert report.documents_scanned == 1
    assert report.bytes_scanned == len(body.encode())


def test_broken_gzip_is_a_usage_error(frozen: Frozen, tmp_path: Path) -> None:
    (tmp_path / "c.jsonl.gz").write_bytes(gzip.compress(b'{"text": "a"}\n')[:-8] + b"garbage!")
    with pytest.raises(UsageError, match="cannot be read as jsonl"):
        hits(frozen, [tmp_path / "c.jsonl.gz"])


def test_jsonl_lines_read_as_the_json_module_reads_them(tmp_path: Path) -> None:
    """The fast parser and the careful path give each line the text `json.loads` gives it:
    the last of duplicate keys (escaped or not), and lines the fast parser refuses (NaN,
    integers past 64 bits, lone surrogates) read the careful way, in order."""
    lines = [
        '{"text": "first", "text": "second"}',
        '{"text": "first", "te\\u0078t": "escaped key wins"}',
        '{"id": NaN, "text": "not a number beside"}',
        '{"id": 123456789012345678901234567890, "text": "big id"}',
        '{"text": "lone \\ud800 surrogate"}',
        '{"text": "plain"}',
    ]
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (source,), _ = find_sources([path])
    batches = list(
        read_source(source, field="text", piece_size=1 << 20, overlap_words=7, overlap_chars=0)
    )
    texts = [t for b in batches for t in b.texts]
    names = [n for b in batches for n in b.names]
    assert texts == [json.loads(line)["text"] for line in lines]
    assert names == [f"{path}:{k}" for k in range(1, len(lines) + 1)]
