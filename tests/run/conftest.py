"""A frozen project with the `probe` family, for runner tests."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import tests.run.fake_models  # noqa: F401  (registers the fake providers)
from tests.helpers import CANARY, Project

PROBE_DIR = Path(__file__).parent / "probe_family"
MARKER = "PLANTED-MARKER-7c1e"
STABLE = [
    "item_id",
    "epoch",
    "item_hash",
    "stratum",
    "seed",
    "outcome",
    "limit_type",
    "score",
    "reason",
    "retries",
    "checks",
]
"""Attempt columns that must repeat exactly for the same seed (not run id, duration, tokens)."""


def probe_items(n_per_stratum: int = 20) -> list[dict[str, object]]:
    items = []
    for kind in ("alpha", "beta"):
        for i in range(n_per_stratum):
            key = f"{kind}{i:02d}"
            items.append(
                {
                    "id": f"{kind}-{i:03d}",
                    "input": f"{MARKER} question {kind} {i}: please look up the value of {key}",
                    "target": f"value-{key}-{MARKER}",
                    "metadata": {"kind": kind, "table": {key: f"value-{key}-{MARKER}"}},
                }
            )
    return items


def make_probe_project(tmp_path: Path, *, key: str = "canary", n_per_stratum: int = 20) -> Project:
    root = tmp_path / "project"
    (root / "tasks" / "probe").mkdir(parents=True)
    shutil.copy(PROBE_DIR / "task.py", root / "tasks" / "probe" / "task.py")
    (root / "tasks" / "probe.toml").write_text(
        'name = "probe"\ndescription = "runner test family"\n'
        f'canary = "{CANARY}"\nholdout_fraction = 0.5\nstratify_by = ["family", "kind"]\n'
        f'key = "{key}"\n\n[[families]]\nname = "probe"\nversion = 1\n'
        'task = "probe/task.py@probe"\nitems = "probe/items.jsonl"\n'
    )
    (root / "tasks" / "probe" / "items.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in probe_items(n_per_stratum))
    )
    project = Project(root=root, key_dir=tmp_path / "keys")
    result = project.invoke("freeze", "probe", "--version", "1.0.0")
    assert result.exit_code == 0, result.stderr
    return project


@pytest.fixture
def probe_project(tmp_path: Path) -> Project:
    return make_probe_project(tmp_path)
