"""A new family version beside the old one: earlier suite versions keep running their own code."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import MINIMAL_TASK, json_out, make_project, suite_toml


def test_a_version_frozen_with_an_older_task_file_still_verifies(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0
    toml = project.root / "tasks" / "demo.toml"
    (project.root / "tasks" / "fam" / "task_v2.py").write_text(MINIMAL_TASK, encoding="utf-8")
    # the same task file with another version: the old manifest's code has changed
    toml.write_text(suite_toml().replace("version = 1", "version = 2"), encoding="utf-8")
    same_file = json_out(project.invoke("verify", "demo@1.0.0", "--json"))["suites"][0]
    assert any("has version 2 in tasks/demo.toml but 1" in p for p in same_file["problems"])
    # version 2 in its own file: 1.0.0 still runs fam/task.py, unchanged
    toml.write_text(
        suite_toml()
        .replace("version = 1", "version = 2")
        .replace('task = "fam/task.py"', 'task = "fam/task_v2.py"'),
        encoding="utf-8",
    )
    result = project.invoke("verify", "demo@1.0.0", "--json")
    assert result.exit_code == 0, result.stdout
    (project.root / "tasks" / "fam" / "task.py").unlink()
    gone = project.invoke("verify", "demo@1.0.0", "--json")
    assert gone.exit_code == 3
    (suite,) = json_out(gone)["suites"]
    assert any(
        "runs 'fam/task.py' (version 1), but tasks/fam/task.py is gone" in p
        for p in suite["problems"]
    )
