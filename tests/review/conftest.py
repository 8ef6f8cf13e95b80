"""A store with small runs to label and count (tests/review)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from evalsuite.review import Mode, Taxonomy
from evalsuite.store import AttemptRecord, RunRecord, Store

TAXONOMY = Taxonomy(
    suite="toy",
    version="1",
    modes=(
        Mode("tool_fault", "A tool failed.", "harness", scanner="tool_errors"),
        Mode("tool_loop", "Same call again and again.", "model", scanner="repeated_tool_call"),
        Mode("wrong_answer", "Computed wrong.", "model"),
    ),
)


def make_run(store: Store, run_id: str, outcomes: dict[tuple[str, int], tuple[str, float]]) -> None:
    """Store run `run_id` of suite toy with the given (item, epoch) -> (outcome, score)."""
    epochs = max(e for _, e in outcomes)
    store.create_run(
        RunRecord(
            run_id=run_id,
            model="m",
            epochs=epochs,
            planned=len(outcomes),
            status="complete",
            source="evalsuite",
            started_at="2026-01-01T00:00:00+00:00",
            suite="toy",
            version="1.0.0",
            split="dev",
        )
    )
    store.record_attempts(
        run_id,
        [
            AttemptRecord(
                item_id=item,
                epoch=epoch,
                stratum="s" + item[-1],
                outcome=outcome,  # type: ignore[arg-type]
                score=math.nan if outcome == "harness_error" else score,
                reason="HarnessFault: x" if outcome == "harness_error" else None,
            )
            for (item, epoch), (outcome, score) in outcomes.items()
        ],
    )


@pytest.fixture
def store(store_url: str) -> Store:
    """A new store on each backend (tests/conftest.py::store_url)."""
    return Store(store_url)


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Store:
    """A new SQLite store."""
    return Store(f"sqlite:///{tmp_path / 'store.sqlite'}")
