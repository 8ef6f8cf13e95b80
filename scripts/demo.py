"""`make demo`: the main job end to end on the embedded defaults.

Runs the real `evalsuite` command line, as a user would, and stops at the first failure.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EVALSUITE = str(Path(sys.executable).with_name("evalsuite"))


def step(title: str, *args: str, ok: tuple[int, ...] = (0,)) -> str:
    """Run one `evalsuite` command, echo it and its output, and return stdout."""
    print(f"\n== {title}\n$ evalsuite {shlex.join(args)}", flush=True)
    started = time.perf_counter()
    proc = subprocess.run([EVALSUITE, *args], cwd=ROOT, text=True, capture_output=True)
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    print(f"(exit {proc.returncode}, {time.perf_counter() - started:.1f} s)", flush=True)
    if proc.returncode not in ok:
        sys.exit(proc.returncode)
    return proc.stdout


def main() -> None:
    """Run the demo steps in order."""
    started = time.perf_counter()
    step("Suites and their frozen versions", "suites")
    step(
        "Freeze the example suite (identical content: a no-op)",
        "freeze",
        "arith",
        "--version",
        "1.0.0",
    )
    step("Verify every frozen suite: dev items, holdout vault, manifest hashes", "verify")
    print(f"\ndemo finished in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
