"""`ingest --suite SUITE@X.Y.Z` (issue 11.5): results made elsewhere (a plain `inspect eval`
log of the suite's task, a CSV of its items) attach to a frozen manifest: item ids checked
against it, strata, split and item hashes taken from it, absent items counted as not run
(docs/design/foreign-tasks.md, "Ingest into a frozen suite")."""

from __future__ import annotations

from pathlib import Path

from inspect_ai import eval as inspect_eval

from evalsuite.manifest import read_manifest
from evalsuite.store import Store, default_store_url
from tests.helpers import Project, json_out
from tests.run.foreign_tasks import triage
from tests.run.test_foreign_tasks import frozen
from tests.run.test_scorers import make_toy_project


def _manifest(project: Project):  # type: ignore[no-untyped-def]
    return read_manifest(project.root / "manifests" / "desk" / "1.0.0.json")


def _store(project: Project) -> Store:
    return Store(default_store_url(project.root / ".evalsuite"))


def plain_inspect_log(tmp_path: Path, epochs: int = 2) -> Path:
    """A log of the task as its authors run it: `inspect eval`, every sample of its dataset."""
    log_dir = tmp_path / "plain-logs"
    (log,) = inspect_eval(
        triage(),
        model="fakeecho/x",
        epochs=epochs,
        log_dir=str(log_dir),
        log_format="json",
        display="none",
    )
    assert log.status == "success"
    return Path(log.location.removeprefix("file://"))


