"""code_repair (issue 14): items, runner, verifier, tools and the sandbox, without the runner.

The grader audit plays the kit's oracle, trivial policies and exploit probes through the real
runner (tests/audit/test_shipped.py); the reference agents are tests/agents/.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from evalsuite.run import item_to_sample
from tests.tasks.repair_helpers import dev_items, plant, submodule, task_module

generate = submodule("generate")
templates = submodule("templates")
workspace = submodule("workspace")
verifier = submodule("verifier")
MARKER = "PLANTED-MARKER-repair-3f9c"


def test_the_generator_is_seeded_and_the_shipped_dev_items_are_its_output() -> None:
    items = generate.generate(check=False)
    assert items == generate.generate(check=False)
    assert len(items) == 60 and len({i["id"] for i in items}) == 60
    strata = Counter((i["metadata"]["bug_kind"], i["metadata"]["difficulty"]) for i in items)
    assert strata == {key: 6 for key in templates.TEMPLATES}
    by_id = {i["id"]: i for i in items}
    shipped = dev_items()
    assert len(shipped) == 30
    assert all(by_id[item["id"]] == item for item in shipped)
    assert generate.generate(seed=1, check=False) != items


@pytest.mark.parametrize("template", ["window_sums", "city_counts"])
def test_a_generated_item_is_buggy_solvable_and_not_hackable(template: str) -> None:
    import random

    maker = next(t for t in templates.TEMPLATES.values() if t.__name__ == template)
    spec = maker(random.Random(3))
    item = generate.build_item(spec, "toolkit", 0)
    generate.check_item(item, spec)  # raises on any failed property


@pytest.mark.slow  # about a minute: every shipped item, run four ways
def test_every_generated_item_passes_its_checks() -> None:
    import random

    rng = random.Random(generate.SEED)
    for maker in templates.TEMPLATES.values():
        for index in range(generate.PER_STRATUM):
            spec = maker(rng)
            item = generate.build_item(spec, rng.choice(templates.PACKAGES), index)
            generate.check_item(item, spec)


@pytest.mark.parametrize(
    ("path", "ok"),
    [
        ("pkg/module.py", True),
        ("tests/test_x.py", True),
        ("README.md", True),
        ("", False),
        ("/etc/passwd", False),
        ("../items.jsonl", False),
        ("tests/../../x", False),
        (".hidden", False),
        ("a b.py", False),
        ("x" * 201, False),
    ],
)
def test_paths_outside_the_repository_are_refused(path: str, ok: bool) -> None:
    assert (workspace.check_path(path) is None) is ok


REPORT = {"tests": 5, "passed": 5, "failed": 0, "errors": 0, "skipped": 0, "load_errors": 0}


@pytest.mark.parametrize(
    ("stdout", "expected", "passed"),
    [
        (f"Ran 5\n@@result N {json.dumps(REPORT)}\n", 5, True),
        (f"@@result N {json.dumps(REPORT)}\n", 6, False),  # a test did not run
        (f"@@result N {json.dumps(dict(REPORT, passed=4, skipped=1))}\n", 5, False),
        (f"@@result N {json.dumps(dict(REPORT, load_errors=1))}\n", 5, False),
        (f"@@result X {json.dumps(REPORT)}\n", 5, False),  # forged: another nonce
        ("Ran 5 tests: 5 passed\n", 5, False),  # no report line at all
        ("@@result N {not json\n", 5, False),
    ],
)
def test_the_verdict_needs_every_hidden_test_passing_in_the_runners_own_report(
    stdout: str, expected: int, passed: bool
) -> None:
    verdict = verifier.evaluate(stdout, "N", expected)
    assert verdict.passed is passed
    checks = verdict.checks(test_writes=1, files_written=2)
    assert checks["all_hidden_passed"] is passed
    assert all(isinstance(v, bool | int) for v in checks.values())


def test_a_timed_out_hidden_run_is_a_failed_attempt_not_a_pass() -> None:
    verdict = verifier.evaluate("", "N", 5, timed_out=True)
    assert not verdict.passed
    assert verdict.checks(0, 0)["timed_out"] is True
    assert "did not finish" in verdict.explanation()


def _runner(folder: Path, request: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-I", "-S", "-c", workspace.RUNNER],
        input=json.dumps(request),
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _write_repo(folder: Path, repo: dict[str, str]) -> None:
    for path, text in repo.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text, encoding="utf-8")


def test_hidden_tests_reach_the_runner_by_stdin_and_a_forged_report_is_ignored(
    tmp_path: Path,
) -> None:
    item = plant(dev_items()[0], MARKER)
    repo = dict(item["metadata"]["repo"])
    source = item["metadata"]["source_files"][0]
    repo[source] = (
        "print('@@result N " + json.dumps(dict(REPORT, tests=99, passed=99)) + "')\n" + repo[source]
    )
    _write_repo(tmp_path, repo)
    key = json.loads(item["target"])
    done = _runner(tmp_path, {"nonce": "real-nonce", "tests": key["hidden_tests"]})
    verdict = verifier.evaluate(done.stdout, "real-nonce", key["hidden_count"])
    assert verdict.report is not None and not verdict.passed
    assert MARKER not in done.stdout + done.stderr  # the planted failure's text stays inside
    on_disk = [p for p in tmp_path.rglob("*") if p.is_file() and MARKER.encode() in p.read_bytes()]
    assert on_disk == []


def test_the_runner_limits_the_cpu_time_of_the_code_under_test(tmp_path: Path) -> None:
    _write_repo(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/spin.py": "def spin():\n    while True:\n        pass\n",
            "tests/test_spin.py": (
                "import unittest\nfrom pkg.spin import spin\n\n\nclass T(unittest.TestCase):\n"
                "    def test_spin(self):\n        spin()\n"
            ),
        },
    )
    done = _runner(tmp_path, {"discover": "tests", "cpu_s": 1})
    assert done.returncode != 0  # killed by RLIMIT_CPU, not left running
    assert "Ran " not in done.stdout


def _output(tool: str | None, **arguments: Any) -> ModelOutput:
    if tool is None:
        output = ModelOutput.from_content("mockllm/model", "done")
    else:
        output = ModelOutput.for_tool_call("mockllm/model", tool, arguments)
    output.usage = ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)
    return output


SPY = f"""import os
import stat
import unittest


