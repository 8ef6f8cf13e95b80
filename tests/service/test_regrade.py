"""`regrade`: a run re-scored by another judge, stored and compared with the original."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalsuite._core.layout import Layout
from evalsuite.errors import NotFoundError, UsageError
from evalsuite.service._regrade import regrade
from evalsuite.store import Store
from tests.audit.judge_sim import JUDGED_TASK, word_items
from tests.helpers import Project, json_out, make_project, suite_toml

JUDGE = '\n[families.judge]\nmodel = "judgesim/fair"\nprompt = "p"\nlabels = ["I", "C"]\n'


@pytest.fixture
def judged_run(tmp_path: Path) -> tuple[Project, str, float]:
    project = make_project(tmp_path, toml=suite_toml() + JUDGE, records=word_items())
    (project.root / "tasks/fam/task.py").write_text(JUDGED_TASK, encoding="utf-8")
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0
    ran = project.invoke("run", "demo@1.0.0", "--model", "candsim/half", "--epochs", "2", "--json")
    assert ran.exit_code == 0, ran.stderr
    out = json_out(ran)
    return project, str(out["run_id"]), float(out["mean"])


def test_a_harsher_judge_is_a_measured_change_and_the_same_judge_none(
    judged_run: tuple[Project, str, float],
) -> None:
    project, run_id, mean = judged_run
    layout = Layout(project.root)
    assert 0 < mean < 1  # the fair judge passes the candidate's right answers only
    store = Store(f"sqlite:///{project.root / '.evalsuite/results.sqlite'}")
    same = regrade(layout, store, run_id, "judgesim/verbose")  # = fair on short answers
    assert same.comparison.to_dict()["diff"] == pytest.approx(0.0)
    harsh = regrade(layout, store, run_id, "judgesim/harsh")
    diff = harsh.comparison.to_dict()["diff"]
    assert diff == pytest.approx(-mean)
    assert harsh.previous_judges == {"fam": "judgesim/fair"}
    assert json.dumps(harsh.to_dict())  # JSON-ready
    with pytest.raises(UsageError, match="already re-scored"):
        regrade(layout, store, run_id, "judgesim/harsh")


def test_a_run_without_its_logs_or_with_a_bad_judge_name_is_refused(
    judged_run: tuple[Project, str, float], tmp_path: Path
) -> None:
    project, run_id, _ = judged_run
    layout = Layout(project.root)
    store = Store(f"sqlite:///{project.root / '.evalsuite/results.sqlite'}")
    with pytest.raises(UsageError, match="provider/model"):
        regrade(layout, store, run_id, "harsh")
    with pytest.raises(NotFoundError, match="--log-dir"):
        regrade(layout, store, run_id, "judgesim/harsh", log_dir=tmp_path / "nowhere")


def test_the_regrade_command_prints_the_change_and_its_json(
    judged_run: tuple[Project, str, float],
) -> None:
    project, run_id, _ = judged_run
    shown = project.invoke("regrade", run_id, "--judge", "judgesim/harsh")
    assert shown.exit_code == 0, shown.stderr
    assert f"re-scored {run_id} with judgesim/harsh (was fam: judgesim/fair)" in shown.stdout
    again = project.invoke("regrade", run_id, "--judge", "judgesim/obedient", "--json")
    assert again.exit_code == 0, again.stderr
    out = json_out(again)
    assert out["original"] == run_id and out["judge"] == "judgesim/obedient"
    assert out["comparison"]["diff"] == pytest.approx(0.0)  # no injected answers in this run
    holdout = project.invoke("regrade", "no-such-run", "--judge", "judgesim/harsh")
    assert holdout.exit_code == 2
