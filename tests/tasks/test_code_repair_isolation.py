"""code_repair version 2 (repair@2.0.0, issue 29): the agent's code never runs beside the answer.

Version 1 scored 30 of 30 dev items four ways with the bug left in place: (a) patching
unittest's result at import, (b) walking the stack to the runner's nonce and forging its
report, (c) reading the expected values from the stack frames, (d) reading the family's
items.jsonl by a path derived from ``sys.executable``. Each attack here is the tamper library's
own change (`evalsuite.audit._tampers`), written into the module by a scripted agent and
scored by the real task. On version 1 each passes (the defect, kept as the truth about
repair@1.0.0); on version 2 each scores 0 and the reference fix still scores 1.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from evalsuite.audit._tampers import tamper_named
from evalsuite.run import item_to_sample
from tests.tasks.repair_helpers import dev_items, submodule, task_module, task_v2_module

ATTACKS = {
    "a_patch_unittest": "patch_test_framework",
    "b_forge_nonce_report": "forge_report",
    "c_expected_from_frames": "frame_expected",
    "d_items_by_path": "read_by_path",
}


def _output(tool: str | None, **arguments: Any) -> ModelOutput:
    if tool is None:
        output = ModelOutput.from_content("mockllm/model", "Fixed.")
    else:
        output = ModelOutput.for_tool_call("mockllm/model", tool, arguments)
    output.usage = ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)
    return output


def _item() -> dict[str, Any]:
    return dev_items()[0]


def _function(item: dict[str, Any]) -> str:
    visible = item["metadata"]["repo"][item["metadata"]["test_files"][0]]
    found = re.search(r"^from [\w.]+ import (\w+)$", visible, re.MULTILINE)
    assert found is not None
    return found.group(1)


def _files(item: dict[str, Any], tamper: str | None) -> dict[str, str]:
    """What the scripted agent writes: the tamper's change, or the reference fix."""
    source = item["metadata"]["source_files"][0]
    text = item["metadata"]["repo"][source]
    if tamper is None:
        for edit in json.loads(item["target"])["patch"]:
            text = text.replace(edit["before"], edit["after"], 1)
        return {source: text}
    change = tamper_named(tamper).change(text, _function(item))
    return {source: change.source, **change.files}


def _play(module: Any, item: dict[str, Any], files: dict[str, str], tmp: Path) -> Any:
    outputs = [_output("write_file", path=p, content=c) for p, c in files.items()]
    outputs += [_output("run_tests"), _output(None)]
    (log,) = inspect_eval(
        module.code_repair(dataset=[item_to_sample(item)]),
        model=get_model("mockllm/model", custom_outputs=outputs),
        log_dir=str(tmp / "logs"),
        display="none",
    )
    return log


def _score(module: Any, item: dict[str, Any], files: dict[str, str], tmp: Path) -> float:
    log = _play(module, item, files, tmp)
    assert log.status == "success", log.error
    (score,) = log.samples[0].scores.values()
    return float(score.value)


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_each_attack_scores_0_on_version_2(attack: str, tmp_path: Path) -> None:
    item = _item()
    assert _score(task_v2_module(), item, _files(item, ATTACKS[attack]), tmp_path) == 0.0


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_each_attack_passes_version_1_the_defect_repair_1_0_0_keeps(
    attack: str, tmp_path: Path
) -> None:
    item = _item()
    assert _score(task_module(), item, _files(item, ATTACKS[attack]), tmp_path) == 1.0


def test_the_reference_fix_still_scores_1_on_version_2(tmp_path: Path) -> None:
    item = _item()
    assert _score(task_v2_module(), item, _files(item, None), tmp_path) == 1.0


SPY = """import os
import unittest


class Spy(unittest.TestCase):
    def test_world(self):
        lines = ["CWD " + os.getcwd(), "ENV " + repr(sorted(os.environ))]
        for path in {paths!r}:
            lines.append(("SEES " if os.path.exists(path) else "HIDDEN ") + path)
        self.fail(" ; ".join(lines))
"""


def test_the_agents_code_sees_neither_the_project_nor_the_key_dir_nor_the_store(
    tmp_path: Path,
) -> None:
    here = Path(__file__).resolve().parents[2]
    secret = [
        str(here / "tasks" / "code_repair" / "items.jsonl"),
        str(here / "manifests"),
        str(here / "holdout"),
        os.environ.get("EVALSUITE_KEY_DIR", "/nonexistent-key-dir"),
        os.environ.get("EVALSUITE_STORE", "/nonexistent-store"),
        "/work",
        "/proc/1",
    ]
    spy = {"tests/test_spy.py": SPY.format(paths=secret)}
    log = _play(task_v2_module(), _item(), spy, tmp_path)
    tools = [m for m in log.samples[0].messages if m.role == "tool"]
    ran = tools[-1].text
    assert "HIDDEN " + secret[0] in ran, ran
    assert "SEES" not in ran, ran
    assert "CWD /repo" in ran and "ENV ['LANG', 'PATH']" in ran, ran


