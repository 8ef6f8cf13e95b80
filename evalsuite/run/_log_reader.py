"""Read the samples of an inspect log for ingest: only the fields an attempt row needs.

inspect's own readers validate every sample whole (its transcript of events and messages,
most of a log's bytes) or, asked to leave fields out, stream the JSON token by token in
Python; either costs about 20 ms of CPU per sample of an agent run (docs/scale.md, "Ingest").
Here each sample entry is decoded by msgspec into the few fields `_outcomes.classify_sample`
and the attempt row read (id, epoch, scores, error, limit, retries, token usage, time, and of
the metadata and the store only the keys read: evalsuite's episode spec, a stratum, a tool
time limit): the rest of the document is scanned, never built. A document msgspec cannot
decode (``NaN`` or ``Infinity``, which inspect writes for non-finite floats, or an integer
beyond 64 bits) is parsed by the standard library instead.

The subset is then validated by `LeanSample`: a pydantic model of exactly those fields of
inspect's `EvalSample`, each with inspect's own type and field definition (so a `Score`, an
`EvalError`, a `ModelUsage` is checked by inspect's model, its migrations included), and
`EvalSample`'s own migration of older log formats (``score`` before ``scores``) applied
first. `EvalSample`'s other model validator reads only its ``timelines``, which ingest does
not read. So a sample read here is, field for field, the sample inspect would return, minus
the fields left out (`tests/run/test_log_reader.py` checks it, and that `EvalSample` has no
validator this model does not account for), at half the cost of validating an `EvalSample`,
whose default fields (an empty `ModelOutput`, events, messages) are built for every sample.

An ``.eval`` log is a zip with one entry per sample (``samples/<id>_epoch_<n>.json``, read
in the order of the archive: every sample it holds, whether or not the eval finished); a
``.json`` log is one document. Both are opened through fsspec, so any URL inspect can
write to can be ingested. The zip's directory is read by `zipfile`; each sample entry is
read straight from its offset and decompressed in one call (zstd, as inspect writes, or
deflate), its size and CRC-32 checked as `zipfile` checks them: `zipfile`'s reader costs
about as much again per entry in Python as the decompression of a small sample
(docs/scale.md, "Ingest"). An entry of any other kind (stored, encrypted, a zstd entry of
several frames) is read by `zipfile`.
"""

from __future__ import annotations

import json
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from typing import IO, Any, Generic, TypeVar

import msgspec
import zipfile_zstd  # noqa: F401 (an inspect-ai dependency: zipfile reads zstd entries)
import zstandard
from inspect_ai.log import EvalSample
from inspect_ai.log._log import SCORER_PLACEHOLDER
from pydantic import BaseModel, ConfigDict, create_model, model_validator

from evalsuite._core.fork import forkable
from evalsuite.run._episode import EPISODE_KEY, TOOL_LIMIT_KEY

__all__ = [
    "SAMPLE_FIELDS",
    "LeanSample",
    "LogBatches",
    "LogReaderDied",
    "read_log_samples",
    "sample_entries",
]

T = TypeVar("T")

SAMPLE_FIELDS = (
    "id",
    "epoch",
    "metadata",
    "scores",
    "score",
    "error",
    "limit",
    "store",
    "error_retries",
    "model_usage",
    "total_time",
)
"""The sample fields read: what classification and the attempt row use (``score`` is the
single-scorer field of logs older than ``scores``, which inspect's model migrates)."""


class _Metadata(msgspec.Struct):
    """The sample metadata ingest reads: evalsuite's episode spec and a foreign stratum."""

    episode: Any = msgspec.field(default=msgspec.UNSET, name=EPISODE_KEY)
    stratum: Any = msgspec.UNSET


class _Store(msgspec.Struct):
    """The one store entry classification reads: a tool's time limit hit."""

    tool_limit: Any = msgspec.field(default=msgspec.UNSET, name=TOOL_LIMIT_KEY)


class _Sample(msgspec.Struct):
    """The fields of `SAMPLE_FIELDS`; any other field in the document is skipped unbuilt."""

    id: Any = msgspec.UNSET
    epoch: Any = msgspec.UNSET
    metadata: _Metadata | None = None
    scores: Any = msgspec.UNSET
    score: Any = msgspec.UNSET
    error: Any = msgspec.UNSET
    limit: Any = msgspec.UNSET
    store: _Store | None = None
    error_retries: Any = msgspec.UNSET
    model_usage: Any = msgspec.UNSET
    total_time: Any = msgspec.UNSET


class _EvalScore(msgspec.Struct):
    name: Any = None


