"""The transcripts of a stored run: which inspect logs hold them, and one sample's transcript.

A run that `evalsuite run` made wrote its JSON logs into ``spec["log_dir"]`` (``--log-dir``)
or ``.evalsuite/logs/<run_id>/``; a sample belongs to the run when its episode token (sample
metadata ``evalsuite.token``) starts with the run id, so a log directory shared by several
runs is read correctly. A run ingested from an inspect log (``ingest --format inspect``)
records the log in ``spec["log"]``, and every sample of it belongs to the run. Where a resumed
run wrote several logs, the newest log's sample of an (item, epoch) wins, as in the store.

Logs are read without inspect: a ``.json`` log with the standard library, an ``.eval`` log
(a zip of ``samples/*.json``) with `zipfile` (zstd entries through ``zipfile_zstd``, an
inspect-ai dependency). Only local paths (and ``file://`` URLs) are read.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

__all__ = [
    "LogSource",
    "Transcript",
    "log_source",
    "read_transcripts",
    "transcript_of",
]

EPISODE_KEY = "evalsuite"
"""The sample metadata key of the runner's episode spec (`evalsuite.run._episode`)."""

_TEXT_LIMIT = 20_000
"""Characters of one tool result or message kept in a transcript (the rest is marked cut)."""


@dataclass(frozen=True, slots=True)
class LogSource:
    """Where a run's logs are, and how to tell its samples from another run's."""

    paths: tuple[Path, ...]
    """The log files, oldest first (inspect names them by start time)."""
    token_prefix: str | None
    """Samples belong to the run when their episode token starts with this; None: all do."""
    where: str
    """The directory or file the logs were looked for in (for messages)."""

    def signature(self) -> str:
        """A fingerprint of the logs' paths, sizes and modification times (cache key)."""
        parts = []
        for path in self.paths:
            try:
                stat = path.stat()
            except OSError:
                continue
            parts.append(f"{path}|{stat.st_size}|{stat.st_mtime_ns}")
        return "\n".join(parts)


def _local(location: str) -> Path | None:
    if location.startswith("file://"):
        return Path(unquote(location.removeprefix("file://")))
    if "://" in location:
        return None
    return Path(location)


def _logs_under(path: Path) -> tuple[Path, ...]:
    if path.is_file():
        return (path,)
    if not path.is_dir():
        return ()
    found = [p for p in path.rglob("*") if p.suffix in (".json", ".eval") and p.is_file()]
    return tuple(sorted(found, key=lambda p: (p.name, str(p))))


def log_source(run_id: str, spec: Mapping[str, Any], state_dir: Path) -> LogSource:
    """The logs of run `run_id`, from its stored spec (see the module docstring).

    A URL other than ``file://`` (``s3://``, ``memory://``) gives no paths: its transcripts
    are not read.
    """
    ingested = spec.get("log")
    if isinstance(ingested, str):
        local = _local(ingested)
        paths = _logs_under(local) if local is not None else ()
        return LogSource(paths=paths, token_prefix=None, where=ingested)
    log_dir = spec.get("log_dir")
    where = log_dir if isinstance(log_dir, str) else str(state_dir / "logs" / run_id)
    local = _local(where)
    paths = _logs_under(local) if local is not None else ()
    return LogSource(paths=paths, token_prefix=f"{run_id}::", where=where)


def _json_samples(path: Path) -> Iterator[dict[str, Any]]:
    document = json.loads(path.read_bytes())
    samples = document.get("samples") if isinstance(document, dict) else None
    for sample in samples or []:
        if isinstance(sample, dict):
            yield sample


def _eval_samples(path: Path) -> Iterator[dict[str, Any]]:
    import zipfile_zstd  # noqa: F401 (registers zstd for zipfile; an inspect-ai dependency)

    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            if name.startswith("samples/") and name.endswith(".json"):
                sample = json.loads(archive.read(name))
                if isinstance(sample, dict):
                    yield sample


def _samples(path: Path) -> Iterator[dict[str, Any]]:
    if path.suffix == ".eval":
        yield from _eval_samples(path)
    else:
        yield from _json_samples(path)


def _key(sample: Mapping[str, Any]) -> tuple[str, int, str | None]:
    spec = (sample.get("metadata") or {}).get(EPISODE_KEY)
    if isinstance(spec, dict) and "item_id" in spec:
        token = spec.get("token")
        return str(spec["item_id"]), int(spec.get("epoch", 1)), str(token) if token else None
    return str(sample.get("id")), int(sample.get("epoch") or 1), None


