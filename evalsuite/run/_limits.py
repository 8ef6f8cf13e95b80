"""How an inspect sample limit becomes an outcome, without importing inspect-ai.

`ingest` of a CSV or Parquet table checks its ``limit_type`` column against these names;
importing `_outcomes` (which classifies inspect samples) would cost it seconds of CPU.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal

__all__ = ["LIMIT_OUTCOME", "OutcomeName"]

OutcomeName = Literal["scored", "limit", "harness_error"]

LIMIT_OUTCOME: Final[Mapping[str, OutcomeName]] = {
    "context": "limit",
    "time": "limit",
    "working": "limit",
    "message": "limit",
    "token": "limit",
    "turn": "limit",
    "cost": "limit",
    "custom": "limit",
    "operator": "harness_error",
}
"""inspect's `EvalSampleLimit.type` -> outcome (exhaustively tested)."""
