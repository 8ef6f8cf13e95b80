from __future__ import annotations

from pathlib import Path

import pytest

from evalsuite._core.layout import Layout
from evalsuite.store import Store, default_store_url
from tests.helpers import Project, json_out

DATA = Path(__file__).resolve().parents[1] / "data"


def _store(project: Project) -> Store:
    return Store(default_store_url(Layout(project.root).state))


@pytest.fixture
def empty_project(tmp_path: Path) -> Project:
    (tmp_path / "p").mkdir()
    return Project(root=tmp_path / "p", key_dir=tmp_path / "keys")


def test_tau_bench_trials_ingest_as_one_run_of_50_items_by_4_epochs(
    empty_project: Project,
) -> None:
    result = empty_project.invoke(
        "ingest",
        str(DATA / "tau_bench/gpt-4o-airline_trials.csv"),
        "--format",
        "csv",
        "--column",
        "item_id=task_id",
        "--column",
        "epoch=trial",
        "--column",
        "score=reward",
        "--model",
        "gpt-4o",
        "--epoch-base",
        "0",
        "--ignore-column",
        "n_turns",
        "--json",
    )
    assert result.exit_code == 0, result.stderr
    runs = json_out(result)["runs"]
    assert len(runs) == 1
    assert runs[0]["n_items"] == 50
    assert runs[0]["epochs"] == 4
    frame = _store(empty_project).attempts(runs[0]["run_id"])
    assert len(frame) == 200
    assert sorted(frame["epoch"].unique()) == [1, 2, 3, 4]
    assert set(frame["outcome"]) == {"scored"}
    # the owners' reward column, unchanged
    assert frame["score"].sum() == pytest.approx(
        __import__("pandas").read_csv(DATA / "tau_bench/gpt-4o-airline_trials.csv")["reward"].sum()
    )


def _csv(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "r.csv"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("model,item_id,epoch,score\nm,a,1,1.5\n", "line 2: score 1.5 is outside [0, 1]"),
        ("model,item_id,epoch,score\nm,a,1,x\n", "line 2: score 'x' is not a number"),
        ("model,item_id,epoch,score\nm,a,0,1\n", "line 2: epoch 0 is below 1"),
        ("model,item_id,epoch,score\nm,a,1,1\nm,a,1,0\n", "line 3: duplicate"),
        ("model,item_id,epoch,score,outcome\nm,a,1,0,crash\n", "outcome 'crash' is not one"),
        ("model,item_id,epoch,score,outcome\nm,a,1,0,harness_error\n", "leaves score empty"),
        ("model,item,epoch,score\nm,a,1,1\n", "missing column(s) ['item_id']"),
        ("model,item_id,epoch,score\n", "no data rows"),
    ],
)
def test_bad_csv_rows_are_named(
    empty_project: Project, tmp_path: Path, content: str, message: str
) -> None:
    result = empty_project.invoke("ingest", str(_csv(tmp_path, content)), "--format", "csv")
    assert result.exit_code == 2
    assert message in result.stderr
    assert _store(empty_project).list_runs() == []


def test_csv_with_harness_errors_and_several_models(empty_project: Project, tmp_path: Path) -> None:
    content = (
        "model,item_id,epoch,score,stratum,outcome\n"
        "a,i1,1,1,s1,scored\na,i2,1,,s2,harness_error\n"
        "b,i1,1,0,s1,limit\nb,i2,1,0.5,s2,\n"
    )
    result = empty_project.invoke(
        "ingest", str(_csv(tmp_path, content)), "--format", "csv", "--json"
    )
    assert result.exit_code == 5  # stored, flagged invalid, like `evalsuite run`
    out = json_out(result)
    assert [r["model"] for r in out["runs"]] == ["a", "b"]
    store = _store(empty_project)
    a = store.attempts(out["runs"][0]["run_id"])
    assert list(a["outcome"]) == ["scored", "harness_error"]
    assert out["runs"][0]["valid"] is False  # 1 of 2 planned attempts is a harness error


def test_inspect_logs_of_an_evalsuite_run_keep_items_and_epochs(tmp_path: Path) -> None:
    from tests.run.conftest import make_probe_project

    project = make_probe_project(tmp_path)
    out = json_out(
        project.invoke(
            "run",
            "probe@1.0.0",
            "--model",
            "fakeagent/x",
            "--epochs",
            "2",
            "--limit",
            "5",
            "--json",
            "--no-progress",
        )
    )
    logs = project.root / ".evalsuite" / "logs" / out["run_id"]
    ingested = json_out(project.invoke("ingest", str(logs), "--format", "inspect", "--json"))
    run = ingested["runs"][0]
    assert run["n_items"] == 5
    assert run["epochs"] == 2
    store = _store(project)
    original = store.attempts(out["run_id"])
    copy = store.attempts(run["run_id"])
    assert list(copy["item_id"]) == list(original["item_id"])
    assert list(copy["score"]) == list(original["score"])
    # linked to the frozen manifest through the inspect task version
    assert list(copy["stratum"]) == list(original["stratum"])
    assert list(copy["item_hash"]) == list(original["item_hash"])
    record = store.get_run(run["run_id"])
    assert (record.suite, record.version, record.split) == ("probe", "1.0.0", "dev")


def test_inspect_logs_are_ingested_from_an_fsspec_url(tmp_path: Path) -> None:
    from tests.run.conftest import make_probe_project

    project = make_probe_project(tmp_path, n_per_stratum=2)
    base = ("run", "probe@1.0.0", "--model", "fakeagent/x", "--epochs", "2", "--json")
    store = _store(project)
    # a non-local file system (fsspec's memory://, shared within this process)
    logs = "memory://evalsuite-tests/ingest-url"
    out = json_out(project.invoke(*base, "--log-dir", logs, "--no-progress"))
    assert not (project.root / ".evalsuite" / "logs").exists()  # nothing written locally
    ingested = json_out(project.invoke("ingest", logs, "--format", "inspect", "--json"))
    (run,) = ingested["runs"]
    assert (run["n_items"], run["epochs"], run["valid"]) == (2, 2, True)
    original, copy = store.attempts(out["run_id"]), store.attempts(run["run_id"])
    assert list(copy["item_id"]) == list(original["item_id"])
    assert list(copy["score"]) == list(original["score"])
    # a file:// URL of a local log directory (a space in it, percent-encoded in the URL)
    local = tmp_path / "shared logs"
    out = json_out(project.invoke(*base, "--seed", "5", "--log-dir", str(local), "--no-progress"))
    ingested = json_out(project.invoke("ingest", local.as_uri(), "--format", "inspect", "--json"))
    (run,) = ingested["runs"]
    original, copy = store.attempts(out["run_id"]), store.attempts(run["run_id"])
    assert list(copy["score"]) == list(original["score"])
    missing = project.invoke("ingest", "memory://evalsuite-tests/none", "--format", "inspect")
    assert missing.exit_code == 2
    assert "memory://evalsuite-tests/none does not exist" in missing.stderr


def test_a_results_table_at_a_url_is_refused(empty_project: Project) -> None:
    result = empty_project.invoke("ingest", "s3://bucket/results.csv", "--format", "csv")
    assert result.exit_code == 2
    assert "--format csv reads a local file, not a URL (s3://bucket/results.csv)" in result.stderr


def test_ingest_of_a_missing_path(empty_project: Project) -> None:
    result = empty_project.invoke("ingest", "nope", "--format", "inspect")
    assert result.exit_code == 2
    assert "does not exist" in result.stderr
