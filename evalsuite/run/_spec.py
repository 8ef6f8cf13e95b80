"""The run specification: everything that determines a run's attempts, stored with it."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["RunSpec"]


class RunSpec(BaseModel):
    """What to run and how; stored verbatim with the run so it can be resumed exactly."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    suite: str
    version: str
    model: str
    """Any inspect model, e.g. ``evalsuite/improved`` or ``openai/gpt-4o``."""
    split: Literal["dev", "holdout"] = "dev"
    epochs: int = Field(default=1, ge=1)
    seed: int = Field(default=0, ge=0)
    """Run seed; each (item, epoch) gets its own seed derived from it."""
    model_args: dict[str, Any] = Field(default_factory=dict)
    max_retries: int = Field(default=2, ge=0, le=10)
    """Bounded retries of a sample after a harness error (inspect `retry_on_error`)."""
    error_threshold: float = Field(default=0.05, ge=0.0, le=1.0)
    """Harness error rate above which the run is invalid."""
    fault_rate: float = Field(default=0.0, ge=0.0, le=1.0)
    """Share of (item, epoch) episodes whose environment fails (harness testing)."""
    fault_kind: Literal["error", "hang"] = "error"
    fault_mode: Literal["persistent", "transient"] = "persistent"
    tool_timeout: float = Field(default=30.0, gt=0.0)
    message_limit: int | None = Field(default=None, ge=1)
    time_limit: int | None = Field(default=None, ge=1)
    token_limit: int | None = Field(default=None, ge=1)
    max_samples: int | None = Field(default=None, ge=1)
    limit_items: int | None = Field(default=None, ge=1)
    """Run only the first N items of the split (by id): quick checks, never for reporting."""
    model_family: str | None = None
    """Model family for the holdout budget (default: the model name without checkpoint
    suffixes, see `evalsuite.holdout.model_family`). A model's family is recorded in the
    ledger at its first holdout run and kept; another family here is refused (exit 7) unless
    the model was re-mapped with `evalsuite holdout family`."""
    purpose: str | None = None
    """Why this run was made (recorded in the holdout access ledger)."""
    override_reason: str | None = None
    """Reason for running past the holdout budget (recorded in the ledger)."""
    shards: int | None = Field(default=None, ge=1)
    """For a sharded run, the number of shards N it was split into (`run --shard I/N`,
    docs/design/sharded-runs.md); None for a run made by one process."""
    model_adapter: str | None = None
    """What evalsuite added to the model so that it runs offline (set by the runner; e.g.
    mockllm's default output with token usage estimated, so no tokenizer is downloaded)."""
