"""Benchmark of the code_repair test runner: the cost a test run adds to an episode.

An episode of code_repair starts two short processes: the agent's `run_tests` (the visible
tests) and the verifier's hidden-test run. This measures both on the shipped dev items, in
temporary directories, against the floor any process-per-run design pays: a bare
``python -I -S -c pass``, measured in the same run. It prints seconds per call and the ratio to
that floor (docs/design/code_repair.md, "The runner (cost)"). On a shared machine the absolute
numbers move with the load; the ratios are what to compare. Version 2 (repair@2.0.0) runs
both in the jail (`tasks/code_repair/jail.py`), the verifier with the hidden calls alone; its
rows are ``v2 run_tests`` and ``v2 verifier``. Run:
``.venv/bin/python benchmarks/bench_code_repair.py [--items 10]``.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNNER = (ROOT / "tasks" / "code_repair" / "runner.py").read_text(encoding="utf-8")
ITEMS = ROOT / "tasks" / "code_repair" / "items.jsonl"
JAIL = (ROOT / "tasks" / "code_repair" / "jail.py").read_text(encoding="utf-8")
BASE = str(Path(getattr(sys, "_base_executable", "") or sys.executable).resolve())


def _call(
    folder: Path, code: str, request: dict[str, object] | None, jailed: bool = False
) -> float:
    command = [sys.executable, "-I", "-S", "-c", code]
    if jailed:
        command = [BASE, "-I", "-S", "-c", JAIL, code, "bench"]
    start = time.perf_counter()
    subprocess.run(
        command,
        input=json.dumps(request) if request is not None else "",
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return time.perf_counter() - start


def _hidden_calls(hidden: list[dict[str, str]]) -> dict[str, object]:
    """Version 2's request: the imports and call expressions of the hidden tests."""
    imports, calls = [], []
    for test in hidden:
        tree = ast.parse(test["source"])
        imports += [ast.unparse(n) for n in tree.body if isinstance(n, ast.ImportFrom)]
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "same":
                calls.append(ast.unparse(node.args[1]))
    return {"imports": imports, "calls": calls}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10)
    args = parser.parse_args()
    items = [json.loads(line) for line in ITEMS.read_text(encoding="utf-8").splitlines()]
    timings: dict[str, list[float]] = {
        "bare python": [],
        "run_tests": [],
        "verifier": [],
        "v2 run_tests": [],
        "v2 verifier": [],
    }
    for item in items[: args.items]:
        with tempfile.TemporaryDirectory() as name:
            folder = Path(name)
            for path, text in item["metadata"]["repo"].items():
                (folder / path).parent.mkdir(parents=True, exist_ok=True)
                (folder / path).write_text(text, encoding="utf-8")
            hidden = json.loads(item["target"])["hidden_tests"]
            timings["bare python"].append(_call(folder, "pass", None))
            timings["run_tests"].append(_call(folder, RUNNER, {"discover": "tests"}))
            timings["verifier"].append(_call(folder, RUNNER, {"nonce": "n", "tests": hidden}))
            timings["v2 run_tests"].append(_call(folder, RUNNER, {"discover": "tests"}, True))
            calls = _hidden_calls(hidden)
            timings["v2 verifier"].append(_call(folder, RUNNER, calls, True))
    floor = sum(timings["bare python"]) / len(timings["bare python"])
    print(f"code_repair runner, {len(timings['run_tests'])} dev items (shared machine: see ratios)")
    for name, values in timings.items():
        mean = sum(values) / len(values)
        print(f"  {name:12s} {mean * 1000:7.1f} ms per call   {mean / floor:5.1f}x bare python")
    for version, keys in (
        ("v1", ("run_tests", "verifier")),
        ("v2", ("v2 run_tests", "v2 verifier")),
    ):
        per_episode = sum(sum(timings[k]) / len(timings[k]) for k in keys)
        print(f"  {version} test processes per episode: {per_episode * 1000:.1f} ms")


if __name__ == "__main__":
    main()
