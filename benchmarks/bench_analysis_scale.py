"""Wall time, CPU and peak memory of `score`, `compare` and `report` on two 500,000-attempt runs.

    .venv/bin/python benchmarks/bench_analysis_scale.py [--rows 500000] [--baseline-rows 7000]
        [--baseline-ref main] [--seed 12] [--keep DIR]

Generates, from a fixed seed, a results table of two models on the same items (``--rows``
attempts each: items x 5 epochs, 10 strata, item difficulties spread on the logit scale so
items range from always failed to always passed, the second model slightly better, 3%
limits and 1% harness errors), writes it as Parquet and ingests it with `evalsuite ingest`
(one run per model). Then runs each measured command as its own child process, start-up
included, and prints its wall time, CPU time (user + system) and peak RSS against the issue's
target (10 s each) and against the same command on two runs of ``--baseline-rows`` attempts
(7,000: the size the README's first figures were measured at) measured in the same run, to
show how the time scales with the run. With ``--baseline-ref`` (a git commit; ``none`` to
skip) the same commands are also run, interleaved, with the package as it was at that commit
on the same stores, the ratios printed, and every output compared: `score --json`,
`compare --json` and `report.json` must be equal field by field (the generation time apart),
but for the sign-flip permutation p-value, a Monte Carlo figure whose draws changed (packed
random bits, docs/design/analysis-scale.md): the two codes' p-values (and the sentences that
quote them) must agree within five standard deviations of their Monte Carlo error.
`score` and `compare` are measured with ``--json`` (the figures the tools read), `report`
as a user runs it. The store keeps a run's analysis columns once read (schema 7,
docs/design/analysis-scale.md, "Fifth pass"): in the sequence measured, `score` reads run A
from its rows (and caches it), `compare` reads A from the cache and B from its rows, and
`report` both from the cache; `compare` and `report` are then measured again with the cache
emptied (every run read from its rows), and their outputs compared too. With a baseline,
the stores are ingested by the baseline's code and each code runs on its own copy (an older
evalsuite refuses a store this code has upgraded). The machine's load average is printed
with the figures: on a shared host wall time is indicative only, CPU time less so.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ingest import PYTHON, baseline_checkout, load

_CLI = "import sys; from evalsuite.cli import cli; cli.main(sys.argv[1:], prog_name='evalsuite')"
_MEASURE = """
import resource, subprocess, sys, time
started = time.perf_counter()
with open(sys.argv[1], "wb") as out:
    done = subprocess.run(sys.argv[2:], stdout=out, stderr=subprocess.PIPE)
wall = time.perf_counter() - started
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(wall, usage.ru_maxrss, usage.ru_utime + usage.ru_stime, done.returncode)
sys.stderr.write(done.stderr.decode()[-2000:])
"""
"""Runs one command as a child, its standard output to a file; prints wall, RSS, CPU, code."""
VOLATILE = ("generated_at",)
"""Output fields that differ from one run of a command to the next."""

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


def build_store(rows: int, seed: int, root: Path, code: Path | None = None) -> tuple[str, str]:
    """A project at `root` holding the two runs; their run ids (model-a, model-b).

    `code`: ingest with the package there (the baseline's, whose store schema may be older:
    this code upgrades a store on first use, while older code refuses a newer one).
    """
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    table = root.parent / f"{root.name}.parquet"
    pq.write_table(pa.Table.from_pandas(make_runs(rows, seed), preserve_index=False), table)
    done = subprocess.run(
        [
            PYTHON,
            *(["-P"] if code else []),
            "-c",
            _CLI,
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
        env={**os.environ, "PYTHONPATH": str(code)} if code else None,
    )
    by_model = {r["model"]: r["run_id"] for r in json.loads(done.stdout)["runs"]}
    return by_model["model-a"], by_model["model-b"]


def measure(command: list[str], out: Path, code: Path | None) -> tuple[float, float, float]:
    """(wall s, peak RSS MB, CPU s) of the CLI with `command`; stdout to `out`.

    `code`: the package directory to run instead of this checkout's (``python -P``, so the
    working directory does not come first on the path).
    """
    cli = [PYTHON, "-P", "-c", _CLI] if code else [PYTHON, "-c", _CLI]
    env = {**os.environ, "PYTHONPATH": str(code)} if code else None
    result = subprocess.run(
        [PYTHON, "-c", _MEASURE, str(out), *cli, *command],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    wall, rss_kb, cpu, exit_code = result.stdout.split()
    if int(exit_code) != 0:
        raise SystemExit(f"{' '.join(command)} failed ({exit_code}):\n{result.stderr}")
    return float(wall), int(rss_kb) / 1024, float(cpu)


def commands(root: Path, a: str, b: str, out: Path) -> dict[str, list[str]]:
    cli = ["--root", str(root)]
    return {
        "score": [*cli, "score", a, "--json"],
        "compare": [*cli, "compare", a, b, "--json"],
        "report": [*cli, "report", a, b, "--out", str(out)],
    }


def drop_column_cache(root: Path) -> None:
    """Forget the runs' cached columns (schema 7), so the next command reads the rows."""
    with sqlite3.connect(root / ".evalsuite" / "results.sqlite") as conn:
        conn.execute("DELETE FROM attempt_column_cache")


