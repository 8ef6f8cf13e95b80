"""`make demo`: the main job end to end on the embedded defaults.

Evaluate two checkpoints (the offline reference agents `evalsuite/baseline` and
`evalsuite/improved`) on the frozen holdout of the `support` suite with 3 epochs, measure
them, compare them, and write the report to `reports/demo/`.

The demo works in a scratch copy of the project (`.evalsuite/demo/`: the suites, manifests
and vaults, a fresh holdout ledger and store), so that running it again and again never
spends this repository's holdout budget or writes to its ledger. It calls the real
`evalsuite` command line, as a user would, and stops at the first failure.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKSPACE = ROOT / ".evalsuite" / "demo"
REPORT = ROOT / "reports" / "demo"
EVALSUITE = str(Path(sys.executable).with_name("evalsuite"))
SUITE = "support@2.0.0"


def step(title: str, *args: str) -> str:
    """Run one `evalsuite` command in the demo workspace, echo it and its output."""
    print(f"\n== {title}\n$ evalsuite {shlex.join(args)}", flush=True)
    started = time.perf_counter()
    proc = subprocess.run(
        [EVALSUITE, "--root", str(WORKSPACE), *args],
        text=True,
        capture_output=True,
        check=False,
    )
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    print(f"(exit {proc.returncode}, {time.perf_counter() - started:.1f} s)", flush=True)
    if proc.returncode != 0:
        sys.exit(proc.returncode)
    return proc.stdout


def fresh_workspace() -> None:
    """Copy the suites, manifests and vaults; leave ledgers and results behind."""
    if WORKSPACE.exists():
        shutil.rmtree(WORKSPACE)
    ignore = shutil.ignore_patterns("__pycache__", "*.lock", "ACCESS.jsonl")
    for part in ("tasks", "manifests", "holdout"):
        shutil.copytree(ROOT / part, WORKSPACE / part, ignore=ignore)


def run_holdout(model: str) -> str:
    """Run `model` on the holdout with 3 epochs; return the run id."""
    out = step(
        f"Run {model} on the {SUITE} holdout, 3 epochs",
        "run",
        SUITE,
        "--split",
        "holdout",
        "--model",
        model,
        "--epochs",
        "3",
        "--seed",
        "1",
        "--purpose",
        "make demo",
        "--no-progress",
    )
    match = re.search(r"^run (\S+)", out, re.MULTILINE)
    if match is None:
        sys.exit("could not read the run id from `evalsuite run`")
    return match.group(1)


def main() -> None:
    """Run the demo steps in order."""
    started = time.perf_counter()
    fresh_workspace()
    print(f"demo workspace: {WORKSPACE} (a scratch copy; the repository's ledger is untouched)")
    step("Suites and their frozen versions", "suites")
    step("Verify every frozen suite: dev items, holdout vaults, manifest hashes", "verify")
    baseline = run_holdout("evalsuite/baseline")
    improved = run_holdout("evalsuite/improved")
    step("Holdout use against the budget", "holdout", "status", SUITE)
    step("Estimates of the improved checkpoint", "score", improved)
    step(
        "Is improved really better than baseline? (paired by item)",
        "compare",
        baseline,
        improved,
        "--gate",
        "noninferior",
        "--margin",
        "0.02",
    )
    step("Report", "report", baseline, improved, "--out", str(REPORT))
    print(f"\nreport: {REPORT / 'index.html'}")
    print(f"explore: evalsuite --root {WORKSPACE.relative_to(ROOT)} runs")
    print(f"demo finished in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
