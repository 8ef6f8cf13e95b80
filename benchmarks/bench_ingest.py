"""Wall time and peak memory of `evalsuite ingest` at a million attempts, CSV and Parquet.

    .venv/bin/python benchmarks/bench_ingest.py [--rows 1000000] [--baseline-rows 200000]
        [--baseline-ref 0ce80e7] [--postgres] [--inspect-samples 1000]

Generates seeded results tables (200,000 items x 5 epochs for a million rows, 10 strata, 3%
limits, 1% harness errors) and runs each measured command as its own child process, so its
wall time includes start-up and its peak RSS (`resource.getrusage(RUSAGE_CHILDREN)` of a
one-child wrapper) is that command's alone. Printed, in one run:

* this code: CSV and Parquet at ``--rows`` (targets: <= 20 s wall, <= 1.5 GB peak RSS), and
  CSV at ``--baseline-rows`` (memory must not grow with the file);
* the code before issue 12 (``--baseline-ref``, taken from git) at ``--baseline-rows``: a
  million rows took it minutes, so the ratio is per row, at the smaller size;
* a plain baseline at ``--rows``: ``pandas.read_csv`` and ``executemany`` into an SQLite
  table of the same schema, no checks, no fingerprint: the floor this code is compared with;
* with ``--postgres``: the CSV at ``--rows`` into a throwaway PostgreSQL server (COPY), then
  ``evalsuite score`` of that run;
* ``--inspect-samples``: an inspect log of that many samples (copies of a real
  `evalsuite run` of the support suite) ingested, as samples per second beside rows per
  second of the CSV.

The machine's load average is printed with the figures: the host is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PYTHON = sys.executable

_CLI = """
import json, sys, time
started, cpu = time.perf_counter(), time.process_time()
from evalsuite.cli import cli
imported, imported_cpu = time.perf_counter(), time.process_time()
try:
    cli.main(sys.argv[2:], prog_name="evalsuite")
except SystemExit as exc:
    if exc.code:
        raise
done, done_cpu = time.perf_counter(), time.process_time()
with open(sys.argv[1], "w") as out:
    json.dump({"start_wall": imported - started, "start_cpu": imported_cpu - cpu,
               "work_wall": done - imported, "work_cpu": done_cpu - imported_cpu}, out)
