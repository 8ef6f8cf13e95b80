"""A throwaway copy of this project (tasks, manifests, holdout), so that holdout runs in tests
count against the copy's budget and ledger, never the repository's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers import REPO, Project


def copy_project(destination: Path) -> Project:
    for part in ("tasks", "manifests", "holdout"):
        shutil.copytree(
            REPO / part,
            destination / part,
            ignore=shutil.ignore_patterns("__pycache__", "*.lock", "ACCESS.jsonl"),
        )
    return Project(root=destination, key_dir=destination.parent / "keys")


@pytest.fixture
def project_copy(tmp_path: Path) -> Project:
    return copy_project(tmp_path / "project")
