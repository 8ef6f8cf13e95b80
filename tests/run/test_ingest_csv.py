"""The results-CSV contract of `evalsuite ingest --format csv` (issue 10, item 12)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from evalsuite._core.layout import Layout
from evalsuite.store import Store, default_store_url
from tests.helpers import Project, json_out


def _store(project: Project) -> Store:
    return Store(default_store_url(Layout(project.root).state))


@pytest.fixture
def project(tmp_path: Path) -> Project:
    (tmp_path / "p").mkdir()
    return Project(root=tmp_path / "p", key_dir=tmp_path / "keys")


def _write(tmp_path: Path, content: str | bytes, name: str = "r.csv") -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def _ingest(project: Project, path: Path, *args: str):  # type: ignore[no-untyped-def]
    return project.invoke("ingest", str(path), "--format", "csv", *args)


def test_help_lists_every_column_its_meaning_and_an_example(project: Project) -> None:
    from evalsuite.run import CSV_COLUMNS, CSV_EXAMPLE

    result = project.invoke("ingest", "--help")
    assert result.exit_code == 0
    for column in CSV_COLUMNS:
        assert f"\n    {column} " in result.stdout, column
    for line in CSV_EXAMPLE.splitlines():
        assert line in result.stdout
    for meaning in ("a number in [0, 1], or true/false", "empty on harness_error rows", "time"):
        assert meaning in result.stdout


def test_the_help_example_ingests_as_documented(project: Project, tmp_path: Path) -> None:
    from evalsuite.run import CSV_EXAMPLE

    result = _ingest(project, _write(tmp_path, CSV_EXAMPLE), "--json", "--error-threshold", "0.5")
    assert result.exit_code == 0, result.stderr
    run = json_out(result)["runs"][0]
    frame = _store(project).attempts(run["run_id"])
    assert list(frame["outcome"]) == ["scored", "limit", "harness_error"]
    assert list(frame["limit_type"].fillna("-")) == ["-", "time", "-"]


def test_every_missing_column_is_reported_at_once_and_model_is_not_invented(
    project: Project, tmp_path: Path
) -> None:
    path = _write(tmp_path, "task_id,reward\nt1,1\n")
    result = _ingest(project, path, "--model", "m")
    assert result.exit_code == 2
    assert "missing column(s) ['item_id', 'epoch', 'score']" in result.stderr
    # the file has no model column (--model gives it): the message must not say it has one
    assert "The file's columns: ['task_id', 'reward']" in result.stderr
    assert "--column item_id=" in result.stderr  # what to do
    without_model = _ingest(project, path)
    assert "missing column(s) ['model', 'item_id', 'epoch', 'score']" in without_model.stderr
    assert "--model NAME" in without_model.stderr
    assert _store(project).list_runs() == []


def test_boolean_scores_are_one_and_zero(project: Project, tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "model,item_id,epoch,score\nm,a,1,True\nm,a,2,False\nm,b,1,true\nm,b,2,false\n",
    )
    result = _ingest(project, path, "--json")
    assert result.exit_code == 0, result.stderr
    frame = _store(project).attempts(json_out(result)["runs"][0]["run_id"])
    assert list(frame["score"]) == [1.0, 0.0, 1.0, 0.0]


def test_a_limit_row_keeps_its_limit_type(project: Project, tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "model,item_id,epoch,score,outcome,limit_type\n"
        "m,a,1,0,limit,time\nm,b,1,0,limit,token\nm,c,1,0,limit,\nm,d,1,1,scored,\n",
    )
    result = _ingest(project, path, "--json")
    assert result.exit_code == 0, result.stderr
    frame = _store(project).attempts(json_out(result)["runs"][0]["run_id"])
    types = dict(zip(frame["item_id"], frame["limit_type"].fillna("(none)"), strict=True))
    # "c" does not say which limit: it is not labelled "custom" either
    assert types == {"a": "time", "b": "token", "c": "(none)", "d": "(none)"}


def test_limit_type_is_mapped_by_column(project: Project, tmp_path: Path) -> None:
    path = _write(tmp_path, "model,item_id,epoch,score,outcome,why\nm,a,1,0,limit,message\n")
    result = _ingest(project, path, "--column", "limit_type=why", "--json")
    assert result.exit_code == 0, result.stderr
    frame = _store(project).attempts(json_out(result)["runs"][0]["run_id"])
    assert list(frame["limit_type"]) == ["message"]


def test_every_bad_row_is_named_by_its_line_at_once(project: Project, tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "model,item_id,epoch,score,outcome,limit_type\n"
        ",a,1,1,,\n"  # line 2: empty model
        "m,b,1.5,1,,\n"  # line 3: epoch not whole
        "m,c,-1,1,,\n"  # line 4: epoch negative
        "m,d,20260101,1,,\n"  # line 5: a date, not an epoch
        "m,e,0,1,,\n"  # line 6: epoch 0 with 1-based epochs
        "m,f,1,0,limit,operator\n"  # line 7: an operator stop is a harness error
        "m,g,1,1,scored,time\n"  # line 8: limit type on a scored row
        "m,h,1,,,\n",  # line 9: no score on a scored row
    )
    result = _ingest(project, path)
    assert result.exit_code == 2
    for expected in (
        "line 2: model is empty",
        "line 3: epoch '1.5' is not a whole number",
        "line 4: epoch '-1' is not a whole number",
        "line 5: epoch 20260101 is too large: at most 1000 epochs per item",
        "line 6: epoch 0 is below 1",
        "--epoch-base 0",
        "line 7: limit_type 'operator' is not one of",
        "write outcome harness_error",
        "line 8: limit_type 'time' on a scored row",
        "line 9: score is empty on a scored row",
        "8 problem(s); nothing was stored",
    ):
        assert expected in result.stderr, expected
    assert _store(project).list_runs() == []


def test_extra_fields_and_unknown_columns_are_refused(project: Project, tmp_path: Path) -> None:
    extra = _write(tmp_path, "model,item_id,epoch,score\nm,a,1,1\nm,b,1,1,0.5\nm,c\n")
    result = _ingest(project, extra)
    assert result.exit_code == 2
    assert "line 3: 5 field(s), the header has 4; extra fields are refused" in result.stderr
    assert "line 4: 2 field(s), the header has 4" in result.stderr
    misspelt = _write(tmp_path, "model,item_id,epoch,score,stratun\nm,a,1,1,s1\n", "s.csv")
    result = _ingest(project, misspelt)
    assert result.exit_code == 2
    assert "unknown column(s) ['stratun']" in result.stderr
    assert "--ignore-column" in result.stderr
    assert _store(project).list_runs() == []
    dropped = _ingest(project, misspelt, "--ignore-column", "stratun", "--json")
    assert dropped.exit_code == 0, dropped.stderr
    frame = _store(project).attempts(json_out(dropped)["runs"][0]["run_id"])
    assert list(frame["stratum"]) == ["all"]


def test_quoted_commas_and_line_breaks_are_one_field(project: Project, tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        'model,item_id,epoch,score\n"m, v2","item\nwith a break",1,1\n"m, v2",x,1,1,9\n',
    )
    result = _ingest(project, path)
    assert result.exit_code == 2
    assert "line 4: 5 field(s)" in result.stderr  # the record on lines 2-3 is whole


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "is empty"),
        (b"\n  \n", "is empty"),
        (b"model,item_id,epoch,score\nm\xe9,a,1,1\n", "line 2 is not UTF-8 (byte 0xe9)"),
        ("model,item_id,epoch,score\n".encode("utf-16"), "is UTF-16 text"),
    ],
)
def test_empty_or_non_utf8_files_are_usage_errors(
    project: Project, tmp_path: Path, content: bytes, message: str
) -> None:
    result = _ingest(project, _write(tmp_path, content))
    assert result.exit_code == 2, result.stderr
    assert message in result.stderr
    assert "UTF-8" in result.stderr or "model, item_id, epoch, score" in result.stderr


def test_a_parquet_file_given_as_csv_says_to_use_format_parquet(
    project: Project, tmp_path: Path
) -> None:
    """It said "line 3 is not UTF-8 ... iconv", about a file that is not text at all."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "r.csv"
    table = pa.table({"model": ["m"], "item_id": ["a"], "epoch": [1], "score": [1.0]})
    pq.write_table(table, path)
    result = _ingest(project, path)
    assert result.exit_code == 2, result.stderr
    assert "is a Parquet file, not CSV text: ingest it with --format parquet" in result.stderr