"""
"""The CLI with its start-up (imports) and its work timed apart (written to a JSON file)."""

SPLITS: dict[str, tuple[float, float]] = {}
"""Label -> (ingest wall, ingest cpu) of the rows measured with start-up apart."""

_MEASURE = """
import resource, subprocess, sys, time
started = time.perf_counter()
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
wall = time.perf_counter() - started
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(wall, usage.ru_maxrss, usage.ru_utime + usage.ru_stime, done.returncode)
sys.stderr.write(done.stderr.decode()[-2000:])
"""


def measure(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float]:
    """(wall seconds, peak RSS in MB, CPU seconds) of `command` run as one child process."""
    result = subprocess.run(
        [PYTHON, "-c", _MEASURE, *command],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        check=False,
    )
    wall, rss_kb, cpu, code = result.stdout.split()
    if int(code) != 0:
        raise SystemExit(f"{' '.join(command)} failed ({code}):\n{result.stderr}")
    return float(wall), int(rss_kb) / 1024, float(cpu)


def evalsuite_cli() -> list[str]:
    return [str(Path(PYTHON).with_name("evalsuite"))]


def make_table(rows: int, seed: int = 12) -> pd.DataFrame:
    """A seeded results table of `rows` attempts (5 epochs per item)."""
    rng = np.random.default_rng(seed)
    epochs = 5
    items = rows // epochs
    outcome = rng.choice(
        np.array(["", "limit", "harness_error"], dtype=object), size=rows, p=[0.96, 0.03, 0.01]
    )
    score = np.round(rng.random(rows), 3).astype(str).astype(object)
    score[outcome == "limit"] = "0"
    score[outcome == "harness_error"] = ""
    return pd.DataFrame(
        {
            "model": "model-1",
            "item_id": np.repeat([f"item-{i:07d}" for i in range(items)], epochs),
            "epoch": np.tile(np.arange(1, epochs + 1), items),
            "score": score,
            "stratum": np.repeat([f"s{i % 10}" for i in range(items)], epochs),
            "outcome": outcome,
            "limit_type": np.where(outcome == "limit", "time", ""),
        }
    )


def write_tables(frame: pd.DataFrame, stem: Path) -> tuple[Path, Path]:
    csv, parquet = stem.with_suffix(".csv"), stem.with_suffix(".parquet")
    frame.to_csv(csv, index=False)
    typed = frame.copy()
    typed["score"] = pd.to_numeric(typed["score"].replace("", np.nan))
    pq.write_table(pa.Table.from_pandas(typed, preserve_index=False), parquet)
    return csv, parquet


def ingest(
    path: Path, fmt: str, root: Path, env: dict[str, str] | None = None
) -> tuple[float, ...]:
    """`evalsuite ingest` as a child: (wall, RSS MB, CPU, start-up wall, work wall, work CPU)."""
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    split = root.parent / f"{root.name}-split.json"
    command = ["--root", str(root), "ingest", str(path), "--format", fmt]
    figures = measure([PYTHON, "-c", _CLI, str(split), *command], env)
    parts = json.loads(split.read_text())
    return (*figures, parts["start_wall"], parts["work_wall"], parts["work_cpu"])


def baseline_checkout(ref: str, into: Path) -> Path:
    """The evalsuite package as it was at git `ref` (for PYTHONPATH)."""
    archive = into / "baseline.tar"
    with archive.open("wb") as out:
        subprocess.run(
            ["git", "-C", str(ROOT), "archive", "--format=tar", ref, "evalsuite"],
            stdout=out,
            check=True,
        )
    target = into / "baseline"
    target.mkdir()
    with tarfile.open(archive) as tar:
        tar.extractall(target, filter="data")
    return target


def baseline_ingest(code: Path, path: Path, root: Path, fmt: str = "csv") -> tuple[float, ...]:
    """The same as `ingest`, with the package at `code` first on the path."""
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    split = root.parent / f"{root.name}-split.json"
    command = ["--root", str(root), "ingest", str(path), "--format", fmt]
    # -P: `python -c` would put the working directory (this checkout) first on the path,
    # ahead of PYTHONPATH, and measure this code instead of the baseline's
    figures = measure([PYTHON, "-P", "-c", _CLI, str(split), *command], {"PYTHONPATH": str(code)})
    parts = json.loads(split.read_text())
    return (*figures, parts["start_wall"], parts["work_wall"], parts["work_cpu"])


_PLAIN = """
import sqlite3, sys, pandas as pd
from sqlalchemy import create_engine
from evalsuite.store._schema import metadata
path, db = sys.argv[1:3]
engine = create_engine(f"sqlite:///{db}")
metadata.create_all(engine)
frame = pd.read_csv(path, keep_default_na=False)
frame["score"] = pd.to_numeric(frame["score"].replace("", None))
rows = list(zip(["plain"] * len(frame), frame["item_id"], frame["epoch"].tolist(),
                frame["stratum"], frame["outcome"], frame["score"].tolist()))
conn = sqlite3.connect(db)
conn.execute("PRAGMA journal_mode=WAL"); conn.execute("PRAGMA synchronous=NORMAL")
conn.executemany("INSERT INTO attempts (run_id, item_id, epoch, stratum, outcome, score, "
                 "retries, duration_s, tokens, recorded_at) "
                 "VALUES (?, ?, ?, ?, ?, ?, 0, 0, 0, 'x')", rows)
