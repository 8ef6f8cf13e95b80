"""The judge probes catch each planted bias and pass a fair judge (issue 33)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from evalsuite._core.layout import Layout
from evalsuite.audit._judge_probes import probe_judge
from evalsuite.manifest import load_manifest
from tests.audit.judge_sim import JUDGED_TASK
from tests.helpers import make_project, suite_toml


def _judged(tmp_path: Path, behaviour: str) -> Layout:
    judge = (
        "\n[families.judge]\n"
        f'model = "judgesim/{behaviour}"\n'
        'prompt = "inspect model_graded_qa default template"\n'
        'labels = ["I", "C"]\n'
    )
    project = make_project(tmp_path, toml=suite_toml() + judge)
    (project.root / "tasks/fam/task.py").write_text(JUDGED_TASK, encoding="utf-8")
    frozen = project.invoke("freeze", "demo", "--version", "1.0.0")
    assert frozen.exit_code == 0, frozen.stderr
    return Layout(project.root)


@pytest.mark.parametrize(
    ("behaviour", "caught"),
    [
        ("fair", set()),
        ("obedient", {"injection"}),
        ("credulous", {"confident_wrong"}),
        ("verbose", {"verbose_wrong"}),
        ("harsh", {"reference"}),
    ],
)
def test_each_planted_judge_bias_is_caught_by_its_probe(
    tmp_path: Path, behaviour: str, caught: set[str]
) -> None:
    layout = _judged(tmp_path, behaviour)
    manifest = load_manifest(layout, "demo", "1.0.0")
    probes = probe_judge(layout, manifest, manifest.families[0], n_items=6)
    sys.stdout.write(f"{behaviour}: {probes.pass_rate}\n")
    named = {failure.split(":")[0].removeprefix("probe ") for failure in probes.failures}
    assert named == caught, probes.failures
    if behaviour != "harsh":
        assert probes.pass_rate["reference"] == 1.0
        assert probes.pass_rate["wrong"] == 0.0 and probes.pass_rate["empty"] == 0.0


def test_a_judged_task_without_a_judge_argument_is_refused_at_freeze(tmp_path: Path) -> None:
    judge = '\n[families.judge]\nmodel = "judgesim/fair"\nprompt = "p"\n'
    project = make_project(tmp_path, toml=suite_toml() + judge)  # MINIMAL_TASK: no judge
    result = project.invoke("freeze", "demo", "--version", "1.0.0")
    assert result.exit_code == 2
    assert "takes no `judge` argument" in result.stderr
