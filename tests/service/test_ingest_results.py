"""The `ingest` use case (issue 30): `ingest_results` takes a typed `IngestRequest`, stores
the results through the run stage's readers and says when a stored run is invalid; a refused
request opens no store."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalsuite._core.layout import Layout
from evalsuite.errors import UsageError
from evalsuite.service import IngestRequest, column_mapping, ingest_results
from evalsuite.store import Store, default_store_url

CSV = "task,trial,reward,outcome\nt-1,1,1,\nt-1,2,0,\nt-2,1,,harness_error\n"


def _store(root: Path) -> Store:
    return Store(default_store_url(Layout(root).state))


def test_a_table_is_stored_with_its_columns_mapped(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text(CSV, encoding="utf-8")
    request = IngestRequest(
        str(path),
        "csv",
        columns=column_mapping(("item_id=task", "epoch=trial", "score=reward")),
        model="m-1",
        error_threshold=0.5,
    )
    outcome = ingest_results(request, layout=Layout(tmp_path), store=lambda: _store(tmp_path))
    (run,) = outcome.report.runs
    assert (run.model, run.n_items, run.planned) == ("m-1", 2, 4)
    assert outcome.invalid is None
    frame = _store(tmp_path).attempts(run.run_id)
    assert sorted(frame["outcome"]) == ["harness_error", "scored", "scored"]
    # the same content again is skipped; with a lower threshold a new run is invalid (exit 5)
    again = ingest_results(request, layout=Layout(tmp_path), store=_store(tmp_path))
    assert again.report.runs == [] and again.report.skipped
    strict = IngestRequest(
        str(path), "csv", columns=request.columns, model="m-1", again=True, error_threshold=0.1
    )
    invalid = ingest_results(strict, layout=Layout(tmp_path), store=_store(tmp_path)).invalid
    assert invalid is not None and invalid.exit_code == 5
    assert "1 ingested run(s) are invalid" in str(invalid)
    assert "(m-1: 50.0% harness errors > 10%)" in str(invalid)


@pytest.mark.parametrize(
    ("pairs", "words"),
    [
        (("item_id",), "--column expects TARGET=NAME"),
        (("itemid=task",), "--column expects TARGET=NAME with TARGET one of model, item_id"),
        (("item_id=",), "--column expects TARGET=NAME"),
        (("item_id=a", "item_id=b"), "--column maps item_id twice (a, b)"),
    ],
)
def test_a_malformed_column_mapping_is_refused(pairs: tuple[str, ...], words: str) -> None:
    with pytest.raises(UsageError) as caught:
        column_mapping(pairs)
    assert words in str(caught.value)


@pytest.mark.parametrize(
    ("request_", "words"),
    [
        (IngestRequest("logs", "inspect", model="m"), "apply to --format csv"),
        (IngestRequest("s3://b/r.csv", "csv"), "reads a local file, not a URL"),
        (IngestRequest("r.csv", "csv", split="dev"), "--split applies with --suite"),
        (IngestRequest("r.csv", "csv", suite="s"), "--suite needs the exact frozen version"),
        (IngestRequest("r.csv", "csv", columns={"reward": "r"}), "--column maps 'reward'"),
    ],
)
def test_a_refused_request_opens_no_store(
    tmp_path: Path, request_: IngestRequest, words: str
) -> None:
    opened: list[bool] = []

    def open_store() -> Store:
        opened.append(True)
        return _store(tmp_path)

    with pytest.raises(UsageError) as caught:
        ingest_results(request_, layout=Layout(tmp_path), store=open_store)
    assert words in str(caught.value)
    assert opened == [] and not (tmp_path / ".evalsuite").exists()