def output(name: str, stdout: Path, report_dir: Path) -> Any:
    """The command's JSON output (report: its report.json), without `VOLATILE` fields."""
    text = (report_dir / "report.json" if name == "report" else stdout).read_text()
    data = json.loads(text)
    return {k: v for k, v in data.items() if k not in VOLATILE} if isinstance(data, dict) else data


MONTE_CARLO = "p_value_permutation"
"""The one Monte Carlo figure: the sign-flip p-value (its draws are packed random bits since
the second pass of docs/design/analysis-scale.md; before, scipy's): two codes' values must
agree within its Monte Carlo error."""
_MC_TEXT = re.compile(r"(sign-flip permutation p(?: =)? )([^ ,;)]+)")
_DRAWS = 9999


def _mc_close(ours: Any, theirs: Any) -> bool:
    """Two sign-flip p-values from different draws of the same null: within 5 sd."""
    if not isinstance(ours, float) or not isinstance(theirs, float):
        return bool(ours == theirs)
    q = (ours + theirs) / 4  # each p is twice a tail proportion q of the draws
    return abs(ours - theirs) <= 5 * math.sqrt(2 * 4 * q * (1 - q) / _DRAWS) + 2 / _DRAWS


def _same(ours: Any, theirs: Any, key: str = "") -> bool:
    """Equal, but for the sign-flip p-value (and the sentences quoting it): within MC error."""
    if key == MONTE_CARLO:
        return _mc_close(ours, theirs)
    if isinstance(ours, dict) and isinstance(theirs, dict):
        return list(ours) == list(theirs) and all(_same(ours[k], theirs[k], k) for k in ours)
    if isinstance(ours, list) and isinstance(theirs, list):
        return len(ours) == len(theirs) and all(
            _same(a, b) for a, b in zip(ours, theirs, strict=True)
        )
    if isinstance(ours, str) and isinstance(theirs, str) and ours != theirs:
        mine, other = _MC_TEXT.findall(ours), _MC_TEXT.findall(theirs)
        quoted = [(float(a[1]), float(b[1])) for a, b in zip(mine, other, strict=False)]
        return (
            _MC_TEXT.sub(r"\1<p>", ours) == _MC_TEXT.sub(r"\1<p>", theirs)
            and len(mine) == len(other)
            and all(_mc_close(a, b) for a, b in quoted)
        )
    return json.dumps(ours) == json.dumps(theirs)


def differing(ours: Any, theirs: Any) -> list[str]:
    """The top-level fields (or the whole output) that are not equal (`_same`)."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        keys = list(dict.fromkeys([*ours, *theirs]))
        return [k for k in keys if not _same(ours.get(k), theirs.get(k), k)]
    return [] if _same(ours, theirs) else ["(output)"]


Figures = dict[tuple[str, str, int], tuple[float, float, float]]
"""(code, command, attempts per run) -> (wall s, peak RSS MB, CPU s)."""
UNCACHED = "this code, columns not cached"


def uncached(label: str) -> str:
    """The figures' label of `label`'s code run with no run's columns cached."""
    return UNCACHED if label == "this code" else f"{label}, columns not cached"


def measure_uncached(  # noqa: PLR0913 - the runs' stores, the codes and the shared tallies
    roots: dict[str, Path],
    versions: dict[str, Path | None],
    ab: tuple[str, str],
    rows: int,
    tmp: Path,
    figures: Figures,
    outputs_of: dict[str, Any],
    mismatches: list[str],
) -> None:
    """`compare` and `report` again, each code on its store with the cached columns dropped.

    The codes interleaved, as the cached commands are: the first read of two runs is what
    `Store.cache_columns` (sixth pass of docs/design/analysis-scale.md) changes.
    """
    for name in ("compare", "report"):
        for label, code in versions.items():
            drop_column_cache(roots[label])
            command = commands(roots[label], *ab, tmp / f"report-{rows}")[name]
            stdout = tmp / f"{name}-{rows}-cold.out"
            wall, rss, cpu = measure(command, stdout, code)
            figures[uncached(label), name, rows] = (wall, rss, cpu)
            print(
                f"{name:8s} {rows:>9,} attempts/run {label:14s}, not cached: {wall:6.2f} s "
                f"wall {cpu:6.2f} s cpu {rss:6.0f} MB peak RSS  (load {load()})",
                flush=True,
            )
            if fields := differing(output(name, stdout, tmp / f"report-{rows}"), outputs_of[name]):
                mismatches.append(f"{name} at {rows:,}, {label}, not cached: {', '.join(fields)}")


