"""`compare` (and `report`) of runs on two versions of one suite: common items only, said so."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import Project, json_out
from tests.run.conftest import MARKER, make_probe_project
from tests.shared_build import build_once

RUN = ("--model", "fakeagent/x", "--epochs", "1", "--no-progress", "--json")
"""One epoch: what is compared is which items the versions share, not repeated attempts."""


def _refreeze(project: Project, version: str, n_changed: int, n_added: int) -> None:
    path = project.root / "tasks" / "probe" / "items.jsonl"
    # tasks/ holds the dev items only (the holdout ones are in the vault, carried over)
    items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    for record in items[:n_changed]:
        record["target"] = f"changed-{record['id']}-{MARKER}"
        record["metadata"]["table"] = {"x": record["target"]}  # type: ignore[index]
    for i in range(n_added):
        for kind in ("alpha", "beta"):
            items.append(
                {
                    "id": f"{kind}-new-{version}-{i}",
                    # the version in the text: `freeze` refuses a new item that repeats one
                    # an earlier version froze (docs/guard.md, "Before a freeze")
                    "input": f"{MARKER} new question {kind} {i} of {version}: look up new{i}",
                    "target": f"value-new{i}",
                    "metadata": {"kind": kind, "table": {f"new{i}": f"value-new{i}"}},
                }
            )
    path.write_text("".join(json.dumps(r) + "\n" for r in items), encoding="utf-8")
    done = project.invoke("freeze", "probe", "--version", version)
    assert done.exit_code == 0, done.output


@dataclass
class Versions:
    project: Project
    old: str
    """a run of probe@1.0.0"""
    again: str
    """another run of probe@1.0.0 (seed 1)"""
    new: str
    """a run of probe@2.0.0: one dev item changed, one added per stratum"""

    def copy(self, tmp_path: Path) -> Project:
        """A copy of the project, for a test that freezes or runs more."""
        shutil.copytree(self.project.root, tmp_path / "project")
        if self.project.key_dir.exists():
            shutil.copytree(self.project.key_dir, tmp_path / "keys")
        return Project(root=tmp_path / "project", key_dir=tmp_path / "keys")


def _build(root: Path) -> dict[str, str]:
    project = make_probe_project(root, n_per_stratum=10)
    old = json_out(project.invoke("run", "probe@1.0.0", *RUN))["run_id"]
    again = json_out(project.invoke("run", "probe@1.0.0", *RUN, "--seed", "1"))["run_id"]
    _refreeze(project, "2.0.0", n_changed=1, n_added=1)
    new = json_out(project.invoke("run", "probe@2.0.0", *RUN))["run_id"]
    return {"old": old, "again": again, "new": new}


@pytest.fixture(scope="module")
def versions(tmp_path_factory: pytest.TempPathFactory) -> Versions:
    """The runs on two versions, made once per session (tests/shared_build.py); the tests read
    them, and write only reports of their own or into a copy."""
    root, runs = build_once(tmp_path_factory, "compare-versions", _build)
    return Versions(Project(root=root / "project", key_dir=root / "keys"), **runs)


def test_compare_across_versions_uses_common_items_and_says_so(versions: Versions) -> None:
    project, old, new = versions.project, versions.old, versions.new
    result = project.invoke("compare", old, new, "--json")
    assert result.exit_code == 0, result.output
    payload = json_out(result)
    common = payload["common_items"]
    assert common["cross_version"] is True
    assert common["versions"] == {"baseline": "1.0.0", "candidate": "2.0.0"}
    # 10 dev items of 1.0.0; 2.0.0 changed one of them and added dev items
    assert payload["n_items"] == common["n_common"]
    assert common["n_common"] < common["n_items"]["candidate"]
    assert common["share"] >= 0.8 and common["min_share"] == 0.8
    assert common["scores"]["baseline"]["mean"] == payload["baseline_mean"]
    assert any("common items only" in c for c in payload["caveats"])
    assert "common to versions 1.0.0 and 2.0.0" in payload["headline"]
    text = project.invoke("compare", old, new)
    assert text.exit_code == 0
    assert "common items only" in text.output and "1.0.0" in text.output
    assert MARKER not in result.output + text.output


def test_compare_on_one_version_says_it_is_not_cross_version(versions: Versions) -> None:
    project, old, again = versions.project, versions.old, versions.again
    payload = json_out(project.invoke("compare", old, again, "--json"))
    assert payload["common_items"] == {"cross_version": False}


def test_compare_across_versions_refuses_too_few_common_items(
    versions: Versions, tmp_path: Path
) -> None:
    project, old = versions.copy(tmp_path), versions.old
    _refreeze(project, "3.0.0", n_changed=5, n_added=5)
    newer = json_out(project.invoke("run", "probe@3.0.0", *RUN))["run_id"]
    refused = project.invoke("compare", old, newer, "--json")
    assert refused.exit_code == 2, refused.output
    message = json_out(refused)["message"]
    assert "below the required 80%" in message and "--min-common-share" in message
    assert "evalsuite diff probe@1.0.0 probe@3.0.0" in message
    allowed = project.invoke("compare", old, newer, "--min-common-share", "0.1", "--json")
    assert allowed.exit_code == 0, allowed.output
    assert json_out(allowed)["common_items"]["min_share"] == 0.1
    bad = project.invoke("compare", old, newer, "--min-common-share", "1.5")
    assert bad.exit_code == 2


def test_report_across_versions_shows_scores_on_common_items(
    versions: Versions, tmp_path: Path
) -> None:
    project, old, new = versions.project, versions.old, versions.new
    out = tmp_path / "report"
    done = project.invoke("report", old, new, "--out", str(out))
    assert done.exit_code == 0, done.output
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    text = json.dumps(report)
    assert "common_items" in text and "cross_version" in text
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert "score on the common items of both versions" in markdown
    assert "common items only" in markdown
    html = (out / "index.html").read_text(encoding="utf-8")
    # the headline and the first caveat of the comparison, above and below its runs table
    assert "common to versions 1.0.0 and 2.0.0 (common items only)" in html
    assert "compared across versions on common items only" in html
    # each model's score on the common items, titled as such
    assert "runs: score on the common items of both versions" in html
    assert MARKER not in text + markdown + html
