"""`make demo`: the main job end to end on the embedded defaults.

Evaluate two checkpoints (the offline reference agents `evalsuite/baseline` and
`evalsuite/improved`) on the frozen holdouts of the three example suites (`support`: a
customer-support desk; `records`: a records system with a stale cache and slow tools;
`repair`: code repair with hidden tests) with 3 epochs, measure them, compare them suite by
suite, and write one report of all six runs to `reports/demo/`.

The demo works in a scratch copy of the project (`.evalsuite/demo/`: the suites, manifests
and vaults, a fresh holdout ledger and store), so that running it again and again never
spends this repository's holdout budget or writes to its ledger. It calls the real
`evalsuite` command line, as a user would, and stops at the first failure.

Steps that do not depend on each other run side by side (the two checkpoints' runs; then the
read-only status, score, compare and report), each as its own process, so that both cores
work; their output is printed in the demo's order, each with its own time
(docs/design/run-speed.md).
"""

from __future__ import annotations

import os
import re
import resource
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKSPACE = ROOT / ".evalsuite" / "demo"
REPORT = ROOT / "reports" / "demo"
EVALSUITE = str(Path(sys.executable).with_name("evalsuite"))
SUITES = ("support@2.0.0", "records@1.0.0", "repair@1.0.0")
"""The example suites, each run by both checkpoints on its holdout."""
ACTION_CACHE = "action-spaces.json"
"""`verify`'s action-space cache, in the workspace's state directory (`.evalsuite/`)."""
COMMAND = [EVALSUITE, "--root", str(WORKSPACE)]
"""What every step runs, followed by its arguments."""


@dataclass
class Step:
    """One `evalsuite` command started in the demo workspace."""

    title: str
    args: tuple[str, ...]
    proc: subprocess.Popen[str]
    started: float


def start(title: str, *args: str) -> Step:
    """Start one `evalsuite` command in the demo workspace (it runs in the background)."""
    proc = subprocess.Popen(
        [*COMMAND, *args],
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    return Step(title, args, proc, time.perf_counter())


def finish(*steps: Step) -> list[str]:
    """Wait for `steps` in order, echo each command and its output; stop at a failure.

    A failed step stops the ones still running beside it, and the demo exits with its code.
    """
    outputs = []
    for k, current in enumerate(steps):
        stdout, stderr = current.proc.communicate()
        print(f"\n== {current.title}\n$ evalsuite {shlex.join(current.args)}", flush=True)
        sys.stdout.write(stdout)
        sys.stderr.write(stderr)
        code = current.proc.returncode
        print(f"(exit {code}, {time.perf_counter() - current.started:.1f} s)", flush=True)
        if code != 0:
            for other in steps[k + 1 :]:
                other.proc.kill()
                other.proc.wait()
            sys.exit(code)
        outputs.append(stdout)
    return outputs


def fresh_workspace() -> None:
    """Copy the suites, manifests and vaults; leave ledgers and results behind.

    The one thing kept from the previous demo is `verify`'s action-space cache (a digest of
    the task files, the family kit, the installed packages and Python, per family whose
    tools agreed with the frozen ones): with it, `verify` checks the tools without importing
    inspect and every task module again, and any change to what the digest covers runs the
    full check (docs/design/run-speed.md, "The demo").
    """
    cache = WORKSPACE / ".evalsuite" / ACTION_CACHE
    kept = cache.read_bytes() if cache.is_file() else None
    if WORKSPACE.exists():
        shutil.rmtree(WORKSPACE)
    ignore = shutil.ignore_patterns("__pycache__", "*.lock", "ACCESS.jsonl")
    for part in ("tasks", "manifests", "holdout"):
        shutil.copytree(ROOT / part, WORKSPACE / part, ignore=ignore)
    if kept is not None:
        cache.parent.mkdir(parents=True)
        cache.write_bytes(kept)


def run_holdout(suite: str, model: str) -> Step:
    """Start `model` on the holdout of `suite` with 3 epochs (`run_id` reads its id)."""
    return start(
        f"Run {model} on the {suite} holdout, 3 epochs",
        "run",
        suite,
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


def run_id(out: str) -> str:
    """The run id that `evalsuite run` printed."""
    match = re.search(r"^run (\S+)", out, re.MULTILINE)
    if match is None:
        sys.exit("could not read the run id from `evalsuite run`")
    return match.group(1)


def main() -> None:
    """Run the demo steps in order."""
    started = time.perf_counter()
    fresh_workspace()
    print(f"demo workspace: {WORKSPACE} (a scratch copy; the repository's ledger is untouched)")
    finish(
        start("Suites and their frozen versions", "suites"),
        start("Verify every frozen suite: dev items, holdout vaults, manifest hashes", "verify"),
    )
    # the six runs are independent: one process each, side by side
    ids = [
        run_id(out)
        for out in finish(
            *(
                run_holdout(suite, model)
                for suite in SUITES
                for model in ("evalsuite/baseline", "evalsuite/improved")
            )
        )
    ]
    pairs = list(zip(ids[::2], ids[1::2], strict=True))  # (baseline, improved) per suite
    finish(
        *(
            start(f"Holdout use of {suite} against its budget", "holdout", "status", suite)
            for suite in SUITES
        ),
        start(f"Estimates of the improved checkpoint on {SUITES[0]}", "score", pairs[0][1]),
        *(
            start(
                f"Is improved really better than baseline on {suite}? (paired by item)",
                "compare",
                baseline,
                improved,
                "--gate",
                "noninferior",
                "--margin",
                "0.02",
            )
            for suite, (baseline, improved) in zip(SUITES, pairs, strict=True)
        ),
        start(
            "Report: all six runs, compared suite by suite", "report", *ids, "--out", str(REPORT)
        ),
    )
    print(f"\nreport: {REPORT / 'index.html'}")
    # the report's first screen, as a reviewer opens it (1400 x 900, headless Chromium)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    shot = REPORT / "first-screen.png"
    shot.unlink(missing_ok=True)
    if chromium is not None:
        flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
        args = ["--window-size=1400,900", f"--screenshot={shot}", (REPORT / "index.html").as_uri()]
        subprocess.run([chromium, *flags, *args], capture_output=True, timeout=180, check=False)
    print(f"first screen: {shot}" if shot.exists() else "first screen: no Chromium, no screenshot")
    print(f"explore: evalsuite --root {WORKSPACE.relative_to(ROOT)} runs")
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        f"demo finished in {time.perf_counter() - started:.1f} s "
        f"({used.ru_utime + used.ru_stime:.0f} s of CPU in its {os.cpu_count()}-core machine)"
    )


if __name__ == "__main__":
    main()
