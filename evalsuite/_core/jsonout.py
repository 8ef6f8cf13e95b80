"""JSON output for people and tools: NaN and infinities become null (JSON has no NaN).

`dumps_json` writes exactly what ``json.dumps(jsonable(value), indent=indent,
default=str, allow_nan=False)`` writes, byte for byte, but encodes tables (lists of dicts
with the same keys, such as a report's 100,000 item rows) one column at a time with the
standard library's C encoder instead of value by value with its pure-Python indenting
encoder (docs/design/analysis-scale.md, "Writing report.json").
"""

from __future__ import annotations

import json
import math
from typing import Any, TypeAlias

__all__ = ["JsonObject", "dumps_json", "jsonable"]

JsonObject: TypeAlias = dict[str, object]
"""A JSON object as a result's ``to_dict()`` writes it for ``--json`` and report.json.

It is an output format, never a payload between layers: layers pass typed results (frozen
dataclasses) and read their attributes; only a renderer or a file writer sees a JsonObject
(docs/architecture.md, "Results between layers").
"""

_PLAIN = frozenset({str, int, float, bool, type(None)})
"""Types the C encoder writes exactly as the indenting encoder does (subclasses excepted)."""
_COLUMN = json.JSONEncoder(separators=("\n", ":"), allow_nan=False)
"""Encodes a list of plain values one per line: every encoded value is ASCII without a raw
line break (``ensure_ascii`` escapes control characters), so the lines are the values."""
_string = json.encoder.encode_basestring_ascii


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
    if indent is None:  # the C encoder already
        return json.dumps(jsonable(value), indent=None, default=str, allow_nan=False)
    return _encode(value, 0, " " * indent)


def _encode(value: Any, level: int, step: str) -> str:
    """One value as the indenting encoder writes it at nesting `level`."""
    if isinstance(value, dict):
        if not value:
            return "{}"
        inner, outer = "\n" + step * (level + 1), "\n" + step * level
        return (
            "{"
            + inner
            + ("," + inner).join(
                _string(str(k)) + ": " + _encode(v, level + 1, step) for k, v in value.items()
            )
            + outer
            + "}"
        )
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        inner, outer = "\n" + step * (level + 1), "\n" + step * level
        return "[" + inner + ("," + inner).join(_column(value, level + 1, step)) + outer + "]"
    if isinstance(value, str):
        return str(_string(value))
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return float.__repr__(value) if math.isfinite(value) else "null"
    return str(_string(str(value)))  # default=str: the text, as a JSON string


def _column(values: list[Any] | tuple[Any, ...], level: int, step: str) -> list[str]:
    """Each of `values` encoded at `level`.

    Plain values by one C-encoder call, a table's rows column by column, anything else
    value by value.
    """
    types = set(map(type, values))
    if types <= _PLAIN:
        try:
            text = _COLUMN.encode(list(values))
        except ValueError:  # a NaN or an infinity: null, as `jsonable` makes it
            text = _COLUMN.encode(
                [None if type(v) is float and not math.isfinite(v) else v for v in values]
            )
        return text[1:-1].split("\n")
    if types == {dict}:
        keys = list(values[0])
        if keys and all(type(k) is str for k in keys) and all(list(v) == keys for v in values):
            return _table(values, keys, level, step)
    return [_encode(v, level, step) for v in values]


def _table(rows: list[Any] | tuple[Any, ...], keys: list[str], level: int, step: str) -> list[str]:
    """Dicts with the same keys (in the same order) encoded at `level`, a column at a time."""
    inner, outer = "\n" + step * (level + 1), "\n" + step * level
    columns = [_column([row[k] for row in rows], level + 1, step) for k in keys]
    heads = ["{" + inner + _string(keys[0]) + ": "]
    heads += ["," + inner + _string(k) + ": " for k in keys[1:]]
    template = "%s".join(h.replace("%", "%%") for h in heads) + "%s" + outer + "}"
    return [template % cells for cells in zip(*columns, strict=True)]