def summarise(
    rows: int, baseline_rows: int, labels: list[str], figures: Figures, mismatches: list[str]
) -> None:
    """The figures against the target, the smaller runs and the baseline; the verdict."""
    print()
    ratio = rows / baseline_rows
    print(
        f"against the target ({TARGET_S:.0f} s, start-up included) "
        f"and the {ratio:.0f}x smaller runs:"
    )
    for label, names in (
        ("this code", ("score", "compare", "report")),
        (UNCACHED, ("compare", "report")),
    ):
        for name in names:
            wall, rss, cpu = figures[label, name, rows]
            base_wall, _, base_cpu = figures[label, name, baseline_rows]
            verdict = "meets" if wall <= TARGET_S else "OVER"
            tag = "" if label == "this code" else " (not cached)"
            print(
                f"{name + tag:21s} {wall:6.2f} s wall ({verdict} {TARGET_S:.0f} s), {cpu:6.2f} s "
                f"cpu, {rss:5.0f} MB; x{wall / base_wall:.1f} wall and x{cpu / base_cpu:.1f} cpu "
                f"for x{ratio:.0f} attempts"
            )
    for label in labels[1:]:
        print(f"\nthis code against the code {label}, same stores, same run:")
        for name, ours, theirs in (
            ("score", "this code", label),
            ("compare", "this code", label),
            ("report", "this code", label),
            ("compare", UNCACHED, uncached(label)),
            ("report", UNCACHED, uncached(label)),
        ):
            wall, rss, cpu = figures[ours, name, rows]
            old_wall, old_rss, old_cpu = figures[theirs, name, rows]
            tag = "" if ours == "this code" else " (not cached)"
            print(
                f"{name + tag:21s} {old_cpu:6.2f} -> {cpu:6.2f} s cpu (x{old_cpu / cpu:.2f} "
                f"faster), {old_wall:6.2f} -> {wall:6.2f} s wall (x{old_wall / wall:.2f}), "
                f"{old_rss:5.0f} -> {rss:5.0f} MB"
            )
        print(
            "outputs equal, field by field: "
            + ("yes" if not mismatches else "NO: " + "; ".join(mismatches))
        )
    if mismatches:
        raise SystemExit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=500_000, help="attempts per run")
    parser.add_argument("--baseline-rows", type=int, default=7_000, help="attempts per run")
    parser.add_argument(
        "--baseline-ref",
        default="main",
        help="git commit whose package is measured on the same stores ('none': skip)",
    )
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--keep", type=Path, default=None, help="keep the stores here")
    args = parser.parse_args()
    print(f"load average at start {load()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-analysis-") as tmp_name:
        tmp = args.keep or Path(tmp_name)
        tmp.mkdir(parents=True, exist_ok=True)
        versions: dict[str, Path | None] = {"this code": None}
        if args.baseline_ref != "none":
            shutil.rmtree(tmp / "baseline", ignore_errors=True)
            versions[f"at {args.baseline_ref}"] = baseline_checkout(args.baseline_ref, tmp)
        figures: Figures = {}
        mismatches: list[str] = []
        outputs_of: dict[str, Any] = {}
        baseline = next((c for c in versions.values() if c is not None), None)
        for rows in (args.rows, args.baseline_rows):  # the large runs first
            root = tmp / f"runs-{rows}"
            a, b = build_store(rows, args.seed, root, baseline)
            roots = {}
            for label, code in versions.items():  # each code its own copy of the same store
                roots[label] = root if code is None else tmp / f"runs-{rows}-{label[3:]}"
                if code is not None:
                    shutil.rmtree(roots[label], ignore_errors=True)
                    shutil.copytree(root, roots[label])
            print(f"two runs of {rows:,} attempts ingested ({a}, {b})", flush=True)
            for name in ("score", "compare", "report"):
                outputs: list[Any] = []
                outputs_of[name] = None
                for label, code in versions.items():  # interleaved: the same load for both
                    report_dir = tmp / f"report-{rows}"
                    command = commands(roots[label], a, b, report_dir)[name]
                    stdout = tmp / f"{name}-{rows}-{len(outputs)}.out"
                    wall, rss, cpu = measure(command, stdout, code)
                    figures[label, name, rows] = (wall, rss, cpu)
                    outputs.append(output(name, stdout, report_dir))
                    if outputs_of[name] is None:
                        outputs_of[name] = outputs[-1]
                    print(
                        f"{name:8s} {rows:>9,} attempts/run {label:14s}: {wall:6.2f} s wall "
                        f"{cpu:6.2f} s cpu {rss:6.0f} MB peak RSS  (load {load()})",
                        flush=True,
                    )
                if name == "compare":
                    print(
                        "  sign-flip p: " + ", ".join(f"{o.get(MONTE_CARLO)!r}" for o in outputs),
                        flush=True,
                    )
                for other in outputs[1:]:
                    if fields := differing(outputs[0], other):
                        mismatches.append(f"{name} at {rows:,}: {', '.join(fields)}")
            measure_uncached(roots, versions, (a, b), rows, tmp, figures, outputs_of, mismatches)
    summarise(args.rows, args.baseline_rows, list(versions), figures, mismatches)


if __name__ == "__main__":
    main()
