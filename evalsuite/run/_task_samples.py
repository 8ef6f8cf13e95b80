"""A task's own samples become frozen item records (`freeze` of a family without an item source).

Every field of an inspect `Sample` that can move a score is kept as content
(docs/design/foreign-tasks.md): id, input (text or chat messages), target, choices, metadata,
files and setup (read into the item; never a host path: docs/design/item-files.md) and a
per-sample sandbox. A sample that cannot be frozen is refused naming the task, the sample and
the field.
"""

from __future__ import annotations

import base64
import json
import math
import mimetypes
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessage
from pydantic import BaseModel

from evalsuite._core.layout import Layout
from evalsuite.errors import ItemSourceError
from evalsuite.manifest import BINARY_ENCODING, SuiteConfig, freeze_sample_value
from evalsuite.run._tasks import load_task_function, task_dataset_samples, task_source_dir

__all__ = ["sample_records", "suite_task_records"]

_MEDIA = ("image", "audio", "video", "document")
_MESSAGE_EXCLUDE = {"id"}
"""Message fields left out: inspect gives every message a random id."""


def _json_problem(value: Any, where: str) -> str | None:
    if value is None or isinstance(value, bool | int | str):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{where} is {value} (not finite)"
    if isinstance(value, list | tuple):
        return next(
            (p for i, v in enumerate(value) if (p := _json_problem(v, f"{where}[{i}]"))), None
        )
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{where} has a key that is not a string ({key!r})"
            problem = _json_problem(item, f"{where}[{key!r}]")
            if problem:
                return problem
        return None
    return f"{where} is a {type(value).__name__}, which is not JSON"


def _media_value(value: str, bases: Sequence[Path]) -> str:
    """A message's image/audio/video/document reference as a data: URI of its bytes."""
    if value.startswith("data:"):
        return value
    frozen = freeze_sample_value(value, bases)
    if frozen == value and not any((b / value).is_file() for b in bases):
        raise ValueError("is neither a data: URI nor an existing file")
    data = (
        base64.b64decode(frozen["content"]) if isinstance(frozen, dict) else frozen.encode("utf-8")
    )
    mime = mimetypes.guess_type(value)[0] or "application/octet-stream"
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def _message(message: ChatMessage, bases: Sequence[Path]) -> dict[str, Any]:
    record: dict[str, Any] = message.model_dump(
        mode="json", exclude_none=True, exclude=_MESSAGE_EXCLUDE
    )
    content = record.get("content")
    if isinstance(content, list):
        for number, part in enumerate(content):
            for key in _MEDIA:
                if part.get("type") == key and isinstance(part.get(key), str):
                    try:
                        part[key] = _media_value(part[key], bases)
                    except ValueError as exc:
                        raise ValueError(f"content[{number}].{key} {exc}") from None
    return record


def _input(sample: Sample, bases: Sequence[Path]) -> str | list[dict[str, Any]]:
    if isinstance(sample.input, str):
        return sample.input
    messages = []
    for number, message in enumerate(sample.input):
        try:
            messages.append(_message(message, bases))
        except ValueError as exc:
            raise ValueError(f"input[{number}] {exc}") from None
    return messages


def _files(sample: Sample, bases: Sequence[Path]) -> dict[str, Any] | None:
    if not sample.files:
        return None
    frozen: dict[str, Any] = {}
    for key, value in sample.files.items():
        try:
            frozen[key] = freeze_sample_value(value, bases)
        except ValueError as exc:
            raise ValueError(f"files[{key!r}] {exc}") from None
    return frozen


def _setup(sample: Sample, bases: Sequence[Path]) -> str | None:
    if sample.setup is None:
        return None
    try:
        value = freeze_sample_value(sample.setup, bases)
    except ValueError as exc:
        raise ValueError(f"setup {exc}") from None
    if isinstance(value, dict) and value.get("encoding") == BINARY_ENCODING:
        raise ValueError("setup is a file that is not UTF-8 text; a setup script is text")
    return value if isinstance(value, str) else None


def _sandbox(sample: Sample, bases: Sequence[Path]) -> dict[str, Any] | None:
    spec = sample.sandbox
    if spec is None:
        return None
    config = spec.config
    if isinstance(config, BaseModel):
        raise ValueError(
            f"sandbox config is a {type(config).__name__} object; evalsuite freezes a per-sample "
            "sandbox as a type and inline text only (or give the sandbox at task level)"
        )
    if isinstance(config, str) and any(
        (Path(config) if Path(config).is_absolute() else b / config).is_file() for b in bases
    ):
        raise ValueError(
            f"sandbox config names the host file {config!r}, whose content would not be frozen "
            "with the item; give the sandbox at task level (the task's own sandbox is kept as "
            "it is)"
        )
    return {"type": spec.type, "config": config}


def _record(sample: Sample, bases: Sequence[Path]) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": str(sample.id),
        "input": _input(sample, bases),
        "target": sample.target if isinstance(sample.target, str) else list(sample.target),
        "metadata": dict(sample.metadata or {}),
    }
    problem = _json_problem(record["metadata"], "metadata")
    if problem:
        raise ValueError(problem)
    for key, value in (
        ("choices", list(sample.choices) if sample.choices is not None else None),
        ("files", _files(sample, bases)),
        ("setup", _setup(sample, bases)),
        ("sandbox", _sandbox(sample, bases)),
    ):
        if value is not None:
            record[key] = value
    json.dumps(record, allow_nan=False)
    return record


def sample_records(
    samples: Sequence[Sample], *, task: str, bases: Sequence[Path]
) -> list[tuple[str, dict[str, Any]]]:
    """(location, item record) for every sample of a task's dataset, in dataset order.

    Args:
        samples: The task's dataset.
        task: The task reference (for messages).
        bases: Directories a relative file name is looked up in (where inspect would find
            it: the working directory, and the task's own directory).

    Raises:
        ItemSourceError: a sample has no id, an id repeats, or a field cannot be frozen
            (a URL, a file that does not exist, metadata that is not JSON, ...).
    """
    records = []
    seen: dict[str, int] = {}
    for number, sample in enumerate(samples, start=1):
        if sample.id is None:
            raise ItemSourceError(
                f"task {task!r}: sample #{number} has no id; a frozen item needs a stable id. "
                "Give the task's dataset ids (e.g. auto_id=True in inspect's dataset readers, "
                "or an id field)"
            )
        ident = str(sample.id)
        location = f"task {task!r} sample {ident!r}"
        if ident in seen:
            raise ItemSourceError(
                f"{location}: the id repeats (also sample #{seen[ident]}); ids must be unique "
                "after conversion to text (1 and '1' clash)"
            )
        seen[ident] = number
        try:
            records.append((location, _record(sample, bases)))
        except ValueError as exc:
            raise ItemSourceError(f"{location}: {exc}; it cannot be frozen") from None
    return records


def suite_task_records(
    layout: Layout, suite: SuiteConfig
) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """The item records of every family of `suite` that has no item source (for `freeze`).

    Each such family's task is built once with its ``task_args`` and its own dataset is
    converted (`sample_records`); relative file names are looked up in the working directory
    and the task's own directory.

    Raises:
        UsageError: a task cannot be found or built, or its dataset cannot be read.
        ItemSourceError: a sample cannot be frozen.
    """
    records: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for family in suite.families:
        if family.items is not None:
            continue
        samples = task_dataset_samples(layout, suite.name, family)
        function = load_task_function(layout, suite.name, family)
        bases = [Path.cwd()]
        source = task_source_dir(function)
        if source is not None:
            bases.append(source)
        records[family.name] = sample_records(samples, task=family.task, bases=bases)
    return records
