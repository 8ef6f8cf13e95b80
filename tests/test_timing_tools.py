"""The test-timing plugin (tests/timing.py) and its table (scripts/timing_table.py), which
docs/design/test-speed.md's figures come from: per test, wall and CPU of the worker and of
the child processes it waited for; per file, the sums."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from tests import timing
from tests.helpers import REPO


def _table() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "timing_table", REPO / "scripts" / "timing_table.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _drive(item: Any) -> None:
    """Run the hook wrapper around a 'test' that spends CPU in a child process."""
    wrapper = timing.pytest_runtest_protocol(item, None)
    next(wrapper)
    subprocess.run([sys.executable, "-c", "sum(range(3_000_000))"], check=True)
    with pytest.raises(StopIteration):
        wrapper.send(None)


def test_the_plugin_records_wall_own_and_child_cpu_per_test(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALSUITE_TEST_TIMING", str(tmp_path))
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw7")
    _drive(SimpleNamespace(nodeid="tests/x/test_a.py::test_one"))
    (record,) = [json.loads(line) for line in (tmp_path / "gw7.jsonl").read_text().splitlines()]
    assert record["test"] == "tests/x/test_a.py::test_one"
    assert record["child_cpu"] > 0  # the child's CPU is counted, not only the worker's
    assert record["wall"] >= record["child_cpu"] - 0.05  # the child ran inside the test
    assert record["outcome"] == "passed"


def test_the_plugin_records_the_worst_outcome_of_a_test(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALSUITE_TEST_TIMING", str(tmp_path))
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw3")
    node = "tests/x/test_c.py::test_three"
    for outcome in ("passed", "failed", "passed"):  # setup, call, teardown
        timing.pytest_runtest_logreport(SimpleNamespace(nodeid=node, outcome=outcome))  # type: ignore[arg-type]
    _drive(SimpleNamespace(nodeid=node))
    (record,) = [json.loads(line) for line in (tmp_path / "gw3.jsonl").read_text().splitlines()]
    assert record["outcome"] == "failed"


def test_without_the_variable_the_plugin_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EVALSUITE_TEST_TIMING", raising=False)
    monkeypatch.chdir(tmp_path)
    _drive(SimpleNamespace(nodeid="tests/test_b.py::test_two"))
    assert list(tmp_path.iterdir()) == []


def test_the_table_sums_each_file_over_workers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = {
        "gw0": [("tests/a.py::t1", 2.0, 1.0, 0.5), ("tests/b.py::t1", 1.0, 0.25, 0.0)],
        "gw1": [("tests/a.py::t2", 3.0, 0.5, 2.0)],
    }
    for worker, records in rows.items():
        (tmp_path / f"{worker}.jsonl").write_text(
            "".join(
                json.dumps({"test": t, "wall": w, "cpu": c, "child_cpu": k}) + "\n"
                for t, w, c, k in records
            )
        )
    table = _table()
    files = table.load(tmp_path)
    assert files["tests/a.py"] == {"tests": 2, "wall": 5.0, "cpu": 4.0, "child": 2.5}
    assert files["tests/b.py"] == {"tests": 1, "wall": 1.0, "cpu": 0.25, "child": 0.0}
    assert [t for t, _, _ in table.slowest(tmp_path, 2)] == ["tests/a.py::t2", "tests/a.py::t1"]
    table.main([str(tmp_path), str(tmp_path)])
    out = capsys.readouterr().out
    assert "| tests/a.py | 2 | 4.0 | 2 | 4.0 | 5.0 | 5.0 |" in out
    assert out.index("tests/a.py") < out.index("tests/b.py")  # most CPU first
    assert "before: 3 tests, CPU 4 s (children 2 s)" in out