conn.commit()
"""


def plain_baseline(path: Path, tmp: Path) -> tuple[float, ...]:
    db = tmp / "plain.sqlite"
    return measure([PYTHON, "-c", _PLAIN, str(path), str(db)])


def inspect_log(tmp: Path, samples: int) -> Path:
    """An .eval log of `samples` samples: copies of a real support-suite run's samples.

    One `evalsuite run` (96 items x 1 epoch, the reference agent) is copied entry by entry
    into a new archive, each copy with its own sample id and item id (the rest of each
    sample, its transcript included, unchanged; about 100 kB of JSON per sample), compressed
    as the source's entries are (inspect writes zstd).
    """
    import zipfile

    import zipfile_zstd  # noqa: F401 (zstd entries, as inspect writes them)
    from bench_run_overhead import _project, evalsuite_run

    from evalsuite.run import EPISODE_KEY

    root = _project(tmp / "inspect")
    evalsuite_run(root, 1)
    log_file = next(
        p for p in (root / ".evalsuite" / "logs").rglob("*") if p.suffix in (".eval", ".json")
    )
    if log_file.suffix == ".json":  # the same log as an .eval archive
        from inspect_ai.log import read_eval_log, write_eval_log

        write_eval_log(read_eval_log(str(log_file)), str(tmp / "run.eval"), format="eval")
        log_file = tmp / "run.eval"
    out = tmp / "big.eval"
    with zipfile.ZipFile(log_file) as source, zipfile.ZipFile(out, "w") as target:
        entries = [i for i in source.infolist() if i.filename.startswith("samples/")]
        documents = [json.loads(source.read(i)) for i in entries]
        method = entries[0].compress_type  # as inspect compresses its entries (zstd)
        summaries = {(d["id"], d["epoch"]): d for d in json.loads(source.read("summaries.json"))}
        copied = []
        for n in range(samples):
            document = dict(documents[n % len(documents)])
            copy = n // len(documents)
            metadata = dict(document.get("metadata") or {})
            episode = dict(metadata.get(EPISODE_KEY) or {})
            if episode:
                episode["item_id"] = f"{episode['item_id']}-{copy}"
                metadata[EPISODE_KEY] = episode
                document["metadata"] = metadata
            summary = dict(summaries[(document["id"], document["epoch"])])
            summary["metadata"] = {**(summary.get("metadata") or {}), **metadata}
            document["id"] = summary["id"] = f"{document['id']}-{copy}"
            copied.append(summary)
            target.writestr(
                f"samples/{document['id']}_epoch_{document['epoch']}.json",
                json.dumps(document),
                compress_type=method,
            )
        # the sample summaries list the samples (the code before the lean reader reads them)
        target.writestr("summaries.json", json.dumps(copied), compress_type=method)
        for info in source.infolist():
            if not info.filename.startswith(("samples/", "_journal/", "summaries")):
                target.writestr(info.filename, source.read(info))
    return out


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def summarise(table: list[tuple[str, float, float, float, int]], args: argparse.Namespace) -> None:
    """The ratios and the targets, from the rows measured."""
    rates = {label: n / wall for label, wall, _, _, n in table}
    splits = SPLITS
    labels = [t[0] for t in table]
    ours_small, base_small = labels[2], labels[3]
    print()
    print(
        f"speed-up vs code at {args.baseline_ref} ({args.baseline_rows} rows), whole command: "
        f"{rates[ours_small] / rates[base_small]:.1f}x wall; ingest alone (start-up excluded): "
        f"{splits[base_small][0] / splits[ours_small][0]:.1f}x wall, "
        f"{splits[base_small][1] / splits[ours_small][1]:.1f}x cpu"
    )
    print(
        f"this code's time vs the plain baseline at {args.rows} rows: "
        f"{table[0][1] / table[4][1]:.2f}x (CSV)"
    )
    print(
        f"peak RSS at {args.rows} rows / at {args.baseline_rows} rows: "
        f"{table[0][2]:.0f} / {table[2][2]:.0f} MB (batch-bounded when close)"
    )
    print(
        f"targets at {args.rows} rows: <= 20 s wall, <= 1536 MB: CSV {table[0][1]:.1f} s "
        f"{table[0][2]:.0f} MB, Parquet {table[1][1]:.1f} s {table[1][2]:.0f} MB"
    )
    if args.inspect_samples:
        inspect_label = labels[-1]
        print(
            f"inspect samples/s vs CSV rows/s: {rates[inspect_label]:.0f} vs {rates[labels[0]]:.0f}"
        )


def tables(args: argparse.Namespace, tmp: Path, row: Any) -> None:
    """The results-table rows: CSV and Parquet, the code before issue 12, the plain floor."""
    big_csv, big_parquet = write_tables(make_table(args.rows), tmp / "big")
    small_csv, _ = write_tables(make_table(args.baseline_rows), tmp / "small")
    print(
        f"files: {big_csv.stat().st_size / 1e6:.1f} MB CSV, "
        f"{big_parquet.stat().st_size / 1e6:.1f} MB Parquet ({args.rows} rows)",
        flush=True,
    )
    row(f"this code, CSV, {args.rows} rows", ingest(big_csv, "csv", tmp / "p1"), args.rows)
    row(
        f"this code, Parquet, {args.rows} rows",
        ingest(big_parquet, "parquet", tmp / "p2"),
        args.rows,
    )
    row(
        f"this code, CSV, {args.baseline_rows} rows",
        ingest(small_csv, "csv", tmp / "p3"),
        args.baseline_rows,
    )
    code = baseline_checkout(args.baseline_ref, tmp)
    row(
        f"code at {args.baseline_ref}, CSV, {args.baseline_rows} rows",
        baseline_ingest(code, small_csv, tmp / "p4"),
        args.baseline_rows,
    )
    row(
        f"plain pandas.read_csv + executemany, {args.rows} rows",
        plain_baseline(big_csv, tmp),
        args.rows,
    )
    if args.postgres:
        from tests.pg import find_pg_bin, pg_server

        bin_dir = find_pg_bin()
        if bin_dir is None:
            raise SystemExit("--postgres: no PostgreSQL binaries found")
        with pg_server(bin_dir, durable=True) as server:
            url = server.new_database()
            env = {"EVALSUITE_STORE": url}
            row(
                f"this code, CSV -> PostgreSQL (COPY), {args.rows} rows",
                ingest(big_csv, "csv", tmp / "p5", env),
                args.rows,
            )
            runs = subprocess.run(
                [*evalsuite_cli(), "--root", str(tmp / "p5"), "runs", "--json"],
                capture_output=True,
                text=True,
                env={**os.environ, **env},
                check=True,
            )
            run_id = json.loads(runs.stdout)[0]["run_id"]
            row(
                f"evalsuite score of that run on PostgreSQL ({args.rows})",
                measure([*evalsuite_cli(), "--root", str(tmp / "p5"), "score", run_id], env),
                args.rows,
            )


def inspect_rows(args: argparse.Namespace, tmp: Path, row: Any) -> None:
    """The inspect-log rows: this code at --inspect-samples; both codes on a smaller log."""
    log = inspect_log(tmp, args.inspect_samples)
    row(
        f"this code, inspect .eval log, {args.inspect_samples} samples",
        ingest(log, "inspect", tmp / "p6"),
        args.inspect_samples,
    )
    small = args.inspect_baseline_samples
    if not small:
        return
    small_log = inspect_log(tmp / "small-log", small)
    row(
        f"this code, inspect .eval log, {small} samples",
        ingest(small_log, "inspect", tmp / "p7"),
        small,
    )
    (tmp / "inspect-baseline").mkdir()
    code = baseline_checkout(args.inspect_baseline_ref, tmp / "inspect-baseline")
    row(
        f"code at {args.inspect_baseline_ref}, inspect .eval log, {small} samples",
        baseline_ingest(code, small_log, tmp / "p8", "inspect"),
        small,
    )


def summarise_inspect(
    table: list[tuple[str, float, float, float, int]], args: argparse.Namespace
) -> None:
    """Samples per second, and the speed-up over the code before the lean reader."""
    print()
    big = table[0]
    print(
        f"inspect log, {big[4]} samples: {big[4] / SPLITS[big[0]][0]:,.0f} samples/s "
        f"(ingest alone), {big[2]:.0f} MB peak RSS"
    )
    if len(table) >= 3:
        ours, base = SPLITS[table[1][0]], SPLITS[table[2][0]]
        print(
            f"speed-up vs code at {args.inspect_baseline_ref} ({table[1][4]} samples), ingest "
            f"alone (start-up excluded): {base[0] / ours[0]:.1f}x wall, "
            f"{base[1] / ours[1]:.1f}x cpu"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--baseline-rows", type=int, default=200_000)
    parser.add_argument("--baseline-ref", default="0ce80e7")
    parser.add_argument("--postgres", action="store_true")
    parser.add_argument("--inspect-samples", type=int, default=1_000)
    parser.add_argument(
        "--inspect-only", action="store_true", help="only the inspect log rows (no tables)"
    )
    parser.add_argument(
        "--inspect-baseline-ref",
        default="a713536",
        help="code before the lean log reader, run on a log of --inspect-baseline-samples",
    )
    parser.add_argument("--inspect-baseline-samples", type=int, default=2_000)
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores; load average at start {load()}", flush=True)
    table: list[tuple[str, float, float, float, int]] = []

    def row(label: str, figures: tuple[float, ...], n: int) -> None:
        wall, rss, cpu = figures[:3]
        table.append((label, wall, rss, cpu, n))
        split = ""
        if len(figures) == 6:
            SPLITS[label] = (figures[4], figures[5])
            split = (
                f"; start-up {figures[3]:.1f} s, ingest {figures[4]:.1f} s wall "
                f"{figures[5]:.1f} s cpu ({n / figures[4]:,.0f} rows/s)"
            )
        print(
            f"{label:52s} {wall:7.2f} s wall {cpu:7.2f} s cpu {rss:7.0f} MB peak RSS  "
            f"(load {load()}){split}",
            flush=True,
        )

    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp_name:
        tmp = Path(tmp_name)
        if not args.inspect_only:
            tables(args, tmp, row)
        if args.inspect_samples:
            inspect_rows(args, tmp, row)
    if args.inspect_only:
        summarise_inspect(table, args)
        return
    summarise(table, args)


if __name__ == "__main__":
    main()
