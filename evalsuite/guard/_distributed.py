"""Screening a curriculum on a Ray cluster: shards in parallel, findings identical to one core.

``evalsuite guard PATH... --executor ray [--address ADDR] [--workers N]`` (docs/guard.md,
"On a cluster"). The curriculum is cut into shards: uncompressed JSONL files into byte ranges
of about `DEFAULT_SHARD_BYTES` that start and end at line starts (no record is ever split),
every other source (Parquet, text, gzip, HF datasets) whole. The fingerprint index is put in
Ray's object store once (``ray.put``) and handed to N worker actors, which each deserialise
it once (numpy arrays are read in place from the node's shared memory) and then screen shard
after shard with `screen_shard`, the same code as a local screen.

Why the findings are the same as a local screen's, in the same order: a hit depends on one
document only (the batch a document is screened in changes no hit; a document cut into
pieces stays in one shard), the hits of a shard come in document order, and the shards are
merged in file and byte order. Documents are named ``path:line`` as locally: a first round
of tasks counts the lines before each range, so a worker names its records (and its errors)
by their line in the whole file, without the driver reading the curriculum.

Ray is imported only here, only when asked for; ``pip install 'evalsuite[ray]'`` installs it.
"""

from __future__ import annotations

import importlib
import itertools
import logging
import os
import socket
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalsuite.errors import EvalsuiteError, UsageError
from evalsuite.guard._guard import GuardOptions, GuardReport
from evalsuite.guard._index import FingerprintIndex
from evalsuite.guard._readers import Skipped, Source, Span, read_source
from evalsuite.guard._screen import Hit, Screener

__all__ = [
    "DEFAULT_SHARD_BYTES",
    "RayOptions",
    "Shard",
    "ShardResult",
    "count_lines",
    "line_cuts",
    "plan_shards",
    "screen_on_ray",
    "screen_shard",
]

DEFAULT_SHARD_BYTES = 64 << 20
"""Bytes of JSONL per shard: about a second of screening per core, many shards per worker."""
_PROBE = 1 << 16
_MIN_SHARD = 1 << 20


@dataclass(frozen=True, slots=True)
class RayOptions:
    """Where and how wide to screen on Ray."""

    address: str | None = None
    """``host:port`` of a running cluster (``ray start --head``), ``ray://host:port`` (Ray
    Client) or ``auto``; None: the cluster this process is connected to, ``$RAY_ADDRESS``, or
    a local one started for the screen."""
    workers: int | None = None
    """Worker actors (one CPU each); None: one per CPU of the cluster."""
    shard_bytes: int = DEFAULT_SHARD_BYTES
    """Most bytes of JSONL per shard (smaller when needed for four shards a worker, down to
    1 MiB)."""


@dataclass(frozen=True, slots=True)
class Shard:
    """One unit of work: a whole source, or lines of an uncompressed JSONL file."""

    source: Source
    span: Span | None = None
    """None: the whole source."""

    @property
    def size(self) -> int:
        """Bytes on disk."""
        return self.source.size if self.span is None else self.span.stop - self.span.start


@dataclass(frozen=True, slots=True)
class ShardResult:
    """What screening one shard found and read."""

    hits: list[Hit]
    documents: int
    bytes: int
    cpu_seconds: float = 0.0
    """CPU time the worker spent on the shard (for MB/s per core)."""


def _splittable(source: Source) -> bool:
    return source.kind == "jsonl" and source.path.suffix != ".gz"


def line_cuts(path: Path, size: int, shard_bytes: int) -> list[int]:
    """Offsets of line starts about every `shard_bytes` bytes of `path`, from 0 to `size`.

    Each cut is the first line start at or after a multiple of `shard_bytes`; only a few
    kilobytes are read per cut.

    Raises:
        UsageError: the file cannot be read.
    """
    try:
        return _line_cuts(path, size, shard_bytes)
    except OSError as exc:
        raise UsageError(f"{path}: cannot be read as jsonl ({exc})") from None


def _line_cuts(path: Path, size: int, shard_bytes: int) -> list[int]:
    cuts = [0]
    if size == 0:
        return cuts
    with path.open("rb") as handle:
        for target in range(shard_bytes, size, shard_bytes):
            at = max(target, cuts[-1] + 1)
            if at >= size:
                break
            handle.seek(at - 1)
            while True:  # the line start at or after `at`: after the next newline from at - 1
                block = handle.read(_PROBE)
                newline = block.find(b"\n")
                if newline >= 0 or not block:
                    break
                at += len(block)
            if newline < 0:
                break
            cut = at + newline
            if cut >= size:
                break
            cuts.append(cut)
    cuts.append(size)
    return cuts