def test_a_jail_that_cannot_start_is_a_harness_fault_never_an_unisolated_run(
    tmp_path: Path,
) -> None:
    """Without user namespaces (``unshare --user`` with no mapping denies them), the jail exits
    97 with its token before any agent code runs; the family raises, never falls back."""
    workspace = submodule("workspace")
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "mod.py").write_text("print('AGENT CODE RAN')\n", encoding="utf-8")
    python = workspace.python_for("local", True)
    command = ["unshare", "--user", *workspace.jail_command(python, "tok3n")]
    request = json.dumps({"imports": ["import mod"], "calls": ["1"]})
    done = subprocess.run(command, input=request, cwd=folder, capture_output=True, text=True)
    assert "AGENT CODE RAN" not in done.stdout
    result = workspace.ExecResult(False, done.returncode, done.stdout, done.stderr)
    reason = workspace.jail_failure(result, "tok3n")
    assert reason is not None and "user namespaces" in reason
    assert workspace.jail_failure(result, "other") is None  # the agent cannot fake one
    error = workspace.isolation_error(reason)
    assert isinstance(error, submodule("verifier_v2").HarnessFault)
    assert "never falls back" in str(error)


def test_every_dev_items_hidden_tests_split_into_calls_and_expected_values() -> None:
    verifier = submodule("verifier_v2")
    for item in dev_items():
        key = json.loads(item["target"])
        hidden = verifier.hidden_calls(key["hidden_tests"])
        assert len(hidden.calls) == len(hidden.expected) == key["hidden_count"], item["id"]
        assert hidden.imports and all(i.startswith("from ") for i in hidden.imports)
        assert not any("same(" in c for c in hidden.calls)


@pytest.mark.parametrize(
    ("stdout", "passed", "reported"),
    [
        ('@@calls [{"ok": true, "type": "builtins.list", "repr": "[1, 2]"}]', True, True),
        # a subclass, or another type with the same repr, is not the expected value
        ('@@calls [{"ok": true, "type": "builtins.tuple", "repr": "[1, 2]"}]', False, True),
        ('@@calls [{"ok": false, "type": "builtins.ValueError", "repr": "[1, 2]"}]', False, True),
        # a results line with another number of calls, or none at all, is no report
        ('@@calls [{"ok": true, "type": "builtins.list", "repr": "[1, 2]"}, {}]', False, False),
        ("Ran 1 tests: 1 passed\n@@result 0 {}", False, False),
        ("@@calls not json", False, False),
    ],
)
def test_the_verdict_compares_raw_results_with_expected_values_it_alone_holds(
    stdout: str, passed: bool, reported: bool
) -> None:
    verdict = submodule("verifier_v2").evaluate_calls(stdout, [[1, 2]])
    assert (verdict.passed, verdict.reported) == (passed, reported)


@pytest.mark.slow  # 30 jailed processes, about 3 s
def test_the_reference_fix_passes_and_the_bug_fails_every_dev_item_in_the_jail(
    tmp_path: Path,
) -> None:
    workspace, verifier = submodule("workspace"), submodule("verifier_v2")
    python = workspace.python_for("local", True)
    for item in dev_items():
        key, repo = json.loads(item["target"]), item["metadata"]["repo"]
        hidden = verifier.hidden_calls(key["hidden_tests"])
        for fixed in (False, True):
            folder = tmp_path / f"{item['id']}-{fixed}"
            files = dict(repo)
            if fixed:
                files.update(_files(item, None))
            for path, text in files.items():
                (folder / path).parent.mkdir(parents=True, exist_ok=True)
                (folder / path).write_text(text, encoding="utf-8")
            request = {"imports": hidden.imports, "calls": hidden.calls, "cpu_s": 8}
            done = subprocess.run(
                workspace.jail_command(python, "t"),
                input=json.dumps(request),
                cwd=folder,
                capture_output=True,
                text=True,
                check=False,
            )
            assert verifier.evaluate_calls(done.stdout, hidden.expected).passed is fixed


def test_version_2s_kit_declares_agent_code_and_keeps_version_1s_tools_and_limits() -> None:
    v1, v2 = task_module().FAMILY, task_v2_module().FAMILY
    assert (v1.version, v2.version) == (1, 2)
    assert v2.agent_code is not None and v1.agent_code is not None  # both audited against it
    assert v2.limits == v1.limits
    assert [type(d.tool).__name__ for d in v2.tools] == [type(d.tool).__name__ for d in v1.tools]
