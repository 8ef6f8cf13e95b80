"""The test suite's own speed devices (docs/design/test-speed.md): fixtures built once per
session for every xdist worker (tests/shared_build.py), and the launch prelude of CLI test
subprocesses that skips only inspect_evals' task registry (tests/entry_points.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.entry_points import PRELUDE
from tests.helpers import REPO, WAIT_S
from tests.shared_build import build_once, session_dir


def _worker(monkeypatch: pytest.MonkeyPatch, session: Path, name: str) -> Any:
    """A stand-in for the tmp_path_factory of xdist worker `name` in one session."""
    monkeypatch.setenv("PYTEST_XDIST_WORKER", name)
    base = session / f"popen-{name}"
    base.mkdir(parents=True, exist_ok=True)
    return SimpleNamespace(getbasetemp=lambda: base)


def test_a_shared_fixture_is_built_once_for_every_worker_of_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    builds: list[Path] = []

    def build(root: Path) -> dict[str, Any]:
        builds.append(root)
        (root / "data.txt").write_text("built", encoding="utf-8")
        return {"run": "r-1", "n": 3}

    first = build_once(_worker(monkeypatch, tmp_path, "gw0"), "thing", build)
    second = build_once(_worker(monkeypatch, tmp_path, "gw1"), "thing", build)
    assert builds == [tmp_path / "shared-thing"]  # the second worker reused the first's
    assert first == second == (tmp_path / "shared-thing", {"run": "r-1", "n": 3})
    assert (first[0] / "data.txt").read_text(encoding="utf-8") == "built"
    assert session_dir(_worker(monkeypatch, tmp_path, "gw1")) == tmp_path


def test_a_build_that_failed_part_way_is_started_again_from_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(root: Path) -> dict[str, Any]:
        (root / "half.txt").write_text("half", encoding="utf-8")
        raise RuntimeError("the build failed")

    with pytest.raises(RuntimeError, match="the build failed"):
        build_once(_worker(monkeypatch, tmp_path, "gw0"), "thing", broken)
    assert not (tmp_path / "shared-thing" / "built.json").exists()

    def good(root: Path) -> dict[str, Any]:
        return {"left_over": sorted(p.name for p in root.iterdir())}

    root, summary = build_once(_worker(monkeypatch, tmp_path, "gw1"), "thing", good)
    assert summary == {"left_over": []}  # nothing of the failed build was kept
    assert json.loads((root / "built.json").read_text(encoding="utf-8")) == summary


def test_the_launch_prelude_loads_evalsuites_entry_point_but_not_inspect_evals() -> None:
    probe = (
        f"import sys; sys.path.insert(0, {str(REPO)!r}); "
        + PRELUDE
        + "import json; from inspect_ai._util import entrypoints; "
        "print(json.dumps([m in sys.modules for m in "
        "('evalsuite.agents._registry', 'inspect_evals._registry')] "
        "+ [entrypoints._inspect_ai_eps_loaded_all]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=WAIT_S, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    evalsuite_loaded, inspect_evals_loaded, marked_done = json.loads(done.stdout)
    assert evalsuite_loaded and marked_done  # inspect will not load the entry points again
    assert not inspect_evals_loaded


def test_the_pytest_process_skips_inspect_evals_unless_a_test_loads_it() -> None:
    from inspect_ai._util import entrypoints
    from inspect_ai._util.registry import registry_lookup

    # the session fixture of tests/conftest.py: every entry point but inspect_evals' is loaded,
    # and inspect is told so (tests/run/test_published_task.py, which needs the registry,
    # loads it with tests.entry_points.load_inspect_evals and fails without it)
    assert entrypoints._inspect_ai_eps_loaded_all
    assert "evalsuite.agents._registry" in sys.modules
    if "inspect_evals._registry" not in sys.modules:  # no test of this process loaded it
        assert registry_lookup("task", "inspect_evals/humaneval") is None


def test_bytecode_is_cached_in_the_test_processes_even_if_the_environment_disables_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """PYTHONDONTWRITEBYTECODE made each worker compile and assert-rewrite every test module
    again and each CLI child compile evalsuite again; tests/conftest.py undoes it."""
    from tests.conftest import write_bytecode_again

    # the suite's own processes, and the children they start, cache bytecode
    assert sys.dont_write_bytecode is False
    assert "PYTHONDONTWRITEBYTECODE" not in os.environ

    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert write_bytecode_again() is True
    assert sys.dont_write_bytecode is False
    assert "PYTHONDONTWRITEBYTECODE" not in os.environ

    # without the setting nothing changes
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert write_bytecode_again() is False
    assert sys.dont_write_bytecode is True
