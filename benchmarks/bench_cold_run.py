"""CPU of a first `evalsuite run` in a fresh process and of start-up commands, against a baseline.

    .venv/bin/python benchmarks/bench_cold_run.py [--baseline-ref main] [--repeats 3]

Each measurement is a new Python process, as a user's command is: the CPU seconds (user +
system) of the child, read from ``getrusage(RUSAGE_CHILDREN)``, not wall time (the machine
may be shared). Measured, alternately for this tree and for the baseline (``git archive`` of
``--baseline-ref`` into a temporary directory, put first on the child's ``sys.path``), with
the medians and their ratio printed:

* the first run: a 20-attempt dev run of the test suite's probe project
  (tests/run/conftest.py: the fake tool-using agent, ``--inject-faults 0.3 --epochs 1``),
  launched as tests/run/test_process.py launches it (inspect's entry points loaded but
  inspect_evals' registry), in a fresh copy of the frozen project;
* ``--help``, ``runs``, ``suites`` and ``verify`` on a copy of the shipped suites with a
  recorded verification, and the first ``verify support@2.0.0`` of a fresh copy (nothing
  recorded: every item and the family's tools checked).

The baseline's tree is byte-compiled before it is measured, as this one is after any use.

The two variants' runs must store the same attempts: item, epoch, seed, outcome, score,
retries and checks are compared row by row (the reason of an injected fault is the one
intended difference, printed). Design notes: docs/design/run-speed.md, "Cold first run".
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("INSPECT_TRACE_LEVEL", "CRITICAL")

COMPARED = ["item_id", "epoch", "seed", "outcome", "limit_type", "score", "retries", "checks"]
"""Attempt columns that must be equal between the variants' runs."""

_LAUNCH = (
    "import sys; sys.path[:0] = {paths!r}; "
    "import evalsuite; assert evalsuite.__file__.startswith({src!r}), evalsuite.__file__; "
    "{prelude}"
    "from evalsuite.cli import main; sys.argv = ['evalsuite', *sys.argv[1:]]; main()"
)


def child_cpu(
    argv: list[str], env: dict[str, str]
) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Run `argv`; its CPU seconds (user + system) and the completed process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=str(ROOT))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    spent = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return spent, done


def command(src: Path, *, run: bool) -> list[str]:
    """`evalsuite` from the source tree `src` (the fake model providers loaded for a run)."""
    from tests.entry_points import PRELUDE

    prelude = PRELUDE + "import tests.run.fake_models; " if run else ""
    # `src` first: its `evalsuite`; this repository second: the tests' fakes and helpers
    code = _LAUNCH.format(paths=[str(src), str(ROOT)], src=str(src), prelude=prelude)
    return [sys.executable, "-c", code]


def baseline_tree(ref: str, into: Path) -> Path:
    """The package `evalsuite` as it is at `ref`, extracted under `into`."""
    archive = into / "baseline.tar"
    with archive.open("wb") as out:
        subprocess.run(["git", "archive", ref, "evalsuite"], cwd=ROOT, stdout=out, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "src", filter="data")
    # byte-compiled, as this tree is after any use: the baseline pays no compilation
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(into / "src")], check=True)
    return into / "src"


def first_run(src: Path, frozen: Path, work: Path) -> tuple[float, str]:
    """CPU of a first run of a fresh copy of the frozen probe project; its run id and root."""
    project = work / "project"
    shutil.copytree(frozen / "project", project)
    env = dict(os.environ, EVALSUITE_KEY_DIR=str(frozen / "keys"))
    argv = [*command(src, run=True), "--root", str(project), "run", "probe@1.0.0"]
    argv += ["--model", "fakeagent/x", "--inject-faults", "0.3", "--epochs", "1"]
    spent, done = child_cpu([*argv, "--no-progress", "--json"], env)
    assert done.returncode in (0, 5), done.stderr[-3000:]
    return spent, json.loads(done.stdout)["run_id"]


def attempts_of(work: Path, run_id: str) -> Any:
    from evalsuite.store import Store, default_store_url

    store = Store(default_store_url(work / "project" / ".evalsuite"))
    return store.attempts(run_id).sort_values(["item_id", "epoch"]).reset_index(drop=True)


def startup(src: Path, shipped: Path, argv: list[str]) -> float:
    spent, done = child_cpu(
        [*command(src, run=False), "--root", str(shipped), *argv], dict(os.environ)
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return spent


def shipped_copy(into: Path) -> Path:
    into.mkdir(parents=True)
    for part in ("tasks", "manifests", "holdout"):
        shutil.copytree(ROOT / part, into / part, ignore=shutil.ignore_patterns("__pycache__"))
    return into


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-ref", default="main")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    import tests.run.fake_models  # noqa: F401  (registers the fake providers)
    from tests.run.conftest import make_probe_project

    tmp = Path(tempfile.mkdtemp(prefix="bench-cold-run-"))
    variants = {"baseline": baseline_tree(args.baseline_ref, tmp), "now": ROOT}
    frozen = tmp / "frozen"
    make_probe_project(frozen)
    shipped = {name: shipped_copy(tmp / f"shipped-{name}") for name in variants}
    for name, src in variants.items():  # a recorded verification, as after a first `verify`
        startup(src, shipped[name], ["verify"])
    commands = {
        "evalsuite --help": ["--help"],
        "evalsuite runs": ["runs"],
        "evalsuite suites": ["suites"],
        "evalsuite verify (recorded)": ["verify"],
    }
    cpu: dict[tuple[str, str], list[float]] = collections.defaultdict(list)
    runs: dict[str, tuple[Path, str]] = {}
    made = iter(range(10_000))
    for repeat in range(args.repeats):
        order = list(variants) if repeat % 2 == 0 else list(reversed(variants))
        for name in order:  # which variant goes first alternates
            src = variants[name]
            work = tmp / f"run-{next(made)}"
            spent, run_id = first_run(src, frozen, work)
            cpu[("first run (20 attempts, 30% faults)", name)].append(spent)
            runs[name] = (work, run_id)
            for label, argv in commands.items():
                cpu[(label, name)].append(startup(src, shipped[name], argv))
            fresh = shipped_copy(tmp / f"fresh-{next(made)}")
            cpu[("first verify support@2.0.0 (full)", name)].append(
                startup(src, fresh, ["verify", "support@2.0.0"])
            )

    print(f"CPU s per fresh process, median of {args.repeats} (machine possibly shared)")
    print(f"{'':40} {args.baseline_ref:>9} {'now':>9} {'now/base':>9}")
    for label in dict.fromkeys(label for label, _ in cpu):
        base = statistics.median(cpu[(label, "baseline")])
        now = statistics.median(cpu[(label, "now")])
        print(f"{label:40} {base:9.2f} {now:9.2f} {now / base:9.2f}")

    base_frame = attempts_of(*runs["baseline"])
    now_frame = attempts_of(*runs["now"])
    same = base_frame[COMPARED].equals(now_frame[COMPARED])
    print(f"\nthe last runs' attempts ({', '.join(COMPARED)}) equal: {same}")
    for name, frame in (("baseline", base_frame), ("now", now_frame)):
        reasons = frame.loc[frame["outcome"] == "harness_error", "reason"]
        example = reasons.iloc[0] if len(reasons) else None
        print(f"  {name}: {reasons.nunique()} distinct harness error reason(s), e.g. {example!r}")
    if not same:
        raise SystemExit("the two variants stored different attempts")


if __name__ == "__main__":
    main()
