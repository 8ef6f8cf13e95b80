"""How an inspect sample limit becomes an outcome, without importing inspect-ai.

`ingest` of a CSV or Parquet table checks its ``limit_type`` column against these names;
importing `_outcomes` (which classifies inspect samples) would cost it seconds of CPU.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

__all__ = ["LIMIT_OUTCOME", "LimitsInForce", "OutcomeName"]

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


@dataclass(frozen=True, slots=True)
class LimitsInForce:
    """The limits an episode of one family runs under (docs/design/run-limits.md).

    Each is the run's option where it gives one, else the task's own (inspect's precedence);
    None where neither sets it.
    """

    messages: int | None = None
    """inspect's ``message_limit``: messages in the conversation."""
    tokens: int | None = None
    """inspect's ``token_limit``: tokens of every model call, input and output."""
    time_s: float | None = None
    """inspect's ``time_limit``: wall-clock seconds of the episode."""
    working_s: float | None = None
    """inspect's ``working_limit``: seconds of working time (waits excluded)."""

    @property
    def bounded(self) -> bool:
        """True when at least one of the four limits is set."""
        return any(v is not None for v in (self.messages, self.tokens, self.time_s, self.working_s))

    def describe(self) -> str:
        """``"20 messages, 600 s"``; ``"none"`` when nothing is set."""
        parts = [
            f"{self.messages} messages" if self.messages is not None else "",
            f"{self.tokens} tokens" if self.tokens is not None else "",
            f"{self.time_s:g} s" if self.time_s is not None else "",
            f"{self.working_s:g} s of working time" if self.working_s is not None else "",
        ]
        return ", ".join(p for p in parts if p) or "none"
