"""Wall time, CPU and peak memory of `score`, `compare` and `report` on two 500,000-attempt runs.

    .venv/bin/python benchmarks/bench_analysis_scale.py [--rows 500000] [--baseline-rows 7000]
        [--seed 12] [--keep DIR]

Generates, from a fixed seed, a results table of two models on the same items (``--rows``
attempts each: items x 5 epochs, 10 strata, item difficulties spread on the logit scale so
items range from always failed to always passed, the second model slightly better, 3%
limits and 1% harness errors), writes it as Parquet and ingests it with `evalsuite ingest`
(one run per model). Then runs each measured command as its own child process, start-up
included, and prints its wall time, CPU time (user + system) and peak RSS against the issue's
target (10 s each) and against the same command on two runs of ``--baseline-rows`` attempts
(7,000: the size the README's first figures were measured at) measured in the same run, to
show how the time scales with the run. The machine's load average is printed with the
figures: on a shared host wall time is indicative only, CPU time less so.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ingest import evalsuite_cli, load, measure

TARGET_S = 10.0
EPOCHS = 5
STRATA = 10


def make_runs(rows: int, seed: int) -> pd.DataFrame:
    """Two models' attempts on the same ``rows / 5`` items, seeded."""
    rng = np.random.default_rng(seed)
    items = rows // EPOCHS
    easiness = rng.normal(0.0, 1.5, items)  # logit of each item's success probability
    ids = np.array([f"item-{i:07d}" for i in range(items)], dtype=object)
    strata = np.array([f"s{i % STRATA}" for i in range(items)], dtype=object)
    frames = []
    for model, shift in (("model-a", 0.0), ("model-b", 0.05)):
        p = 1.0 / (1.0 + np.exp(-(easiness + shift + rng.normal(0.0, 0.3, items))))
        n = items * EPOCHS
        score = (rng.random(n) < np.repeat(p, EPOCHS)).astype(np.float64)
        outcome = rng.choice(
            np.array(["scored", "limit", "harness_error"], dtype=object),
            size=n,
            p=[0.96, 0.03, 0.01],
        )
        score[outcome == "limit"] = 0.0
        score[outcome == "harness_error"] = np.nan
        frames.append(
            pd.DataFrame(
                {
                    "model": model,
                    "item_id": np.repeat(ids, EPOCHS),
                    "epoch": np.tile(np.arange(1, EPOCHS + 1), items),
                    "score": score,
                    "stratum": np.repeat(strata, EPOCHS),
                    "outcome": outcome,
                    "limit_type": np.where(outcome == "limit", "time", None),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def build_store(rows: int, seed: int, root: Path) -> tuple[str, str]:
    """A project at `root` holding the two runs; their run ids (model-a, model-b)."""
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    table = root.parent / f"{root.name}.parquet"
    pq.write_table(pa.Table.from_pandas(make_runs(rows, seed), preserve_index=False), table)
    done = subprocess.run(
        [
            *evalsuite_cli(),
            "--root",
            str(root),
            "ingest",
            str(table),
            "--format",
            "parquet",
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    by_model = {r["model"]: r["run_id"] for r in json.loads(done.stdout)["runs"]}
    return by_model["model-a"], by_model["model-b"]


def commands(root: Path, a: str, b: str, out: Path) -> dict[str, list[str]]:
    cli = [*evalsuite_cli(), "--root", str(root)]
    return {
        "score": [*cli, "score", a],
        "compare": [*cli, "compare", a, b],
        "report": [*cli, "report", a, b, "--out", str(out)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=500_000, help="attempts per run")
    parser.add_argument("--baseline-rows", type=int, default=7_000, help="attempts per run")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--keep", type=Path, default=None, help="keep the stores here")
    args = parser.parse_args()
    print(f"load average at start {load()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-analysis-") as tmp_name:
        tmp = args.keep or Path(tmp_name)
        figures: dict[tuple[str, int], tuple[float, float, float]] = {}
        for rows in (args.baseline_rows, args.rows):
            root = tmp / f"runs-{rows}"
            a, b = build_store(rows, args.seed, root)
            print(f"two runs of {rows:,} attempts ingested ({a}, {b})", flush=True)
            for name, command in commands(root, a, b, tmp / f"report-{rows}").items():
                wall, rss, cpu = measure(command)
                figures[name, rows] = (wall, rss, cpu)
                print(
                    f"{name:8s} {rows:>9,} attempts/run: {wall:6.2f} s wall {cpu:6.2f} s cpu "
                    f"{rss:6.0f} MB peak RSS  (load {load()})",
                    flush=True,
                )
    print()
    ratio = args.rows / args.baseline_rows
    print(
        f"against the target ({TARGET_S:.0f} s, start-up included) "
        f"and the {ratio:.0f}x smaller runs:"
    )
    for name in ("score", "compare", "report"):
        wall, rss, cpu = figures[name, args.rows]
        base_wall, _, base_cpu = figures[name, args.baseline_rows]
        verdict = "meets" if wall <= TARGET_S else "OVER"
        print(
            f"{name:8s} {wall:6.2f} s wall ({verdict} {TARGET_S:.0f} s), {cpu:6.2f} s cpu, "
            f"{rss:5.0f} MB; x{wall / base_wall:.1f} wall and x{cpu / base_cpu:.1f} cpu "
            f"for x{ratio:.0f} attempts"
        )


if __name__ == "__main__":
    main()
