"""Benchmark of `evalsuite guard`: MB/s per core against a plain-Python baseline.

Builds, in a temporary directory, a curriculum of at least 200 MB of JSONL from public text
available offline (docstrings of the installed stdlib, numpy, pandas and scipy, read with
`ast`, never imported), shuffled and repeated with a seeded rng, and a frozen suite of 2,000
docstring paragraphs; plants 50 of them in the curriculum, then screens it end to end (read,
parse, normalise, hash, match) and checks that exactly those 50 are found. The clean text
shares no fingerprint n-gram with the items (in the current spec: word 8-grams of
``evalsuite-ngram/3``).

The baseline is the plain Python way (per document: ``normalise_words``, a set of 13-gram
tuples, intersected with the items' tuple sets through one dict) on a subset of the same
documents. It is the yardstick the guard was first measured against (spec /2, 13-grams), kept
unchanged so that ratios compare across versions. The screen is timed after a first screen of
one small document, which pays what a process pays once (the numba import, Unicode tables;
printed apart, and included in a second figure). Screens and baselines alternate `--repeat`
times (3); every run is printed and the best of each is judged (the least disturbed by other
processes; every repeat must find the same hits). The same curriculum is then screened again
on the numpy path (the compiled kernel off: the reference it is tested against), which must
find the same hits. Run: ``.venv/bin/python benchmarks/bench_guard.py [--mb 200]``.
"""

from __future__ import annotations

import argparse
import ast
import itertools
import json
import os
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from evalsuite._core.layout import Layout
from evalsuite._core.text import (
    normalise_batch_v2,
    normalise_batch_v3,
    normalise_words,
    prepare_batch_v3,
)
from evalsuite.guard._guard import GuardOptions, GuardReport, guard
from evalsuite.guard._index import FingerprintIndex, load_index
from evalsuite.guard._kernel import (
    DISABLE_ENV,
    available,
    byte_tables,
    kernel,
    steps,
)
from evalsuite.guard._screen import DEFAULT_BATCH_BYTES
from evalsuite.manifest import KeySpec, freeze

N_ITEMS = 2000
N_PLANTED = 50
CANARY = "evalsuite-canary bench 4d1f0a3e-1c2b-4f5e-8a9b-0c1d2e3f4a5b"
TARGET_MB_S = 150
"""Per core (CPU time), issue 35; the issue before it asked for 100."""


def _package_dirs() -> list[Path]:
    dirs = [Path(sysconfig.get_paths()["stdlib"])]
    for name in ("numpy", "pandas", "scipy"):
        module = __import__(name)
        dirs.append(Path(str(module.__file__)).parent)
    return dirs


def docstring_paragraphs(limit_files: int = 20_000) -> list[str]:
    """Paragraphs (blank-line separated) of the docstrings of installed Python sources."""
    paragraphs: list[str] = []
    files = sorted(p for d in _package_dirs() for p in d.rglob("*.py") if "test" not in p.name)
    for path in files[:limit_files]:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef):
                doc = ast.get_docstring(node)
                if doc:
                    paragraphs.extend(p.strip() for p in doc.split("\n\n") if p.strip())
    return paragraphs


def _words(texts: list[str]) -> list[list[bytes]]:
    """Normalised words (spec /3) of each text, in one batch."""
    batch = normalise_batch_v3(texts)
    ends = batch.offsets.tolist()
    return [
        [w for w in batch.buffer[lo : hi - 1].split(b"\0") if w]
        for lo, hi in itertools.pairwise(ends)
    ]


def _grams(words: list[bytes], n: int = 8) -> set[tuple[bytes, ...]]:
    return set(zip(*(words[i:] for i in range(n)), strict=False))


def clean_pool(paragraphs: list[str], items: list[str]) -> list[str]:
    """Paragraphs sharing no fingerprint n-gram with any item (docstrings repeat stock
    paragraphs)."""
    taken: set[tuple[bytes, ...]] = set().union(*map(_grams, _words(items)))
    return [p for p, w in zip(paragraphs, _words(paragraphs), strict=True) if not _grams(w) & taken]


