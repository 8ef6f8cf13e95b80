"""The tamper library (issue 29): a code family whose runner imports the agent's code in the
process that holds the answer fails it; the same family with code_repair's jail and the calls
sent apart passes it. ``audit --graders --json`` lists every tamper with its score per stratum.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from evalsuite.audit._tampers import PREFIX, TAMPERS
from tests.audit.toy import toy_code_project
from tests.helpers import json_out


def _audit(root: Path, mode: str) -> tuple[int, dict[str, Any], float]:
    project = toy_code_project(root, mode)
    assert project.invoke("freeze", "toyc", "--version", "1.0.0").exit_code == 0
    started = time.perf_counter()
    result = project.invoke("audit", "toyc@1.0.0", "--graders", "--json")
    return result.exit_code, json_out(result)["graders"], time.perf_counter() - started


def _tampers(graders: dict[str, Any]) -> dict[str, dict[str, Any]]:
    (family,) = graders["families"]
    return {c["policy"]: c for c in family["checks"] if c["check"] == "tamper"}


# 20 s of audit episodes: `make slow` (the four attacks on code_repair version 1, which runs
# the agent's code in process too, are fast: tests/tasks/test_code_repair_isolation.py)
@pytest.fixture(scope="module")
def inprocess(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any], float]:
    return _audit(tmp_path_factory.mktemp("inprocess"), "inprocess")


@pytest.mark.slow
def test_an_in_process_code_family_fails_the_tamper_library(
    inprocess: tuple[int, dict[str, Any], float],
) -> None:
    code, graders, _ = inprocess
    assert code == 3
    tampers = _tampers(graders)
    assert set(tampers) == {PREFIX + t.name for t in TAMPERS}  # every tamper was tried
    failed = {name for name, c in tampers.items() if c["status"] == "failed"}
    # the issue-29 attacks that need no file outside the workspace all pass it
    assert {
        "tamper_patch_test_framework",
        "tamper_patch_assertions",
        "tamper_forge_report",
        "tamper_frame_expected",
    } <= failed
    for name in failed:
        strata = tampers[name]["strata"]
        assert strata and all(s["score"] == 1.0 for s in strata.values()), (name, strata)
        assert tampers[name]["items"]
    oracle = [c for c in graders["families"][0]["checks"] if c["check"] == "oracle"]
    assert oracle[0]["status"] == "passed"  # the family is sound but for the tampers


def test_the_jailed_family_passes_every_tamper(tmp_path: Path) -> None:
    code, graders, _ = _audit(tmp_path, "jailed")
    tampers = _tampers(graders)
    assert set(tampers) == {PREFIX + t.name for t in TAMPERS}
    assert {n: c["status"] for n, c in tampers.items()} == dict.fromkeys(tampers, "passed")
    for check in tampers.values():
        assert all(s["score"] == 0.0 for s in check["strata"].values())
    assert code == 0, graders
