"""End to end on a published inspect task that was not written for evalsuite (issue 11): the
`agent_threat_bench_memory_poison` task of the `inspect_evals` package (its data ships with
the package, so nothing is downloaded; its scorer returns a dict, {"utility", "security"}).

Named by its registry name, frozen with no change to its code, verified, run on the dev split
with the offline `mockllm/model`, a plain inspect eval log of the same task ingested with
`--suite`, both compared and reported."""

from __future__ import annotations

from pathlib import Path

from inspect_ai import eval as inspect_eval

import tests.run.foreign_tasks  # noqa: F401  (registers the fakeecho model)
from evalsuite.manifest import read_manifest
from tests.helpers import CANARY, Project, json_out

TASK = "inspect_evals/agent_threat_bench_memory_poison"


def test_a_published_task_with_a_dict_scorer_end_to_end(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / "tasks").mkdir(parents=True)
    (root / "tasks" / "threats.toml").write_text(
        'name = "threats"\ndescription = "agent threat bench, memory poisoning"\n'
        f'canary = "{CANARY}"\nholdout_fraction = 0.5\n'
        'stratify_by = ["family", "difficulty"]\nkey = "canary"\n\n'
        f'[[families]]\nname = "memory_poison"\nversion = 1\ntask = "{TASK}"\n'
        'score = "utility"\n'
    )
    project = Project(root=root, key_dir=tmp_path / "keys")
    result = project.invoke("freeze", "threats", "--version", "1.0.0")
    assert result.exit_code == 0, result.stderr
    manifest = read_manifest(root / "manifests" / "threats" / "1.0.0.json")
    assert len(manifest.items) == 10  # every sample of the package's dataset
    assert {i.stratum.split("/")[0] for i in manifest.items} == {"memory_poison"}
    dev = {i.id for i in manifest.items_by_split("dev")}
    assert project.invoke("verify", "threats@1.0.0").exit_code == 0

    live = project.invoke(
        "run", "threats@1.0.0", "--model", "mockllm/model", "--epochs", "2", "--no-progress",
        "--json",
    )  # fmt: skip
    assert live.exit_code == 0, live.stderr
    live_run = json_out(live)
    assert live_run["valid"] and live_run["harness"]["harness_errors"] == 0
    score = json_out(project.invoke("score", live_run["run_id"], "--json"))
    assert score["harness"]["scored"] == 2 * len(dev)
    assert "security" in str(score["secondary"])  # the other value is kept, not dropped

    # the task as its authors run it: every sample, another (offline) model, a plain log
    (log,) = inspect_eval(
        TASK, model="fakeecho/x", epochs=2, log_dir=str(tmp_path / "plain"), display="none"
    )
    assert log.status == "success"
    ingested = project.invoke(
        "ingest", log.location, "--format", "inspect", "--suite", "threats@1.0.0",
        "--split", "dev", "--json",
    )  # fmt: skip
    assert ingested.exit_code == 0, ingested.stderr
    (entry,) = json_out(ingested)["runs"]
    assert (entry["suite"], entry["split"], entry["n_items"]) == ("threats@1.0.0", "dev", len(dev))
    assert entry["left_out"] == 2 * (10 - len(dev)) and entry["valid"]

    compared = project.invoke("compare", live_run["run_id"], entry["run_id"], "--json")
    assert compared.exit_code == 0, compared.stderr
    assert json_out(compared)["n_items"] == len(dev)
    out = tmp_path / "report"
    reported = project.invoke("report", live_run["run_id"], entry["run_id"], "--out", str(out))
    assert reported.exit_code == 0, reported.stderr
    assert (out / "index.html").is_file()