def make_suite(root: Path, items: list[str]) -> None:
    (root / "tasks" / "fam").mkdir(parents=True)
    (root / "tasks" / "bench.toml").write_text(
        'name = "bench"\ndescription = "guard benchmark"\n'
        f'canary = "{CANARY}"\nholdout_fraction = 0.5\nstratify_by = ["family"]\n'
        'key = "canary"\n\n[[families]]\nname = "fam"\nversion = 1\n'
        'task = "fam/task.py"\nitems = "fam/items.jsonl"\n',
        encoding="utf-8",
    )
    records = [
        {"id": f"item-{i:05d}", "input": text, "target": f"answer {i}", "metadata": {}}
        for i, text in enumerate(items)
    ]
    (root / "tasks" / "fam" / "items.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in records), encoding="utf-8"
    )
    freeze(
        Layout(root), "bench", "1.0.0", keys=KeySpec(key_dir=root / "keys"), now=datetime.now(UTC)
    )


def make_curriculum(
    out: Path, paragraphs: list[str], planted: list[str], *, mb: int, rng: np.random.Generator
) -> list[str]:
    """JSONL files of documents of 2-30 random paragraphs; returns the documents planted."""
    out.mkdir()
    target, written, doc_no, shard = mb * 1_000_000, 0, 0, 0
    mean_doc = 16 * float(np.mean([len(p) for p in paragraphs])) + 30  # 2-30 paragraphs
    n_docs = int(0.9 * target / mean_doc)
    plant_at = set(rng.choice(n_docs, size=len(planted), replace=False).tolist())
    names: list[str] = []
    handle = (out / f"shard-{shard:02d}.jsonl").open("w", encoding="utf-8")
    line = 0
    while written < target:
        picks = rng.integers(0, len(paragraphs), size=int(rng.integers(2, 31)))
        text = "\n\n".join(paragraphs[i] for i in picks)
        if doc_no in plant_at:
            text += "\n\n" + planted[len(names)]
            names.append(f"{handle.name}:{line + 1}")
        handle.write(json.dumps({"id": doc_no, "text": text}) + "\n")
        written += len(text)
        doc_no, line = doc_no + 1, line + 1
        if line == 20_000:
            handle.close()
            shard, line = shard + 1, 0
            handle = (out / f"shard-{shard:02d}.jsonl").open("w", encoding="utf-8")
    handle.close()
    return names


def baseline(paths: list[Path], items: list[str], *, limit_bytes: int) -> tuple[float, float]:
    """Plain Python screening of the first `limit_bytes`: MB/s of wall and of CPU time."""
    owners: dict[tuple[str, ...], list[int]] = {}
    sizes: list[int] = []
    for k, text in enumerate(items):
        words = normalise_words(text)
        grams = set(zip(*(words[i:] for i in range(13)), strict=False))
        sizes.append(len(grams))
        for gram in grams:
            owners.setdefault(gram, []).append(k)
    started, cpu, done, flagged = time.perf_counter(), time.process_time(), 0, 0
    for text in _texts(paths):
        words = normalise_words(text)
        grams = set(zip(*(words[i:] for i in range(13)), strict=False))
        counts: dict[int, int] = {}
        for gram in grams & owners.keys():
            for k in owners[gram]:
                counts[k] = counts.get(k, 0) + 1
        flagged += any(c / max(sizes[k], 1) >= 0.2 for k, c in counts.items())
        done += len(text.encode())
        if done >= limit_bytes:
            break
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    return done / 1e6 / wall, done / 1e6 / cpu


