"""Read the samples of an inspect log for ingest: only the fields an attempt row needs.

inspect's own readers validate every sample whole (its transcript of events and messages,
most of a log's bytes) or, asked to leave fields out, stream the JSON token by token in
Python; either costs about 20 ms of CPU per sample of an agent run (docs/scale.md, "Ingest").
Here each sample entry is decoded by msgspec into the few fields `_outcomes.classify_sample`
and the attempt row read (id, epoch, scores, error, limit, retries, token usage, time, and of
the metadata and the store only the keys read: evalsuite's episode spec, a stratum, a tool
time limit): the rest of the document is scanned, never built. The subset is then
validated by inspect's own `EvalSample` model (its migrations of older log formats
included), so a sample read here is the sample inspect would return, minus the fields
left out. A document msgspec cannot decode (``NaN`` or ``Infinity``, which inspect writes
for non-finite floats, or an integer beyond 64 bits) is parsed by the standard library
instead.

An ``.eval`` log is a zip with one entry per sample (``samples/<id>_epoch_<n>.json``, read
in the order of the archive: every sample it holds, whether or not the eval finished); a
``.json`` log is one document. Both are opened through fsspec, so any URL inspect can
write to can be ingested.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import msgspec

from evalsuite.run._episode import EPISODE_KEY, TOOL_LIMIT_KEY

if TYPE_CHECKING:
    from inspect_ai.log import EvalSample

__all__ = ["SAMPLE_FIELDS", "read_log_samples"]

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


class _Log(msgspec.Struct):
    samples: list[_Sample] | None = None


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


def _validated(fields: dict[str, Any]) -> EvalSample:
    from inspect_ai.log import EvalSample

    # input and target are required by the model and never read by ingest: the item text
    # (holdout plaintext for a holdout run) is not even decoded
    return EvalSample.model_validate({"input": "", "target": "", **fields})


def _sample(raw: bytes) -> EvalSample:
    try:
        fields = _fields(_SAMPLE.decode(raw))
    except msgspec.DecodeError:
        fields = _from_document(json.loads(raw))
    return _validated(fields)


def _eval_samples(handle: Any) -> Iterator[EvalSample]:
    import zipfile_zstd  # noqa: F401 (an inspect-ai dependency: zipfile reads zstd entries)

    with zipfile.ZipFile(handle) as archive:
        for info in archive.infolist():
            if info.filename.startswith("samples/") and info.filename.endswith(".json"):
                yield _sample(archive.read(info))


def _json_samples(raw: bytes) -> Iterator[EvalSample]:
    try:
        decoded = _LOG.decode(raw).samples or []
        samples = [_fields(sample) for sample in decoded]
    except msgspec.DecodeError:
        document = json.loads(raw)
        samples = [_from_document(sample) for sample in document.get("samples") or []]
    for fields in samples:
        yield _validated(fields)


def read_log_samples(location: str) -> Iterator[EvalSample]:
    """Every sample of the inspect log at `location` (a path or fsspec URL), lean.

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
