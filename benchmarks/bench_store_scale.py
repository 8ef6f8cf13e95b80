"""`runs` and `score RUN` on a small SQLite store against a store of millions of attempts.

    .venv/bin/python benchmarks/bench_store_scale.py [--attempts 1000000] [--keep DIR]
    EVALSUITE_BENCH_FULL=1 .venv/bin/python benchmarks/bench_store_scale.py   # 10,000,000

Builds two stores through the store's bulk path (`Store.ingest_session`, the path `ingest`
uses), from seeded generated runs of 5,000 attempts each (1,000 items x 5 epochs): a small
one of 2 runs and a big one of ``--attempts`` (default 1,000,000; 10,000,000 with
``EVALSUITE_BENCH_FULL=1``). Then it times, as child processes (start-up included), the
median of three `evalsuite --help` (start-up alone), `evalsuite runs` and
`evalsuite score RUN` (the same run content in both stores; wall and CPU seconds), and
in-process `Store.list_runs` and `Store.attempts(run)`, and prints the ratios big / small
(target: `runs` <= 1 s on the big store; `score` unaffected by the other runs), the bytes
per attempt of the big store, and SQLite's query plan for one run's attempts.
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
        figures: dict[str, dict[str, float]] = {}
        for name, url in urls.items():
            help_wall, help_cpu = cli_median(root, url, "--help")
            runs_wall, runs_cpu = cli_median(root, url, "runs")
            score_wall, score_cpu = cli_median(root, url, "score", run_id)
            figures[name] = {
                "--help (start-up), wall": help_wall,
                "--help (start-up), cpu": help_cpu,
                "runs (CLI), wall": runs_wall,
                "runs (CLI), cpu": runs_cpu,
                "score RUN (CLI), wall": score_wall,
                "score RUN (CLI), cpu": score_cpu,
                "list_runs": in_process(url, run_id)[0],
                "attempts(run)": in_process(url, run_id)[1],
            }
        print()
        print(f"load average {os.getloadavg()[0]:.2f}")
        print(f"{'':28s} {'2 runs':>12s} {f'{runs} runs':>14s} {'ratio':>8s}")
        for key in figures["small"]:
            s, b = figures["small"][key], figures["big"][key]
            print(f"{key:28s} {s:11.3f}s {b:13.3f}s {b / s:8.2f}")
        print()
        print(
            f"big store: {size / 1e6:,.0f} MB for {runs * RUN_ATTEMPTS:,} attempts: "
            f"{per_attempt:.0f} bytes per attempt (table and unique index)"
        )
        print(
            f"target: runs <= 1 s on the big store: "
            f"{figures['big']['runs (CLI), cpu']:.2f} s CPU "
            f"({figures['big']['runs (CLI), wall']:.2f} s wall) for the CLI, start-up included; "
            f"beyond start-up (--help): "
            f"{figures['big']['runs (CLI), cpu'] - figures['big']['--help (start-up), cpu']:.2f} s "
            f"CPU; {figures['big']['list_runs']:.3f} s in process"
        )
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
