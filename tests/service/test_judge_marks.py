"""A judge that failed its audit (or was never audited) marks every number it graded (issue 33).

Like an unaudited suite: `score`, `compare`, `runs` and the report carry the marker, naming the
judged family; a passing judge audit clears it. A dev run keeps each verdict's raw judge output.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from evalsuite._core.checks import JUDGE_OUTPUT_KEY, read_checks
from evalsuite._core.layout import Layout
from evalsuite.manifest import judge_states, load_manifest
from evalsuite.service._judge_audit import audit_judges, judge_audit_path
from evalsuite.store import Store
from tests.audit.judge_sim import JUDGED_TASK, word_items
from tests.helpers import Project, json_out, make_project, suite_toml

JUDGE = '\n[families.judge]\nmodel = "judgesim/fair"\nprompt = "p"\nlabels = ["I", "C"]\n'


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, list[str]]:
    root = tmp_path_factory.mktemp("marks")
    project = make_project(root, toml=suite_toml() + JUDGE, records=word_items())
    (project.root / "tasks/fam/task.py").write_text(JUDGED_TASK, encoding="utf-8")
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0
    runs = []
    for model in ("candsim/half", "candsim/half"):
        ran = project.invoke("run", "demo@1.0.0", "--model", model, "--epochs", "2", "--json")
        assert ran.exit_code == 0, ran.stderr
        runs.append(str(json_out(ran)["run_id"]))
    return project, runs


def _labels(project: Project, path: Path, agree: bool) -> Path:
    """Human labels of three attempts per item: the judge agrees with them, or is a coin."""
    ids = [i.id for i in load_manifest(Layout(project.root), "demo", "1.0.0").items]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=["item_id", "epoch", "human", "judge"])
        writer.writeheader()
        for n, item in enumerate(ids * 3):
            human = "C" if (n * 7) % 3 else "I"
            coin = "C" if (n * 5) % 2 else "I"
            writer.writerow(
                {"item_id": item, "epoch": 1 + n // len(ids), "human": human}
                | {"judge": human if agree else coin}
            )
    return path


def test_unaudited_then_failing_then_passing_judge_marks_every_number(
    judged: tuple[Project, list[str]], tmp_path: Path
) -> None:
    project, (a, b) = judged
    layout = Layout(project.root)
    manifest = load_manifest(layout, "demo", "1.0.0")
    assert judge_states(layout, manifest) == {"fam": "unaudited"}
    scored = project.invoke("score", a, "--json")
    audit = json_out(scored)["audit"]
    assert "JUDGE UNAUDITED (fam)" in audit["marker"] and audit["judges"] == {"fam": "unaudited"}
    assert "judged family fam has no judge audit" in audit["detail"]

    audit_judges(layout, "demo@1.0.0", _labels(project, tmp_path / "coin.csv", False), seed=1,
                 probe_items=0)  # fmt: skip
    assert judge_states(layout, manifest) == {"fam": "failing"}
    shown = project.invoke("score", a)
    assert shown.exit_code == 0 and "JUDGE FAILING (fam)" in shown.stdout
    compared = project.invoke("compare", a, b, "--json")
    assert compared.exit_code in (0, 1), compared.stderr
    assert "JUDGE FAILING (fam)" in json.dumps(json_out(compared))
    listed = json_out(project.invoke("runs", "--json"))
    assert all(r["judges"] == {"fam": "failing"} for r in listed)
    assert "JUDGE FAILING (fam)" in project.invoke("runs").stdout
    out = tmp_path / "report"
    reported = project.invoke("report", a, b, "--out", str(out))
    assert reported.exit_code == 0, reported.stderr
    markdown = next(out.glob("*.md")).read_text(encoding="utf-8")
    assert "JUDGE FAILING (fam)" in markdown

    audit_judges(layout, "demo@1.0.0", _labels(project, tmp_path / "agree.csv", True), seed=1,
                 probe_items=0)  # fmt: skip
    assert judge_states(layout, manifest) == {"fam": "passed"}
    after = json_out(project.invoke("score", a, "--json"))["audit"]
    assert "JUDGE" not in str(after["marker"]) and after["judges"] == {"fam": "passed"}

    # a stored judge audit of another manifest is not a pass: the numbers stay marked
    path = judge_audit_path(layout, "demo", "1.0.0")
    path.write_text(json.dumps(json.loads(path.read_text()) | {"manifest_hash": "sha256:0"}))
    assert "JUDGE AUDIT DAMAGED (fam)" in str(
        json_out(project.invoke("score", a, "--json"))["audit"]["marker"]
    )
    path.unlink()


def test_a_dev_run_keeps_each_verdicts_raw_judge_output(
    judged: tuple[Project, list[str]],
) -> None:
    project, (a, _) = judged
    store = Store(f"sqlite:///{project.root / '.evalsuite/results.sqlite'}")
    frame = store.attempts(a)
    outputs = [read_checks(c).get(JUDGE_OUTPUT_KEY) for c in frame["checks"]]
    assert all(isinstance(o, str) and "GRADE:" in o for o in outputs), outputs[:3]
    # the reason stays the short explanation; the whole output is in the checks
    assert all(len(str(r)) <= 500 for r in frame["reason"])
