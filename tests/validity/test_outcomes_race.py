"""Concurrent `validity import` and `validity add` of the same outcomes (issue 10, item 9).

Each observation is stored once, and no process fails: the store inserts-or-ignores on the
outcome's fingerprint instead of checking first and inserting after.
"""

from __future__ import annotations

import json
from pathlib import Path

from evalsuite._core.layout import Layout
from evalsuite.store import Store, default_store_url
from tests.helpers import Project
from tests.zygote import start_together  # processes forked by the tests' zygote


def test_concurrent_imports_and_adds_store_each_outcome_once(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    project = Project(root=tmp_path / "p", key_dir=tmp_path / "keys")
    rows = [f"model-{i},task_success,{i / 4000:.5f},100,2026-10-01,A/B" for i in range(3000)]
    outcomes = tmp_path / "outcomes.csv"
    outcomes.write_text("model,metric,value,n,observed_at,source\n" + "\n".join(rows) + "\n")
    add = [
        "validity", "add", "--model", "model-7", "--metric", "task_success", "--value",
        "0.00175", "--n", "100", "--observed-at", "2026-10-01", "--source", "A/B", "--json",
    ]  # fmt: skip
    # `runs` reads only (it leaves no store behind), so the four processes also race to create
    # the store: one may read meta empty before the creator commits it and count another's
    # results after (tests/store/test_migrations.py replays that interleaving)
    assert project.invoke("runs").exit_code == 0
    assert not (project.root / ".evalsuite" / "results.sqlite").exists()
    commands = [["validity", "import", str(outcomes), "--json"]] * 3 + [add]
    results = start_together(project, tmp_path / "race", commands)
    assert [r.code for r in results] == [0] * 4, [r.stderr[-600:] for r in results]
    assert sum(json.loads(r.stdout)["added"] for r in results) == 3000
    again = project.invoke("validity", "import", str(outcomes), "--json")
    assert json.loads(again.stdout) == {"rows": 3000, "added": 0, "duplicates": 3000}
    stored = Store(default_store_url(Layout(project.root).state)).outcomes("task_success")
    assert len(stored) == 3000
    assert stored["fingerprint"].is_unique
