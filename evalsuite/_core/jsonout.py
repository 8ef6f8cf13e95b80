"""JSON output for people and tools: NaN and infinities become null (JSON has no NaN)."""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["dumps_json", "jsonable"]


def jsonable(value: Any) -> Any:
    """`value` with non-finite floats replaced by None, recursively."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def dumps_json(value: Any, *, indent: int | None = 2) -> str:
    """Serialise `value` (NaN -> null; other objects by `str`)."""
    return json.dumps(jsonable(value), indent=indent, default=str, allow_nan=False)
