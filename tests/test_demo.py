"""`make demo`'s step runner (scripts/demo.py): two workers, in order, stops at a failure.

The steps run in two long-lived worker processes that each run many command lines in process
(docs/design/run-speed.md, "The demo"); here the workers run `tests/demo_steps.py`'s stand-in
for the command line, whose steps are small Python programs.
"""

from __future__ import annotations

import importlib.util
import os
import re
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
    monkeypatch.setattr(module, "CLI", "tests.demo_steps:fake_cli")
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(REPO), path) if p))
    return module


def _step(demo: ModuleType, title: str, source: str, *argv: str, weight: float = 1.0) -> object:
    return demo.Step(title, demo.command(source, *argv), weight=weight)


WAIT_FOR = """
import pathlib, sys, time
flag = pathlib.Path(sys.argv[1])
for _ in range(600):
    if flag.exists():
        print("saw", flag.name)
        break
    time.sleep(0.1)
else:
    sys.exit("the other step never ran beside this one")
"""


def test_steps_run_side_by_side_in_two_workers_and_print_in_order_with_wall_and_cpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    demo = _demo(monkeypatch)
    flag = tmp_path / "flag"
    # the first step waits for a file only the second writes: run one after the other, the
    # first would fail after a minute
    with demo.Pool() as pool:
        outputs = pool.run(
            [
                _step(demo, "first", WAIT_FOR, str(flag)),
                _step(demo, "second", f"import pathlib; pathlib.Path({str(flag)!r}).touch()"),
            ]
        )
    assert outputs == ["saw flag\n", ""]
    printed = capsys.readouterr().out
    assert printed.index("== first") < printed.index("saw flag") < printed.index("== second")
    assert re.search(r"\(exit 0, \d+\.\d s wall, \d+\.\d s CPU\)", printed)
    assert [title for title, _wall, _cpu in pool.timings] == ["first", "second"]


def test_a_worker_runs_many_steps_in_one_process_and_measures_their_cpu(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    demo = _demo(monkeypatch)
    # each step spins 0.1 s of CPU, which its measured CPU must include
    busy = "import os, time\nt = time.process_time()\nwhile time.process_time() - t < 0.1: pass\n"
    report = "print(os.getpid(), len(CALLS))"
    with demo.Pool() as pool:
        outputs = pool.run([_step(demo, f"step {k}", busy + report) for k in range(4)])
        cpu = [c for _title, _wall, c in pool.timings]
    pids = {line.split()[0] for line in outputs}
    assert len(pids) <= demo.WORKERS and str(os.getpid()) not in pids
    # steps share their worker's process: its imports, and what it loaded, are paid once
    assert max(int(line.split()[1]) for line in outputs) >= 4 // demo.WORKERS
    assert all(c >= 0.09 for c in cpu), cpu


def test_a_steps_output_includes_its_child_processes_and_stays_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    demo = _demo(monkeypatch)
    child = (
        "import subprocess, sys\n"
        "print('parent line', flush=True)\n"
        "subprocess.run([sys.executable, '-c', 'print(\"child line\")'], check=True)\n"
        "print('to stderr', file=sys.stderr)\n"
    )
    with demo.Pool(size=1) as pool:
        outputs = pool.run([_step(demo, "a", child), _step(demo, "b", "print('b only')")])
    assert outputs == ["parent line\nchild line\n", "b only\n"]


def test_a_failed_step_stops_the_demo_with_its_code_and_stops_the_other_worker(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    demo = _demo(monkeypatch)
    pool = demo.Pool()
    with pool, pytest.raises(SystemExit) as stopped:
        pool.run(
            [
                _step(demo, "fails", "import sys; print('broken'); sys.exit(3)"),
                _step(demo, "hangs", "import time; time.sleep(600)"),
            ]
        )
    assert stopped.value.code == 3
    assert all(w.proc.poll() is not None for w in pool.workers)  # killed, not left running
    printed = capsys.readouterr().out
    assert "broken" in printed and "(exit 3," in printed
    assert "== hangs" not in printed


def test_heavier_steps_are_handed_out_first(monkeypatch: pytest.MonkeyPatch) -> None:
    demo = _demo(monkeypatch)
    stamp = "import time; print(time.monotonic())"
    with demo.Pool(size=1) as pool:
        light, heavy = pool.run(
            [_step(demo, "light", stamp, weight=1.0), _step(demo, "heavy", stamp, weight=5.0)]
        )
    assert float(heavy) < float(light)  # one worker: the heavy step ran first


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
    monkeypatch.setattr(demo, "KEY_DIR", tmp_path / "demo-keys")
    demo.fresh_workspace()  # the first demo: no cache to keep
    assert not (workspace / ".evalsuite").exists()
    state = workspace / ".evalsuite"
    state.mkdir()
    (state / demo.ACTION_CACHE).write_text('{"agreed": ["d1"]}')
    (state / "results.sqlite").write_text("an earlier demo's runs")
    (workspace / "holdout" / "ACCESS.jsonl").write_text("an earlier demo's looks")
    heads = tmp_path / "demo-keys" / "ledger-heads"
    heads.mkdir(parents=True)  # the heads of those looks, outside the workspace
    demo.fresh_workspace()
    assert not heads.exists()
    assert (state / demo.ACTION_CACHE).read_text() == '{"agreed": ["d1"]}'
    assert sorted(p.name for p in state.iterdir()) == [demo.ACTION_CACHE]
    assert not (workspace / "holdout" / "ACCESS.jsonl").exists()
    assert (workspace / "tasks" / "f.txt").read_text() == "tasks"


def test_without_chromium_the_demo_says_it_skipped_the_screenshot_and_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Issue 28, point 20: without Chromium, `make demo` wrote no first-screen.png and only
    said "no Chromium, no screenshot"."""
    demo = _demo(monkeypatch)
    monkeypatch.setenv("PATH", str(tmp_path))  # Chromium is installed here: make it unfindable
    assert demo.find_chromium() is None
    monkeypatch.setattr(demo, "REPORT", tmp_path)
    stale = tmp_path / "first-screen.png"
    stale.write_bytes(b"an old run's screenshot")
    assert demo.screenshot(None) is None
    assert not stale.exists()  # never shown as this run's
    line = demo.first_screen_line(stale, None, [])
    assert line.startswith("first screen: SKIPPED")
    assert "headless Chromium" in line and "`chromium`" in line and "on PATH" in line
    assert "`apt-get install chromium`" in line and "make demo" in line
    failed = demo.first_screen_line(stale, "/usr/bin/chromium", [1])
    assert "SKIPPED" in failed and "exited with code 1" in failed
    stale.write_bytes(b"png")
    assert demo.first_screen_line(stale, "/usr/bin/chromium", [0]) == f"first screen: {stale}"
