"""Items become inspect Samples: one conversion, used by the runner and standalone tasks.

Files and the setup script reach inspect as base64 ``data:`` URIs of the item's frozen
content. inspect reads any other `Sample.files` or `setup` value as a path (or URL) when one
exists by that name, which would put a host file, not hashed and outside the vault, into the
sandbox (docs/design/item-files.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessage
from pydantic import TypeAdapter, ValidationError

from evalsuite._core.validation import describe_validation_error
from evalsuite.errors import ItemSourceError
from evalsuite.manifest import Item, file_data_uri, read_item_source

__all__ = ["item_to_sample", "standalone_samples"]

_MESSAGES: TypeAdapter[list[ChatMessage]] = TypeAdapter(list[ChatMessage])


def item_to_sample(
    payload: Mapping[str, Any],
    *,
    sample_id: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Sample:
    """An inspect `Sample` from an item payload (``id``, ``input``, ``target``, ...).

    Args:
        payload: The item record (as frozen).
        sample_id: Sample id to use (default: the item id).
        extra: Metadata added beside the item's own (e.g. the runner's episode spec).

    Raises:
        ItemSourceError: ``files`` has an unsafe key (absolute, ``..``, ...) or a
            value that is not frozen content (e.g. an unresolved ``{"path"}`` reference).
    """
    metadata = dict(payload.get("metadata") or {})
    metadata["item_id"] = payload["id"]
    if extra:
        metadata.update(extra)
    files = payload.get("files")
    if files:
        try:
            checked = Item.model_validate(
                {"id": str(payload["id"]), "input": "", "target": "", "files": files}
            ).files
        except ValidationError as exc:
            raise ItemSourceError(
                f"item {payload['id']!r}: " + "; ".join(describe_validation_error(exc))
            ) from None
        files = {key: file_data_uri(value) for key, value in (checked or {}).items()}
    setup = payload.get("setup")
    sandbox = payload.get("sandbox")
    raw_input = payload["input"]
    return Sample(
        id=sample_id or str(payload["id"]),
        input=raw_input if isinstance(raw_input, str) else _MESSAGES.validate_python(raw_input),
        target=payload["target"],
        choices=payload.get("choices"),
        metadata=metadata,
        files=files or None,
        setup=file_data_uri(setup) if setup else None,
        sandbox=_sandbox(sandbox),
    )


def _sandbox(spec: Mapping[str, Any] | None) -> str | tuple[str, str] | None:
    """A frozen per-item sandbox (``{"type", "config"}``) in inspect's form."""
    if not spec:
        return None
    config = spec.get("config")
    return (str(spec["type"]), str(config)) if config else str(spec["type"])


def standalone_samples(path: Path) -> list[Sample]:
    """Samples of the dev items in an item source, for ``inspect eval`` outside evalsuite.

    The items are read as `evalsuite freeze` reads them: validated, with ``{"path"}`` file
    references read from beside `path`.
    """
    return [item_to_sample(item.payload()) for item in read_item_source(path)]
