"""Acceptance (issue 32): on a run with injected tool faults, the built-in harness-fault
scanners find every injected fault (recall 1.0) and flag at most 5% of the improved agent's
clean attempts (precision at least 0.95). The test prints the numbers.

The runs are of the shipped `support` suite (version 3.0.0, dev split) with the reference
agent ``evalsuite/improved`` and no retries, scanned by `run --scan` (Inspect Scout): 60
items with 20% of episodes given a persistent tool error, and 30 items with 30% given a tool
hang past a 1 s tool timeout. The ground truth is the store's: an attempt whose harness error
is the injected fault (the error names it; a hang's says the tool did not answer in time).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from evalsuite._core.layout import Layout
from evalsuite.review import suite_taxonomy
from tests.helpers import REPO, Project, json_out

HARNESS_SCANNERS = ("tool_errors", "empty_completion")
"""The built-in scanners standing for the shipped taxonomies' harness modes."""


def _project(tmp_path: Path) -> Project:
    root = tmp_path / "project"
    (root / "manifests").mkdir(parents=True)
    shutil.copytree(REPO / "tasks", root / "tasks", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "manifests" / "support", root / "manifests" / "support")
    shutil.copytree(REPO / "holdout" / "support", root / "holdout" / "support")
    return Project(root=root, key_dir=tmp_path / "keys")


FAULTS = {
    "error": ("--limit", "60", "--inject-faults", "0.2", "--seed", "7"),
    "hang": (
        "--limit", "30", "--inject-faults", "0.3", "--fault-kind", "hang", "--tool-timeout", "1",
        "--seed", "11",
    ),
}  # fmt: skip
INJECTED = ("injected fault", "did not answer within")
"""What the harness error of an injected error, and of an injected hang, says."""


@pytest.mark.slow  # one to two minutes each on two shared cores: support episodes, then Scout
@pytest.mark.parametrize("kind", sorted(FAULTS))
def test_builtin_scanners_find_every_injected_fault_and_spare_clean_attempts(
    tmp_path: Path, kind: str
) -> None:
    project = _project(tmp_path)
    result = project.invoke(
        "run", "support@3.0.0", "--model", "evalsuite/improved", *FAULTS[kind],
        "--max-retries", "0", "--scan", "--no-progress", "--json",
    )  # fmt: skip
    assert result.exit_code in (0, 5), result.stderr
    payload = json_out(result)
    run_id, scan = payload["run_id"], payload["scan"]
    frame = project.store().attempts(run_id)
    keys = {(str(i), int(e)) for i, e in zip(frame["item_id"], frame["epoch"], strict=True)}
    faults = {
        (str(i), int(e))
        for i, e, r in zip(frame["item_id"], frame["epoch"], frame["reason"], strict=True)
        if r and any(says in str(r) for says in INJECTED)
    }
    clean = keys - faults
    flagged = {
        (x["item_id"], x["epoch"]) for name in HARNESS_SCANNERS for x in scan["flagged"][name]
    }
    recall = len(flagged & faults) / len(faults)
    precision = len(flagged & faults) / len(flagged) if flagged else float("nan")
    clean_share = len(flagged & clean) / len(clean)
    others = {
        name: len({(x["item_id"], x["epoch"]) for x in found} & clean)
        for name, found in scan["flagged"].items()
        if name not in HARNESS_SCANNERS
    }
    sys.stdout.write(  # the numbers, in the test's output (-s, or on failure)
        json.dumps(
            {
                "run": run_id,
                "fault_kind": kind,
                "attempts": len(keys),
                "injected_faults": len(faults),
                "clean_attempts": len(clean),
                "flagged_by_harness_scanners": len(flagged),
                "recall": recall,
                "precision": precision,
                "clean_flagged_share": clean_share,
                "other_scanners_on_clean_attempts": others,
            },
            indent=2,
        )
        + "\n"
    )
    assert len(faults) >= 5, "the seed must inject faults"
    assert recall == 1.0
    assert precision >= 0.95 and clean_share <= 0.05
    assert Path(scan["location"]).is_relative_to(project.root / ".evalsuite" / "scans")
    # the shipped taxonomy ties these scanners to its harness modes
    taxonomy = suite_taxonomy(Layout(project.root), "support")
    harness = {taxonomy.mode(m).scanner for m in taxonomy.harness_modes()}
    assert set(HARNESS_SCANNERS) <= harness
