"""Shared helpers for the code_repair tests: the family's modules, loaded as the runner does."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

from tests.helpers import Project

ROOT = Path(__file__).resolve().parents[2]
FAMILY_DIR = ROOT / "tasks" / "code_repair"
TASK_FILE = FAMILY_DIR / "task.py"
SUITE_FILE = ROOT / "tasks" / "repair.toml"

_loaded: dict[str, ModuleType] = {}


def task_module() -> ModuleType:
    """tasks/code_repair/task.py, loaded by path (once per test process)."""
    if "task" not in _loaded:
        spec = importlib.util.spec_from_file_location("_test_code_repair_task", TASK_FILE)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _loaded["task"] = module
    return _loaded["task"]


def task_v2_module() -> ModuleType:
    """tasks/code_repair/task_v2.py (version 2, repair@2.0.0), loaded by path once."""
    if "task_v2" not in _loaded:
        spec = importlib.util.spec_from_file_location(
            "_test_code_repair_task_v2", FAMILY_DIR / "task_v2.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _loaded["task_v2"] = module
    return _loaded["task_v2"]


def submodule(name: str) -> Any:
    """One of the family's modules (templates, generate, workspace, verifier, ...)."""
    return task_module().submodule(name)


def dev_items() -> list[dict[str, Any]]:
    """The shipped dev items (after the freeze, items.jsonl holds only these)."""
    lines = (FAMILY_DIR / "items.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def plant(item: dict[str, Any], marker: str) -> dict[str, Any]:
    """`item` with `marker` in its hidden tests: a comment, and a case that fails with it."""
    key = json.loads(item["target"])
    for test in key["hidden_tests"]:
        # a failing case of the hidden class, its marker in the expected value: version 2's
        # verifier keeps it in its own process; version 1 runs it as a test
        test["source"] = (
            f"# {marker}\n{test['source']}\n    def test_planted(self):\n"
            f"        same(self, len([]), {marker!r})\n"
        )
    key["hidden_count"] += 1
    key["patch"] = [dict(e, after=e["after"] + f"\n# {marker}\n") for e in key["patch"]]
    return dict(item, target=json.dumps(key, sort_keys=True))


def make_repair_project(root: Path, items: list[dict[str, Any]], key_dir: Path) -> Project:
    """A project with the code_repair family and these items, frozen as repair@1.0.0."""
    family = root / "tasks" / "code_repair"
    family.mkdir(parents=True)
    for path in FAMILY_DIR.glob("*.py"):
        shutil.copy(path, family / path.name)
    shutil.copy(SUITE_FILE, root / "tasks" / "repair.toml")
    (family / "items.jsonl").write_text(
        "".join(json.dumps(item, sort_keys=True) + "\n" for item in items), encoding="utf-8"
    )
    project = Project(root=root, key_dir=key_dir)
    result = project.invoke(
        "freeze", "repair", "--version", "1.0.0", "--skip-audit", "--reason", "test project"
    )
    assert result.exit_code == 0, result.stderr
    return project
