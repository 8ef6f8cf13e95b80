"""Throughput of a 2-worker Ray run against a local run of the same suite, on this machine.

    .venv/bin/python benchmarks/bench_ray_run.py [--epochs 3] [--limit N] [--shards 2] [--out F]

Both runs are measured in the same invocation, one after the other, into one throwaway
PostgreSQL server (tests/pg.py, PostgreSQL's durable defaults), each as a new process, the
way a user starts them:

* local: ``evalsuite run support@4.0.0 --model evalsuite/improved --epochs 3 --seed 7``
  (the support suite's dev split, offline reference agent), one process;
* ray: the same with ``--executor ray --shards 2``: a local Ray cluster of 2 CPUs started by
  the run (``ray.init``), two shard processes as Ray tasks.

Printed: each run's wall time (start of the process to its end, Ray's cluster start
included) and attempts per second, the ratio ray / local, the Ray run's time from the first
shard launched to the last one ended (``elapsed_s`` of its ``--json``, without the cluster's
start), and that both runs stored the same attempts (item, epoch, seed, outcome, score,
checks). For docs/scale.md's projection it also measures the store's write capacity: how
many single-attempt writes (`Store.record_attempts` of one attempt, as a shard's hook makes
them) one process makes per second into the same PostgreSQL server, and the size of the
suite's fingerprint file (what `guard --executor ray` ships to every worker once).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evalsuite._core.atomic import atomic_write_text  # noqa: E402
from tests.pg import find_pg_bin, pg_server  # noqa: E402

COMPARED = ["item_id", "epoch", "seed", "outcome", "limit_type", "score", "retries", "checks"]
"""Attempt columns that must be equal between the two runs."""

_LAUNCH = (
    "import sys; sys.path.insert(0, {root!r}); from evalsuite.cli import main; "
    "sys.argv = ['evalsuite', *sys.argv[1:]]; main()"
)


def _project(where: Path) -> Path:
    root = where / "project"
    for part in ("tasks", "manifests", "holdout"):
        shutil.copytree(
            ROOT / part,
            root / part,
            ignore=shutil.ignore_patterns("__pycache__", "*.lock", "ACCESS.jsonl"),
        )
    return root


def _timed_run(root: Path, env: dict[str, str], args: list[str]) -> tuple[float, dict[str, Any]]:
    """Wall seconds of ``evalsuite --root ROOT run ARGS --json`` in a new process; its JSON."""
    command = [sys.executable, "-c", _LAUNCH.format(root=str(ROOT)), "--root", str(root), "run"]
    started = time.perf_counter()
    done = subprocess.run(
        [*command, *args, "--json", "--no-progress"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"run failed ({done.returncode}): {done.stderr[-3000:]}")
    return wall, json.loads(done.stdout)


def _write_rate(url: str, seconds: float) -> float:
    """Single-attempt `record_attempts` calls per second from this process into `url`."""
    from evalsuite.store import AttemptRecord, RunRecord, Store

    store = Store(url)
    run_id = "write-rate"
    store.create_run(
        RunRecord(
            run_id=run_id,
            model="m",
            epochs=1,
            planned=10**6,
            status="running",
            source="evalsuite",
            started_at="2026-12-06T00:00:00+00:00",
            error_threshold=0.05,
        )
    )
    n = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        store.record_attempts(
            run_id,
            [
                AttemptRecord(
                    item_id=f"item-{n:07d}",
                    epoch=1,
                    stratum="s",
                    outcome="scored",
                    score=1.0,
                    item_hash="h",
                    seed=n,
                )
            ],
        )
        n += 1
    return n / (time.perf_counter() - started)


def _same_attempts(url: str, local: str, ray: str) -> bool:
    from evalsuite.store import Store

    store = Store(url)
    frames = [
        store.attempts(r)[COMPARED].sort_values(["item_id", "epoch"]).reset_index(drop=True)
        for r in (local, ray)
    ]
    return bool(frames[0].equals(frames[1]))


def main() -> None:
    """Measure, print, and optionally write the figures as JSON (--out)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--limit", type=int, default=None, help="first N dev items only")
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--write-seconds", type=float, default=10.0)
    parser.add_argument("--out", type=Path, default=None)
    options = parser.parse_args()
    bin_dir = find_pg_bin()
    if bin_dir is None:
        raise SystemExit("no PostgreSQL binaries (initdb, pg_ctl): see tests/pg.py")
    run_args = ["support@4.0.0", "--model", "evalsuite/improved"]
    run_args += ["--epochs", str(options.epochs), "--seed", "7"]
    if options.limit:
        run_args += ["--limit", str(options.limit)]
    with tempfile.TemporaryDirectory() as scratch, pg_server(bin_dir, durable=True) as server:
        root = _project(Path(scratch))
        url = server.new_database()
        env = dict(
            os.environ,
            EVALSUITE_STORE=url,
            EVALSUITE_KEY_DIR=str(Path(scratch) / "keys"),
            PYTHONPATH=str(ROOT),
            RAY_USAGE_STATS_ENABLED="0",
            RAY_memory_monitor_refresh_ms="0",
            INSPECT_TRACE_LEVEL="CRITICAL",
        )
        local_s, local = _timed_run(root, env, [*run_args, "--run-id", "bench-local"])
        ray_args = [*run_args, "--run-id", "bench-ray", "--executor", "ray"]
        ray_s, ray = _timed_run(root, env, [*ray_args, "--shards", str(options.shards)])
        attempts = int(local["harness"]["planned"])
        same = _same_attempts(url, "bench-local", "bench-ray")
        writes = _write_rate(url, options.write_seconds)
    fingerprints = ROOT / "manifests" / "support" / "4.0.0.fingerprints.jsonl"
    figures = {
        "attempts": attempts,
        "local_wall_s": round(local_s, 2),
        "local_attempts_per_s": round(attempts / local_s, 3),
        "ray_wall_s": round(ray_s, 2),
        "ray_attempts_per_s": round(attempts / ray_s, 3),
        "ray_shards_s": ray["elapsed_s"],
        "ray_shards_attempts_per_s": round(attempts / ray["elapsed_s"], 3),
        "ratio_ray_over_local": round(local_s / ray_s, 3),
        "ratio_shards_over_local": round(local_s / ray["elapsed_s"], 3),
        "same_attempts": same,
        "same_mean": math.isclose(local["mean"], ray["mean"]),
        "store_single_attempt_writes_per_s": round(writes, 1),
        "fingerprint_file_bytes": fingerprints.stat().st_size,
        "cpus": os.cpu_count(),
        "load_average_1m": round(os.getloadavg()[0], 2),
    }
    width = max(map(len, figures))
    for name, value in figures.items():
        print(f"{name:<{width}}  {value}")
    if options.out is not None:
        atomic_write_text(options.out, json.dumps(figures, indent=2) + "\n")
    if not same:
        raise SystemExit("the Ray run stored other attempts than the local run")


if __name__ == "__main__":
    main()
