"""Reading files of deployment results (`read_outcomes_file`, `validity import`).

The file is UTF-8 with or without a byte-order mark, like every table evalsuite reads
(docs/design/ingest.md, "The CSV contract"); a file that is not UTF-8 is a usage error naming
its line, never an unexpected error, and a row with more fields than the header is refused,
never silently cut.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalsuite.cli import cli
from evalsuite.errors import ItemSourceError
from evalsuite.store import read_outcomes_file


def test_a_byte_order_mark_is_not_part_of_the_first_column(tmp_path: Path) -> None:
    """A spreadsheet's UTF-8 export starts with a BOM: it was read as the column
    '\\ufeffmodel', "unknown column"."""
    path = tmp_path / "results.csv"
    path.write_bytes(b"\xef\xbb\xbfmodel,metric,value\nacme-1,prod_success,0.5\n")
    (record,) = read_outcomes_file(path)
    assert (record.model, record.metric, record.value) == ("acme-1", "prod_success", 0.5)


@pytest.mark.parametrize(
    ("name", "data", "line"),
    [
        ("latin1.csv", b"model,metric,value\n\xe9t\xe9,prod,0.5\n", 2),
        ("utf16.csv", "model,metric,value\n".encode("utf-16"), 1),
        ("bad.jsonl", b'{"model": "m", "metric": "p", "value": 0.5}\n\xff\n', 2),
    ],
)
def test_bytes_that_are_not_utf8_are_a_usage_error_naming_the_line(
    tmp_path: Path, name: str, data: bytes, line: int
) -> None:
    """They ended as "unexpected UnicodeDecodeError ... report it", exit 1."""
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(ItemSourceError, match=rf"{name}:{line}: not UTF-8 text.*iconv"):
        read_outcomes_file(path)
    result = CliRunner().invoke(
        cli, ["--root", str(tmp_path), "validity", "import", str(path), "--json"]
    )
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"] == "ItemSourceError"


def test_a_row_with_more_fields_than_the_header_is_refused(tmp_path: Path) -> None:
    """The extra field was dropped without a word and the row imported."""
    path = tmp_path / "results.csv"
    path.write_text("model,metric,value\nacme-1,prod_success,0.5,0.7\n", encoding="utf-8")
    with pytest.raises(ItemSourceError, match=r"row 2: 1 field\(s\) more than the header's 3"):
        read_outcomes_file(path)


def test_quoted_line_breaks_and_line_separators_stay_inside_their_field(tmp_path: Path) -> None:
    """`str.splitlines` cut a row at a quoted line break or at U+2028 inside a field."""
    path = tmp_path / "results.csv"
    path.write_text(
        'model,metric,value,source\nacme-1,prod,0.5,"weekly\nexport"\nacme-2,prod,0.7,a\u2028b\n',
        encoding="utf-8",
    )
    records = read_outcomes_file(path)
    assert [(r.model, r.source) for r in records] == [
        ("acme-1", "weekly\nexport"),
        ("acme-2", "a\u2028b"),
    ]
    lines = tmp_path / "results.jsonl"
    lines.write_text(
        json.dumps(
            {"model": "m", "metric": "p", "value": 0.5, "source": "x\u2028y"}, ensure_ascii=False
        )
        + "\n",
        encoding="utf-8",
    )
    (record,) = read_outcomes_file(lines)
    assert record.source == "x\u2028y"


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (f"acme,{'q' * 129},0.5", "metric is 129 characters long; the store holds at most 128"),
        (f"{'m' * 257},prod,0.5", "model is 257 characters long; the store holds at most 256"),
        ("ac\x00me,prod,0.5", "model holds a NUL character"),
    ],
)
def test_text_the_store_cannot_hold_is_refused_before_writing(
    tmp_path: Path, row: str, message: str
) -> None:
    """SQLite kept a 129-character metric or a NUL that PostgreSQL refuses ("cannot record
    deployment outcomes", exit 1): one file, two answers. Both refuse it now, by row."""
    path = tmp_path / "results.csv"
    path.write_text(f"model,metric,value\n{row}\n", encoding="utf-8")
    with pytest.raises(ItemSourceError, match=rf"row 2: {message}"):
        read_outcomes_file(path)
    path.write_text(f"model,metric,value\nacme,{'q' * 128},0.5\n", encoding="utf-8")
    assert len(read_outcomes_file(path)) == 1  # at the limit: fine
