"""`evalsuite ingest --format parquet`, and results tables read in batches (issue 12)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.helpers import Project, json_out

RESULTS = (
    "model,item_id,epoch,score,stratum,outcome,limit_type\n"
    "a,i1,1,1,s1,scored,\na,i1,2,0,s1,limit,time\na,i2,1,0.5,s2,,\na,i2,2,,s2,harness_error,\n"
    "b,i1,1,1,s1,,\nb,i1,2,1,s1,,\nb,i2,1,0,s2,,\nb,i2,2,0.25,s2,,\n"
)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    (tmp_path / "p").mkdir()
    return Project(root=tmp_path / "p", key_dir=tmp_path / "keys")


def _typed_frame() -> pd.DataFrame:
    """RESULTS as pandas writes it: integer epochs, float scores with NaN for missing."""
    frame = pd.read_csv(pd.io.common.StringIO(RESULTS), keep_default_na=False)
    frame["score"] = pd.to_numeric(frame["score"].replace("", np.nan))
    return frame


def _ingest(project: Project, path: Path, *args: str):  # type: ignore[no-untyped-def]
    fmt = "parquet" if path.suffix == ".parquet" else "csv"
    return project.invoke("ingest", str(path), "--format", fmt, *args)


def test_a_parquet_file_stores_what_the_same_csv_stores(project: Project, tmp_path: Path) -> None:
    path = tmp_path / "r.parquet"
    _typed_frame().to_parquet(path, index=False)
    result = _ingest(project, path, "--json", "--error-threshold", "0.5")
    assert result.exit_code == 0, result.stderr
    runs = {r["model"]: r for r in json_out(result)["runs"]}
    assert sorted(runs) == ["a", "b"]
    frame = project.store().attempts(runs["a"]["run_id"])
    assert list(frame["outcome"]) == ["scored", "limit", "scored", "harness_error"]
    assert list(frame["limit_type"].fillna("-")) == ["-", "time", "-", "-"]
    assert math.isnan(frame["score"].iat[3])  # NaN in a float column is a missing value
    assert project.store().get_run(runs["a"]["run_id"]).spec["format"] == "parquet"
    # the same rows as CSV (another encoding, another order) are the same content
    csv = tmp_path / "r.csv"
    lines = RESULTS.splitlines()
    csv.write_text("\n".join([lines[0], *reversed(lines[1:])]) + "\n")
    again = _ingest(project, csv, "--json", "--error-threshold", "0.5")
    assert again.exit_code == 0, again.stderr
    assert json_out(again)["runs"] == []
    skipped = {s["model"]: s["existing_run_ids"] for s in json_out(again)["skipped"]}
    assert skipped == {m: [r["run_id"]] for m, r in runs.items()}


def test_parquet_booleans_dictionaries_and_nulls(project: Project, tmp_path: Path) -> None:
    table = pa.table(
        {
            "model": pa.array(["m", "m", "m"]).dictionary_encode(),
            "item_id": ["x", "y", "z"],
            "epoch": pa.array([1, 1, 1], pa.int32()),
            "score": pa.array([True, False, None]),
            "outcome": [None, "scored", "harness_error"],
        }
    )
    path = tmp_path / "b.parquet"
    pq.write_table(table, path)
    result = _ingest(project, path, "--json", "--error-threshold", "0.5")
    assert result.exit_code == 0, result.stderr
    frame = project.store().attempts(json_out(result)["runs"][0]["run_id"])
    assert frame["score"].tolist()[:2] == [1.0, 0.0]
    assert frame["outcome"].tolist() == ["scored", "scored", "harness_error"]


def test_bad_parquet_rows_are_named_by_row(project: Project, tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {
            "model": ["m", "m", "m", "m"],
            "item_id": ["a", "b", "", "a"],
            "epoch": [1.0, 1.5, 1.0, 1.0],
            "score": [0.5, 1.0, 2.0, 1.0],
        }
    )
    path = tmp_path / "bad.parquet"
    frame.to_parquet(path, index=False)
    result = _ingest(project, path)
    assert result.exit_code == 2
    for expected in (
        "row 2: epoch '1.5' is not a whole number",
        "row 3: item_id is empty",
        "row 3: score 2 is outside [0, 1]",
        "row 4: duplicate (model, item_id, epoch) ('m', 'a', 1), first at row 1",
        "4 problem(s); nothing was stored",
    ):
        assert expected in result.stderr, expected
    assert project.store().list_runs() == []


def test_parquet_files_that_cannot_be_results_tables(project: Project, tmp_path: Path) -> None:
    not_parquet = tmp_path / "x.parquet"
    not_parquet.write_text("model,item_id,epoch,score\n")
    result = _ingest(project, not_parquet)
    assert result.exit_code == 2
    assert "not a readable Parquet file" in result.stderr
    nested = tmp_path / "n.parquet"
    pq.write_table(
        pa.table({"model": ["m"], "item_id": ["a"], "epoch": [1], "score": [[0.5]]}), nested
    )
    result = _ingest(project, nested)
    assert result.exit_code == 2
    assert "column 'score' has Parquet type list<element: double>" in result.stderr
    unknown = tmp_path / "u.parquet"
    pq.write_table(
        pa.table(
            {"model": ["m"], "item_id": ["a"], "epoch": [1], "score": [1.0], "stratun": ["s"]}
        ),
        unknown,
    )
    result = _ingest(project, unknown)
    assert result.exit_code == 2
    assert "unknown column(s) ['stratun']" in result.stderr
    assert project.store().list_runs() == []


def test_problems_are_named_by_their_line_across_read_batches(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalsuite.run import _ingest_csv

    monkeypatch.setattr(_ingest_csv, "READ_BLOCK_BYTES", 256)  # many batches of a few rows
    rows = [f"m,item-{i:04d},1,{(i % 10) / 10}" for i in range(400)]
    rows[250] = "m,item-0250,1,7"  # line 252
    rows[399] = "m,item-0003,1,1"  # line 401: a repeat of line 5, three batches later
    path = tmp_path / "r.csv"
    path.write_text("model,item_id,epoch,score\n" + "\n".join(rows) + "\n")
    result = _ingest(project, path)
    assert result.exit_code == 2
    assert "line 252: score 7 is outside [0, 1]" in result.stderr
    assert "line 401: duplicate (model, item_id, epoch) ('m', 'item-0003', 1), first at line 5" in (
        result.stderr
    )
    assert "2 problem(s)" in result.stderr
    rows[250], rows[399] = "m,item-0250,1,0.7", "m,item-0399,1,1"
    path.write_text("model,item_id,epoch,score\n" + "\n".join(rows) + "\n", encoding="utf-8")
    stored = _ingest(project, path, "--json")
    assert stored.exit_code == 0, stored.stderr
    frame = project.store().attempts(json_out(stored)["runs"][0]["run_id"])
    assert len(frame) == 400
    assert frame["score"].sum() == pytest.approx(sum((i % 10) / 10 for i in range(400)) + 0.8)


def test_a_short_row_in_a_late_batch_is_named_by_its_line(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalsuite.run import _ingest_csv

    monkeypatch.setattr(_ingest_csv, "READ_BLOCK_BYTES", 256)
    rows = [f"m,item-{i:04d},1,1" for i in range(300)]
    rows[200] = "m,item-0200"
    path = tmp_path / "r.csv"
    path.write_text("model,item_id,epoch,score\n" + "\n".join(rows) + "\n")
    result = _ingest(project, path)
    assert result.exit_code == 2
    assert "line 202: 2 field(s), the header has 4" in result.stderr
    assert project.store().list_runs() == []