def write_csv(path: Path, rows: list[tuple[str, int, str, str]]) -> Path:
    lines = ["model,item_id,epoch,score,stratum"]
    lines += [f"team-model,{i},{e},{s},{st}" for i, e, s, st in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_plain_inspect_log_attaches_to_the_suite_and_compares(tmp_path: Path) -> None:
    project = frozen(tmp_path)
    log = plain_inspect_log(tmp_path)
    manifest = _manifest(project)
    dev = {i.id: i for i in manifest.items_by_split("dev")}
    # as before: without --suite, a plain log is "no manifest", one stratum `all`
    before = json_out(project.invoke("ingest", str(log), "--format", "inspect", "--json"))
    store = _store(project)
    loose = store.get_run(before["runs"][0]["run_id"])
    assert loose.suite is None and set(store.attempts(loose.run_id)["stratum"]) == {"all"}
    # the log holds every sample, holdout ones too: a run measures one split
    result = project.invoke("ingest", str(log), "--format", "inspect", "--suite", "desk@1.0.0")
    assert result.exit_code == 2
    message = " ".join(result.stderr.split())
    assert "span the dev (12 attempts) and holdout (12 attempts) items of desk@1.0.0" in message
    assert "Pass --split dev" in message
    assert len(json_out(project.invoke("runs", "--json"))) == 1  # nothing stored
    result = project.invoke(
        "ingest", str(log), "--format", "inspect", "--suite", "desk@1.0.0", "--split", "dev",
        "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    (entry,) = json_out(result)["runs"]
    assert (entry["suite"], entry["split"], entry["left_out"]) == ("desk@1.0.0", "dev", 12)
    assert (entry["n_items"], entry["planned"], entry["epochs"]) == (6, 12, 2)
    run = store.get_run(entry["run_id"])
    assert (run.suite, run.version, run.split) == ("desk", "1.0.0", "dev")
    assert run.manifest_hash == manifest.manifest_hash
    assert run.spec["attached"] == "desk@1.0.0" and run.spec["left_out"] == 12
    frame = store.attempts(run.run_id)
    assert set(frame["item_id"]) == set(dev)  # the holdout attempts were not stored
    for row in frame.itertuples():
        assert row.stratum == dev[row.item_id].stratum
        assert row.item_hash == dev[row.item_id].hash
    # it compares with a live evalsuite run of the same frozen suite, item by item
    live = project.invoke(
        "run", "desk@1.0.0", "--model", "fakeecho/x", "--epochs", "2", "--no-progress", "--json"
    )
    assert live.exit_code == 0, live.stderr
    compared = project.invoke("compare", json_out(live)["run_id"], run.run_id, "--json")
    assert compared.exit_code == 0, compared.stderr
    report = json_out(compared)
    assert report["n_items"] == len(dev)
    assert {s["stratum"] for s in report["strata"]} == {i.stratum for i in dev.values()}
    # the same log attached again is the same content: skipped
    again = project.invoke(
        "ingest", str(log), "--format", "inspect", "--suite", "desk@1.0.0", "--split", "dev",
        "--json",
    )  # fmt: skip
    assert json_out(again)["skipped"][0]["existing_run_ids"] == [run.run_id]


def test_a_csv_of_some_dev_items_counts_the_others_as_not_run(tmp_path: Path) -> None:
    project = frozen(tmp_path)
    dev = _manifest(project).items_by_split("dev")
    rows = [(dev[0].id, 1, "1", ""), (dev[1].id, 1, "0", dev[1].stratum)]
    path = write_csv(tmp_path / "results.csv", rows)
    result = project.invoke(
        "ingest", str(path), "--format", "csv", "--suite", "desk@1.0.0", "--json",
        "--error-threshold", "1",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    (entry,) = json_out(result)["runs"]
    assert (entry["planned"], entry["n_items"], entry["split"]) == (len(dev), 2, "dev")
    store = _store(project)
    frame = store.attempts(entry["run_id"]).sort_values("item_id")
    assert list(frame["stratum"]) == [dev[0].stratum, dev[1].stratum]  # from the manifest
    assert list(frame["item_hash"]) == [dev[0].hash, dev[1].hash]
    score = json_out(project.invoke("score", entry["run_id"], "--json"))
    assert score["harness"]["errors_by_kind"] == {"not run": len(dev) - 2}
    # issue 28.10: evalsuite cannot resume a run made by another harness; say what can
    (advice,) = [g["advice"] for g in score["harness"]["top_errors"] if g["kind"] == "not run"]
    assert "--resume RUN" not in advice and "--resume` cannot complete it" in advice
    assert "made elsewhere (csv)" in advice and "ingest it again" in advice
    text = project.invoke("score", entry["run_id"])
    assert "--resume RUN" not in text.stdout and "ingest it again" in text.stdout
    # with the default threshold, a run with most items not run is invalid (exit 5)
    path = write_csv(tmp_path / "other.csv", [(dev[0].id, 1, "0", "")])
    result = project.invoke("ingest", str(path), "--format", "csv", "--suite", "desk@1.0.0")
    assert result.exit_code == 5
    assert "harness errors" in result.stderr
    assert "--resume RUN" not in result.stdout + result.stderr


def test_unknown_item_ids_are_refused(tmp_path: Path) -> None:
    project = frozen(tmp_path)
    dev = _manifest(project).items_by_split("dev")
    rows = [(dev[0].id, 1, "1", ""), ("t-99", 1, "1", ""), ("zz-1", 1, "0", "")]
    path = write_csv(tmp_path / "results.csv", rows)
    result = project.invoke("ingest", str(path), "--format", "csv", "--suite", "desk@1.0.0")
    assert result.exit_code == 2
    message = " ".join(result.stderr.split())
    assert "2 item id(s) are not items of desk@1.0.0: 't-99', 'zz-1'" in message
    assert "manifests/desk/1.0.0.json" in message and "without --suite" in message
    assert json_out(project.invoke("runs", "--json")) == []


def test_a_stratum_that_disagrees_with_the_manifest_is_refused(tmp_path: Path) -> None:
    project = frozen(tmp_path)
    item = _manifest(project).items_by_split("dev")[0]
    path = write_csv(tmp_path / "results.csv", [(item.id, 1, "1", "somewhere/else")])
    result = project.invoke("ingest", str(path), "--format", "csv", "--suite", "desk@1.0.0")
    assert result.exit_code == 2
    message = " ".join(result.stderr.split())
    assert f"{item.id!r}: 'somewhere/else' in the file, {item.stratum!r} in the manifest" in (
        message
    )


def test_holdout_results_cannot_be_attached(tmp_path: Path) -> None:
    project = frozen(tmp_path)
    item = _manifest(project).items_by_split("holdout")[0]
    path = write_csv(tmp_path / "results.csv", [(item.id, 1, "1", "")])
    result = project.invoke("ingest", str(path), "--format", "csv", "--suite", "desk@1.0.0")
    assert result.exit_code == 7
    assert "only by `evalsuite run --split holdout`" in " ".join(result.stderr.split())
    assert json_out(project.invoke("runs", "--json")) == []


def test_a_log_written_by_evalsuite_run_attaches_itself(tmp_path: Path) -> None:
    project = frozen(tmp_path)
    live = project.invoke("run", "desk@1.0.0", "--model", "fakeecho/x", "--no-progress", "--json")
    assert live.exit_code == 0, live.stderr
    logs = project.root / ".evalsuite" / "logs" / json_out(live)["run_id"]
    for extra in ([], ["--suite", "desk@1.0.0"]):
        result = project.invoke(
            "ingest", str(logs), "--format", "inspect", "--again", "--json", *extra
        )
        assert result.exit_code == 0, result.stderr
        (entry,) = json_out(result)["runs"]
        assert (entry["suite"], entry["split"], entry["left_out"]) == ("desk@1.0.0", "dev", 0)


def test_suite_and_split_usage_errors(tmp_path: Path) -> None:
    project = frozen(tmp_path)
    path = write_csv(tmp_path / "r.csv", [("t-01", 1, "1", "")])
    for args, words in [
        (["--suite", "desk"], "--suite needs the exact frozen version, e.g. desk@1.0.0"),
        (["--split", "dev"], "--split applies with --suite SUITE@X.Y.Z only"),
        (["--suite", "desk@9.9.9"], "9.9.9"),
    ]:
        result = project.invoke("ingest", str(path), "--format", "csv", *args)
        assert result.exit_code == 2, args
        assert words in result.stderr


def test_an_ingested_log_is_scored_by_the_suites_score_declaration(tmp_path: Path) -> None:
    """A log of a family whose scorer returns a dict (score = "utility") ingests with the
    same scores as the live run: the manifest's declaration picks the score, not a harness
    error for every attempt."""
    project = make_toy_project(tmp_path, "dict_valued", 'score = "utility"\n')
    live = project.invoke("run", "toy@1.0.0", "--model", "mockllm/model", "--no-progress", "--json")
    assert live.exit_code == 0, live.stderr
    run_id = json_out(live)["run_id"]
    logs = project.root / ".evalsuite" / "logs" / run_id
    result = project.invoke("ingest", str(logs), "--format", "inspect", "--again", "--json")
    assert result.exit_code == 0, result.stderr
    (entry,) = json_out(result)["runs"]
    assert entry["valid"] and entry["suite"] == "toy@1.0.0"
    store = _store(project)
    ingested = store.attempts(entry["run_id"]).sort_values(["item_id", "epoch"])
    original = store.attempts(run_id).sort_values(["item_id", "epoch"])
    assert (ingested["outcome"] == "scored").all()
    assert list(ingested["score"]) == list(original["score"])
