"""`audit_judges`: planted judge biases are caught and named; a fair judge passes (issue 33)."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from evalsuite._core.layout import Layout
from evalsuite.errors import IntegrityError, ItemSourceError, UsageError
from evalsuite.manifest import load_manifest
from evalsuite.service._judge_audit import audit_judges, judge_audit_path, judge_audit_status
from tests.helpers import Project, make_items, make_project, suite_toml
from tests.manifest.test_judge_config import JUDGE, judged_project


@pytest.fixture(scope="module")
def frozen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = judged_project(
        tmp_path_factory.mktemp("judged"),
        suite_toml() + JUDGE.replace("openai/gpt-4o-2024-08-06", "judgesim/fair"),
        records=make_items(n_per_stratum=60),
    )
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0
    return project.root


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def _labels(root: Path, judge: str, seed: int = 0) -> list[dict[str, object]]:
    """Three labelled attempts per item; `judge` plants the judge's behaviour."""
    rng = np.random.default_rng(seed)
    ids = [i.id for i in load_manifest(Layout(root), "demo", "1.0.0").items]
    rows: list[dict[str, object]] = []
    for item in ids:
        for epoch in (1, 2, 3):
            human = int(rng.random() < 0.6)
            length = float(rng.lognormal(5, 0.8))
            if judge == "fair":
                verdict = human if rng.random() < 0.95 else 1 - human
            elif judge == "random":
                verdict = int(rng.random() < 0.6)
            else:  # the others agree with humans; their bias is elsewhere
                verdict = human
            row: dict[str, object] = {
                "item_id": item,
                "epoch": epoch,
                "human": human,
                "judge": verdict,
            }
            if judge == "lengthy":  # passes long wrong answers: worse the longer they are
                row["judge"] = 1 if human == 0 and length > 250 else human
                row["length"] = round(length, 1)
            if judge in ("fair", "position"):
                truth = "first" if rng.random() < 0.5 else "second"
                swapped = {"first": "second", "second": "first"}[truth]
                row["forward"] = truth
                row["backward"] = "first" if judge == "position" else swapped
            rows.append(row)
    return rows


def test_a_fair_judge_passes_and_its_status_is_stored(frozen: Path, tmp_path: Path) -> None:
    layout = Layout(frozen)
    assert judge_audit_status(layout, "demo", "1.0.0") == {"fam": "unaudited"}
    labels = _write(tmp_path / "fair.csv", _labels(frozen, "fair"))
    result = audit_judges(
        layout, "demo@1.0.0", labels, seed=3, judged_models=["judgesim/x", "openai/gpt-4o"]
    )
    family = result.families[0]
    assert family.probes is not None and family.probes["failures"] == []
    assert family.self_preference == ()  # judgesim is no known family
    sys.stdout.write(json.dumps(result.to_dict()["families"]) + "\n")
    assert result.ok, family.reasons
    assert family.agreement["value"] > 0.8 and family.position is not None
    assert judge_audit_status(layout, "demo", "1.0.0") == {"fam": "passed"}
    stored = json.loads(judge_audit_path(layout, "demo", "1.0.0").read_text())
    assert stored["seed"] == 3 and stored["labels_sha256"].startswith("sha256:")


@pytest.mark.parametrize(
    ("judge", "named"),
    [
        ("random", "not shown to reach the floor"),
        ("position", "position consistency"),
        ("lengthy", "length bias"),
    ],
)
def test_each_planted_bias_fails_the_audit_and_is_named(
    frozen: Path, tmp_path: Path, judge: str, named: str
) -> None:
    labels = _write(tmp_path / f"{judge}.csv", _labels(frozen, judge))
    result = audit_judges(Layout(frozen), "demo@1.0.0", labels, store=False, probe_items=0)
    family = result.families[0]
    sys.stdout.write(f"{judge}: {family.reasons}\n")
    assert not result.ok
    assert any(named in reason for reason in family.reasons), family.reasons


def test_a_stored_audit_of_another_manifest_is_refused(frozen: Path, tmp_path: Path) -> None:
    layout = Layout(frozen)
    labels = _write(tmp_path / "random.csv", _labels(frozen, "random"))
    audit_judges(layout, "demo@1.0.0", labels, probe_items=0)
    assert judge_audit_status(layout, "demo", "1.0.0") == {"fam": "failing"}
    path = judge_audit_path(layout, "demo", "1.0.0")
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "manifest_hash": "sha256:" + "0" * 64}))
    with pytest.raises(IntegrityError, match="another manifest"):
        judge_audit_status(layout, "demo", "1.0.0")
    path.unlink()


def test_bad_labels_files_are_refused_with_the_problem_named(frozen: Path, tmp_path: Path) -> None:
    layout = Layout(frozen)
    judge_audit_path(layout, "demo", "1.0.0").unlink(missing_ok=True)  # another test's audit
    unknown = _write(tmp_path / "u.csv", [{"item_id": "nope", "human": 1, "judge": 1}])
    with pytest.raises(ItemSourceError, match=r"not items of demo@1\.0\.0"):
        audit_judges(layout, "demo@1.0.0", unknown, store=False)
    columns = _write(tmp_path / "c.csv", [{"item_id": "add-000", "human": 1, "verdict": 1}])
    with pytest.raises(ItemSourceError, match=r"missing column\(s\) \['judge'\]"):
        audit_judges(layout, "demo@1.0.0", columns, store=False)
    with pytest.raises(UsageError, match="exact frozen version"):
        audit_judges(layout, "demo", columns, store=False)
    assert not judge_audit_path(layout, "demo", "1.0.0").exists()


def test_a_version_without_a_judge_is_refused(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0
    labels = _write(tmp_path / "l.csv", [{"item_id": "add-000", "human": 1, "judge": 1}])
    with pytest.raises(UsageError, match="declares no judge"):
        audit_judges(Layout(project.root), "demo@1.0.0", labels)


def test_an_obedient_judge_fails_the_audit_on_its_injection_probe(tmp_path: Path) -> None:
    toml = suite_toml() + JUDGE.replace("openai/gpt-4o-2024-08-06", "judgesim/obedient")
    project = judged_project(tmp_path, toml)
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0
    labels = _write(tmp_path / "fair.csv", _labels(project.root, "fair"))
    result = audit_judges(
        Layout(project.root),
        "demo@1.0.0",
        labels,
        store=False,
        judged_models=["openai/gpt-4o-mini"],
    )
    reasons = result.families[0].reasons
    assert any(r.startswith("probe injection") for r in reasons), reasons
    assert not any(r.startswith("probe confident_wrong") for r in reasons)


def test_the_audit_command_runs_the_judge_audit_and_exits_3_when_it_fails(
    frozen: Path, tmp_path: Path
) -> None:
    project = Project(root=frozen, key_dir=frozen.parent / "keys")
    fair = _write(tmp_path / "fair.csv", _labels(frozen, "fair"))
    random = _write(tmp_path / "random.csv", _labels(frozen, "random"))
    ok = project.invoke("audit", "demo@1.0.0", "--judge", "--labels", str(fair))
    assert ok.exit_code == 0, ok.stderr
    assert "judge judgesim/fair passed" in ok.stdout
    bad = project.invoke("audit", "demo@1.0.0", "--judge", "--labels", str(random), "--json")
    assert bad.exit_code == 3
    assert json.loads(bad.stdout)["judge"]["ok"] is False
    alone = project.invoke("audit", "demo@1.0.0", "--judge")
    assert alone.exit_code == 2 and "go together" in alone.stderr
