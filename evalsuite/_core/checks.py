"""Reserved keys of an attempt's ``checks`` (docs/design/scorers.md).

``checks`` holds the verifier's scalar sub-checks; evalsuite keeps a task's other scores
(secondary metrics) there too, under keys no verifier is allowed to use: the runner writes
them and the analysis reads them, so the names live below both.
"""

from __future__ import annotations

import json
import math
from typing import Any, Final

__all__ = [
    "JUDGE_OUTPUT_KEY",
    "SECONDARY_ERRORS_KEY",
    "SECONDARY_KEY",
    "read_checks",
    "secondary_values",
]

SECONDARY_KEY: Final = "evalsuite:secondary"
"""Secondary metric -> its value in [0, 1], or null when it could not be mapped."""
SECONDARY_ERRORS_KEY: Final = "evalsuite:secondary_errors"
"""Secondary metric -> why it has no value (only metrics that have none)."""
JUDGE_OUTPUT_KEY: Final = "evalsuite:judge_output"
"""A model-graded verdict's raw judge output, whole (dev runs only; docs/design/judge-audit.md)."""


def read_checks(raw: Any) -> dict[str, Any]:
    """An attempt's ``checks`` (a JSON object, as stored) as a dict; {} when absent."""
    if raw is None or (isinstance(raw, float) and math.isnan(raw)):
        return {}
    if isinstance(raw, dict):
        return raw
    loaded = json.loads(raw)
    return loaded if isinstance(loaded, dict) else {}


def secondary_values(raw: Any) -> tuple[dict[str, float | None], dict[str, str]]:
    """(metric -> value or None, metric -> reason) of one attempt's ``checks``."""
    checks = read_checks(raw)
    values = checks.get(SECONDARY_KEY) or {}
    errors = checks.get(SECONDARY_ERRORS_KEY) or {}
    return (
        {str(k): (None if v is None else float(v)) for k, v in values.items()},
        {str(k): str(v) for k, v in errors.items()},
    )
