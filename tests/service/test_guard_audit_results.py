"""`service.guard_report` and `AuditResult`: typed results, one view each, rendered alike.

Also the check that the terminal and the Markdown renderings of every view of this change
(adaptive, validity, audit, guard) carry the same numbers.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from evalsuite._core.jsonout import dumps_json
from evalsuite._core.layout import Layout
from evalsuite.cli import cli
from evalsuite.cli._views import print_view
from evalsuite.guard import GuardOptions, GuardReport
from evalsuite.report import render_view_markdown
from evalsuite.service import (
    AdaptiveResult,
    AuditResult,
    ResultView,
    adaptive_view,
    audit_view,
    guard_report,
    guard_view,
    triage_view,
    validity_view,
)
from tests.helpers import Project
from tests.run.conftest import MARKER, make_probe_project
from tests.service.test_adaptive_views import TARGET, VERSUS
from tests.service.test_stage_views import _graders, _guard, _leaks, _validity_payload


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    return make_probe_project(tmp_path_factory.mktemp("guard"), n_per_stratum=4)


def test_guard_report_is_the_typed_report_and_the_cli_renders_its_view(
    project: Project, tmp_path: Path
) -> None:
    leaked = tmp_path / "curriculum.jsonl"
    leaked.write_text(
        json.dumps({"text": f"{MARKER} question alpha 1: please look up the value of alpha01"})
        + "\n"
        + json.dumps({"text": "nothing to see here at all"})
        + "\n"
    )
    sizes: list[int] = []
    report = guard_report(
        Layout(project.root), [leaked], options=GuardOptions(), total=sizes.append
    )
    assert isinstance(report, GuardReport)
    assert report.documents_scanned == 2 and report.documents_flagged == 1
    assert sizes == [leaked.stat().st_size]
    view = guard_view(report)
    assert view.headline.startswith("CONTAMINATED: 1 document(s)")
    assert view == guard_view(report.to_dict())  # the typed result and its JSON: one view
    out = CliRunner().invoke(cli, ["--root", str(project.root), "guard", str(leaked), "--json"])
    assert out.exit_code == 4, out.output
    printed = json.loads(out.stdout)
    assert printed["documents_flagged"] == 1 and printed["contaminated"][0]["how"]
    assert printed["headline"].startswith("CONTAMINATED: 1 document(s)")


def test_audit_result_is_typed_and_its_json_is_the_audit_payload() -> None:
    result = AuditResult.from_dict({"graders": _graders(ok=False), "leaks": _leaks(found=True)})
    assert result.graders_ok is False and result.memorised is None
    assert result.leaking_items and all(" " in item for item in result.leaking_items)
    assert set(result.to_dict()) == {"graders", "leaks"}
    view = audit_view(result)
    assert view == audit_view(result.to_dict())
    assert "grader audit FAILED" in view.headline and "LEAKS" in view.headline
    assert AuditResult().to_dict() == {} and audit_view(AuditResult()).headline.endswith(
        "nothing audited."
    )


def test_the_audit_command_prints_the_view_of_its_result(project: Project) -> None:
    out = project.invoke("audit", "probe@1.0.0", "--leaks", "--skip-holdout", "--json")
    printed = json.loads(out.stdout)
    assert set(printed) >= {"leaks", "headline", "caveats"}
    result = AuditResult.from_dict(printed)
    assert result.leaks is not None and result.leaks.to_dict() == printed["leaks"]
    assert printed["headline"] == audit_view(result).headline


# ----------------------------------------------------------------------------- same numbers

NUMBER = re.compile(r"[−+-]?\d+(?:\.\d+)?%?")


def _views() -> list[ResultView]:
    return [
        adaptive_view(AdaptiveResult.from_dict(TARGET)),
        adaptive_view(AdaptiveResult.from_dict(VERSUS)),
        validity_view(_validity_payload()),
        audit_view(
            AuditResult.from_dict({"graders": _graders(ok=False), "leaks": _leaks(found=True)})
        ),
        guard_view(_guard(3)),
    ]


@pytest.mark.parametrize("index", range(5))
def test_terminal_and_markdown_carry_the_same_numbers(index: int) -> None:
    view = _views()[index]
    buffer = io.StringIO()
    print_view(Console(file=buffer, width=400, color_system=None), view, wide=True)
    terminal = buffer.getvalue()
    markdown = render_view_markdown(view)
    assert sorted(NUMBER.findall(terminal)) == sorted(NUMBER.findall(markdown))
    assert NUMBER.findall(view.headline)  # a view with numbers, not an empty check
    # and the JSON carries the same sentences
    payload = json.loads(dumps_json(view.to_dict()))
    assert payload["headline"] == view.headline


# ----------------------------------------------------------------------------- triage

TRIAGE: dict[str, object] = {
    "suite": "arith",
    "against": "arith@2.0.0",
    "funnel": {"candidates": 3, "keep": 1, "fix": 1, "drop": 1},
    "reasons": {"unsolvable": 1, "duplicate": 1},
    "items": [
        {"item_id": "c-1", "family": "arith", "stratum": "add", "verdict": "keep",
         "reasons": [], "agents": {"baseline": 0.5}, "models": {}},
        {"item_id": "c-2", "family": "arith", "stratum": "add", "verdict": "fix",
         "reasons": [{"reason": "unsolvable", "detail": "the oracle scores 0"}],
         "agents": {}, "models": {}},
        {"item_id": "c-3", "family": "arith", "stratum": "mul", "verdict": "drop",
         "reasons": [{"reason": "duplicate", "detail": "same input text as item a-7"}],
         "agents": {}, "models": {}},
    ],
    "sources": {"audit": "the grader audit on 3 candidates"},
    "options": {"agents": [], "epochs": 2, "seed": 0, "runs": []},
}  # fmt: skip


class _Result:
    def to_dict(self) -> dict[str, object]:
        return dict(TRIAGE)


def test_triage_view_of_the_result_keeps_its_json_and_adds_the_sentences() -> None:
    view = triage_view(_Result(), kept_file="kept.jsonl")
    assert view == triage_view(TRIAGE | {"kept_file": "kept.jsonl"})
    assert view.headline == (
        "triage of 3 candidate(s) for arith (against arith@2.0.0): 1 keep, 1 fix, 1 drop."
    )
    assert "funnel: 3 candidates -> 1 kept" in view.facts
    assert "wrote 1 kept item(s) to kept.jsonl" in view.facts
    payload = view.to_dict()
    assert set(TRIAGE) | {"kept_file"} <= set(payload) and payload["kept_file"] == "kept.jsonl"
    assert [r[3] for r in view.tables[0].rows] == ["keep", "fix", "drop"]
    buffer = io.StringIO()
    print_view(Console(file=buffer, width=400, color_system=None), view)
    markdown = render_view_markdown(view)
    assert sorted(NUMBER.findall(buffer.getvalue())) == sorted(NUMBER.findall(markdown))