def normalisers(paths: list[Path], *, limit_bytes: int) -> tuple[float, float, float | None]:
    """CPU MB/s of normalisation on the same documents (batches of about 1 MB, as the guard
    screens them): the spec /2 and spec /3 batch normalisers (numpy, the reference), and
    spec /3 as the guard runs it with the compiled kernel (`prepare_batch_v3` with the
    compiled byte passes, then the compiled word pass: step 5 and the word hashes; None without
    numba)."""
    batches: list[list[str]] = [[]]
    size = done = 0
    for text in _texts(paths):
        batches[-1].append(text)
        size += len(text)
        done += len(text.encode())
        if size >= DEFAULT_BATCH_BYTES:
            batches.append([])
            size = 0
        if done >= limit_bytes:
            break
    rates = []
    for normalise in (normalise_batch_v2, normalise_batch_v3):
        cpu = time.process_time()
        for batch in batches:
            normalise(batch)
        rates.append(done / 1e6 / (time.process_time() - cpu))
    found = steps()
    if found is None:
        return rates[0], rates[1], None
    from evalsuite.guard._jit import _prepared_words

    cpu = time.process_time()
    for batch in batches:
        prepared = prepare_batch_v3(batch, steps=found)
        _prepared_words(
            np.frombuffer(prepared.data, dtype=np.uint8),
            *byte_tables(prepared.separator),
            prepared.separator,
            max(prepared.n_docs, 1),
        )
    return rates[0], rates[1], done / 1e6 / (time.process_time() - cpu)


def _texts(paths: list[Path]) -> Iterator[str]:
    for path in paths:
        with path.open("rb") as handle:
            for raw in handle:
                yield json.loads(raw)["text"]


def _one_time_setup(tmp: Path, index: FingerprintIndex) -> float:
    """CPU seconds of a first screen of one small document: what a process pays once (the
    numba import and its cached kernel, the Unicode class and fold tables)."""
    tiny = tmp / "warm-up" / "one.jsonl"
    tiny.parent.mkdir()
    tiny.write_text(json.dumps({"text": "Caf\u00e9 c\u0430t " * 20}) + "\n", encoding="utf-8")
    cpu = time.process_time()
    guard([tiny], index, options=GuardOptions())
    return time.process_time() - cpu


def _reference_screen(curriculum: Path, index: FingerprintIndex) -> tuple[GuardReport, float]:
    """The same screen on the numpy path (compiled kernel off): its report and CPU seconds."""
    os.environ[DISABLE_ENV] = "1"
    kernel.cache_clear()
    try:
        cpu = time.process_time()
        report = guard([curriculum], index, options=GuardOptions())
        return report, time.process_time() - cpu
    finally:
        del os.environ[DISABLE_ENV]
        kernel.cache_clear()


def _alternate(
    curriculum: Path,
    index: FingerprintIndex,
    shards: list[Path],
    items: list[str],
    repeat: int,
    baseline_mb: int,
) -> tuple[list[tuple[GuardReport, float]], list[tuple[float, float]]]:
    """`repeat` screens (report, CPU seconds) and baselines (`baseline`), alternated.

    The best of each is judged: on a shared machine other processes only ever slow a run
    down, so the fastest run is the one least disturbed (as ``timeit`` reports).
    """
    screens: list[tuple[GuardReport, float]] = []
    baselines: list[tuple[float, float]] = []
    for _ in range(repeat):
        cpu = time.process_time()
        report = guard([curriculum], index, options=GuardOptions())
        screens.append((report, time.process_time() - cpu))
        baselines.append(baseline(shards, items, limit_bytes=baseline_mb * 1_000_000))
    return screens, baselines


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=int, default=200, help="curriculum size in MB (>= 200)")
    parser.add_argument("--baseline-mb", type=int, default=20, help="baseline subset in MB")
    parser.add_argument(
        "--no-reference", action="store_true", help="skip the numpy-path (reference) screen"
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="screens and baselines, alternated; the best of each is judged (>= 1)",
    )
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, got {args.repeat}")
    return args