def _text(content: Any) -> str:
    """The text of a message's content (a string, or a list of content parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict):
                if part.get("type") == "text":
                    parts.append(str(part.get("text", "")))
                elif part.get("type") == "reasoning":
                    parts.append(str(part.get("reasoning", "")))
                else:
                    parts.append(f"[{part.get('type', 'content')}]")
            else:
                parts.append(str(part))
        return "\n".join(parts)
    return "" if content is None else str(content)


def _cut(text: str) -> str:
    if len(text) <= _TEXT_LIMIT:
        return text
    return text[:_TEXT_LIMIT] + f"\n[... {len(text) - _TEXT_LIMIT} more characters not shown]"


@dataclass(frozen=True, slots=True)
class Transcript:
    """One attempt's transcript as the app shows it, and its searchable text."""

    item_id: str
    epoch: int
    messages: list[dict[str, Any]]
    """Each: role, text, and for an assistant its tool calls (function, arguments), for a
    tool result its function and error."""
    final: dict[str, Any]
    """The final state: the last completion, the stop reason, the sample's store."""
    grader: list[dict[str, Any]]
    """Each scorer's value, answer, explanation and metadata."""
    limit: str | None
    error: str | None

    def search_text(self) -> tuple[str, str, str]:
        """(messages, tool calls, tool results) as text, for the full-text index."""
        said, calls, results = [], [], []
        for message in self.messages:
            if message["role"] == "tool":
                results.append(message["text"])
                if message.get("error"):
                    results.append(str(message["error"]))
            else:
                said.append(message["text"])
            for call in message.get("tool_calls", []):
                calls.append(f"{call['function']} {json.dumps(call['arguments'], sort_keys=True)}")
        said.append(str(self.final.get("completion", "")))
        said.extend(str(g.get("explanation") or "") for g in self.grader)
        return "\n".join(said), "\n".join(calls), "\n".join(results)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "item_id": self.item_id,
            "epoch": self.epoch,
            "messages": self.messages,
            "final": self.final,
            "grader": self.grader,
            "limit": self.limit,
            "error": self.error,
        }


def _message(raw: Mapping[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": str(raw.get("role", "")),
        "text": _cut(_text(raw.get("content"))),
    }
    calls = raw.get("tool_calls") or []
    if calls:
        message["tool_calls"] = [
            {
                "id": str(call.get("id", "")),
                "function": str(call.get("function", "")),
                "arguments": call.get("arguments") if isinstance(call, dict) else {},
            }
            for call in calls
            if isinstance(call, dict)
        ]
    if message["role"] == "tool":
        message["function"] = str(raw.get("function") or "")
        error = raw.get("error")
        if isinstance(error, dict):
            message["error"] = f"{error.get('type', 'error')}: {error.get('message', '')}"
        elif error:
            message["error"] = str(error)
    return message


def transcript_of(sample: Mapping[str, Any]) -> Transcript:
    """The transcript of one inspect sample (a log's sample as a JSON mapping)."""
    item_id, epoch, _ = _key(sample)
    messages = [_message(m) for m in sample.get("messages") or [] if isinstance(m, dict)]
    output = sample.get("output") or {}
    choices = output.get("choices") or [{}]
    final = {
        "completion": _cut(str(output.get("completion") or "")),
        "stop_reason": (choices[0] or {}).get("stop_reason") if choices else None,
        "store": sample.get("store") or {},
    }
    grader = []
    for name, score in (sample.get("scores") or {}).items():
        if isinstance(score, dict):
            grader.append(
                {
                    "scorer": name,
                    "value": score.get("value"),
                    "answer": score.get("answer"),
                    "explanation": score.get("explanation"),
                    "metadata": score.get("metadata") or {},
                }
            )
    limit = sample.get("limit")
    limit_text = None
    if isinstance(limit, dict):
        limit_text = f"{limit.get('type', 'limit')} limit ({limit.get('limit')})"
    error = sample.get("error")
    error_text = None
    if isinstance(error, dict):
        error_text = str(error.get("message") or error)
    return Transcript(
        item_id=item_id,
        epoch=epoch,
        messages=messages,
        final=final,
        grader=grader,
        limit=limit_text,
        error=error_text,
    )


def read_transcripts(source: LogSource) -> dict[tuple[str, int], Transcript]:
    """Every transcript of the run, by (item id, epoch); the newest log's wins.

    Raises:
        ValueError: a log is not a readable inspect log (named in the message).
    """
    found: dict[tuple[str, int], Transcript] = {}
    for path in source.paths:
        try:
            for sample in _samples(path):
                item_id, epoch, token = _key(sample)
                if source.token_prefix is not None and not (token or "").startswith(
                    source.token_prefix
                ):
                    continue
                found[(item_id, epoch)] = transcript_of(sample)
        except (OSError, ValueError, zipfile.BadZipFile, KeyError, TypeError) as exc:
            raise ValueError(
                f"{path}: not a readable inspect log ({exc}); move it out of {source.where} "
                "or restore it"
            ) from None
    return found