def count_lines(path: Path, start: int, stop: int) -> int:
    """Newlines in bytes ``start:stop`` of `path` (the lines of a range that ends a line)."""
    count = 0
    try:
        with path.open("rb") as handle:
            handle.seek(start)
            left = stop - start
            while left > 0 and (block := handle.read(min(left, 1 << 22))):
                count += block.count(b"\n")
                left -= len(block)
    except OSError as exc:
        raise UsageError(f"{path}: cannot be read as jsonl ({exc})") from None
    return count


def plan_shards(
    sources: Sequence[Source],
    shard_bytes: int,
    count: Callable[[list[tuple[Path, int, int]]], list[int]] | None = None,
) -> list[Shard]:
    """The shards of `sources`, in file and byte order.

    Args:
        sources: From `find_sources`.
        shard_bytes: Bytes of JSONL per shard (at least 1).
        count: Line counts of (path, start, stop) ranges, in order (default `count_lines`
            here; the Ray executor counts on its workers).
    """
    if shard_bytes < 1:
        raise UsageError(f"shard size must be at least 1 byte, got {shard_bytes}")
    ranges: list[tuple[Path, int, int]] = []
    cuts_of: list[list[int]] = []
    for source in sources:
        cuts = line_cuts(source.path, source.size, shard_bytes) if _splittable(source) else []
        cuts_of.append(cuts)
        ranges.extend((source.path, lo, hi) for lo, hi in itertools.pairwise(cuts[:-1]))
    counts = iter((count or (lambda rs: [count_lines(*r) for r in rs]))(ranges))
    shards: list[Shard] = []
    for source, cuts in zip(sources, cuts_of, strict=True):
        if len(cuts) <= 2:  # one range: the whole source
            shards.append(Shard(source))
            continue
        first = 1
        for lo, hi in itertools.pairwise(cuts):
            shards.append(Shard(source, Span(lo, hi, first)))
            if hi < cuts[-1]:
                first += next(counts)
    return shards


def screen_shard(shard: Shard, index: FingerprintIndex, options: GuardOptions) -> ShardResult:
    """Screen one shard as a local screen would (what each Ray worker runs)."""
    cpu = time.process_time()
    screener = Screener(index, threshold=options.threshold, batch_bytes=options.batch_bytes)
    stream = read_source(
        shard.source,
        field=options.field,
        piece_size=screener.piece_size,
        overlap_words=screener.overlap_words,
        overlap_chars=screener.overlap_chars,
        count_words=screener.count_words,
        span=shard.span,
    )
    hits = [hit for found in screener.screen(stream) for hit in found]
    return ShardResult(hits, screener.documents, screener.bytes, time.process_time() - cpu)


class _Worker:
    """A Ray actor: the shards it is sent, screened against the index fetched once.

    Each call carries the index's object reference in a list (a few bytes, not resolved by
    Ray); the actor fetches the index on its first shard and keeps it, and a restarted actor
    fetches it again from the object store, where the driver keeps it for the whole screen.
    """

    def __init__(self) -> None:
        self.index: FingerprintIndex | None = None

    def count(self, ranges: list[tuple[Path, int, int]]) -> list[int]:
        return [count_lines(*r) for r in ranges]

    def screen(self, boxed: list[Any], shard: Shard, options: GuardOptions) -> ShardResult:
        if self.index is None:
            self.index = _import_ray().get(boxed[0])
        return screen_shard(shard, self.index, options)


def _import_ray() -> Any:
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise UsageError(
            "--executor ray needs Ray, which is not installed: pip install 'evalsuite[ray]' "
            "(or run without --executor ray to screen on this machine)"
        ) from None


def _probe(address: str) -> None:
    """Fail fast, with a clear message, when nothing listens at ``host:port``."""
    if address == "auto" or "://" in address:
        return  # Ray resolves these itself
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise UsageError(
            f"--address {address!r}: expected HOST:PORT of a Ray cluster's head (as printed "
            "by `ray start --head`), ray://HOST:PORT or auto"
        )
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as exc:
        raise UsageError(
            f"cannot reach a Ray cluster at {address} ({exc}); start one with "
            "`ray start --head --port PORT` on the head node, or check --address"
        ) from None