def test_a_utf8_byte_order_mark_is_not_part_of_the_first_column(
    project: Project, tmp_path: Path
) -> None:
    path = _write(tmp_path, "\ufeffmodel,item_id,epoch,score\nm,a,1,0.25\n".encode())
    result = _ingest(project, path, "--json")
    assert result.exit_code == 0, result.stderr
    frame = _store(project).attempts(json_out(result)["runs"][0]["run_id"])
    assert math.isclose(frame["score"].iat[0], 0.25)


def test_values_the_store_cannot_hold_are_named_by_line_on_every_backend(
    project: Project, tmp_path: Path
) -> None:
    """A 300-character item id, stratum or model, or a NUL in one, was stored by SQLite and
    failed on PostgreSQL with "unexpected StringDataRightTruncation" (exit 1, quoting the
    value); now both refuse the file, naming each line, and store nothing."""
    path = _write(
        tmp_path,
        "model,item_id,epoch,score,stratum\n"
        f"m,{'x' * 257},1,1,s\n"
        f"m,b,1,0,{'s' * 300}\n"
        f"{'m' * 257},c,1,1,s\n"
        "m,d\x00e,1,1,s\n"
        f"m,{'y' * 256},1,1,s\n",
    )
    result = _ingest(project, path, "--json")
    assert result.exit_code == 2, result.output
    message = json_out(result)["message"]
    assert "4 problem(s)" in message
    assert "line 2: item_id is 257 characters long; the store holds at most 256" in message
    assert "line 3: stratum is 300 characters long" in message
    assert "line 4: model is 257 characters long" in message
    assert "line 5: item_id holds a NUL character" in message
    assert "line 6" not in message  # 256 characters: the limit itself is fine
    assert _store(project).list_runs() == []


