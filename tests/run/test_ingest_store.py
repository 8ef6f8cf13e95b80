"""What `evalsuite ingest` stores: any size, once per content, and flagged when invalid.

Issue 10, items 8 (bounded batches), 10 (content fingerprint, `--again`) and 11 (invalid
runs exit 5; `score` warns first). Every test runs on SQLite and on PostgreSQL (issue 12).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalsuite._core.layout import Layout
from evalsuite.store import Store, default_store_url
from tests.helpers import Project, json_out


def _store(project: Project) -> Store:
    return Store(project.store_url or default_store_url(Layout(project.root).state))


@pytest.fixture
def project(tmp_path: Path, store_url: str) -> Project:
    (tmp_path / "p").mkdir()
    url = None if store_url.startswith("sqlite") else store_url  # SQLite: the default store
    return Project(root=tmp_path / "p", key_dir=tmp_path / "keys", store_url=url)


def _csv(tmp_path: Path, text: str, name: str = "r.csv") -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


RESULTS = (
    "model,item_id,epoch,score,stratum,outcome\n"
    "a,i1,1,1,s1,scored\na,i1,2,0,s1,scored\na,i2,1,0.5,s2,\na,i2,2,0,s2,limit\n"
    "b,i1,1,1,s1,\nb,i1,2,1,s1,\nb,i2,1,0,s2,\nb,i2,2,0.25,s2,\n"
)


# item 8 --------------------------------------------------------------------------------


def test_a_csv_of_25000_attempts_in_one_run_is_stored_whole(
    project: Project, tmp_path: Path
) -> None:
    # one statement per run used to exceed SQLite's 250,000 bound variables at ~16,000 rows;
    # 25,000 rows are half as many again (50,000 before: the same check, twice the CPU)
    rng = np.random.default_rng(8)
    n_items, epochs = 5_000, 5
    frame = pd.DataFrame(
        {
            "model": "big",
            "item_id": np.repeat([f"item-{i:05d}" for i in range(n_items)], epochs),
            "epoch": np.tile(np.arange(1, epochs + 1), n_items),
            "score": rng.integers(0, 2, n_items * epochs),
            "stratum": np.repeat([f"s{i % 7}" for i in range(n_items)], epochs),
        }
    )
    path = tmp_path / "big.csv"
    frame.to_csv(path, index=False)
    result = project.invoke("ingest", str(path), "--format", "csv", "--json")
    assert result.exit_code == 0, result.stderr[-2000:]
    run = json_out(result)["runs"][0]
    assert (run["n_items"], run["epochs"], run["planned"], run["valid"]) == (
        n_items,
        epochs,
        n_items * epochs,
        True,
    )
    stored = _store(project).attempts(run["run_id"])
    assert len(stored) == n_items * epochs
    assert stored["score"].sum() == frame["score"].sum()
    assert sorted(stored["stratum"].unique()) == [f"s{i}" for i in range(7)]


# item 10 -------------------------------------------------------------------------------


def test_the_same_content_again_is_skipped_and_names_the_run(
    project: Project, tmp_path: Path
) -> None:
    first = json_out(
        project.invoke("ingest", str(_csv(tmp_path, RESULTS)), "--format", "csv", "--json")
    )
    by_model = {r["model"]: r["run_id"] for r in first["runs"]}
    assert first["skipped"] == []
    # the same content: another name and folder, rows shuffled, numbers written differently
    lines = RESULTS.splitlines()
    shuffled = "\n".join([lines[0], *reversed(lines[1:])]).replace(",0.5,", ",0.50,") + "\n"
    copy = _csv(tmp_path, shuffled, "elsewhere/copy.csv")
    again = project.invoke("ingest", str(copy), "--format", "csv", "--json")
    assert again.exit_code == 0, again.stderr
    out = json_out(again)
    assert out["runs"] == []
    assert {s["model"]: s["existing_run_ids"] for s in out["skipped"]} == {
        m: [r] for m, r in by_model.items()
    }
    text = project.invoke("ingest", str(copy), "--format", "csv")
    assert text.exit_code == 0
    assert f"already stored as run {by_model['a']}" in text.stdout
    assert "--again" in text.stdout
    assert len(_store(project).list_runs()) == 2


def test_renamed_columns_and_epoch_base_do_not_change_the_content(
    project: Project, tmp_path: Path
) -> None:
    stored = json_out(
        project.invoke("ingest", str(_csv(tmp_path, RESULTS)), "--format", "csv", "--json")
    )
    frame = pd.read_csv(_csv(tmp_path, RESULTS), keep_default_na=False)
    frame = frame[frame["model"] == "a"].drop(columns="model")
    frame = frame.rename(columns={"item_id": "task", "epoch": "trial", "score": "reward"})
    frame["trial"] -= 1
    other = tmp_path / "other.csv"
    frame.to_csv(other, index=False)
    result = project.invoke(
        "ingest", str(other), "--format", "csv", "--model", "a", "--epoch-base", "0",
        "--column", "item_id=task", "--column", "epoch=trial", "--column", "score=reward",
        "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    skipped = json_out(result)["skipped"]
    assert [s["existing_run_ids"] for s in skipped] == [[stored["runs"][0]["run_id"]]]


def test_changed_content_is_a_new_run_and_again_forces_one(
    project: Project, tmp_path: Path
) -> None:
    first = json_out(
        project.invoke("ingest", str(_csv(tmp_path, RESULTS)), "--format", "csv", "--json")
    )
    changed = _csv(tmp_path, RESULTS.replace("b,i2,2,0.25", "b,i2,2,0.75"), "changed.csv")
    out = json_out(project.invoke("ingest", str(changed), "--format", "csv", "--json"))
    assert [r["model"] for r in out["runs"]] == ["b"]  # a is unchanged, b is new content
    assert [s["model"] for s in out["skipped"]] == ["a"]
    forced = project.invoke(
        "ingest", str(_csv(tmp_path, RESULTS)), "--format", "csv", "--again", "--json"
    )
    assert forced.exit_code == 0, forced.stderr
    runs = json_out(forced)["runs"]
    assert [r["model"] for r in runs] == ["a", "b"]
    a = runs[0]
    assert a["same_content_as"] == [first["runs"][0]["run_id"]]
    assert a["content_hash"] == first["runs"][0]["content_hash"]
    # and the next plain re-ingest names both runs that hold the content
    again = json_out(
        project.invoke("ingest", str(_csv(tmp_path, RESULTS)), "--format", "csv", "--json")
    )
    assert {s["model"]: len(s["existing_run_ids"]) for s in again["skipped"]} == {"a": 2, "b": 2}


def test_an_inspect_log_is_the_same_content_in_either_log_format(
    tmp_path: Path, store_url: str
) -> None:
    from inspect_ai.log import read_eval_log, write_eval_log

    from tests.run.conftest import make_probe_project

    project = make_probe_project(tmp_path, n_per_stratum=3)
    if not store_url.startswith("sqlite"):
        project.store_url = store_url  # the live run and the ingests write to PostgreSQL
    out = json_out(
        project.invoke(
            "run", "probe@1.0.0", "--model", "fakeagent/x", "--epochs", "2", "--json",
            "--no-progress",
        )
    )  # fmt: skip
    logs = project.root / ".evalsuite" / "logs" / out["run_id"]
    first = json_out(project.invoke("ingest", str(logs), "--format", "inspect", "--json"))
    assert len(first["runs"]) == 1
    second = project.invoke("ingest", str(logs), "--format", "inspect", "--json")
    assert second.exit_code == 0, second.stderr
    assert json_out(second)["runs"] == []
    assert json_out(second)["skipped"][0]["existing_run_ids"] == [first["runs"][0]["run_id"]]
    # the same eval rewritten as a .json log (other bytes, other name) is the same content
    (log_file,) = [p for p in logs.iterdir() if p.suffix in (".eval", ".json")]
    converted = tmp_path / "converted" / "copy.json"
    converted.parent.mkdir()
    write_eval_log(read_eval_log(str(log_file)), str(converted), format="json")
    third = json_out(project.invoke("ingest", str(converted), "--format", "inspect", "--json"))
    assert third["runs"] == []
    assert third["skipped"][0]["content_hash"] == first["runs"][0]["content_hash"]


# item 11 -------------------------------------------------------------------------------

WITH_ERRORS = (
    "model,item_id,epoch,score,outcome\n"
    "m,i1,1,1,scored\nm,i2,1,,harness_error\nm,i3,1,0,scored\nm,i4,1,1,scored\n"
)


def test_an_invalid_ingested_run_is_stored_flagged_and_exits_5(
    project: Project, tmp_path: Path
) -> None:
    result = project.invoke("ingest", str(_csv(tmp_path, WITH_ERRORS)), "--format", "csv", "--json")
    assert result.exit_code == 5
    run = json_out(result)["runs"][0]  # the JSON document is printed before the exit
    assert run["valid"] is False
    assert run["error_rate"] == 0.25
    assert "25.0% harness errors > 5%" in result.stderr
    assert "--error-threshold" in result.stderr
    store = _store(project)
    record = store.get_run(run["run_id"])
    assert (record.valid, record.status, record.error_rate) == (False, "complete", 0.25)
    assert len(store.attempts(run["run_id"])) == 4  # everything stored


def test_error_threshold_has_the_semantics_of_run(project: Project, tmp_path: Path) -> None:
    path = _csv(tmp_path, WITH_ERRORS)
    at = project.invoke(
        "ingest", str(path), "--format", "csv", "--error-threshold", "0.25", "--json"
    )
    assert at.exit_code == 0, at.stderr  # invalid only above the threshold, as `run`
    assert json_out(at)["runs"][0]["valid"] is True
    assert _store(project).get_run(json_out(at)["runs"][0]["run_id"]).error_threshold == 0.25
    bad = project.invoke("ingest", str(path), "--format", "csv", "--error-threshold", "2")
    assert bad.exit_code == 2


def test_score_of_an_invalid_run_warns_first_on_stderr(project: Project, tmp_path: Path) -> None:
    result = project.invoke("ingest", str(_csv(tmp_path, WITH_ERRORS)), "--format", "csv", "--json")
    run_id = json_out(result)["runs"][0]["run_id"]
    text = project.invoke("score", run_id)
    assert text.exit_code == 0
    assert text.stderr.lstrip().startswith("warning: run")
    assert "INVALID" in text.stderr
    assert text.output.index("is INVALID") < text.output.index("harness:")  # before the numbers
    as_json = project.invoke("score", run_id, "--json")
    assert "is INVALID" in as_json.stderr
    assert json_out(as_json)["valid"] is False
    valid = json_out(
        project.invoke("ingest", str(_csv(tmp_path, RESULTS)), "--format", "csv", "--json")
    )["runs"][1]["run_id"]
    assert project.invoke("score", valid).stderr == ""