def _connect(ray: Any, options: RayOptions) -> bool:
    """Connect to (or start) a cluster unless this process already is; True if it did."""
    if options.address:
        _probe(options.address)
    if ray.is_initialized():
        return False
    quiet = {"logging_level": logging.ERROR, "log_to_driver": False}
    try:
        if options.address:
            ray.init(address=options.address, **quiet)
        elif os.environ.get("RAY_ADDRESS"):  # Ray joins that cluster (no local settings)
            ray.init(**quiet)
        else:
            # "local": a new cluster, even when `ray start` left one's address behind
            ray.init(address="local", num_cpus=options.workers, include_dashboard=False, **quiet)
    except (ConnectionError, RuntimeError, ValueError, TimeoutError) as exc:
        where = options.address or os.environ.get("RAY_ADDRESS") or "a local cluster"
        raise UsageError(
            f"cannot connect to Ray at {where} ({exc}); check --address, or that `ray "
            "status` shows the cluster"
        ) from None
    return True


def _results(ray: Any, refs: Iterator[Any]) -> Iterator[Any]:
    """Each task's value in order; a worker's evalsuite error is raised as itself."""
    for ref in refs:
        try:
            yield ray.get(ref)
        except ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, EvalsuiteError):
                raise cause from None
            raise


def screen_on_ray(
    sources: Sequence[Source],
    index: FingerprintIndex,
    *,
    options: GuardOptions,
    ray_options: RayOptions = RayOptions(),
    skipped: Sequence[Skipped] = (),
    advance: Callable[[int], None] = lambda _: None,
    on_shard: Callable[[ShardResult], None] = lambda _: None,
) -> GuardReport:
    """`screen_sources` on a Ray cluster: the same report (hits in the same order).

    `advance` is told each shard's bytes when it is done, `on_shard` its result (hits,
    documents, bytes, the worker's CPU seconds).

    Raises:
        UsageError: Ray is missing, the cluster cannot be reached, or a shard's input is
            malformed (the same message as a local screen).
    """
    ray = _import_ray()
    started = time.perf_counter()
    own = _connect(ray, ray_options)
    try:
        cpus = int(ray.cluster_resources().get("CPU", 0))
        workers = ray_options.workers or max(cpus, 1)
        if workers > cpus:  # the extra actors would wait for a CPU forever
            raise UsageError(
                f"--workers {workers}: the Ray cluster has {cpus} CPU(s), and each worker "
                f"needs one; ask for at most {cpus} workers, or add nodes to the cluster"
            )
        index_ref = ray.put(index)  # shipped once; every actor reads this one copy
        actor = ray.remote(num_cpus=1, max_restarts=2, max_task_retries=2)(_Worker)
        actors = [actor.remote() for _ in range(workers)]
        pool = ray.util.ActorPool(actors)

        def count(ranges: list[tuple[Path, int, int]]) -> list[int]:
            chunks = [ranges[k :: len(actors)] for k in range(len(actors))]
            refs = [a.count.remote(c) for a, c in zip(actors, chunks, strict=True) if c]
            counted = list(_results(ray, iter(refs)))
            out = [0] * len(ranges)
            for k, values in enumerate(counted):
                out[k :: len(actors)] = values
            return out

        # at least four shards a worker when the curriculum allows it (a worker with one shard
        # more than the others finishes last), never more than `shard_bytes`
        total = sum(source.size for source in sources)
        size = min(ray_options.shard_bytes, max(total // (4 * workers), _MIN_SHARD))
        shards = plan_shards(sources, size, count)
        results: list[ShardResult] = []
        ordered = pool.map(lambda a, s: a.screen.remote([index_ref], s, options), shards)
        try:
            for shard, result in zip(shards, ordered, strict=True):
                results.append(result)
                advance(shard.size)
                on_shard(result)
        except ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, EvalsuiteError):
                raise cause from None
            raise
    finally:
        if own:
            ray.shutdown()
    return GuardReport(
        documents_scanned=sum(r.documents for r in results),
        bytes_scanned=sum(r.bytes for r in results),
        seconds=time.perf_counter() - started,
        threshold=options.threshold,
        manifests=list(index.sources),
        hits=[hit for r in results for hit in r.hits],
        skipped=list(skipped),
        fingerprints=list(index.files),
        legacy_only=list(index.legacy_only),
    )
