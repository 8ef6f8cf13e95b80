from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    modelapi,
)
from inspect_ai.tool import ToolInfo

from evalsuite.audit import split_canary
from evalsuite.holdout import read_ledger, verify_ledger
from tests.helpers import CANARY, Project, json_out, make_items, make_project
from tests.run.fake_models import FakeAPI

TASK = """
from inspect_ai import Task, task


@task
def fam(dataset=None):
    return Task(dataset=list(dataset or []))
"""

HOOKED_TASK = (
    TASK
    + """

def leak_surface(payload):
    return {"input": payload["input"], "state": payload["metadata"].get("notes", "")}
"""
)


def _project(tmp_path: Path, records: list[dict[str, Any]], task: str = TASK) -> Project:
    project = make_project(tmp_path, records=records)
    (project.root / "tasks" / "fam" / "task.py").write_text(task)
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0
    return project


def test_clean_suite_has_no_leaks(tmp_path: Path) -> None:
    project = _project(tmp_path, make_items())
    result = project.invoke("audit", "demo@1.0.0", "--leaks", "--json")
    assert result.exit_code == 0, result.stderr
    out = json_out(result)["leaks"]
    assert out["checked"] == {"dev": 6, "holdout": 6}
    assert out["findings"] == []


def test_the_leak_audit_records_its_decryption_in_the_ledger_spending_no_budget(
    tmp_path: Path,
) -> None:
    """Issue 28 point 14: `audit --leaks` decrypted the holdout with no ledger entry."""
    project = _project(tmp_path, make_items())
    ledger = project.root / "holdout" / "demo" / "ACCESS.jsonl"
    assert project.invoke("audit", "demo", "--leaks", "--skip-holdout").exit_code == 0
    assert not ledger.exists()  # nothing decrypted, nothing recorded
    assert project.invoke("audit", "demo@1.0.0", "--leaks", "--json").exit_code == 0
    (entry,) = read_ledger(ledger)
    assert (entry.kind, entry.suite, entry.version, entry.run_id) == (
        "decrypt",
        "demo",
        "1.0.0",
        "",
    )
    assert entry.reason is not None and "leak audit" in entry.reason
    assert verify_ledger(ledger).ok
    status = json_out(project.invoke("holdout", "status", "demo@1.0.0", "--json"))
    assert status["families"] == []  # no look spent by anyone
    assert project.invoke("verify", "demo").exit_code == 0  # needs no run in the store
    ledger.write_text(ledger.read_text().replace("leak audit", "nothing"))  # damaged
    refused = project.invoke("audit", "demo", "--leaks")
    assert refused.exit_code == 3 and "damaged" in refused.stderr


def test_a_planted_leak_is_flagged_in_dev_and_holdout(tmp_path: Path) -> None:
    items = make_items()
    for item in items:
        if item["id"] in ("add-001", "mul-004"):
            item["input"] += f" (hint: the answer is {item['target'].upper()})"
    project = _project(tmp_path, items)
    result = project.invoke("audit", "demo@1.0.0", "--json")
    assert result.exit_code == 3
    findings = json_out(result)["leaks"]["findings"]
    assert sorted(f["item_id"] for f in findings) == ["add-001", "mul-004"]
    assert {f["surface"] for f in findings} == {"input"}
    assert "answer-" not in result.stdout  # ids and surfaces only, never the text
    headline = json_out(result)["headline"]  # the audit view's sentence
    assert headline == "demo@1.0.0: LEAKS in 2 of 6 dev and 6 holdout items."
    text = project.invoke("audit", "demo@1.0.0")
    assert text.exit_code == 3
    lines = text.stdout.splitlines()
    assert lines[0].startswith("LEAKS: 2 item(s) show their target to the agent")  # first
    assert "{'dev'" not in text.stdout and "answer-" not in text.stdout


def test_a_long_target_leaking_in_part_is_flagged(tmp_path: Path) -> None:
    items = make_items()
    long_target = "the pump must be restarted after the valve on line three is closed by hand"
    items[0]["target"] = long_target
    items[0]["files"] = {"notes.txt": "Ops log: " + " ".join(long_target.split()[2:11])}
    project = _project(tmp_path, items)
    findings = json_out(project.invoke("audit", "demo", "--json"))["leaks"]["findings"]
    assert [(f["item_id"], f["surface"]) for f in findings] == [(items[0]["id"], "file:notes.txt")]
    assert "8 consecutive words" in findings[0]["how"]


def test_family_hooks_define_the_readable_state(tmp_path: Path) -> None:
    items = make_items()
    items[3]["metadata"]["notes"] = f"internal: resolve with {items[3]['target']}"
    project = _project(tmp_path, items, task=HOOKED_TASK)
    findings = json_out(project.invoke("audit", "demo", "--json"))["leaks"]["findings"]
    assert [(f["item_id"], f["surface"]) for f in findings] == [(items[3]["id"], "state")]


def test_shipped_suites_have_no_leaks(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from evalsuite.cli import cli
    from tests.helpers import REPO

    root = tmp_path / "shipped"  # a copy: the audit records its decryptions in the ledger
    for part in ("tasks", "manifests", "holdout"):
        shutil.copytree(REPO / part, root / part, ignore=shutil.ignore_patterns("__pycache__"))
    for suite in json.loads(
        CliRunner().invoke(cli, ["--root", str(root), "suites", "--json"]).stdout
    )["suites"]:
        if not suite["versions"]:
            continue
        result = CliRunner().invoke(
            cli,
            ["--root", str(root), "audit", suite["suite"], "--json"],
            env={"EVALSUITE_KEY_DIR": str(tmp_path / "keys")},  # the ledger heads go there
        )
        assert result.exit_code == 0, result.stdout + result.stderr
        assert json_out(result)["leaks"]["findings"] == []


class _Parrot(FakeAPI):
    """Knows the canary (model_args: canary=...) or not."""

    async def respond(
        self, input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
    ) -> ModelOutput:
        canary = str(self.args.get("canary", ""))
        _prefix, hidden = split_canary(canary) if canary else ("", "no idea")
        return ModelOutput.from_content(self.model_name, hidden)


@modelapi(name="parrot")
def parrot() -> type[ModelAPI]:
    return _Parrot


def test_canary_probe(tmp_path: Path) -> None:
    project = _project(tmp_path, make_items())
    clean = project.invoke("audit", "demo", "--canary-probe", "--model", "parrot/x", "--json")
    assert clean.exit_code == 0, clean.stderr
    assert json_out(clean)["canary_probe"]["memorised"] is False
    leaked = project.invoke(
        "audit", "demo", "--canary-probe", "--model", "parrot/x", "-M", f"canary={CANARY}", "--json"
    )
    assert leaked.exit_code == 4
    probe = json_out(leaked)["canary_probe"]
    assert probe["memorised"] is True
    assert probe["completions_matching"] == 5


def test_canary_probe_needs_a_model(tmp_path: Path) -> None:
    project = _project(tmp_path, make_items())
    result = project.invoke("audit", "demo", "--canary-probe")
    assert result.exit_code == 2
    assert "--canary-probe needs --model" in result.stderr


@pytest.mark.parametrize("canary", [CANARY, "short-canary-0123456789"])
def test_split_canary_hides_enough(canary: str) -> None:
    prefix, hidden = split_canary(canary)
    assert prefix + hidden == canary
    assert len(hidden) >= 12
    assert len(prefix) >= 8
