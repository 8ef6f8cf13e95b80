"""Canonical JSON and content hashes: one serialisation feeds every hash in evalsuite."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

from evalsuite.errors import UsageError

__all__ = ["canonical_json", "content_hash", "sha256_bytes", "sha256_file"]


def _reject_nan(obj: Any, where: str = "$") -> None:
    if isinstance(obj, float) and not math.isfinite(obj):
        raise UsageError(
            f"value at {where} is {obj!r}; canonical JSON allows only finite numbers. "
            "Replace NaN/Infinity with null or a string."
        )
    if isinstance(obj, dict):
        for key, value in obj.items():
            _reject_nan(value, f"{where}.{key}")
    elif isinstance(obj, list | tuple):
        for i, value in enumerate(obj):
            _reject_nan(value, f"{where}[{i}]")


def canonical_json(obj: Any) -> str:
    """Serialise `obj` the one way evalsuite hashes it.

    Sorted keys, no insignificant white space, UTF-8 (non-ASCII kept as is), and no NaN or
    Infinity (they raise `UsageError` naming the path of the offending value).

    Examples:
        >>> canonical_json({"b": 1, "a": [1.5, "é"]})
        '{"a":[1.5,"é"],"b":1}'
    """
    try:  # the encoder refuses NaN and Infinity itself, at C speed; only then walk the value
        return json.dumps(
            obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    except ValueError:
        _reject_nan(obj)  # names the offending value's path
    # not a NaN value (e.g. a NaN dict key, which JSON writes as a string): as before
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_bytes(data: bytes) -> str:
    """Return ``"sha256:<hex>"`` of `data`."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def content_hash(obj: Any) -> str:
    """Return ``"sha256:<hex>"`` of the canonical JSON of `obj`."""
    return sha256_bytes(canonical_json(obj).encode("utf-8"))


def sha256_file(path: Path) -> str:
    """Return ``"sha256:<hex>"`` of a file's bytes, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return "sha256:" + digest.hexdigest()
