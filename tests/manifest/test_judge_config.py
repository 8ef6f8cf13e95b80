"""A family's declared judge is frozen with it: a changed judge is a changed manifest (issue 33)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.audit.judge_sim import JUDGED_TASK
from tests.helpers import Project, json_out, make_project, suite_toml

JUDGE = (
    "\n[families.judge]\n"
    'model = "openai/gpt-4o-2024-08-06"\n'
    'prompt = "Grade the answer against the reference. Reply GRADE: C or GRADE: I."\n'
    "config = { temperature = 0.0, max_tokens = 64, seed = 7 }\n"
    "floor = 0.6\n"
)


def judged_project(tmp_path: Path, toml: str, **kwargs: object) -> Project:
    """A project whose family's task takes the judge (`tests/audit/judge_sim.py`)."""
    project = make_project(tmp_path, toml=toml, **kwargs)  # type: ignore[arg-type]
    (project.root / "tasks/fam/task.py").write_text(JUDGED_TASK, encoding="utf-8")
    return project


def test_the_judge_is_frozen_and_a_changed_one_needs_a_major_version(tmp_path: Path) -> None:
    project = judged_project(tmp_path, suite_toml() + JUDGE)
    frozen = project.invoke("freeze", "demo", "--version", "1.0.0", "--json")
    assert frozen.exit_code == 0, frozen.stderr
    manifest = json.loads((project.root / "manifests/demo/1.0.0.json").read_text())
    judge = manifest["families"][0]["judge"]
    assert judge["model"] == "openai/gpt-4o-2024-08-06" and judge["config"]["seed"] == 7
    assert project.invoke("verify", "demo@1.0.0").exit_code == 0
    # another judge version in the suite file: verify names the field, a minor bump is refused
    suite = project.root / "tasks/demo.toml"
    suite.write_text(suite.read_text().replace("gpt-4o-2024-08-06", "gpt-4o-2024-11-20"))
    checked = project.invoke("verify", "demo@1.0.0", "--json")
    assert checked.exit_code == 3
    problems = " ".join(json_out(checked)["suites"][0]["problems"])
    assert "judge" in problems and "gpt-4o-2024-11-20" in problems
    minor = project.invoke("freeze", "demo", "--version", "1.1.0")
    assert minor.exit_code == 2 and "2.0.0" in minor.stderr
    major = project.invoke("freeze", "demo", "--version", "2.0.0", "--json")
    assert major.exit_code == 0, major.stderr
    assert project.invoke("verify", "demo@2.0.0").exit_code == 0


def test_a_family_without_a_judge_records_none(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0
    manifest = json.loads((project.root / "manifests/demo/1.0.0.json").read_text())
    assert "judge" not in manifest["families"][0]  # older manifests keep their hash


def test_a_judge_that_is_not_an_inspect_model_name_is_refused(tmp_path: Path) -> None:
    toml = suite_toml() + JUDGE.replace("openai/gpt-4o-2024-08-06", "gpt4")
    project = judged_project(tmp_path, toml)
    result = project.invoke("freeze", "demo", "--version", "1.0.0")
    assert result.exit_code == 2
    assert "provider/model" in result.stderr
    assert not (project.root / "manifests/demo/1.0.0.json").exists()