class _Results(msgspec.Struct):
    scores: list[_EvalScore] | None = None


class _Log(msgspec.Struct):
    """A ``.json`` log: its samples, and the name of its first scorer (`_scorer_named`)."""

    samples: list[_Sample] | None = None
    results: _Results | None = None


_SAMPLE = msgspec.json.Decoder(_Sample)
_LOG = msgspec.json.Decoder(_Log)


def _present(struct: msgspec.Struct, names: dict[str, str]) -> dict[str, Any]:
    return {
        key: value
        for attr, key in names.items()
        if (value := getattr(struct, attr)) is not msgspec.UNSET
    }


_METADATA = {"episode": EPISODE_KEY, "stratum": "stratum"}
_STORE = {"tool_limit": TOOL_LIMIT_KEY}
_PLAIN = {name: name for name in SAMPLE_FIELDS if name not in ("metadata", "store")}


def _fields(decoded: _Sample) -> dict[str, Any]:
    fields = _present(decoded, _PLAIN)
    if decoded.metadata is not None:
        fields["metadata"] = _present(decoded.metadata, _METADATA)
    if decoded.store is not None:
        fields["store"] = _present(decoded.store, _STORE)
    return fields


def _from_document(document: dict[str, Any]) -> dict[str, Any]:
    """`_fields` of a document the standard library parsed: the same keys, no more."""
    fields = {name: document[name] for name in _PLAIN if name in document}
    for name, keys in (("metadata", _METADATA), ("store", _STORE)):
        value = document.get(name)
        if isinstance(value, dict):
            fields[name] = {key: value[key] for key in keys.values() if key in value}
    return fields


class _LeanBase(BaseModel):
    """`EvalSample`'s configuration and its migration of older formats, for `LeanSample`."""

    model_config = ConfigDict(protected_namespaces=(), ser_json_inf_nan="constants")

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, values: Any) -> Any:
        # inspect's own migration (``score`` -> ``scores``, and what else it migrates); at
        # run time the class attribute is the bound classmethod pydantic wrapped
        return EvalSample.migrate_deprecated(values)  # type: ignore[operator]


_VALIDATED = tuple(name for name in SAMPLE_FIELDS if name != "score")
"""The `EvalSample` fields `LeanSample` holds (``score`` is migrated into ``scores``)."""

EVAL_SAMPLE_VALIDATORS = frozenset({"migrate_deprecated", "_resolve_timelines"})
"""`EvalSample`'s model validators `LeanSample` accounts for: the migration it applies, and
the resolution of ``timelines``, a field ingest does not read. Another one in a later
inspect-ai fails `tests/run/test_log_reader.py` until it is looked at here."""

LeanSample = create_model(  # type: ignore[call-overload]
    "LeanSample",
    __base__=_LeanBase,
    __doc__="The fields of `EvalSample` ingest reads, each as inspect defines it.",
    **{
        name: (EvalSample.model_fields[name].annotation, EvalSample.model_fields[name])
        for name in _VALIDATED
    },
)
"""A pydantic model of the `EvalSample` fields in `SAMPLE_FIELDS` (see the module)."""


def _validated(fields: dict[str, Any]) -> Any:
    # input and target are required by inspect's model and never read by ingest: the item
    # text (holdout plaintext for a holdout run) is not even decoded
    return LeanSample.model_validate(fields)


def _sample(raw: bytes) -> Any:
    try:
        fields = _fields(_SAMPLE.decode(raw))
    except msgspec.DecodeError:
        fields = _from_document(json.loads(raw))
    return _validated(fields)


_LOCAL_HEADER = struct.Struct("<4sHHH4xIII2H")
"""A zip local file header: signature, version, flags, method, (time, date,) CRC-32,
sizes, name and extra lengths (APPNOTE.TXT 4.3.7)."""
_ZSTD, _DEFLATE = 93, zipfile.ZIP_DEFLATED
_UNREAD_FLAGS = 0x1 | 0x20 | 0x40
"""Encrypted, compressed patched data, strong encryption: left to `zipfile` (which refuses
the last two)."""


