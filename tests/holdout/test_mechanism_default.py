"""A suite's default reusable-holdout mechanism, ``[holdout_mechanism]`` (issue 36): validated
in the suite file, frozen into the manifest only when declared (older hashes hold), a change of
it a major version, read alike by the full and the lean manifest readers, and used by
``run --split holdout`` when no ``--mechanism`` is given. Temporary projects, own key dirs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalsuite._core.layout import Layout
from evalsuite.holdout import read_ledger
from evalsuite.manifest import load_manifest, load_manifest_summary
from tests.helpers import Project
from tests.run.conftest import make_probe_project

QUIET = ("--limit", "2", "--no-progress", "--json")


def _declare(project: Project, table: str) -> None:
    path = project.root / "tasks" / "probe.toml"
    path.write_text(path.read_text(encoding="utf-8") + "\n" + table, encoding="utf-8")


def _holdout(project: Project, version: str, *extra: str) -> tuple[int, str, str]:
    result = project.invoke(
        "run", f"probe@{version}", "--split", "holdout", "--model", "fakeagent/x", *QUIET, *extra
    )
    return result.exit_code, result.stdout, result.stderr


def _ledger_text(project: Project) -> str:
    path = project.root / "holdout" / "probe" / "ACCESS.jsonl"
    return path.read_text(encoding="utf-8") if path.exists() else ""


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ('[holdout_mechanism]\nname = "oracle"\n', "holdout_mechanism.name"),
        ('[holdout_mechanism]\nname = "ladder"\nthreshold = 0.1\n', "do not apply to ladder"),
        ('[holdout_mechanism]\nname = "thresholdout"\nstep = 0.1\n', "do not apply to thres"),
        ('[holdout_mechanism]\nname = "ladder"\nstep = 0\n', "step"),
        ('[holdout_mechanism]\nname = "thresholdout"\nbudget = 0\n', "budget"),
        ('[holdout_mechanism]\nname = "ladder"\nseed = 3\n', "seed"),
    ],
)
def test_a_bad_declaration_is_refused_with_what_was_wrong(
    tmp_path: Path, table: str, expected: str
) -> None:
    project = make_probe_project(tmp_path, n_per_stratum=2)
    _declare(project, table)
    result = project.invoke("freeze", "probe", "--version", "2.0.0")
    assert result.exit_code == 2
    assert "probe.toml" in result.stderr and expected in result.stderr.replace("(es)", "")
    assert not (project.root / "manifests" / "probe" / "2.0.0.json").exists()


def test_declared_only_when_present_a_change_is_major_and_both_readers_agree(
    tmp_path: Path,
) -> None:
    project = make_probe_project(tmp_path, n_per_stratum=2)
    layout = Layout(project.root)
    first = (project.root / "manifests" / "probe" / "1.0.0.json").read_text(encoding="utf-8")
    assert "holdout_mechanism" not in json.loads(first)  # undeclared: the record is unchanged
    assert load_manifest_summary(layout, "probe", "1.0.0").holdout_mechanism is None

    _declare(project, '[holdout_mechanism]\nname = "ladder"\nstep = 0.25\n')
    minor = project.invoke("freeze", "probe", "--version", "1.1.0")
    assert minor.exit_code != 0 and "major" in minor.stderr
    assert project.invoke("freeze", "probe", "--version", "2.0.0").exit_code == 0
    declared = {"name": "ladder", "step": 0.25}
    assert load_manifest(layout, "probe", "2.0.0").holdout_mechanism is not None
    assert (
        json.loads(
            (project.root / "manifests" / "probe" / "2.0.0.json").read_text(encoding="utf-8")
        )["holdout_mechanism"]
        == declared
    )
    summary = load_manifest_summary(layout, "probe", "2.0.0")
    assert summary.holdout_mechanism == declared
    assert summary.record() == load_manifest(layout, "probe", "2.0.0").model_dump(mode="json")
    verify = project.invoke("verify", "probe")
    assert verify.exit_code == 0, verify.stdout + verify.stderr


def test_run_uses_the_default_and_refuses_to_bypass_it(tmp_path: Path) -> None:
    project = make_probe_project(tmp_path, n_per_stratum=4)
    _declare(project, '[holdout_mechanism]\nname = "ladder"\nstep = 0.25\n')
    assert project.invoke("freeze", "probe", "--version", "2.0.0").exit_code == 0

    none = _holdout(project, "2.0.0", "--mechanism", "none")
    assert none[0] == 7 and "--mechanism none` is refused" in none[2]
    other = _holdout(project, "2.0.0", "--mechanism", "thresholdout")
    assert other[0] == 2 and "contradicts probe@2.0.0" in other[2]
    clash = _holdout(project, "2.0.0", "--mechanism", "ladder", "--ladder-step", "0.1")
    assert clash[0] == 2 and "declared: 0.25" in clash[2]
    assert _ledger_text(project) == ""  # no refusal spent a look

    code, out, err = _holdout(project, "2.0.0")
    assert code == 0, err
    payload = json.loads(out)
    assert payload["mean"] is None and payload["mechanism"]["name"] == "ladder"
    assert payload["mechanism"]["record"]["params"] == {"step": 0.25}
    same = _holdout(project, "2.0.0", "--mechanism", "ladder")  # the same one: allowed
    assert same[0] == 0, same[2]
    entries = read_ledger(project.root / "holdout" / "probe" / "ACCESS.jsonl")
    assert [e.kind for e in entries] == ["access", "answer", "access", "answer"]
    assert project.invoke("verify", "probe").exit_code == 0

    # a version without the declaration: --mechanism none is a plain exact run
    plain = _holdout(project, "1.0.0", "--mechanism", "none")
    assert plain[0] == 0, plain[2]
    assert json.loads(plain[1])["mean"] is not None
