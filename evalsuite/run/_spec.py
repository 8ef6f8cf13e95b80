"""The run specification: everything that determines a run's attempts, stored with it."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from evalsuite.errors import UsageError
from evalsuite.run._options import check_generate_config

__all__ = ["MAX_EPOCHS", "MAX_PLANNED_ATTEMPTS", "STOP_WITHIN_S", "RunSpec", "check_plan_size"]

STOP_WITHIN_S = 5.0
"""Seconds a signalled run gives inspect to finish its cancelled samples before it stops hard
(docs/design/run-limits.md, "A signal stops any run within seconds")."""

MAX_EPOCHS = 1000
"""Epochs per item a run may plan: the cap `ingest` applies to a results table's epochs."""

MAX_PLANNED_ATTEMPTS = 1_000_000
"""Attempts (items x epochs) one run may plan: the largest run the project measures
(docs/scale.md); every attempt is an inspect sample held in memory and a row in the store."""


def check_plan_size(epochs: int, n_items: int | None = None) -> None:
    """Refuse a plan above the caps before anything is allocated (docs/design/run-limits.md).

    Args:
        epochs: Epochs per item asked for.
        n_items: Items the run would plan (None: check the epochs alone).

    Raises:
        UsageError: more than `MAX_EPOCHS` epochs, or more than `MAX_PLANNED_ATTEMPTS`
            planned attempts.
    """
    if epochs > MAX_EPOCHS:
        raise UsageError(
            f"--epochs {epochs:,} is above the cap of {MAX_EPOCHS:,} epochs per item (the cap "
            "`ingest` applies too): so many repeats of one item add nothing a statistic can use, "
            "and every attempt costs a model call, memory and a stored row. Give at most "
            f"{MAX_EPOCHS:,} (e.g. --epochs 5), or use --adaptive to let the data decide."
        )
    if n_items is not None and n_items * epochs > MAX_PLANNED_ATTEMPTS:
        raise UsageError(
            f"{n_items:,} items x {epochs:,} epochs = {n_items * epochs:,} planned attempts, above "
            f"the cap of {MAX_PLANNED_ATTEMPTS:,} per run (the largest run measured, "
            "docs/scale.md; every attempt is held in memory by inspect and stored as a row). "
            "Give fewer --epochs, or run part of the split with --limit N."
        )


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
    log_samples: bool = True
    """Write every sample into the inspect log (False: the log keeps its header only; the
    attempts are in the store either way). The grader audit's runs use False: their results
    are the audit's, and writing a log of every episode doubles their cost."""
    items: list[str] | None = None
    """Run only these items of the split (by id): the grader audit's samples of a suite
    (docs/design/grader-audit.md); never for reporting (the run is partial)."""
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
    adaptive: dict[str, Any] | None = None
    """An adaptive run's stopping rule, target and budget (`run --adaptive`,
    docs/design/adaptive.md): recorded with the run and in the holdout ledger before the
    run starts. Its attempts are planned in rounds, not as ``epochs`` per item."""
    model_adapter: str | None = None
    """What evalsuite added to the model so that it runs offline (set by the runner; e.g.
    mockllm's default output with token usage estimated, so no tokenizer is downloaded)."""
    # inspect eval() options that do not change what is measured (run/_options.py); stored
    # specs made before they existed load with the defaults, which are what those runs used
    task_args: dict[str, Any] = Field(default_factory=dict)
    """Task arguments given at run time (``-T``): only those a family lists in ``run_args``;
    every other task argument is frozen in the manifest."""
    generate_config: dict[str, Any] = Field(default_factory=dict)
    """Generation settings of the model under test (``--temperature``, ``--max-tokens``,
    ``--max-connections``, ``-G``): fields of inspect's ``GenerateConfig``."""
    sandbox: str | None = None
    """Sandbox for every task (``local``, ``docker``, ``docker:compose.yaml``); default: each
    task's own."""
    log_dir: str | None = None
    """Where inspect writes the run's logs (any fsspec URL); dev runs only. Default:
    ``.evalsuite/logs/<run_id>``; holdout runs keep logs in memory."""
    model_base_url: str | None = None
    """Base URL of the model's API server."""
    max_subprocesses: int | None = Field(default=None, ge=1)
    max_sandboxes: int | None = Field(default=None, ge=1)
    max_tasks: int | None = Field(default=None, ge=1)
    sandbox_cleanup: bool = True
    """False keeps sandboxes after the run (debugging)."""

    @field_validator("generate_config")
    @classmethod
    def _check_generate(cls, value: dict[str, Any]) -> dict[str, Any]:
        return check_generate_config(value)