class _EntryReader:
    """Sample entries read from their offsets and decompressed in one call, checked.

    `read` returns None for an entry it does not read itself (another method, encryption,
    a local header that disagrees with the directory, a zstd entry of several frames):
    `zipfile` reads it instead, with its own checks.
    """

    def __init__(self, handle: IO[bytes]) -> None:
        self._handle = handle
        self._zstd = zstandard.ZstdDecompressor()

    def read(self, info: zipfile.ZipInfo) -> bytes | None:
        if info.compress_type not in (_ZSTD, _DEFLATE) or info.flag_bits & _UNREAD_FLAGS:
            return None
        handle = self._handle
        handle.seek(info.header_offset)
        header = handle.read(_LOCAL_HEADER.size)
        if len(header) != _LOCAL_HEADER.size:
            return None
        signature, _, flags, method, *_, name_length, extra_length = _LOCAL_HEADER.unpack(header)
        if signature != b"PK\x03\x04" or method != info.compress_type or flags & _UNREAD_FLAGS:
            return None
        if handle.read(name_length) != info.orig_filename.encode(
            "utf-8" if info.flag_bits & 0x800 else "cp437"
        ):
            return None
        handle.seek(extra_length, 1)
        packed = handle.read(info.compress_size)
        try:
            if method == _ZSTD:
                raw = self._zstd.decompress(packed, max_output_size=info.file_size)
            else:
                raw = zlib.decompress(packed, -zlib.MAX_WBITS)
        except (zstandard.ZstdError, zlib.error):
            return None
        if len(raw) != info.file_size or zlib.crc32(raw) != info.CRC:
            return None
        return raw


