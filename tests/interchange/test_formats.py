"""`ingest --format eee|lm-eval|helm` on real-shaped files (tests/data/README.md), and the
refusals of issue 34: a bad file is refused with the field named, and nothing is stored."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from evalsuite.store import Store, default_store_url
from tests.helpers import REPO, Project, json_out, make_project
from tests.interchange.conftest import ingest

DATA = REPO / "tests" / "data"
LM_EVAL = DATA / "lm_eval"
SAMPLES = LM_EVAL / "samples_arc_easy_2025-03-01T12-00-00.123456.jsonl"
RESULTS = LM_EVAL / "results_2025-03-01T12-00-00.123456.json"
HELM = DATA / "helm" / "mmlu_subject=anatomy,method=multiple_choice_joint,model=openai_gpt2"
EEE_DIR = DATA / "eee" / "data" / "arc_easy" / "EleutherAI" / "pythia-160m"
EEE = EEE_DIR / "5f0c2a8e-3b1d-4c6e-9a7f-1e2d3c4b5a69.json"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return make_project(tmp_path)


def _attempts(project: Project, run_id: str):  # type: ignore[no-untyped-def]
    return Store(default_store_url(project.root / ".evalsuite")).attempts(run_id)


def _refused(
    project: Project, path: Path, fmt: str, *needles: str, args: tuple[str, ...] = ()
) -> str:
    result = project.invoke("ingest", str(path), "--format", fmt, *args)
    assert result.exit_code == 2, result.stdout + result.stderr
    message = " ".join(result.stderr.split())
    for needle in needles:
        assert needle in message, message
    assert json_out(project.invoke("runs", "--json")) == []  # nothing stored
    return message


def test_lm_eval_samples_become_a_run_of_their_documents(project: Project) -> None:
    run = ingest(project, SAMPLES, "lm-eval")
    assert (run["model"], run["n_items"], run["epochs"]) == ("EleutherAI/pythia-160m", 6, 1)
    frame = _attempts(project, run["run_id"])
    assert sorted(frame["item_id"]) == [str(i) for i in range(6)]
    results = json.loads(RESULTS.read_text(encoding="utf-8"))["results"]["arc_easy"]
    assert frame["score"].mean() == pytest.approx(results["acc,none"], abs=0)
    other = ingest(project, LM_EVAL, "lm-eval", "--metric", "acc_norm")  # a folder of one task
    assert _attempts(project, other["run_id"])["score"].mean() == results["acc_norm,none"]
    assert Store(default_store_url(project.root / ".evalsuite")).get_run(run["run_id"]).source == (
        "lm-eval"
    )


def test_an_eee_record_made_by_the_packages_converter_matches_its_lm_eval_source(
    project: Project,
) -> None:
    eee = ingest(project, EEE, "eee")
    lm = ingest(project, SAMPLES, "lm-eval", "--again")
    a, b = _attempts(project, eee["run_id"]), _attempts(project, lm["run_id"])
    assert list(a["item_id"]) == list(b["item_id"]) and list(a["score"]) == list(b["score"])
    run = Store(default_store_url(project.root / ".evalsuite")).get_run(eee["run_id"])
    assert run.source == "eee" and run.spec["metric"] == "acc"
    assert run.spec["eval_library"]["name"] == "lm_eval"


def test_a_helm_run_directory_becomes_a_run_of_its_instances(project: Project) -> None:
    run = ingest(project, HELM, "helm")
    assert (run["model"], run["n_items"]) == ("openai/gpt2", 4)
    frame = _attempts(project, run["run_id"])
    assert sorted(frame["item_id"]) == ["id147", "id148", "id149", "id150"]
    stats = json.loads((HELM / "stats.json").read_text(encoding="utf-8"))
    assert frame["score"].mean() == stats[0]["mean"] == 0.5


def _eee_copy(tmp_path: Path) -> tuple[Path, Path, dict]:  # type: ignore[type-arg]
    folder = tmp_path / "eee"
    shutil.copytree(EEE_DIR, folder)
    aggregate = folder / EEE.name
    sidecar = folder / EEE.name.replace(".json", "_samples.jsonl")
    return aggregate, sidecar, json.loads(aggregate.read_text(encoding="utf-8"))


def _write(path: Path, data: dict) -> None:  # type: ignore[type-arg]
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def test_bad_eee_records_are_refused_with_the_field_named(project: Project, tmp_path: Path) -> None:
    aggregate, sidecar, data = _eee_copy(tmp_path)
    # a sidecar that is not the one the record was written with
    original = sidecar.read_text(encoding="utf-8")
    sidecar.write_text(original.replace('"score": 1.0', '"score": 0.0', 1), encoding="utf-8")
    _refused(project, aggregate, "eee", "detailed_evaluation_results.checksum is", "hashes")
    sidecar.write_text(original, encoding="utf-8")
    # a row count that does not match
    wrong = json.loads(json.dumps(data))
    wrong["detailed_evaluation_results"]["total_rows"] += 1
    _write(aggregate, wrong)
    _refused(project, aggregate, "eee", "detailed_evaluation_results.total_rows is 13", "holds 12")
    # an aggregate score that disagrees with its samples
    wrong = json.loads(json.dumps(data))
    wrong["evaluation_results"][0]["score_details"]["score"] = 0.9
    _write(aggregate, wrong)
    _refused(project, aggregate, "eee", "evaluation_results[0].score_details.score is 0.9")
    # a metric where lower is better
    wrong = json.loads(json.dumps(data))
    wrong["evaluation_results"][0]["metric_config"]["lower_is_better"] = True
    _write(aggregate, wrong)
    _refused(project, aggregate, "eee", "evaluation_results[0].metric_config.lower_is_better")
    # a schema violation: the package's validator names the field
    wrong = json.loads(json.dumps(data))
    del wrong["model_info"]
    _write(aggregate, wrong)
    _refused(
        project, aggregate, "eee", "not a valid Every Eval Ever aggregate record", "model_info"
    )
    # an aggregate without samples beside records with samples: ingested apart, or not at all
    wrong = json.loads(json.dumps(data))
    del wrong["detailed_evaluation_results"]
    wrong["evaluation_id"] = "arc_easy/aggregate-only"
    _write(aggregate.with_name("other.json"), wrong)
    _write(aggregate, data)
    _refused(project, aggregate.parent, "eee", "ingest them apart", "nothing was stored")
    assert Store(default_store_url(project.root / ".evalsuite")).aggregates().empty


def test_bad_lm_eval_and_helm_files_are_refused(project: Project, tmp_path: Path) -> None:
    folder = tmp_path / "lm"
    shutil.copytree(LM_EVAL, folder)
    results = folder / RESULTS.name
    data = json.loads(results.read_text(encoding="utf-8"))
    del data["higher_is_better"]["arc_easy"]["acc"]
    _write(results, data)
    _refused(project, folder / SAMPLES.name, "lm-eval", "higher_is_better.arc_easy.acc is missing")
    data = json.loads(RESULTS.read_text(encoding="utf-8"))
    data["results"]["arc_easy"]["acc,none"] = 0.5
    _write(results, data)
    _refused(project, folder / SAMPLES.name, "lm-eval", "results.arc_easy.acc,none is 0.5")
    _refused(project, HELM, "helm", "direction of HELM metric 'num_prompt_tokens' is unknown",
             args=("--metric", "num_prompt_tokens"))  # fmt: skip


def test_eee_without_the_package_names_the_install_command(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "every_eval_ever", None)
    monkeypatch.setitem(sys.modules, "every_eval_ever.validator", None)
    _refused(project, EEE, "eee", "pip install --no-deps --ignore-requires-python every-eval-ever")


def test_options_of_other_formats_are_refused(project: Project) -> None:
    result = project.invoke("ingest", str(SAMPLES), "--format", "lm-eval", "--column", "model=x")
    assert result.exit_code == 2 and "apply to --format csv" in result.stderr
    result = project.invoke("ingest", str(RESULTS), "--format", "csv", "--metric", "acc")
    assert result.exit_code == 2 and "--metric applies to --format eee" in result.stderr
    _refused(project, RESULTS, "lm-eval", "not an lm-eval samples file")
    _refused(project, EEE_DIR / EEE.name.replace(".json", "_samples.jsonl"), "eee", "sidecar")
    _refused(project, EEE, "eee", "--metric 'f1' is not one of", args=("--metric", "f1"))


def test_aggregates_without_samples_serve_where_means_suffice(
    project: Project, tmp_path: Path
) -> None:
    """Stored as aggregate results (no run): used by `validity report --aggregates` (means
    suffice), refused by `compare` and `score` (items are needed), never stored twice."""
    base = json.loads(EEE.read_text(encoding="utf-8"))
    del base["detailed_evaluation_results"]
    folder = tmp_path / "records"
    folder.mkdir()
    means = {"org/a": 0.41, "org/b": 0.55, "org/c": 0.62, "org/d": 0.70, "org/e": 0.74}
    for n, (model, mean) in enumerate(means.items()):
        record = json.loads(json.dumps(base))
        record["model_info"].update(name=model, id=model, developer="org")
        record["evaluation_id"] = f"arc_easy/{model}/{n}"
        record["evaluation_results"] = record["evaluation_results"][:1]
        record["evaluation_results"][0]["score_details"]["score"] = mean
        _write(folder / f"{n}.json", record)
    stored = project.invoke("ingest", str(folder), "--format", "eee", "--json")
    assert stored.exit_code == 0, stored.stderr
    out = json_out(stored)
    assert out["runs"] == [] and [a["added"] for a in out["aggregates"]] == [True] * 5
    assert {a["model"]: a["score"] for a in out["aggregates"]} == means
    again = project.invoke("ingest", str(folder / "0.json"), "--format", "eee")
    assert again.exit_code == 0 and "already stored aggregate result: org/a" in again.stdout
    assert json_out(project.invoke("runs", "--json")) == []  # an aggregate is no run
    refused = project.invoke("ingest", str(folder / "1.json"), "--format", "eee", "--again")
    assert refused.exit_code == 2 and "--suite, --split and --again do not apply" in " ".join(
        refused.stderr.split()
    )
    for command in (("compare", "org/a", "org/b"), ("score", "org/a")):
        result = project.invoke(*command)
        message = " ".join(result.stderr.split())
        assert result.exit_code == 2, message
        assert "'org/a' has aggregate results only" in message and "needs its items" in message

    outcomes = tmp_path / "outcomes.csv"
    lines = [f"{m},{1000 + 500 * v},arena_elo,test" for m, v in means.items()]
    outcomes.write_text("model,value,metric,source\n" + "\n".join(lines) + "\n", encoding="utf-8")
    assert project.invoke("validity", "import", str(outcomes)).exit_code == 0
    for source in (("--scores", str(folder)), ("--aggregates",)):
        result = project.invoke("validity", "report", "--metric", "arena_elo", *source, "--json")
        assert result.exit_code == 0, result.stderr
        (predictor,) = json_out(result)["predictors"]
        assert predictor["name"] == "arc_easy" and predictor["n"] == 5
        assert predictor["spearman"] == pytest.approx(1.0)
    both = project.invoke("validity", "report", "--metric", "arena_elo", "--aggregates",
                          "--scores", str(folder))  # fmt: skip
    assert both.exit_code == 2 and "one source of scores" in both.stderr


def test_validity_report_aggregates_on_an_empty_store_says_how_to_store_some(
    project: Project,
) -> None:
    result = project.invoke("validity", "report", "--metric", "m", "--aggregates")
    assert result.exit_code == 2 and "ingest RECORD.json --format eee" in " ".join(
        result.stderr.split()
    )


def test_a_failed_helm_request_is_a_harness_error(project: Project, tmp_path: Path) -> None:
    folder = tmp_path / "helm"
    shutil.copytree(HELM, folder)
    (folder / "stats.json").unlink()  # its mean counts the failed instance
    state = json.loads((folder / "scenario_state.json").read_text(encoding="utf-8"))
    state["request_states"][0]["result"]["success"] = False
    _write(folder / "scenario_state.json", state)
    run = ingest(project, folder, "helm", "--error-threshold", "1")
    frame = _attempts(project, run["run_id"]).set_index("item_id")
    assert frame.loc["id147", "outcome"] == "harness_error"
    assert frame["outcome"].tolist().count("scored") == 3