def test_a_huge_epoch_and_a_huge_item_id_are_too_large(project: Project, tmp_path: Path) -> None:
    """Issue 28, point 17: an epoch of 10 digits said "not a whole number", and an item id
    longer than a read block said "straddling object straddles two block boundaries"."""
    from evalsuite.run._ingest_csv import READ_BLOCK_BYTES
    from evalsuite.store import TEXT_LIMITS

    epochs = _write(
        tmp_path, "model,item_id,epoch,score\nm,a,1000000000,1\nm,b," + "9" * 30 + ",1\n"
    )
    result = _ingest(project, epochs)
    assert result.exit_code == 2
    assert "line 2: epoch 1000000000 is too large: at most 1000 epochs per item" in result.stderr
    assert "line 3: epoch 999999999999999999999999999999 is too large" in result.stderr
    assert "not a whole number" not in result.stderr
    # a value longer than csv's field limit, in one read block: named by its line
    long = _write(tmp_path, "model,item_id,epoch,score\nm," + "x" * 200_000 + ",1,1\n", "l.csv")
    result = _ingest(project, long)
    assert result.exit_code == 2
    assert "line 2: item_id is 200000 characters long; the store holds at most 256" in (
        result.stderr
    )
    # a row longer than a read block, after another row: pyarrow's "straddling object"
    huge = _write(
        tmp_path,
        "model,item_id,epoch,score\nm,a,1,1\nm," + "x" * (5 * READ_BLOCK_BYTES) + ",1,1\n",
        "h.csv",
    )
    result = _ingest(project, huge)
    assert result.exit_code == 2
    assert "straddl" not in result.stderr
    assert f"a row is too large: longer than {READ_BLOCK_BYTES:,} bytes" in result.stderr
    assert f"item_id {TEXT_LIMITS['item_id']}" in result.stderr
    assert _store(project).list_runs() == []
