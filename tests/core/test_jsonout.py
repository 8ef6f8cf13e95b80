"""`dumps_json` writes what the standard library's indenting encoder writes, byte for byte.

The oracle is ``json.dumps(jsonable(value), indent=..., default=str, allow_nan=False)``,
the writer it replaced (docs/design/analysis-scale.md, "Writing report.json").
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evalsuite._core.jsonout import dumps_json, jsonable


def reference(value: Any, indent: int | None) -> str:
    return json.dumps(jsonable(value), indent=indent, default=str, allow_nan=False)


TEXTS = ["plain", 'quote " and \\', "line\nbreak\ttab\x00nul", "é ü 漢字 😀", "%s %% {0}", ""]


def rows(n: int, seed: int) -> list[dict[str, Any]]:
    """A report-like table: every column kind, NaN and infinities, nested dicts and lists."""
    rng = np.random.default_rng(seed)
    out: list[dict[str, Any]] = []
    for i in range(n):
        score = float(rng.random())
        out.append(
            {
                "item_id": TEXTS[i % len(TEXTS)] + str(i),
                "stratum": None if i % 4 == 0 else f"s{i % 3}",
                "difficulty": [score, math.nan, math.inf, -math.inf, -0.0, 1e-7, 1e300][i % 7],
                "epochs": i,
                "flag": bool(i % 2),
                "means": {"run-a": score, "run %b": [math.nan, 0.5][i % 2]},
                "ci": (score, score + 1),
                "empty": {} if i % 2 else [],
            }
        )
    return out


VALUES: list[Any] = [
    {"items": rows(50, 1), "runs": [{"x": 1}], "n": 3},
    rows(1, 2),
    [{"a": 1, "b": 2}, {"b": 2, "a": 1}],  # the same keys in another order: not one table
    [{"a": 1}, {"a": 2, "b": 3}, {}],
    [{1: "int key", None: "none key", False: "bool key", 2.5: "float key"}] * 3,
    [{"nested": rows(3, s)} for s in range(4)],  # tables inside a table
    [np.float64(math.nan), np.float64(0.1), np.int64(7), np.float32(0.5), Path("a/b")] * 2,
    [True, 1, 1.0, None, "1", False, 0],
    (1, (2, 3), [], {}),
    {"deep": [[[{"k": [math.nan, 1]}]]]},
    [math.nan, math.inf, 0.25],
    ["only strings", "é", "\n"],
    math.nan,
    "top-level text",
    {},
    [],
    {"k": {}},
]


@pytest.mark.parametrize("indent", [2, 0, 4, None])
@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_dumps_json_is_the_indenting_encoder_byte_for_byte(value: Any, indent: int | None) -> None:
    assert dumps_json(value, indent=indent) == reference(value, indent)


def test_dumps_json_report_table_is_parsed_back_with_nan_as_null() -> None:
    table = rows(20, 3)
    back = json.loads(dumps_json({"items": table}))["items"]
    assert [r["item_id"] for r in back] == [r["item_id"] for r in table]
    assert [r["means"]["run %b"] for r in back] == [None, 0.5] * 10
