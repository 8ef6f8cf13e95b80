"""Per-file CPU and wall of a test run recorded by ``tests/timing.py`` (docs/design/test-speed.md).

Record a run::

    PYTHONPATH=. EVALSUITE_TEST_TIMING=/tmp/t/before .venv/bin/pytest -q -n 2 -p tests.timing

then ``python scripts/timing_table.py /tmp/t/before`` prints the files by CPU seconds, and
``python scripts/timing_table.py /tmp/t/before /tmp/t/after`` a before/after table. CPU is the
worker's own CPU plus that of the child processes it waited for: unlike wall clock, it barely
moves when other jobs share the cores.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path


def load(directory: Path) -> dict[str, dict[str, float]]:
    """Per test file: tests, wall, cpu (own + children) and child cpu seconds."""
    files: dict[str, dict[str, float]] = defaultdict(
        lambda: {"tests": 0.0, "wall": 0.0, "cpu": 0.0, "child": 0.0}
    )
    for path in sorted(directory.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            row = files[record["test"].split("::", 1)[0]]
            row["tests"] += 1
            row["wall"] += record["wall"]
            row["cpu"] += record["cpu"] + record["child_cpu"]
            row["child"] += record["child_cpu"]
    return dict(files)


def slowest(directory: Path, n: int) -> list[tuple[str, float, float]]:
    """The n tests with the most CPU seconds: (test, cpu, wall)."""
    rows = []
    for path in sorted(directory.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            rows.append((r["test"], r["cpu"] + r["child_cpu"], r["wall"]))
    return sorted(rows, key=lambda r: -r[1])[:n]


def main(argv: list[str]) -> None:
    """Print the per-file table of one run, or the before/after table of two."""
    if not argv or len(argv) > 2 or argv[0] in ("-h", "--help"):
        sys.exit("usage: timing_table.py RUN_DIR [AFTER_DIR]  (directories of tests/timing.py)")
    before = load(Path(argv[0]))
    after = load(Path(argv[1])) if len(argv) == 2 else None
    names = sorted(
        set(before) | set(after or {}),
        key=lambda f: -before.get(f, {"cpu": 0.0})["cpu"],
    )
    zero = {"tests": 0.0, "wall": 0.0, "cpu": 0.0, "child": 0.0}
    if after is None:
        print("| file | tests | CPU s | of which children | wall s |")
        print("|---|---:|---:|---:|---:|")
        for f in names:
            b = before[f]
            print(
                f"| {f} | {b['tests']:.0f} | {b['cpu']:.1f} | {b['child']:.1f} | {b['wall']:.1f} |"
            )
    else:
        print(
            "| file | tests before | CPU s before | tests after | CPU s after"
            " | wall s before | wall s after |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|")
        for f in names:
            b, a = before.get(f, zero), after.get(f, zero)
            print(
                f"| {f} | {b['tests']:.0f} | {b['cpu']:.1f} | {a['tests']:.0f} | {a['cpu']:.1f}"
                f" | {b['wall']:.1f} | {a['wall']:.1f} |"
            )
    for label, data in (("before", before), ("after", after)):
        if data is None:
            continue
        total = {k: sum(r[k] for r in data.values()) for k in zero}
        print(
            f"\n{label}: {total['tests']:.0f} tests, CPU {total['cpu']:.0f} s "
            f"(children {total['child']:.0f} s), summed test wall {total['wall']:.0f} s"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
