"""`make demo`'s step runner (scripts/demo.py): side by side, in order, stops at a failure."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.helpers import REPO


def _demo(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location("evalsuite_demo", REPO / "scripts" / "demo.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "COMMAND", [sys.executable, "-c"])
    return module


WAIT_FOR = """
import pathlib, sys, time
flag = pathlib.Path(sys.argv[1])
for _ in range(600):
    if flag.exists():
        print("saw", flag.name)
        sys.exit(0)
    time.sleep(0.1)
sys.exit("the other step never ran beside this one")
"""


def test_steps_started_together_run_side_by_side_and_print_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    demo = _demo(monkeypatch)
    flag = tmp_path / "flag"
    # the first step waits for a file only the second writes: run one after the other, the
    # first would fail after a minute
    waiting = demo.start("first", WAIT_FOR, str(flag))
    writing = demo.start("second", f"import pathlib; pathlib.Path({str(flag)!r}).touch()")
    outputs = demo.finish(waiting, writing)
    assert outputs == ["saw flag\n", ""]
    printed = capsys.readouterr().out
    assert printed.index("== first") < printed.index("saw flag") < printed.index("== second")


def test_a_failed_step_stops_the_demo_with_its_code_and_stops_the_steps_beside_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    demo = _demo(monkeypatch)
    failing = demo.start("fails", "import sys; print('broken'); sys.exit(3)")
    hanging = demo.start("hangs", "import time; time.sleep(600)")
    with pytest.raises(SystemExit) as stopped:
        demo.finish(failing, hanging)
    assert stopped.value.code == 3
    assert hanging.proc.poll() is not None  # killed, not left running
    printed = capsys.readouterr().out
    assert "broken" in printed and "(exit 3," in printed
    assert "== hangs" not in printed


def test_a_fresh_workspace_keeps_only_verifys_action_space_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    demo = _demo(monkeypatch)
    root, workspace = tmp_path / "project", tmp_path / "demo"
    for part in ("tasks", "manifests", "holdout"):
        (root / part).mkdir(parents=True)
        (root / part / "f.txt").write_text(part)
    monkeypatch.setattr(demo, "ROOT", root)
    monkeypatch.setattr(demo, "WORKSPACE", workspace)
    demo.fresh_workspace()  # the first demo: no cache to keep
    assert not (workspace / ".evalsuite").exists()
    state = workspace / ".evalsuite"
    state.mkdir()
    (state / demo.ACTION_CACHE).write_text('{"agreed": ["d1"]}')
    (state / "results.sqlite").write_text("an earlier demo's runs")
    (workspace / "holdout" / "ACCESS.jsonl").write_text("an earlier demo's looks")
    demo.fresh_workspace()
    assert (state / demo.ACTION_CACHE).read_text() == '{"agreed": ["d1"]}'
    assert sorted(p.name for p in state.iterdir()) == [demo.ACTION_CACHE]
    assert not (workspace / "holdout" / "ACCESS.jsonl").exists()
    assert (workspace / "tasks" / "f.txt").read_text() == "tasks"
