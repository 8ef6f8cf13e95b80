"""`service.verify` and `service.holdout_status`: typed results with one view each (issue 30).

`verify` prints its view with click alone (no rich: docs/design/startup.md); `holdout status`
with rich; both write the view's JSON (today's fields). Bad input stays a clear error.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalsuite._core.layout import Layout
from evalsuite.cli._verify_cmd import _action_space  # the runner's check, passed in by the CLI
from evalsuite.errors import IntegrityError, NotFoundError
from evalsuite.manifest import KeySpec
from evalsuite.service import (
    GovernanceCheck,
    HoldoutStatus,
    VerifiedSuite,
    VerifyResult,
    check_governance,
    holdout_status,
    holdout_status_view,
    stored_runs,
    verify,
    verify_view,
)
from tests.helpers import Project, json_out, make_project, write_jsonl
from tests.service.renderers import assert_same_rows


@pytest.fixture
def frozen(tmp_path: Path) -> Project:
    project = make_project(tmp_path)
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0
    return project


def _verify(project: Project, targets: list[tuple[str, str | None]] | None = None) -> VerifyResult:
    layout = Layout(project.root)
    keys = KeySpec(key_dir=project.key_dir, key_file=None, project=project.root)
    return verify(layout, keys, project.key_dir, project.store_url, _action_space, targets)


def test_verify_returns_a_typed_result_and_one_view(frozen: Project) -> None:
    result = _verify(frozen)
    assert isinstance(result, VerifyResult) and result.ok and not result.integrity_failed
    (suite,) = result.suites
    assert isinstance(suite, VerifiedSuite) and suite.ref == "demo@1.0.0"
    assert suite.report.dev_checked > 0 and suite.audit is not None
    view = verify_view(result)
    assert view.kind == "verify" and view.headline == "OK: 1 suite version(s) verified"
    assert view.tables[0].rows[0][:2] == ("demo@1.0.0", "OK")
    assert_same_rows(view)
    # the command prints the same view (plain text) and writes its JSON, fields kept
    text = frozen.invoke("verify", "demo")
    assert text.exit_code == 0 and view.headline in text.stdout
    assert "demo@1.0.0  OK" in text.stdout
    payload = json_out(frozen.invoke("verify", "demo", "--json"))
    assert payload["ok"] is True and payload["headline"] == view.headline
    assert (
        json.loads(json.dumps(result.to_dict()))["suites"][0].keys() <= payload["suites"][0].keys()
    )


def test_a_drifted_item_is_an_alert_naming_it_and_exits_3(frozen: Project) -> None:
    records = frozen.read_items()
    victim = records[2]
    victim["input"] = victim["input"][:-1] + "!"
    write_jsonl(frozen.items_path(), records)
    result = _verify(frozen, [("demo", "1.0.0")])
    assert not result.ok and result.integrity_failed and result.failed == ["demo@1.0.0"]
    view = verify_view(result)
    assert view.headline.startswith("FAILED: demo@1.0.0")
    assert any(victim["id"] in alert and "drifted" in alert for alert in view.alerts)
    assert victim["input"] not in " ".join(view.alerts)  # ids, never content
    cli = frozen.invoke("verify", "demo")
    assert cli.exit_code == 3 and victim["id"] in cli.stdout


def test_verify_of_unknown_suite_or_version_is_a_clear_error(frozen: Project) -> None:
    with pytest.raises(NotFoundError, match="nosuch"):
        _verify(frozen, [("nosuch", None)])
    result = frozen.invoke("verify", "demo@9.9.9")
    assert result.exit_code in (2, 3) and "9.9.9" in result.stdout + result.stderr


def test_governance_is_a_service_use_case(frozen: Project) -> None:
    layout = Layout(frozen.root)
    runs, store = stored_runs(layout, None)
    assert runs == [] and "does not exist" in store
    check = check_governance(layout, frozen.key_dir, "demo", "1.0.0", None, runs, store)
    assert isinstance(check, GovernanceCheck) and check.problems == () and check.entries == ()
    with pytest.raises(AttributeError):
        check.problems = ("x",)  # type: ignore[misc]


def test_holdout_status_returns_a_typed_result_and_one_view(frozen: Project) -> None:
    layout = Layout(frozen.root)
    status = holdout_status(layout, frozen.key_dir, None, "demo", "1.0.0")
    assert isinstance(status, HoldoutStatus) and status.ref == "demo@1.0.0"
    assert status.ledger_entries == 0 and status.budget.runs_by_family == {}
    view = holdout_status_view(status)
    assert "no holdout runs yet" in view.headline and view.tables == ()
    assert_same_rows(view)
    payload = json_out(frozen.invoke("holdout", "status", "demo@1.0.0", "--json"))
    assert set(status.to_dict()) <= set(payload)
    assert {"budget_per_family", "families", "ledger_entries", "ledger", "store"} <= set(payload)
    text = frozen.invoke("holdout", "status", "demo@1.0.0")
    assert text.exit_code == 0 and "holdout budget" in text.stdout


def test_holdout_status_bad_input_and_a_broken_ledger(frozen: Project) -> None:
    layout = Layout(frozen.root)
    with pytest.raises(NotFoundError):
        holdout_status(layout, frozen.key_dir, None, "demo", "9.9.9")
    assert frozen.invoke("holdout", "status", "demo@9.9.9").exit_code == 2
    assert frozen.invoke("holdout", "status", "nosuch@1.0.0").exit_code == 2
    ledger = layout.ledger_file("demo")
    ledger.parent.mkdir(parents=True, exist_ok=True)
    ledger.write_text("not json\n", encoding="utf-8")
    with pytest.raises(IntegrityError, match="cannot be trusted"):
        holdout_status(layout, frozen.key_dir, None, "demo", "1.0.0")
    assert frozen.invoke("holdout", "status", "demo@1.0.0").exit_code == 3


def test_a_holdout_view_with_runs_lays_out_its_families() -> None:
    from evalsuite.holdout import BudgetStatus

    at = "2026-01-02T03:04:05.678+00:00"
    change = {"model": "m", "model_family": "acme", "user": "u", "at": at, "reason": "renamed"}
    budget = BudgetStatus(
        suite="demo",
        version="1.0.0",
        budget=2,
        runs_by_family={"acme": ["r1", "r2"], "other": ["r3"]},
        family_changes=[change],
    )
    status = HoldoutStatus(budget, Path("holdout/demo/ACCESS.jsonl"), 4, "sqlite:///x", {})
    view = holdout_status_view(status)
    assert view.tables[0].rows == (("acme", "2", "0 (spent)", "r1, r2"), ("other", "1", "1", "r3"))
    assert view.alerts == ("holdout budget spent by model family acme",)
    assert "by u at 2026-01-02 03:04 UTC: renamed" in view.facts[0]  # to the minute
    assert_same_rows(view)
