"""Fixtures of the item-analysis tests: a frozen project and runs written straight to its store."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pytest

from evalsuite._core.layout import Layout
from evalsuite.manifest import load_manifest
from evalsuite.store import AttemptRecord, RunRecord
from tests.helpers import Project, make_project

Scores = Mapping[str, Sequence[float | None]]
"""item id -> score per epoch (None: a harness error; -1.0: a limit)."""


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """A project with ``demo@1.0.0`` frozen: 12 items in strata fam/add and fam/mul."""
    project = make_project(tmp_path)
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0
    return project


StoreRun = Callable[..., str]


@pytest.fixture
def store_run(project: Project) -> StoreRun:
    """Write a run of ``demo@1.0.0`` for `model` with the given scores per item.

    Complete and valid unless told (`status`, `valid`); `planned` defaults to every
    (item, epoch) given.
    """
    manifest = load_manifest(Layout(project.root), "demo", "1.0.0")
    by_id = {i.id: i for i in manifest.items}
    counter = iter(range(10_000))

    def write(
        model: str,
        scores: Scores,
        *,
        seeds: Sequence[int] | None = None,
        status: str = "complete",
        valid: bool = True,
        planned: int | None = None,
    ) -> str:
        store = project.store()
        epochs = max(len(v) for v in scores.values())
        run_id = f"20260101-000000-{next(counter):06d}"
        store.create_run(
            RunRecord(
                run_id=run_id,
                model=model,
                epochs=epochs,
                planned=planned if planned is not None else len(scores) * epochs,
                status=status,  # type: ignore[arg-type]
                source="evalsuite",
                started_at=f"2026-01-01T00:00:{len(run_id) % 60:02d}+00:00",
                suite="demo",
                version="1.0.0",
                manifest_hash=manifest.manifest_hash,
                split="dev",
                valid=valid,
                error_rate=0.0 if valid else 0.5,
            )
        )
        records = []
        for item_id, values in scores.items():
            item = by_id[item_id]
            for e, value in enumerate(values, start=1):
                seed = seeds[e - 1] if seeds is not None else 1000 + e
                if value is None:
                    rec = AttemptRecord(item_id, e, item.stratum, "harness_error", float("nan"),
                                        seed=seed, reason="sandbox died")  # fmt: skip
                elif value < 0:
                    rec = AttemptRecord(item_id, e, item.stratum, "limit", 0.0, seed=seed,
                                        limit_type="message")  # fmt: skip
                else:
                    rec = AttemptRecord(item_id, e, item.stratum, "scored", float(value), seed=seed)
                records.append(rec)
        store.record_attempts(run_id, records)
        return run_id

    return write


@pytest.fixture
def item_ids(project: Project) -> list[str]:
    """The frozen items' ids, sorted."""
    return sorted(i.id for i in load_manifest(Layout(project.root), "demo", "1.0.0").items)


def ability_scores(
    item_ids: Sequence[str], n_models: int, epochs: int, rng: np.random.Generator
) -> dict[str, dict[str, list[float | None]]]:
    """Responses of `n_models` models of spread abilities (a 2PL world, for realistic data)."""
    difficulty = np.linspace(-1.5, 1.5, len(item_ids))
    out: dict[str, dict[str, list[float | None]]] = {}
    for m in range(n_models):
        theta = -2 + 4 * m / max(n_models - 1, 1)
        p = 1 / (1 + np.exp(-(1.5 * (theta - difficulty))))
        out[f"model-{m:02d}"] = {
            i: [float(rng.random() < p[j]) for _ in range(epochs)] for j, i in enumerate(item_ids)
        }
    return out