def main() -> int:
    args = _arguments()
    rng = np.random.default_rng(20240611)
    t0 = time.perf_counter()
    paragraphs = sorted(set(docstring_paragraphs()))
    long = [p for p, w in zip(paragraphs, _words(paragraphs), strict=True) if 30 <= len(w) <= 200]
    chosen = rng.choice(len(long), size=N_ITEMS, replace=False)
    items = [long[i] for i in chosen]
    pool = clean_pool(paragraphs, items)
    with tempfile.TemporaryDirectory(prefix="evalsuite-bench-") as tmp:
        root = Path(tmp) / "project"
        make_suite(root, items)
        planted = [items[i] for i in rng.choice(N_ITEMS, size=N_PLANTED, replace=False)]
        planted_docs = make_curriculum(Path(tmp) / "curriculum", pool, planted, mb=args.mb, rng=rng)
        shards = sorted((Path(tmp) / "curriculum").glob("*.jsonl"))
        print(
            f"setup: {len(paragraphs)} paragraphs, {N_ITEMS} frozen items, "
            f"{sum(p.stat().st_size for p in shards) / 1e6:.0f} MB JSONL in {len(shards)} "
            f"files ({time.perf_counter() - t0:.0f} s)"
        )
        index = load_index(Layout(root))
        setup = _one_time_setup(Path(tmp), index)
        print(
            f"one-time set-up of a process (numba import and cached kernel, Unicode tables): "
            f"{setup:.2f} s of CPU time, paid once per process, not per MB"
        )
        screens, baselines = _alternate(
            Path(tmp) / "curriculum", index, shards, items, args.repeat, args.baseline_mb
        )
        report, cpu = min(screens, key=lambda run: run[1])
        mb = report.bytes_scanned / 1e6
        fast, fast_cpu = mb / min(r.seconds for r, _ in screens), mb / cpu
        flagged = {h.document for h in report.hits}
        repeats = all(r.hits == report.hits for r, _ in screens)
        print(
            f"evalsuite guard ({'compiled kernel' if available() else 'numpy path'}): "
            f"{report.documents_scanned} docs, {mb:.0f} MB in {report.seconds:.1f} s: "
            f"{fast:.0f} MB/s wall, {fast_cpu:.0f} MB/s per core (CPU time, best of "
            f"{args.repeat}: {', '.join(f'{mb / c:.0f}' for _, c in screens)}); "
            f"{mb / (cpu + setup):.0f} MB/s per core with the set-up; "
            f"{len(flagged)} documents flagged, {len(planted_docs)} planted"
        )
        same = repeats
        if not repeats:
            print("the repeated screens found different hits")
        if available() and not args.no_reference:
            reference, ref_cpu = _reference_screen(Path(tmp) / "curriculum", index)
            same = same and reference.hits == report.hits
            print(
                f"numpy path (the reference, {DISABLE_ENV}=1): {mb / ref_cpu:.0f} MB/s per core; "
                f"findings {'identical' if reference.hits == report.hits else 'DIFFERENT'} "
                f"({len(report.hits)} hits)"
            )
        slow, slow_cpu = max(baselines, key=lambda run: run[1])
        print(
            f"plain-Python baseline: {slow:.1f} MB/s wall, {slow_cpu:.1f} MB/s of CPU time "
            f"(first {args.baseline_mb} MB, best of {args.repeat}: "
            f"{', '.join(f'{c:.1f}' for _, c in baselines)})"
        )
        print(f"speed-up: {fast / slow:.1f}x wall, {fast_cpu / slow_cpu:.1f}x CPU time")
        v2, v3, guard_v3 = normalisers(shards, limit_bytes=args.baseline_mb * 1_000_000)
        print(
            f"normalisation alone (first {args.baseline_mb} MB, CPU time): numpy batch "
            f"normalisers (the references) spec /2 {v2:.0f} MB/s, spec /3 {v3:.0f} MB/s"
        )
        if guard_v3 is not None:
            print(
                f"spec /3 as the guard runs it (prepare_batch_v3 with the compiled byte passes, "
                f"then the compiled word pass with the word hashes): {guard_v3:.0f} MB/s"
            )
        if not same:
            print(
                "the findings differ (between repeats, or the compiled kernel and the numpy path)"
            )
            return 1
        if flagged != set(planted_docs):
            print(f"expected exactly the {len(planted_docs)} planted documents, got {len(flagged)}")
            for hit in [h for h in report.hits if h.document not in planted_docs][:10]:
                print("  unexpected:", hit)
            return 1
        # judged on CPU time: other processes on the machine slow the wall clock, not the code
        if fast_cpu < TARGET_MB_S or fast_cpu / slow_cpu < 5:
            print(f"below target ({TARGET_MB_S} MB/s per core and 5x the baseline)")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
