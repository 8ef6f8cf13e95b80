"""`verify` records tools that agree with the frozen action space and does not import inspect
again until something they depend on changes; a drift is always caught (docs/design/startup.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalsuite.run._action_cache import CACHE_FILE
from tests.audit.toy import change_write_schema, copy_of_frozen_solo
from tests.helpers import Project, json_out
from tests.test_startup import _modules_after


def _frozen(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Project:
    """``solo`` frozen with its audit: a copy of the session's one freeze (tests/audit/toy.py)."""
    return copy_of_frozen_solo(tmp_path_factory, tmp_path)


def _agreed(project: Project) -> list[str]:
    data = json.loads((project.root / ".evalsuite" / CACHE_FILE).read_text(encoding="utf-8"))
    agreed: list[str] = data["agreed"]
    return agreed


def test_verify_skips_inspect_for_unchanged_tools_and_still_catches_a_drift(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    project = _frozen(tmp_path_factory, tmp_path)
    first = json_out(project.invoke("verify", "solo@1.0.0", "--json"))
    assert first["ok"] is True and first["suites"][0]["audit"]["action_space"] == "agrees"
    assert len(_agreed(project)) == 1

    modules = _modules_after("--root", str(project.root), "verify", "solo@1.0.0")
    assert "inspect_ai" not in {m.split(".")[0] for m in modules}

    change_write_schema(project, "fam")
    drifted = project.invoke("verify", "solo@1.0.0", "--json")
    assert drifted.exit_code == 3
    suite = json_out(drifted)["suites"][0]
    assert suite["audit"]["action_space"] == "DRIFTED"
    assert any("tool 'write' has another schema" in p for p in suite["problems"])
    assert len(_agreed(project)) == 1  # a drift is never recorded
    again = project.invoke("verify", "solo@1.0.0", "--json")
    assert again.exit_code == 3  # and is found again, by the full check


def test_a_damaged_cache_is_ignored_and_rewritten(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    project = _frozen(tmp_path_factory, tmp_path)
    path = project.root / ".evalsuite" / CACHE_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"format": "evalsuite-action-spaces/1", "agreed": [', encoding="utf-8")
    result = json_out(project.invoke("verify", "solo@1.0.0", "--json"))
    assert result["ok"] is True and result["suites"][0]["audit"]["action_space"] == "agrees"
    assert len(_agreed(project)) == 1
