"""Ingest of an inspect log against the floor of reading it: the cost per sample.

    .venv/bin/python benchmarks/bench_log_floor.py [--agent-samples 5000]
        [--small-samples 100000] [--repeats 3] [--baseline-ref 04f7b3c] [--keep DIR]

Two ``.eval`` logs are built (`bench_ingest.inspect_log`: copies of a real `evalsuite run`
of the support suite, agent episodes of about 100 kB of JSON each; `small_log`: copies of
the samples of a real inspect eval of a single-turn QA task on mockllm, input, target, one
model output and one score each). For each, in one run:

* floor (a): every sample entry of the zip read and decompressed (bytes only, size and CRC-32
  checked), by the cheaper of `zipfile` and the reader's own entry reader
  (`_log_reader.sample_entries`, which reads each entry from its offset in one call; both
  are printed);
* floor (b): (a) plus each entry decoded by msgspec into the structs the lean reader uses
  (`evalsuite.run._log_reader._Sample`), nothing validated, nothing stored;
* the reader: `_log_reader.read_log_samples` and `_ingest._attempt_row` of every sample
  (what ingest does before the store);
* ingest: ``evalsuite ingest LOG --format inspect`` as its own child process, its start-up
  (imports, inspect-ai's included: a fixed ~2 s) timed apart from its work, with the log
  read by one process and by two (``EVALSUITE_INGEST_PROCESSES``); the work's CPU includes
  the second process's; and the same with the code of ``--baseline-ref`` (the code before
  this benchmark, taken from git), for the ratio.

Floors and reader are timed in this process (CPU = user + system, the best of
``--repeats``, wall); the ingest's CPU and wall per sample are printed against both floors
as ratios, and its samples per second can be set beside the ~65,000 rows/s of a CSV
(docs/scale.md, "Ingest"). The machine's load average is printed with the figures: the
host is shared.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import zipfile_zstd  # noqa: E402, F401 (zstd entries, as inspect writes them)
from bench_ingest import (  # noqa: E402
    PYTHON,
    baseline_checkout,
    inspect_log,
    load,
    measure,
)

_QUESTIONS = 20


def _small_source(tmp: Path) -> Path:
    """A real inspect log: a single-turn QA task of `_QUESTIONS` samples on mockllm."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    def outputs(messages: list[Any], *_: Any) -> ModelOutput:
        out = ModelOutput.from_content("mockllm/model", "The answer is 4")
        out.usage = ModelUsage(input_tokens=30, output_tokens=5, total_tokens=35)
        return out

    samples = [
        Sample(
            id=f"q{n}",
            input=f"What is {n} + 2? Answer with the number only.",
            target=str(n + 2),
            metadata={"stratum": f"s{n % 4}"},
        )
        for n in range(_QUESTIONS)
    ]
    task = Task(dataset=samples, solver=generate(), scorer=match())
    model = get_model("mockllm/model", custom_outputs=outputs)
    (log,) = inspect_eval(task, model=model, log_dir=str(tmp / "small-source"), display="none")
    return Path(log.location)


def small_log(tmp: Path, samples: int) -> Path:
    """An .eval log of `samples` copies of a real single-turn QA eval's samples.

    Each copy has its own sample id (the rest of the sample unchanged), compressed as
    inspect compresses its entries (the source entry's method: zstd).
    """
    import inspect_ai._util.zipfile as inspect_zip

    source_path = _small_source(tmp)
    out = tmp / "small.eval"
    # the same zstd frames inspect writes, compressed by one thread: inspect's compressor
    # starts a pool of 12 threads for every entry (1.7 ms each, 30 minutes for a million)
    threads, inspect_zip._ZSTD_THREADS = inspect_zip._ZSTD_THREADS, 0
    try:
        _copy_samples(source_path, out, samples)
    finally:
        inspect_zip._ZSTD_THREADS = threads
    return out


def _copy_samples(source_path: Path, out: Path, samples: int) -> None:
    with zipfile.ZipFile(source_path) as source, zipfile.ZipFile(out, "w") as target:
        entries = [i for i in source.infolist() if i.filename.startswith("samples/")]
        documents = [json.loads(source.read(i)) for i in entries]
        method = entries[0].compress_type
        summaries = {(d["id"], d["epoch"]): d for d in json.loads(source.read("summaries.json"))}
        copied = []
        for n in range(samples):
            document = dict(documents[n % len(documents)])
            summary = dict(summaries[(document["id"], document["epoch"])])
            document["id"] = summary["id"] = f"{document['id']}-{n // len(documents)}"
            copied.append(summary)
            target.writestr(
                f"samples/{document['id']}_epoch_{document['epoch']}.json",
                json.dumps(document),
                compress_type=method,
            )
        target.writestr("summaries.json", json.dumps(copied), compress_type=method)
        for info in source.infolist():
            if not info.filename.startswith(("samples/", "_journal/", "summaries")):
                target.writestr(info.filename, source.read(info), compress_type=method)