def _sample_infos(archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    return [
        info
        for info in archive.infolist()
        if info.filename.startswith("samples/") and info.filename.endswith(".json")
    ]


def _entry_bytes(handle: IO[bytes], infos: list[zipfile.ZipInfo]) -> Iterator[bytes]:
    """The bytes of the entries `infos` of the archive open in `handle`, checked."""
    reader, archive = _EntryReader(handle), None
    try:
        for info in infos:
            raw = reader.read(info)
            if raw is None:
                archive = archive or zipfile.ZipFile(handle)
                raw = archive.read(info)
            yield raw
    finally:
        if archive is not None:
            archive.close()  # the handle stays open: it is the caller's


def sample_entries(handle: IO[bytes]) -> Iterator[bytes]:
    """The JSON of every sample entry of the ``.eval`` archive open in `handle`, in order.

    Raises:
        zipfile.BadZipFile: not a zip, or an entry is corrupt (its CRC or size is wrong).
    """
    with zipfile.ZipFile(handle) as archive:
        infos = _sample_infos(archive)
    yield from _entry_bytes(handle, infos)


def _eval_samples(handle: IO[bytes]) -> Iterator[Any]:
    for raw in sample_entries(handle):
        yield _sample(raw)


def _scorer_named(sample: Any, name: Any) -> Any:
    """`sample` with an older log's single ``score`` named by the eval's first scorer.

    inspect's `EvalLog` model does so for the samples of a ``.json`` log (its
    ``populate_scorer_name_for_samples``); an ``.eval`` log's samples are read apart from the
    log and keep the placeholder `EvalSample` gave them.
    """
    scores = sample.scores
    if name is not None and scores and SCORER_PLACEHOLDER in scores:
        scores[name] = scores[SCORER_PLACEHOLDER]
        del scores[SCORER_PLACEHOLDER]
    return sample


def _first_scorer(document: dict[str, Any]) -> Any:
    results = document.get("results")
    scores = results.get("scores") if isinstance(results, dict) else None
    first = scores[0] if isinstance(scores, list) and scores else None
    return first.get("name") if isinstance(first, dict) else None


def _json_samples(raw: bytes) -> Iterator[Any]:
    try:
        log = _LOG.decode(raw)
        samples = [_fields(sample) for sample in log.samples or []]
        scores = log.results.scores if log.results is not None else None
        first = scores[0].name if scores else None
    except msgspec.DecodeError:
        document = json.loads(raw)
        samples = [_from_document(sample) for sample in document.get("samples") or []]
        first = _first_scorer(document)
    for fields in samples:
        yield _scorer_named(_validated(fields), first)


def read_log_samples(location: str) -> Iterator[Any]:
    """Every sample of the inspect log at `location` (a path or fsspec URL), lean.

    Each is a `LeanSample`: the `EvalSample` fields ingest reads, validated as inspect does.

    Raises:
        ValueError, zipfile.BadZipFile, msgspec or pydantic errors: the file is not an
            inspect log; the caller names the file.
    """
    import fsspec

    with fsspec.open(location, "rb") as handle:
        if location.endswith(".eval"):
            yield from _eval_samples(handle)
        else:
            yield from _json_samples(handle.read())


class LogReaderDied(RuntimeError):
    """The second process reading a log ended without a word (killed, out of memory)."""


_IDLE_THREADS = ("AnyIO worker thread",)
"""Threads that may be alive at a fork: anyio's workers, which inspect's log reader leaves
idle after reading the header (`ingest_inspect`); they hold no lock the forked reader takes
(the queue they wait on is anyio's), so the child cannot deadlock on one."""


def _forkable() -> bool:
    """Whether the second reader can be forked: no thread alive but idle anyio workers."""
    return forkable(_IDLE_THREADS)


def _chunks(infos: list[zipfile.ZipInfo], size: int) -> list[list[zipfile.ZipInfo]]:
    return [infos[start : start + size] for start in range(0, len(infos), size)]


def _convert_chunks(
    location: str, chunks: list[list[zipfile.ZipInfo]], convert: Callable[[list[Any]], T]
) -> Iterator[T]:
    import fsspec

    with fsspec.open(location, "rb") as handle:
        for chunk in chunks:
            yield convert([_sample(raw) for raw in _entry_bytes(handle, chunk)])


def _second_process(
    conn: Connection,
    location: str,
    chunks: list[list[zipfile.ZipInfo]],
    convert: Callable[[list[Any]], Any],
) -> None:
    """Send `convert` of each chunk, then stop; or the text of the first error, and stop."""
    import pickle
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the first process stops this one
    try:
        for converted in _convert_chunks(location, chunks, convert):
            conn.send_bytes(pickle.dumps((True, converted), protocol=pickle.HIGHEST_PROTOCOL))
    except Exception as exc:
        conn.send_bytes(pickle.dumps((False, str(exc))))
    finally:
        conn.close()


class _SecondProcessError(Exception):
    """An error of the second process, with the text the first would have given it."""


class LogBatches(Generic[T]):
    """`convert` of every `size` samples of an inspect log, in the log's order.

    With ``processes=2`` and an ``.eval`` log of more than one batch, every other batch is
    read, validated and converted by a second, forked process (its result pickled back), so
    two cores read the log: the batches still come in the log's order, and at most one is
    waiting in the pipe, so memory stays bounded by a batch (and the archive's directory,
    which `zipfile` reads whole: about 620 bytes per entry). An error is raised where the
    one-process reader raises it (the first bad sample in the log's order), with its text.
    Use as a context manager: leaving it stops the second process.
    """

    def __init__(
        self,
        location: str,
        convert: Callable[[list[Any]], T],
        *,
        size: int,
        processes: int = 1,
    ) -> None:
        self._location, self._convert, self._size = location, convert, size
        self._processes = processes
        self._process: Any = None
        self._conn: Connection | None = None

    def __enter__(self) -> LogBatches[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the second process, if any."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._process is not None:
            if self._process.is_alive():
                self._process.kill()
            self._process.join()
            self._process = None

    def __iter__(self) -> Iterator[T]:
        import fsspec

        location, convert, size = self._location, self._convert, self._size
        if not location.endswith(".eval"):
            batch: list[Any] = []
            for sample in read_log_samples(location):
                batch.append(sample)
                if len(batch) == size:
                    yield convert(batch)
                    batch = []
            if batch:
                yield convert(batch)
            return
        with fsspec.open(location, "rb") as handle, zipfile.ZipFile(handle) as archive:
            infos = _sample_infos(archive)
        chunks = _chunks(infos, size)
        if self._processes < 2 or len(chunks) < 2 or not _forkable():
            yield from _convert_chunks(location, chunks, convert)
            return
        self._start(chunks[1::2])
        mine = _convert_chunks(location, chunks[0::2], convert)
        for number in range(len(chunks)):
            yield next(mine) if number % 2 == 0 else self._receive()

    def _start(self, chunks: list[list[zipfile.ZipInfo]]) -> None:
        import multiprocessing
        import warnings

        context = multiprocessing.get_context("fork")
        receive, send = context.Pipe(duplex=False)
        process = context.Process(
            target=_second_process,
            args=(send, self._location, chunks, self._convert),
            daemon=True,
        )
        with warnings.catch_warnings():
            # Python 3.12 warns of any fork beside another thread; `_forkable` allowed only
            # idle anyio workers
            warnings.simplefilter("ignore", DeprecationWarning)
            process.start()
        send.close()
        self._process, self._conn = process, receive

    def _receive(self) -> T:
        import pickle

        assert self._conn is not None  # noqa: S101 (set by _start)
        try:
            ok, value = pickle.loads(self._conn.recv_bytes())
        except EOFError:
            self._process.join()
            raise LogReaderDied(
                f"the second process reading {self._location} ended unexpectedly (exit code "
                f"{self._process.exitcode}); set EVALSUITE_INGEST_PROCESSES=1 to read the log "
                "in one process"
            ) from None
        if not ok:
            raise _SecondProcessError(value)
        return value  # type: ignore[no-any-return]
