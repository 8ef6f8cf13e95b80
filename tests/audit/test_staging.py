"""The suite file the freeze audit stages keeps every field of the real one.

A judged family's `[families.judge]`, its `task_args` and a suite's `[holdout_mechanism]` are
tables: staged as strings, the staged project no longer parsed and a judged suite could not
be frozen with its audit (found freezing answers@1.0.0).
"""

from __future__ import annotations

import tomllib

from evalsuite.audit._staging import _suite_toml
from evalsuite.manifest import SuiteConfig


def test_nested_tables_survive_staging() -> None:
    raw = {
        "name": "demo",
        "canary": "evalsuite-canary demo 1",
        "holdout_fraction": 0.5,
        "stratify_by": ["family"],
        "holdout_mechanism": {"name": "ladder", "step": 0.05},
        "families": [
            {
                "name": "fam",
                "version": 1,
                "task": "fam/task.py@fam",
                "items": "fam/items.jsonl",
                "task_args": {"level": 2, "mode": "strict 'quoted' \"text\""},
                "judge": {
                    "model": "evalsuite/judge",
                    "prompt": "Grade it.\nReply 'GRADE: C' or \"GRADE: I\".",
                    "labels": ["I", "C"],
                    "config": {"temperature": 0.0, "seed": 7},
                },
            }
        ],
        "weights": {"fam/a": 1.0},
    }
    suite = SuiteConfig.model_validate(raw)
    staged = tomllib.loads(_suite_toml(suite, {"fam": "staged/fam.jsonl"}))
    again = SuiteConfig.model_validate(staged)
    family, original = again.families[0], suite.families[0]
    assert family.judge == original.judge and family.task_args == original.task_args
    assert family.items == "staged/fam.jsonl"
    assert again.model_dump(exclude={"families"}) == suite.model_dump(exclude={"families"})