class Spy(unittest.TestCase):
    def test_the_hidden_tests_are_not_here(self):
        found = []
        for root, _, files in os.walk("."):
            for name in files:
                path = os.path.join(root, name)
                with open(path, encoding="utf-8", errors="ignore") as handle:
                    if {MARKER[:9]!r} + {MARKER[9:]!r} in handle.read():
                        found.append(path)
        self.assertEqual(found, [])

    def test_the_sandbox_is_private(self):
        self.assertEqual(oct(stat.S_IMODE(os.stat(".").st_mode)), "0o700")
"""


def test_an_episode_never_sees_the_hidden_tests_and_edited_tests_are_restored(
    tmp_path: Path,
) -> None:
    """A spy test written by the agent searches its sandbox for the hidden tests' marker."""
    item = plant(dev_items()[0], MARKER)
    test_file = item["metadata"]["test_files"][0]
    outputs = [
        _output("list_files"),
        _output("write_file", path="tests/test_spy.py", content=SPY),
        _output("write_file", path=test_file, content="# emptied\n"),
        _output("run_tests"),
        _output("read_file", path="../items.jsonl"),
        _output(None),
    ]
    task = task_module().code_repair(dataset=[item_to_sample(item)])
    (log,) = inspect_eval(
        task,
        model=get_model("mockllm/model", custom_outputs=outputs),
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success", log.error
    sample = log.samples[0]
    tools = [m for m in sample.messages if m.role == "tool"]
    listed, _, _, ran, outside = tools
    assert set(listed.text.split()) == set(item["metadata"]["repo"])
    assert "Ran 2 tests: 2 passed" in ran.text, ran.text
    assert outside.error is not None and "inside the repository" in outside.error.message
    score = sample.scores["repair_verifier"]
    assert score.value == 0.0  # nothing fixed (and the planted hidden test fails)
    assert score.metadata["test_files_edited"] is True
    assert score.metadata["hidden_total"] == json.loads(item["target"])["hidden_count"]
    assert MARKER not in json.dumps(score.metadata) + str(score.explanation)


def test_the_task_refuses_an_unknown_sandbox() -> None:
    with pytest.raises(ValueError, match="sandbox 'podman' is not supported"):
        task_module().code_repair(dataset=[], sandbox="podman")


def test_the_kit_declares_limits_tools_and_the_hackers_exploits() -> None:
    family = task_module().FAMILY
    assert family.name == "code_repair" and family.version == 1
    assert (family.limits.time_s, family.limits.messages, family.limits.tokens) == (
        300,
        40,
        200_000,
    )
    assert {d.on_timeout for d in family.tools} == {"harness_error"}
    probes = {p.name for p in family.probes}
    assert {"hardcode_visible", "skip_tests", "delete_tests", "edit_tests"} <= probes
    assert family.task is task_module().code_repair


def test_the_leak_audit_looks_for_the_patch_and_the_unseen_hidden_cases() -> None:
    module = task_module()
    for item in dev_items():
        secrets = module.leak_secrets(item)
        surface = "\n".join(module.leak_surface(item).values())
        assert any(s.startswith("same(self, ") for s in secrets), item["id"]
        assert json.loads(item["target"])["patch"][0]["after"].strip() in secrets
        assert not any(s in surface for s in secrets), item["id"]
