"""Benchmark of `evalsuite guard --executor ray`: MB/s per worker, 2 workers against local.

The curriculum and frozen suite of `bench_guard.py` (docstrings of installed packages, 50
planted items; default 200 MB), screened twice: locally (one process, one core) and on a
local Ray cluster of 2 worker actors (``ray.init(num_cpus=2)``, started by the benchmark;
its start-up is reported apart). Prints the wall-clock MB/s of each, the MB/s per worker,
the speed-up (ideal: 2x on two free cores; the Ray time includes starting the worker
actors), the size of the fingerprint index put once in
the object store and the time to put it, and checks that both screens find the same hits.
Run: ``.venv/bin/python benchmarks/bench_guard_ray.py [--mb 200] [--workers 2]``.
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_guard import (
    N_ITEMS,
    N_PLANTED,
    _words,
    clean_pool,
    docstring_paragraphs,
    make_curriculum,
    make_suite,
)

from evalsuite._core.layout import Layout
from evalsuite.guard import (
    FingerprintIndex,
    GuardOptions,
    GuardReport,
    RayOptions,
    find_sources,
    load_index,
    screen_on_ray,
    screen_sources,
)
from evalsuite.guard._readers import Source


def _on_ray(
    index: FingerprintIndex, sources: list[Source], tmp: Path, workers: int
) -> tuple[GuardReport, float, list[float]]:
    """The screen on a local Ray cluster: its report, the fixed cost, each shard's CPU time."""
    import ray

    started = time.perf_counter()
    ray.init(
        address="local",
        num_cpus=workers,
        include_dashboard=False,
        logging_level="ERROR",
        log_to_driver=False,
    )
    print(f"ray.init (local cluster, {workers} CPUs): {time.perf_counter() - started:.1f} s")
    size = len(pickle.dumps(index, protocol=5))
    started = time.perf_counter()
    ray.get(ray.put(index))
    put = time.perf_counter() - started
    print(f"fingerprint index: {size / 1e6:.1f} MB pickled, put + get in {put * 1000:.0f} ms")
    try:  # the time includes starting the worker actors (imports, fetching the index)
        tiny = tmp / "tiny.jsonl"
        tiny.write_text('{"text": "one short document"}\n', encoding="utf-8")
        fixed = screen_on_ray(
            find_sources([tiny])[0],
            index,
            options=GuardOptions(),
            ray_options=RayOptions(workers=workers),
        ).seconds
        cpu: list[float] = []
        report = screen_on_ray(
            sources,
            index,
            options=GuardOptions(),
            ray_options=RayOptions(workers=workers),
            on_shard=lambda r: cpu.append(r.cpu_seconds),
        )
    finally:
        ray.shutdown()
    return report, fixed, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=int, default=200, help="curriculum size in MB")
    parser.add_argument("--workers", type=int, default=2, help="Ray worker actors")
    args = parser.parse_args()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    rng = np.random.default_rng(20240611)
    t0 = time.perf_counter()
    paragraphs = sorted(set(docstring_paragraphs()))
    long = [p for p, w in zip(paragraphs, _words(paragraphs), strict=True) if 30 <= len(w) <= 200]
    items = [long[i] for i in rng.choice(len(long), size=N_ITEMS, replace=False)]
    pool = clean_pool(paragraphs, items)
    with tempfile.TemporaryDirectory(prefix="evalsuite-bench-ray-") as tmp:
        root = Path(tmp) / "project"
        make_suite(root, items)
        planted = [items[i] for i in rng.choice(N_ITEMS, size=N_PLANTED, replace=False)]
        planted_docs = make_curriculum(Path(tmp) / "curriculum", pool, planted, mb=args.mb, rng=rng)
        print(f"setup: {args.mb} MB curriculum, {N_ITEMS} items ({time.perf_counter() - t0:.0f} s)")
        index = load_index(Layout(root))
        sources, _ = find_sources([Path(tmp) / "curriculum"])
        options = GuardOptions()

        local_cpu = time.process_time()
        local = screen_sources(sources, index, options=options)
        local_cpu = time.process_time() - local_cpu
        mb = local.bytes_scanned / 1e6
        rate = mb / local.seconds
        print(f"local (1 process): {mb:.0f} MB in {local.seconds:.1f} s: {rate:.0f} MB/s")

        report, fixed, cpu = _on_ray(index, sources, Path(tmp), args.workers)
        rate = mb / report.seconds
        print(
            f"ray ({args.workers} workers): {mb:.0f} MB in {report.seconds:.1f} s: {rate:.0f} "
            f"MB/s, {rate / args.workers:.0f} MB/s per worker; "
            f"{local.seconds / report.seconds:.2f}x the local screen"
        )
        steady = mb / max(report.seconds - fixed, 1e-9)
        print(
            f"fixed cost of a Ray screen (actors started, a one-line file screened): {fixed:.1f} "
            f"s; without it: {steady:.0f} MB/s, {steady / args.workers:.0f} MB/s per worker, "
            f"{local.seconds / max(report.seconds - fixed, 1e-9):.2f}x the local screen"
        )
        print(
            f"CPU time in the workers' shards: {sum(cpu):.1f} s for {len(cpu)} shards: "
            f"{mb / sum(cpu):.0f} MB/s per worker core (local: {mb / local_cpu:.0f} MB/s per core)"
        )
        same = report.hits == local.hits and report.documents_scanned == local.documents_scanned
        flagged = {h.document for h in report.hits}
        print(
            f"findings {'identical' if same else 'DIFFERENT'}: {len(report.hits)} hits, "
            f"{len(flagged)} documents flagged, {len(planted_docs)} planted"
        )
        return 0 if same and flagged == set(planted_docs) else 1


if __name__ == "__main__":
    sys.exit(main())
