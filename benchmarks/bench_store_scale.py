"""Start-up, `runs` and `score RUN` on a small SQLite store against one of millions of attempts.

    .venv/bin/python benchmarks/bench_store_scale.py [--attempts 1000000] [--keep DIR]
    EVALSUITE_BENCH_FULL=1 .venv/bin/python benchmarks/bench_store_scale.py   # 10,000,000

Builds two stores through the store's bulk path (`Store.ingest_session`, the path `ingest`
uses), from seeded generated runs of 5,000 attempts each (1,000 items x 5 epochs): a small
one of 2 runs and a big one of ``--attempts`` (default 1,000,000; 10,000,000 with
``EVALSUITE_BENCH_FULL=1``). Every other run is labelled a run of the shipped suite
arith@2.0.0 (dev split), so `runs` reads its manifest and audit status as for real runs. The
project is a copy of the shipped suites (tasks/, manifests/, holdout/).

Then it times, as child processes (start-up included), the median of three of each command
(wall and CPU seconds): the baselines ``python -c pass`` and `evalsuite --help`, then
`evalsuite runs` (the newest 50), `runs --all`, `runs --json`, `suites`, `verify` (after a
first `verify` that records its content check and the action-space check), `verify` with its
content check not recorded (the full re-read and re-hash of every item and the vault's
decryption, as after any change of a suite's files) and `evalsuite score RUN` (the same run
content in both stores), and in-process `Store.list_runs` and `Store.attempts(run)`. It prints
each CPU figure as ratios to ``python -c pass`` and to `evalsuite --help` measured in the same
run (the machine may be shared: the ratios move less than the seconds), the ratios big / small
(targets: `--help`, `runs`, `suites`, `verify` <= 0.5 s of CPU; `runs` <= 1 s on the big
store; `score` unaffected by the other runs), the bytes per attempt of the big store, and
SQLite's query plan for one run's attempts.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evalsuite.store import ATTEMPT_SCHEMA, RunRecord, Store  # noqa: E402
from evalsuite.store._bulk import RunTally  # noqa: E402

RUN_ATTEMPTS = 5_000
ITEMS, EPOCHS = 1_000, 5
RUNS_PER_TRANSACTION = 100


def _run_batch(rng: np.random.Generator) -> pa.RecordBatch:
    n = RUN_ATTEMPTS
    items = pa.array(np.repeat([f"item-{i:05d}" for i in range(ITEMS)], EPOCHS))
    text = pa.nulls(n, pa.string())
    return pa.RecordBatch.from_pydict(
        {
            "item_id": items,
            "item_hash": text,
            "stratum": pa.array(np.repeat([f"s{i % 10}" for i in range(ITEMS)], EPOCHS)),
            "cluster": text,
            "outcome": pa.array(["scored"] * n),
            "limit_type": text,
            "reason": pa.array(["ingested from CSV"] * n),
            "checks": text,
            "epoch": pa.array(np.tile(np.arange(1, EPOCHS + 1), ITEMS)),
            "seed": pa.nulls(n, pa.int64()),
            "retries": pa.array(np.zeros(n, dtype=np.int64)),
            "tokens": pa.array(np.zeros(n, dtype=np.int64)),
            "score": pa.array(np.round(rng.random(n), 3)),
            "duration_s": pa.array(np.zeros(n)),
        },
        schema=ATTEMPT_SCHEMA,
    )


def build(url: str, runs: int, seed: int = 7) -> None:
    """`runs` runs of `RUN_ATTEMPTS` attempts, written through the bulk path."""
    store = Store(url)
    rng = np.random.default_rng(seed)
    done = 0
    started = time.perf_counter()
    while done < runs:
        with store.ingest_session() as session:
            for k in range(done, min(runs, done + RUNS_PER_TRANSACTION)):
                run_id = f"20260101-000000-{k:06x}"
                session.add(run_id, _run_batch(rng))

                def record(tally: RunTally, run_id: str = run_id, k: int = k) -> RunRecord:
                    return RunRecord(
                        run_id=run_id,
                        model=f"model-{k}",
                        epochs=EPOCHS,
                        planned=tally.rows,
                        status="complete",
                        source="csv",
                        started_at=f"2026-01-01T00:{k // 3600 % 60:02d}:{k % 60:02d}+00:00",
                        valid=True,
                        error_rate=0.0,
                    )

                session.finish(run_id, record, identity={})
        done = min(runs, done + RUNS_PER_TRANSACTION)
        rate = done * RUN_ATTEMPTS / (time.perf_counter() - started)
        print(f"  {done * RUN_ATTEMPTS:>10,} attempts written ({rate:,.0f}/s)", flush=True)


def cli_median(root: Path, url: str, *args: str, repeats: int = 3) -> tuple[float, float]:
    """Median (wall, CPU) seconds of `evalsuite ARGS` as a child process, start-up included.

    CPU (user + system, from the child's rusage) hardly moves with the machine's load; wall
    time on a shared machine does.
    """
    command = [str(Path(sys.executable).with_name("evalsuite")), "--root", str(root), *args]
    return command_median(command, url, repeats=repeats)


def command_median(command: list[str], url: str, *, repeats: int = 3) -> tuple[float, float]:
    """Median (wall, CPU) seconds of `command` as a child process."""
    walls, cpus = [], []
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(
            command,
            env={**os.environ, "EVALSUITE_STORE": url},
            stdout=subprocess.DEVNULL,
            check=True,
        )
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def shipped_project(root: Path) -> None:
    """A copy of the shipped suites (arith, support): what `suites` and `verify` read."""
    for part in ("tasks", "manifests", "holdout"):
        if not (root / part).exists():
            shutil.copytree(ROOT / part, root / part, ignore=shutil.ignore_patterns("__pycache__"))


def label_suite_runs(path: Path, root: Path, keep: str) -> None:
    """Every other run but `keep` becomes a run of arith@2.0.0's dev split (idempotent)."""
    import json
    import sqlite3

    manifest = json.loads((root / "manifests/arith/2.0.0.json").read_text(encoding="utf-8"))
    with sqlite3.connect(path) as conn:
        conn.execute(
            "UPDATE runs SET suite = 'arith', version = '2.0.0', split = 'dev', "
            "manifest_hash = ? WHERE rowid % 2 = 1 AND run_id != ? AND suite IS NULL",
            (manifest["manifest_hash"], keep),
        )


def in_process(url: str, run_id: str) -> tuple[float, float]:
    store = Store(url)
    started = time.perf_counter()
    store.list_runs()
    runs = time.perf_counter() - started
    started = time.perf_counter()
    frame = store.attempts(run_id)
    attempts = time.perf_counter() - started
    assert len(frame) == RUN_ATTEMPTS
    return runs, attempts


def measure(root: Path, urls: dict[str, str], run_id: str) -> dict[str, dict[str, float]]:
    """Median wall and CPU seconds of each command on each store, and the in-process reads."""
    python = [sys.executable, "-c", "pass"]
    commands: dict[str, tuple[str, ...]] = {
        "--help (start-up)": ("--help",),
        "runs (newest 50)": ("runs",),
        "runs --all": ("runs", "--all"),
        "runs --json": ("runs", "--json"),
        "suites": ("suites",),
        "verify": ("verify",),
        "score RUN": ("score", run_id),
    }
    figures: dict[str, dict[str, float]] = {}
    for name, url in urls.items():
        subprocess.run(  # records the action-space check, as any first `verify` does
            [str(Path(sys.executable).with_name("evalsuite")), "--root", str(root), "verify"],
            env={**os.environ, "EVALSUITE_STORE": url},
            stdout=subprocess.DEVNULL,
            check=True,
        )
        wall, cpu = command_median(python, url)
        figures[name] = {"python -c pass, wall": wall, "python -c pass, cpu": cpu}
        for label, args in commands.items():
            wall, cpu = cli_median(root, url, *args)
            figures[name][f"{label}, wall"] = wall
            figures[name][f"{label}, cpu"] = cpu
        # verify with its content check not recorded (the record removed first): what a
        # `verify` after any change under tasks/ or manifests/SUITE/ costs
        record = root / ".evalsuite" / "verified.json"
        full = (
            f"import pathlib, sys; pathlib.Path({str(record)!r}).unlink(missing_ok=True); "
            "from evalsuite.cli import main; sys.argv[0] = 'evalsuite'; main()"
        )
        wall, cpu = command_median([sys.executable, "-c", full, "--root", str(root), "verify"], url)
        figures[name]["verify (content check not recorded), wall"] = wall
        figures[name]["verify (content check not recorded), cpu"] = cpu
        runs_s, attempts_s = in_process(url, run_id)
        figures[name]["list_runs (in process)"] = runs_s
        figures[name]["attempts(run) (in process)"] = attempts_s
    return figures


def print_figures(figures: dict[str, dict[str, float]], runs: int) -> None:
    """The figures with their CPU ratios to `python -c pass` and `evalsuite --help`, and
    big / small."""
    print()
    print(f"load average {os.getloadavg()[0]:.2f} (a shared machine: compare ratios)")
    print(
        f"{'seconds (CPU: x python -c pass, x --help)':42s} {'2 runs':>24s} "
        f"{f'{runs} runs':>24s} {'big/small':>9s}"
    )
    for key in figures["small"]:
        s, b = figures["small"][key], figures["big"][key]
        cells = []
        for name, value in (("small", s), ("big", b)):
            python = figures[name]["python -c pass, cpu"]
            usage = figures[name]["--help (start-up), cpu"]
            ratio = f" (x{value / python:.1f}, x{value / usage:.1f})" if key.endswith("cpu") else ""
            cells.append(f"{value:.3f}s{ratio}")
        print(f"{key:42s} {cells[0]:>24s} {cells[1]:>24s} {b / s:9.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    full = os.environ.get("EVALSUITE_BENCH_FULL") == "1"
    parser.add_argument("--attempts", type=int, default=10_000_000 if full else 1_000_000)
    parser.add_argument(
        "--keep", type=Path, default=None, help="Build the stores here and keep them."
    )
    args = parser.parse_args()
    runs = max(2, args.attempts // RUN_ATTEMPTS)
    base = args.keep or Path(tempfile.mkdtemp(prefix="bench-store-"))
    base.mkdir(parents=True, exist_ok=True)
    print(f"machine: {os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f}", flush=True)
    try:
        small, big = base / "small.sqlite", base / "big.sqlite"
        urls = {"small": f"sqlite:///{small}", "big": f"sqlite:///{big}"}
        if not small.exists():
            build(urls["small"], 2)
        if not big.exists():
            print(f"building {runs * RUN_ATTEMPTS:,} attempts ({runs} runs) ...", flush=True)
            started = time.perf_counter()
            build(urls["big"], runs)
            print(f"built in {time.perf_counter() - started:.0f} s", flush=True)
        import sqlite3

        with sqlite3.connect(big) as conn:  # the log's pages into the file, the log emptied
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = sum(p.stat().st_size for p in (big, big.with_name(big.name + "-wal")) if p.exists())
        per_attempt = size / (runs * RUN_ATTEMPTS)
        run_id = "20260101-000000-000001"  # the same content in both stores
        root = base / "project"
        root.mkdir(exist_ok=True)
        shipped_project(root)
        for path in (small, big):
            label_suite_runs(path, root, run_id)
        figures = measure(root, urls, run_id)
        print_figures(figures, runs)
        print()
        print(
            f"big store: {size / 1e6:,.0f} MB for {runs * RUN_ATTEMPTS:,} attempts: "
            f"{per_attempt:.0f} bytes per attempt (table and unique index)"
        )
        big_fig = figures["big"]
        print(
            f"target: runs <= 1 s on the big store: {big_fig['runs (newest 50), cpu']:.2f} s CPU "
            f"({big_fig['runs (newest 50), wall']:.2f} s wall), start-up included; "
            f"runs --all {big_fig['runs --all, cpu']:.2f} s CPU; "
            f"{big_fig['list_runs (in process)']:.3f} s for Store.list_runs in process"
        )
        for label in ("--help (start-up)", "runs (newest 50)", "suites", "verify"):
            cpu = big_fig[f"{label}, cpu"]
            verdict = "met" if cpu <= 0.5 else "NOT met"
            print(f"target: {label} <= 0.5 s CPU: {cpu:.2f} s ({verdict} in this run)")
        import sqlite3

        with sqlite3.connect(big) as conn:
            plan = conn.execute(
                "EXPLAIN QUERY PLAN SELECT * FROM attempts WHERE run_id = ? "
                "ORDER BY item_id, epoch",
                (run_id,),
            ).fetchall()
        print("query plan of one run's attempts:", "; ".join(str(r[-1]) for r in plan))
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
