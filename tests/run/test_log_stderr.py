"""Issue 10 item 24: inspect's stderr() in the logs `evalsuite run` writes agrees with
`evalsuite score`: it clusters the (item, epoch) samples by item, never counting K epochs as
K items."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from inspect_ai.log import read_eval_log

from evalsuite._core.layout import Layout
from evalsuite.store import Store, default_store_url
from tests.helpers import json_out
from tests.run.conftest import make_probe_project


def test_the_log_stderr_is_the_item_clustered_se_of_score(tmp_path: Path) -> None:
    project = make_probe_project(tmp_path)
    # declare inspect's plain stderr() the way the shipped families do (tasks/arith,
    # tasks/support_desk): that is the metric that counted epochs as items
    task_file = project.root / "tasks" / "probe" / "task.py"
    text = task_file.read_text()
    assert "@scorer(metrics=[accuracy()])" in text
    text = text.replace("@scorer(metrics=[accuracy()])", "@scorer(metrics=[accuracy(), stderr()])")
    task_file.write_text(text.replace("accuracy, scorer", "accuracy, scorer, stderr", 1))
    result = project.invoke(
        "run",
        "probe@1.0.0",
        "--model",
        "fakeagent/x",
        "-M",
        "accuracy=0.6",
        "--epochs",
        "2",  # two epochs of the first 10 items: each item a cluster of two samples
        "--limit",
        "10",
        "--no-progress",
        "--json",
    )
    assert result.exit_code == 0, result.stderr
    run_id = json_out(result)["run_id"]
    logs = sorted((Layout(project.root).state / "logs" / run_id).glob("*.json"))
    assert len(logs) == 1  # one family, one task
    log = read_eval_log(str(logs[0]))
    assert log.results is not None
    metrics = log.results.scores[0].metrics
    inspect_se = metrics["stderr"].value
    inspect_mean = metrics["accuracy"].value
    score = json_out(project.invoke("score", run_id, "--json"))
    assert score["harness"]["harness_errors"] == 0  # balanced epochs: the two must be equal
    assert inspect_mean == pytest.approx(score["overall"]["mean"], abs=1e-12)
    assert inspect_se == pytest.approx(score["overall"]["se"], rel=1e-9)
    # what inspect's default stderr() would have said: epochs counted as items, too small
    frame = Store(default_store_url(Layout(project.root).state)).attempts(run_id)
    scores = frame["score"].to_numpy(float)
    naive = float(np.std(scores, ddof=1) / np.sqrt(len(scores)))
    assert len(scores) == 20
    assert naive < 0.9 * score["overall"]["se"]  # 0.82 of it here (4 epochs of 20 items: 0.85)
