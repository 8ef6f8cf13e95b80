"""Freezing an inspect task as it is (issue 11.1): a task that was not written for evalsuite is
named by module path, file or registry name; `freeze` takes its own dataset, `run` puts the
frozen items in its place and keeps its solver, scorer, sandbox and limits, and every
(item, epoch) still gets its own seed (docs/design/foreign-tasks.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import read_eval_log

import tests.run.foreign_tasks  # noqa: F401  (registers the fakeecho model)
from evalsuite.manifest import read_manifest
from evalsuite.store import Store, default_store_url
from tests.helpers import CANARY, Project, json_out

HERE = Path(__file__).parent
TRIAGE = "tests.run.foreign_tasks:triage"


def suite_text(task: str, *, extra: str = "", stratify: str = '["family", "queue"]') -> str:
    return (
        'name = "desk"\ndescription = "a team\'s own task"\n'
        f'canary = "{CANARY}"\nholdout_fraction = 0.5\nstratify_by = {stratify}\n'
        f'key = "canary"\n\n[[families]]\nname = "triage"\nversion = 1\ntask = "{task}"\n{extra}'
    )


def make(tmp_path: Path, task: str = TRIAGE, extra: str = "", **kw: Any) -> Project:
    root = tmp_path / "project"
    (root / "tasks").mkdir(parents=True)
    (root / "tasks" / "desk.toml").write_text(suite_text(task, extra=extra, **kw))
    return Project(root=root, key_dir=tmp_path / "keys")


def frozen(tmp_path: Path, **kw: Any) -> Project:
    project = make(tmp_path, **kw)
    result = project.invoke("freeze", "desk", "--version", "1.0.0")
    assert result.exit_code == 0, result.stderr
    return project


def dev_records(project: Project) -> dict[str, dict[str, Any]]:
    path = project.root / "manifests" / "desk" / "1.0.0.items.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    return {r["item"]["id"]: r for r in map(json.loads, lines)}


def test_freeze_takes_the_tasks_own_dataset(tmp_path: Path) -> None:
    project = frozen(tmp_path)
    manifest = read_manifest(project.root / "manifests" / "desk" / "1.0.0.json")
    family = manifest.families[0]
    assert family.task == TRIAGE and family.items is None
    assert "items" not in manifest.model_dump(mode="json")["families"][0]
    # every sample became an item, stratified by a metadata field of the task's dataset
    assert len(manifest.items) == 12
    assert {i.stratum for i in manifest.items} == {"triage/billing", "triage/tech", "triage/sales"}
    # dev items are frozen beside the manifest (hashed), holdout items only in the vault
    assert manifest.dev_items is not None
    records = dev_records(project)
    assert set(records) == {i.id for i in manifest.items_by_split("dev")}
    assert all(r["family"] == "triage" and r["item"]["canary"] == CANARY for r in records.values())
    assert not (project.root / "tasks" / "triage").exists()
    # the fields a sample has, as content
    everything = {**records}
    result = project.invoke("verify", "desk@1.0.0", "--json")
    assert result.exit_code == 0, result.stdout
    assert json_out(result)["suites"][0]["holdout_checked"] == 6
    from evalsuite._core.layout import Layout
    from evalsuite.manifest import KeySpec, load_holdout_items, resolve_key

    key = resolve_key("desk", "canary", CANARY, KeySpec(key_dir=project.key_dir), create=False)
    for _, item in load_holdout_items(Layout(project.root), manifest, key):
        everything[item.id] = {"item": item.payload()}
    items = {i: r["item"] for i, r in everything.items()}
    assert items["t-01"]["files"] == {"ticket.txt": "Invoice 2211 shows 3 seats, we have 2.\n"}
    assert items["t-02"]["files"] == {"notes.md": "inline notes for the agent"}
    assert items["t-03"]["input"] == [
        {"role": "system", "content": "You are a triage agent.", "source": "input"},
        {"role": "user", "content": "Ticket 3: the app crashes on start", "source": "input"},
    ] or [m["content"] for m in items["t-03"]["input"]] == [
        "You are a triage agent.",
        "Ticket 3: the app crashes on start",
    ]
    assert all("id" not in m for m in items["t-03"]["input"])  # inspect's random message ids
    assert items["t-04"]["choices"] == ["Solo", "Team", "Enterprise"]
    assert items["t-05"]["setup"] == "echo ready > ready.txt"


def test_task_args_are_frozen_and_hashed(tmp_path: Path) -> None:
    project = frozen(tmp_path, extra='task_args = {queue = "billing"}\n')
    manifest = read_manifest(project.root / "manifests" / "desk" / "1.0.0.json")
    assert manifest.families[0].task_args == {"queue": "billing"}
    assert {i.stratum for i in manifest.items} == {"triage/billing"}
    # another argument value is another measurement: a major version, not a patch
    project = frozen(tmp_path / "b", extra='task_args = {sandbox_type = "local"}\n')
    toml = project.root / "tasks" / "desk.toml"
    toml.write_text(toml.read_text().replace('task_args = {sandbox_type = "local"}\n', ""))
    result = project.invoke("freeze", "desk", "--version", "1.0.1")
    assert result.exit_code == 2
    assert "needs a major bump" in result.stderr
    result = project.invoke("freeze", "desk", "--version", "2.0.0", "--json")
    assert result.exit_code == 0, result.stderr
    assert json_out(result)["diff"] == {"added": [], "removed": [], "changed": []}


def test_run_substitutes_the_frozen_items_and_keeps_the_task(tmp_path: Path) -> None:
    project = frozen(tmp_path)
    result = project.invoke(
        "run", "desk@1.0.0", "--model", "fakeecho/x", "--epochs", "2", "--seed", "5",
        "--temperature", "0.25", "--max-tokens", "77", "--no-progress", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    run = json_out(result)
    store = Store(default_store_url(project.root / ".evalsuite"))
    frame = store.attempts(run["run_id"])
    manifest = read_manifest(project.root / "manifests" / "desk" / "1.0.0.json")
    dev = {i.id: i for i in manifest.items_by_split("dev")}
    assert sorted(set(frame["item_id"])) == sorted(dev)  # the frozen dev items, nothing else
    assert (frame["outcome"] == "scored").all()
    checks = [json.loads(c) for c in frame["checks"]]
    # each (item, epoch) got its own recorded seed at generate(), although the task only
    # calls a plain generate(); the run's generation settings reached the model too
    assert [int(c["seed"]) for c in checks] == [int(s) for s in frame["seed"]]
    assert len(set(frame["seed"])) == len(frame)
    assert {c["temperature"] for c in checks} == {0.25}
    assert {c["max_tokens"] for c in checks} == {77.0}
    # the task's own setup ran in the task's own (local) sandbox
    t05 = frame[frame["item_id"] == "t-05"]
    assert t05.empty or {json.loads(c)["ready"] for c in t05["checks"]} == {"ready"}
    # the task's scorer: the model answers "yes"
    expected = sum(1 for i in dev if _target(i) == "yes") / len(dev)
    assert run["mean"] == pytest.approx(expected)
    spec = store.get_run(run["run_id"]).spec
    assert spec["generate_config"] == {"temperature": 0.25, "max_tokens": 77}
    logs = list((project.root / ".evalsuite" / "logs" / run["run_id"]).glob("*.json"))
    log = read_eval_log(str(logs[0]))
    assert log.eval.sandbox is not None and log.eval.sandbox.type == "local"
    assert log.plan.steps[-1].solver == "generate"


def _target(item_id: str) -> str:
    for line in (HERE / "foreign_data" / "triage.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["id"] == item_id:
            return str(record["target"])
    raise KeyError(item_id)


def test_edited_frozen_dev_items_are_drift(tmp_path: Path) -> None:
    project = frozen(tmp_path)
    path = project.root / "manifests" / "desk" / "1.0.0.items.jsonl"
    path.write_text(path.read_text().replace("Ticket", "Tick3t", 1))
    result = project.invoke("verify", "desk@1.0.0")
    assert result.exit_code == 3
    assert "1.0.0.items.jsonl was modified after freezing" in result.stdout
    result = project.invoke("run", "desk@1.0.0", "--model", "fakeecho/x", "--no-progress")
    assert result.exit_code == 3
    path.unlink()
    result = project.invoke("verify", "desk@1.0.0")
    assert result.exit_code == 3 and "is missing" in result.stdout


def test_a_task_file_without_a_dataset_argument(tmp_path: Path) -> None:
    """The file form (relative to tasks/) no longer needs `dataset=`; the items come from the
    item source and replace the task's own dataset."""
    project = make(tmp_path, task="own/task.py@triage", extra='items = "own/items.jsonl"\n')
    own = project.root / "tasks" / "own"
    own.mkdir()
    shutil.copy(HERE / "foreign_tasks.py", own / "task.py")
    shutil.copytree(HERE / "foreign_data", own / "foreign_data")  # the task reads it when built
    records = [
        {"id": f"o-{i}", "input": f"question {i}", "target": "yes" if i % 2 else "no",
         "metadata": {"queue": "q"}}
        for i in range(8)
    ]  # fmt: skip
    (own / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    assert project.invoke("freeze", "desk", "--version", "1.0.0").exit_code == 0
    result = project.invoke("run", "desk@1.0.0", "--model", "fakeecho/x", "--no-progress", "--json")
    assert result.exit_code == 0, result.stderr
    run = json_out(result)
    store = Store(default_store_url(project.root / ".evalsuite"))
    assert sorted(store.attempts(run["run_id"])["item_id"]) == sorted(
        i.id
        for i in read_manifest(project.root / "manifests/desk/1.0.0.json").items_by_split("dev")
    )


@pytest.mark.parametrize(
    ("kind", "words"),
    [
        ("missing_file", "files['data.csv'] names a file ('inputs/data.csv') that does not exist"),
        ("url", "files['a.txt'] is a URL"),
        ("no_id", "sample #4 has no id"),
        ("metadata", "metadata['when'] is a object, which is not JSON"),
    ],
)
def test_a_sample_that_cannot_be_frozen_is_refused(tmp_path: Path, kind: str, words: str) -> None:
    project = make(
        tmp_path,
        task="tests.run.foreign_tasks:broken",
        extra=f'task_args = {{kind = "{kind}"}}\n',
        stratify='["family"]',
    )
    result = project.invoke("freeze", "desk", "--version", "1.0.0")
    assert result.exit_code == 2, result.stderr
    assert words in result.stderr
    assert "tests.run.foreign_tasks:broken" in result.stderr
    if kind != "no_id":
        assert "sample 'b-1'" in result.stderr
    assert not (project.root / "manifests").exists()


def test_a_dataset_that_needs_a_download_is_refused_with_what_to_do(tmp_path: Path) -> None:
    project = make(tmp_path, task="tests.run.foreign_tasks:from_the_hub", stratify='["family"]')
    result = project.invoke("freeze", "desk", "--version", "1.0.0")
    assert result.exit_code == 2
    message = " ".join(result.stderr.split())
    assert "tests.run.foreign_tasks:from_the_hub" in message
    assert "reads its dataset, and that failed" in message
    assert "items = '...'" in message and "HF_DATASETS_OFFLINE=1" in message
    assert not (project.root / "manifests").exists()


@pytest.mark.parametrize(
    ("task", "words"),
    [
        ("nopkg_evalsuite_test.evals:triage", "importing module 'nopkg_evalsuite_test.evals'"),
        ("tests.run.foreign_tasks:nothing", "has no task function 'nothing'"),
        ("nopkg_evalsuite_test/triage", "no inspect task is registered under that name"),
        ("own/missing.py@triage", "does not exist"),
    ],
)
def test_wrong_task_references_are_refused(tmp_path: Path, task: str, words: str) -> None:
    project = make(tmp_path, task=task)
    result = project.invoke("freeze", "desk", "--version", "1.0.0")
    assert result.exit_code == 2
    assert words in result.stderr


def test_malformed_reference_and_unknown_task_args(tmp_path: Path) -> None:
    project = make(tmp_path, task="just-a-name")
    result = project.invoke("freeze", "desk", "--version", "1.0.0")
    assert result.exit_code == 2
    assert "is not a task reference" in result.stderr and "inspect_evals/gsm8k" in result.stderr
    project = make(tmp_path / "b", extra="task_args = {colour = 1}\n")
    result = project.invoke("freeze", "desk", "--version", "1.0.0")
    assert result.exit_code == 2
    assert "task_args ['colour'] are not arguments of the task function" in result.stderr
