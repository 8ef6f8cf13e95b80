"""Task references are checked at freeze; a run that cannot start stores nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalsuite.holdout import read_ledger
from tests.helpers import CANARY, Project, json_out, make_project, suite_toml
from tests.run.conftest import make_probe_project
from tests.run.processes import store_of


def _frozen_files(project: Project) -> list[str]:
    return sorted(
        str(p.relative_to(project.root))
        for part in ("manifests", "holdout")
        if (project.root / part).exists()
        for p in (project.root / part).rglob("*")
        if p.is_file()
    )


@pytest.mark.parametrize(
    ("reference", "task_code", "message"),
    [
        ("fam/task.py@nosuchtask", None, "defines no task function 'nosuchtask'"),
        ("fam/missing.py@fam", None, "the task file"),
        (
            "fam/task.py@fam",
            "from inspect_ai import Task, task\n\n\n@task\ndef fam():\n    return Task()\n",
            "takes no `dataset` argument",
        ),
        ("fam/task.py@fam", "raise ImportError('a broken environment')\n", "importing"),
    ],
    ids=["no-function", "no-file", "no-dataset-argument", "import-fails"],
)
def test_freeze_refuses_a_task_reference_that_cannot_run(
    tmp_path: Path, reference: str, task_code: str | None, message: str
) -> None:
    toml = suite_toml().replace('task = "fam/task.py"', f'task = "{reference}"')
    project = make_project(tmp_path, toml=toml)
    if task_code is not None:
        (project.root / "tasks" / "fam" / "task.py").write_text(task_code)
    items = project.items_path().read_text()
    result = project.invoke("freeze", "demo", "--version", "1.0.0")
    assert result.exit_code == 2, result.stderr
    assert message in result.stderr
    assert f"task = '{reference}' of family 'fam'" in result.stderr
    assert "tasks/demo.toml" in result.stderr and "nothing was frozen" in result.stderr
    assert _frozen_files(project) == []  # nothing written
    assert project.items_path().read_text() == items
    fixed = toml.replace(reference, "fam/task.py@fam")
    (project.root / "tasks" / "demo.toml").write_text(fixed)
    (project.root / "tasks" / "fam" / "task.py").write_text(
        "from inspect_ai import Task, task\n\n\n@task\n"
        "def fam(dataset=None):\n    return Task(dataset=list(dataset or []))\n"
    )
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0


def _break_task(project: Project, *, only_with_items: bool = False) -> None:
    """The task code changes after the freeze so that building the task raises.

    With `only_with_items` it raises only when built on real items (samples with metadata),
    not on the placeholder sample the preflight uses to read the task's scorers: a failure
    that shows only once the vault is open.
    """
    path = project.root / "tasks" / "probe" / "task.py"
    condition = "    if dataset and dataset[0].metadata:\n    " if only_with_items else ""
    path.write_text(
        path.read_text().replace(
            "def probe(dataset: Sequence[Sample] | None = None) -> Task:\n",
            "def probe(dataset: Sequence[Sample] | None = None) -> Task:\n"
            f"{condition}    raise RuntimeError('environment image missing')\n",
        )
    )


def test_a_run_whose_task_fails_to_build_stores_nothing(tmp_path: Path) -> None:
    project = make_probe_project(tmp_path, n_per_stratum=4)
    _break_task(project)
    result = project.invoke("run", "probe@1.0.0", "--model", "fakeagent/x", "--no-progress")
    assert result.exit_code == 2
    assert "failed to build its task: RuntimeError: environment image missing" in result.stderr
    assert "Nothing was stored" in result.stderr
    assert json_out(project.invoke("runs", "--json")) == []  # no run left `running`


def test_a_holdout_run_whose_task_cannot_be_built_spends_no_look(tmp_path: Path) -> None:
    project = make_probe_project(tmp_path, n_per_stratum=4)
    _break_task(project)
    args = ("run", "probe@1.0.0", "--split", "holdout", "--model", "fakeagent/x")
    result = project.invoke(*args, "--no-progress")
    assert result.exit_code == 2
    assert "failed to build its task" in result.stderr
    assert json_out(project.invoke("runs", "--json")) == []
    assert not (project.root / "holdout" / "probe" / "ACCESS.jsonl").exists()


def test_a_holdout_run_that_fails_to_start_voids_its_look(tmp_path: Path) -> None:
    project = make_probe_project(tmp_path, n_per_stratum=4)
    _break_task(project, only_with_items=True)
    args = ("run", "probe@1.0.0", "--split", "holdout", "--model", "fakeagent/x")
    result = project.invoke(*args, "--no-progress")
    assert result.exit_code == 2
    assert json_out(project.invoke("runs", "--json")) == []
    entries = read_ledger(project.root / "holdout" / "probe" / "ACCESS.jsonl")
    assert [(e.kind, e.run_id) for e in entries] == [
        ("access", entries[0].run_id),
        ("void", entries[0].run_id),
    ]
    assert entries[1].reason is not None and "UsageError" in entries[1].reason
    status = json_out(project.invoke("holdout", "status", "probe@1.0.0", "--json"))
    assert status["families"] == []
    assert [v["run_id"] for v in status["voided"]] == [entries[0].run_id]
    assert project.invoke("verify", "probe").exit_code == 0
    assert CANARY not in result.stderr


def test_a_run_that_cannot_start_before_the_ledger_leaves_no_ledger_line(tmp_path: Path) -> None:
    project = make_probe_project(tmp_path, n_per_stratum=4)
    (project.root / "tasks" / "probe" / "task.py").unlink()
    args = ("run", "probe@1.0.0", "--split", "holdout", "--model", "fakeagent/x")
    result = project.invoke(*args, "--no-progress")
    assert result.exit_code == 2
    assert "does not exist" in result.stderr and "cannot be re-pointed" in result.stderr
    assert not (project.root / "holdout" / "probe" / "ACCESS.jsonl").exists()
    assert store_of(project).list_runs() == []


def test_an_eval_that_fails_before_any_attempt_stores_nothing_and_voids_the_look(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import evalsuite.run._runner as runner

    def fails(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("sandbox prerequisites missing")

    project = make_probe_project(tmp_path, n_per_stratum=4)
    monkeypatch.setattr(runner, "inspect_eval", fails)
    args = ("run", "probe@1.0.0", "--split", "holdout", "--model", "fakeagent/x")
    result = project.invoke(*args, "--no-progress")
    assert result.exit_code == 1
    assert "failed before any attempt finished (RuntimeError: sandbox" in result.stderr
    assert "nothing was stored and the holdout look was voided" in result.stderr
    assert store_of(project).list_runs() == []
    entries = read_ledger(project.root / "holdout" / "probe" / "ACCESS.jsonl")
    assert [e.kind for e in entries] == ["access", "void"]
    assert project.invoke("verify", "probe").exit_code == 0


def test_an_eval_that_fails_part_way_keeps_its_attempts_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import evalsuite.run._runner as runner

    real = runner.inspect_eval

    def fails_after(*args: object, **kwargs: object) -> None:
        real(*args, **kwargs)  # every attempt is streamed into the store
        raise RuntimeError("log directory unwritable")

    project = make_probe_project(tmp_path, n_per_stratum=4)
    monkeypatch.setattr(runner, "inspect_eval", fails_after)
    result = project.invoke("run", "probe@1.0.0", "--model", "fakeagent/x", "--no-progress")
    assert result.exit_code == 1
    assert "stored as interrupted" in result.stderr
    (run,) = store_of(project).list_runs()
    assert run.status == "interrupted"
    assert len(store_of(project).attempt_keys(run.run_id)) == 4
    monkeypatch.setattr(runner, "inspect_eval", real)
    resumed = project.invoke("run", "--resume", run.run_id, "--json", "--no-progress")
    assert resumed.exit_code == 0, resumed.stderr
    assert store_of(project).get_run(run.run_id).status == "complete"
