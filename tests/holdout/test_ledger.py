from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from evalsuite.errors import HoldoutAccessError, LedgerError
from evalsuite.holdout import (
    append_entry,
    budget_status,
    check_budget,
    model_family,
    read_ledger,
    verify_ledger,
)
from tests.helpers import Project, json_out
from tests.run.conftest import make_probe_project


def _fields(run_id: str, model: str = "acme/sft-step-10", reason: str | None = None) -> dict:
    return {
        "run_id": run_id,
        "suite": "s",
        "version": "1.0.0",
        "manifest_hash": "sha256:x",
        "model": model,
        "model_family": model_family(model),
        "user": "u",
        "host": "h",
        "at": "2026-11-30T00:00:00+00:00",
        "purpose": None,
        "override_reason": reason,
        "resumed": False,
    }


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("hf/acme-sft-step-1200", "hf/acme-sft"),
        ("acme/sft-ckpt3", "acme/sft"),
        ("openai/gpt-4o-2024-08-06", "openai/gpt-4o"),
        ("vllm/llama@rev2", "vllm/llama"),
        ("evalsuite/improved", "evalsuite/improved"),
        ("x/model-7", "x/model-7"),
        ("acme/run_iter500", "acme/run"),
        ("meta/llama-3-8b", "meta/llama-3-8b"),
    ],
)
def test_model_family(model: str, family: str) -> None:
    assert model_family(model) == family


def test_chain_detects_edits_deletions_and_reordering(tmp_path: Path) -> None:
    path = tmp_path / "ACCESS.jsonl"
    for i in range(4):
        append_entry(path, _fields(f"r{i}"))
    assert verify_ledger(path).ok
    lines = path.read_text().splitlines()
    edited = lines.copy()
    edited[1] = edited[1].replace('"u"', '"someone-else"')
    path.write_text("\n".join(edited) + "\n")
    assert any("edited" in p for p in verify_ledger(path).problems)
    path.write_text("\n".join(lines[:1] + lines[2:]) + "\n")
    assert any("deleted" in p for p in verify_ledger(path).problems)
    path.write_text("\n".join([lines[1], lines[0], *lines[2:]]) + "\n")
    assert not verify_ledger(path).ok
    path.write_text("\n".join(lines[:3]) + "\n")  # newest entry deleted: chain still valid
    assert verify_ledger(path).ok
    assert "not in the ledger" in verify_ledger(path, holdout_runs=["r3"]).problems[0]
    path.write_text("\n".join(lines) + "\n"[:0])
    assert "incomplete" in verify_ledger(path).problems[0]


def test_no_append_to_a_broken_chain(tmp_path: Path) -> None:
    path = tmp_path / "ACCESS.jsonl"
    append_entry(path, _fields("r0"))
    path.write_text(path.read_text().replace('"h"', '"x"'))
    with pytest.raises(LedgerError, match="refusing to append"):
        append_entry(path, _fields("r1"))


def test_concurrent_appends_all_land_in_one_chain(tmp_path: Path) -> None:
    path = tmp_path / "ACCESS.jsonl"
    threads = [
        threading.Thread(target=append_entry, args=(path, _fields(f"r{i}"))) for i in range(12)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    entries = read_ledger(path)
    assert sorted(e.run_id for e in entries) == sorted(f"r{i}" for i in range(12))
    assert [e.seq for e in entries] == list(range(1, 13))
    assert verify_ledger(path).ok


def test_budget_counts_distinct_runs_per_family(tmp_path: Path) -> None:
    path = tmp_path / "ACCESS.jsonl"
    append_entry(path, _fields("a", "acme/sft-step-1"))
    append_entry(path, _fields("a", "acme/sft-step-1") | {"resumed": True})
    append_entry(path, _fields("b", "acme/sft-step-2"))
    append_entry(path, _fields("c", "other/model"))
    status = budget_status(read_ledger(path), suite="s", version="1.0.0", budget=2)
    assert status.used("acme/sft") == 2
    assert status.used("other/model") == 1
    with pytest.raises(HoldoutAccessError, match="budget is 2"):
        check_budget(status, "acme/sft", override_reason=None)
    check_budget(status, "acme/sft", override_reason="release candidate sign-off")
    check_budget(status, "other/model", override_reason=None)


def _holdout_run(project: Project, *extra: str) -> tuple[int, dict | None, str]:
    result = project.invoke(
        "run",
        "probe@1.0.0",
        "--split",
        "holdout",
        "--model",
        "fakeagent/x",
        "--limit",
        "2",
        "--no-progress",
        "--json",
        *extra,
    )
    payload = json.loads(result.stdout) if result.stdout.strip() else None
    return result.exit_code, payload, result.stderr


def test_holdout_runs_are_ledgered_budgeted_and_overridable(tmp_path: Path) -> None:
    project = make_probe_project(tmp_path)
    ledger = project.root / "holdout" / "probe" / "ACCESS.jsonl"
    for i in range(3):
        code, _, err = _holdout_run(project, "--purpose", f"look {i}")
        assert code == 0, err
    entries = read_ledger(ledger)
    assert [e.purpose for e in entries] == ["look 0", "look 1", "look 2"]
    assert entries[0].model_family == "fakeagent/x"
    code, _payload, err = _holdout_run(project)
    assert code == 7
    assert "budget is 3" in err
    assert "--override-reason" in err
    assert len(read_ledger(ledger)) == 3  # a refused run leaves no entry
    code, _, err = _holdout_run(project, "--override-reason", "final sign-off")
    assert code == 0, err
    assert read_ledger(ledger)[-1].override_reason == "final sign-off"
    status = json_out(project.invoke("holdout", "status", "probe@1.0.0", "--json"))
    assert status["families"][0]["runs"] == 4
    assert status["overrides"][0]["reason"] == "final sign-off"
    # dev runs are not holdout accesses
    assert (
        project.invoke(
            "run", "probe@1.0.0", "--model", "fakeagent/x", "--limit", "1", "--no-progress"
        ).exit_code
        == 0
    )
    assert len(read_ledger(ledger)) == 4
    assert project.invoke("verify", "probe").exit_code == 0


def test_verify_catches_an_edited_or_deleted_ledger_line(tmp_path: Path) -> None:
    project = make_probe_project(tmp_path)
    for _ in range(2):
        assert _holdout_run(project)[0] == 0
    ledger = project.root / "holdout" / "probe" / "ACCESS.jsonl"
    original = ledger.read_text()
    lines = original.splitlines()
    for i in range(len(lines)):
        edited = lines.copy()
        edited[i] = edited[i].replace('"purpose": null', '"purpose": "x"')
        ledger.write_text("\n".join(edited) + "\n")
        result = project.invoke("verify", "probe", "--json")
        assert result.exit_code == 3
        assert any("edited" in p for p in json_out(result)["suites"][0]["problems"])
    ledger.write_text(lines[0] + "\n")  # the newest entry deleted
    result = project.invoke("verify", "probe")
    assert result.exit_code == 3
    assert "not in the ledger" in result.stdout
    ledger.write_text(original)
    assert project.invoke("verify", "probe").exit_code == 0