def _entries(archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    return [
        i
        for i in archive.infolist()
        if i.filename.startswith("samples/") and i.filename.endswith(".json")
    ]


def zipfile_bytes(log: Path) -> int:
    """Every sample entry read and decompressed by `zipfile`; returns the bytes read."""
    total = 0
    with zipfile.ZipFile(log) as archive:
        for info in _entries(archive):
            total += len(archive.read(info))
    return total


def floor_bytes(log: Path) -> int:
    """(a): every sample entry read and decompressed by the reader's own entry reader."""
    from evalsuite.run._log_reader import sample_entries

    with log.open("rb") as handle:
        return sum(len(raw) for raw in sample_entries(handle))


def floor_decode(log: Path) -> int:
    """(b): (a) plus msgspec's decode of each entry into the lean reader's structs."""
    from evalsuite.run._log_reader import _SAMPLE, sample_entries

    decoded = 0
    with log.open("rb") as handle:
        for raw in sample_entries(handle):
            _SAMPLE.decode(raw)
            decoded += 1
    return decoded


def reader(log: Path) -> int:
    """The lean reader and the attempt row of every sample (no store)."""
    from evalsuite.run._ingest import _attempt_row
    from evalsuite.run._log_reader import read_log_samples

    n = 0
    for sample in read_log_samples(str(log)):
        _attempt_row(sample, {}, {}, {})
        n += 1
    return n


def timed(work: Callable[[], Any], repeats: int) -> tuple[float, float]:
    """(wall, CPU) seconds of `work()` in this process: the run of least CPU of `repeats`."""
    best = (float("inf"), float("inf"))
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        work()
        best = min(best, (time.process_time() - cpu, time.perf_counter() - wall))
    return best[1], best[0]


_INGEST = """
import json, resource, sys, time
started, cpu = time.perf_counter(), time.process_time()
from evalsuite.cli import cli
import evalsuite.run._ingest, evalsuite.run._log_reader, evalsuite.run._outcomes
imported, imported_cpu = time.perf_counter(), time.process_time()
children = resource.getrusage(resource.RUSAGE_CHILDREN)
try:
    cli.main(sys.argv[2:], prog_name="evalsuite")
except SystemExit as exc:
    if exc.code:
        raise
done, done_cpu = time.perf_counter(), time.process_time()
after = resource.getrusage(resource.RUSAGE_CHILDREN)
second = (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)
with open(sys.argv[1], "w") as out:
    json.dump({"start_wall": imported - started, "start_cpu": imported_cpu - cpu,
               "work_wall": done - imported, "work_cpu": done_cpu - imported_cpu + second,
               "second_cpu": second}, out)
"""
"""The CLI with its start-up (imports, inspect-ai's included) timed apart from its work; the
work's CPU includes the second process reading the log (joined, so counted as a child)."""


def ingest_child(
    log: Path, root: Path, processes: int, code: Path | None = None
) -> dict[str, float]:
    """`evalsuite ingest LOG --format inspect` as a child process, its work timed apart.

    `code`: the evalsuite package of another commit (`bench_ingest.baseline_checkout`).
    """
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    split = root.parent / f"{root.name}-split.json"
    # -P: the working directory (this checkout) must not come before the baseline's code
    command = [PYTHON, *(["-P"] if code else []), "-c", _INGEST, str(split), "--root", str(root)]
    command += ["ingest", str(log), "--format", "inspect"]
    env = {"EVALSUITE_INGEST_PROCESSES": str(processes)}
    if code is not None:
        env["PYTHONPATH"] = str(code)
    wall, rss, cpu = measure(command, env)
    parts = json.loads(split.read_text())
    shutil.rmtree(root, ignore_errors=True)
    return {"wall": wall, "rss": rss, "cpu": cpu, **parts}


def measure_log(
    label: str, log: Path, tmp: Path, repeats: int, baseline: tuple[str, Path] | None
) -> dict[str, float]:
    """The floors, the reader and the ingest of one log; prints and returns µs per sample."""
    with zipfile.ZipFile(log) as archive:
        entries = _entries(archive)
        n = len(entries)
        raw = sum(i.file_size for i in entries)
        packed = sum(i.compress_size for i in entries)
    print(
        f"\n{label}: {n:,} samples, {raw / n / 1000:.1f} kB of JSON per sample "
        f"({packed / n / 1000:.2f} kB compressed; {raw / 1e9:.2f} GB in all)",
        flush=True,
    )
    from evalsuite.run import _ingest, _log_reader  # noqa: F401 (imports outside the timing)

    gc.collect()
    gc.freeze()  # as ingest does (`_ingest._frozen_heap`): the same collector's costs

    figures: dict[str, float] = {}
    for name, work in (
        ("zipfile.read of every entry", lambda: zipfile_bytes(log)),
        ("floor (a) read + decompress", lambda: floor_bytes(log)),
        ("floor (b) (a) + msgspec decode", lambda: floor_decode(log)),
        ("reader + attempt rows, no store", lambda: reader(log)),
    ):
        wall, cpu = timed(work, repeats)
        figures[name] = cpu / n * 1e6
        print(
            f"  {name:34s} {wall:7.2f} s wall {cpu:7.2f} s cpu  {cpu / n * 1e6:8.1f} µs/sample "
            f"cpu  (best of {repeats}; load {load()})",
            flush=True,
        )
    a = min(figures["floor (a) read + decompress"], figures["zipfile.read of every entry"])
    b = figures["floor (b) (a) + msgspec decode"]
    runs: list[tuple[str, int, Path | None]] = [("this code", 1, None), ("this code", 2, None)]
    if baseline is not None:
        runs.append((f"code at {baseline[0]}", 1, baseline[1]))
    for who, processes, code in runs:
        got = ingest_child(log, tmp / "ingest-root", processes, code)
        per_cpu, per_wall = got["work_cpu"] / n * 1e6, got["work_wall"] / n * 1e6
        figures[f"{who} cpu {processes}"] = per_cpu
        figures[f"{who} wall {processes}"] = per_wall
        print(
            f"  ingest, {who}, {processes} process(es): whole command {got['wall']:.2f} s wall "
            f"{got['cpu']:.2f} s cpu {got['rss']:.0f} MB peak RSS; start-up (imports) "
            f"{got['start_wall']:.2f} s; ingest alone {got['work_wall']:.2f} s wall "
            f"{got['work_cpu']:.2f} s cpu (second process {got['second_cpu']:.2f} s), "
            f"{n / got['work_wall']:,.0f} samples/s  (load {load()})\n"
            f"    per sample: {per_cpu:.1f} µs cpu = {per_cpu / a:.2f}x floor (a), "
            f"{per_cpu / b:.2f}x floor (b); {per_wall:.1f} µs wall = {per_wall / b:.2f}x "
            "floor (b)",
            flush=True,
        )
    if baseline is not None:
        before = f"code at {baseline[0]}"
        print(
            f"  this code against {before}, ingest alone per sample: "
            f"{figures[before + ' cpu 1'] / figures['this code cpu 1']:.2f}x less CPU (one "
            f"process), {figures[before + ' wall 1'] / figures['this code wall 2']:.2f}x less "
            "wall (two processes)",
            flush=True,
        )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent-samples", type=int, default=5_000)
    parser.add_argument("--small-samples", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3, help="floors and reader: best of N")
    parser.add_argument(
        "--baseline-ref",
        default="04f7b3c",
        help="ingest the same logs with the code of this commit too ('' for none)",
    )
    parser.add_argument(
        "--keep", type=Path, help="build the logs here once and reuse them (else a temp dir)"
    )
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores; load average at start {load()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-log-floor-") as tmp_name:
        tmp = Path(tmp_name)
        keep = args.keep or tmp
        keep.mkdir(parents=True, exist_ok=True)
        logs = []
        if args.agent_samples:
            agent = keep / f"agent-{args.agent_samples}.eval"
            if not agent.exists():
                (tmp / "agent").mkdir()
                shutil.move(inspect_log(tmp / "agent", args.agent_samples), agent)
            logs.append(("agent samples (.eval)", agent))
        if args.small_samples:
            small = keep / f"small-{args.small_samples}.eval"
            if not small.exists():
                (tmp / "small").mkdir()
                shutil.move(small_log(tmp / "small", args.small_samples), small)
            logs.append(("small single-turn samples (.eval)", small))
        baseline = None
        if args.baseline_ref:
            (tmp / "baseline").mkdir()
            code = baseline_checkout(args.baseline_ref, tmp / "baseline")
            baseline = (args.baseline_ref, code)
        for label, log in logs:
            measure_log(label, log, tmp, args.repeats, baseline)


if __name__ == "__main__":
    main()
