"""The adversarial grader audit (issue 29): generated red-team policies, the shortcut detector,
team policies (``--policies FILE``), every policy's score per stratum, the red-team report.

Toy families (`toy_redteam/task.py`): a positional shortcut (the survivor of a merge always
named first) is named by the shortcut detector and passed by the generated blind policy; the
same merges with the ids not in the ticket pass both; a grader that regex-searches the reply
is passed by the kitchen-sink reply, a strict one is not. Each toy audit is about 10 s of
episodes. The shipped versions with the holes issue 29 names are audited in the slow tests.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalsuite.audit._adversary import redteam_report
from evalsuite.audit._record import pinned_part
from evalsuite.audit._redteam import entities, generated_policies, shape_of, template_of
from evalsuite.audit._shortcut import binomial_tail, find_shortcuts
from evalsuite.kit import Episode, NextCall, RedTeam, RedTeamError, ToolResult, redacted
from tests.audit.toy import toy_redteam_project
from tests.helpers import Project, json_out


def _audit(
    root: Path, plant: str, *extra: str, references: tuple[str, ...] = ()
) -> tuple[Project, int, dict[str, Any]]:
    project = toy_redteam_project(root, plant, references=references)
    frozen = project.invoke("freeze", "red", "--version", "1.0.0", "--skip-audit", "--reason", "t")
    assert frozen.exit_code == 0, frozen.stderr
    result = project.invoke("audit", "red@1.0.0", "--graders", "--json", *extra)
    return project, result.exit_code, json_out(result)["graders"]


def _checks(graders: dict[str, Any]) -> dict[str, dict[str, Any]]:
    (family,) = graders["families"]
    return {c["check"] + (f"/{c['policy']}" if c["policy"] else ""): c for c in family["checks"]}


@pytest.fixture(scope="module")
def positional(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any]]:
    # mockllm/model answers with text only: a reference agent that scores 0 everywhere
    _, code, graders = _audit(
        tmp_path_factory.mktemp("positional"), "positional", references=("mockllm/model",)
    )
    return code, graders


@pytest.fixture(scope="module")
def hidden(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, int, dict[str, Any]]:
    return _audit(tmp_path_factory.mktemp("hidden"), "hidden")


def test_a_positional_shortcut_is_named_and_the_blind_policy_fails_the_audit(
    positional: tuple[int, dict[str, Any]],
) -> None:
    code, graders = positional
    assert code == 3
    checks = _checks(graders)
    shortcut = checks["shortcut"]
    assert shortcut["status"] == "failed"
    survivor = shortcut["strata"]["red/merge :: survivor"]
    assert survivor["failed"] and survivor["feature"] in ("ordinal", "first", "last", "combined")
    assert survivor["accuracy"] == 1.0 and survivor["chance"] == 0.5 and survivor["p_value"] < 0.01
    assert survivor["predicted"] == shortcut["items"] != []
    blind = checks["redteam/blind_oracle_order"]
    assert blind["status"] == "failed"
    assert blind["strata"]["red/merge"]["mean"] == 1.0
    assert blind["items"] == survivor["predicted"]  # every dev item, named
    # "merge the second-named into the first" is what the blind policy played; "first" and
    # "second" for both slots merge a contact into itself
    assert checks["redteam/blind_first"]["status"] == "passed"
    assert checks["oracle"]["status"] == "passed"


def test_the_json_lists_every_policy_with_its_score_per_stratum(
    positional: tuple[int, dict[str, Any]],
) -> None:
    _, graders = positional
    (family,) = graders["families"]
    listed = {p["policy"]: p for p in family["policies"]}
    assert set(graders["schedule"]) | set(graders["redteam_schedule"]) <= set(listed)
    assert "reference:mockllm/model" in listed
    kinds = {p["kind"] for p in family["policies"]}
    assert {"built_in", "generated", "reference"} <= kinds
    for policy in family["policies"]:
        for values in policy["strata"].values():
            assert set(values) == {"mean", "passed", "items"}
    assert listed["blind_oracle_order"]["strata"]["red/merge"]["passed"] > 0


def test_the_red_team_report_gives_the_margin_under_the_weakest_reference(
    positional: tuple[int, dict[str, Any]],
) -> None:
    _, graders = positional
    report = graders["families"][0]["redteam"]
    assert report["under"] == "reference" and report["weakest"] == "mockllm/model"
    assert report["weakest_mean"] == 0.0
    assert report["best"]["kind"] == "generated" and report["best"]["mean"] == 1.0
    assert report["margin"] == -1.0  # a cheap policy beats the weakest reference


def test_the_red_team_report_without_references_is_under_the_oracle() -> None:
    from tests.audit.toy_redteam import task as toy

    policies = [
        {"policy": "oracle", "kind": "built_in", "mean": 1.0},
        {"policy": "kitchen_sink", "kind": "generated", "mean": 0.25},
        {"policy": "tamper_x", "kind": "tamper", "mean": 0.9},  # not a cheap policy
    ]
    report = redteam_report(toy.FAMILY, policies)
    assert report["under"] == "oracle" and "no reference agent declared" in report["note"]
    assert report["best"]["policy"] == "kitchen_sink" and report["margin"] == 0.75


def test_a_family_without_the_shortcut_passes_both(
    hidden: tuple[Project, int, dict[str, Any]],
) -> None:
    _, code, graders = hidden
    assert code == 0, [c["summary"] for c in _checks(graders).values() if c["status"] == "failed"]
    checks = _checks(graders)
    assert checks["shortcut"]["status"] == "passed"
    generated = {k: c for k, c in checks.items() if k.startswith("redteam/")}
    assert len(generated) == 6 and {c["status"] for c in generated.values()} == {"passed"}


def test_the_kitchen_sink_reply_fails_a_grader_that_regex_searches_it(tmp_path: Path) -> None:
    _, code, graders = _audit(tmp_path / "regex", "regex")
    assert code == 3
    sink = _checks(graders)["redteam/kitchen_sink"]
    assert sink["status"] == "failed" and sink["strata"]["red/decline"]["mean"] == 1.0
    _, code, graders = _audit(tmp_path / "strict", "strict")
    assert _checks(graders)["redteam/kitchen_sink"]["status"] == "passed"
    assert code == 0


TEAM = '''
import re
from evalsuite.kit import RedTeam


def merge_as_found(ep):
    """Find the person's records and merge the second found into the first."""
    name = re.match(r"(.+) has two", ep.prompt)
    found = ep.call("find", name=name[1] if name else "").parsed() or []
    if len(found) == 2:
        ep.call("merge", survivor=found[0], duplicate=found[1])
    assert ep.target == "" and dict(ep.metadata) == {}  # redacted
    return "Merged."


POLICIES = [RedTeam("merge_as_found", merge_as_found, "merge in the order find lists them")]
SAY_DONE = RedTeam("say_done", lambda ep: "Done.", "say it is done", families=["other"])
'''


def test_policies_file_adds_a_team_policy_and_is_not_stored(
    hidden: tuple[Project, int, dict[str, Any]], tmp_path: Path
) -> None:
    project, _, _ = hidden
    team = tmp_path / "team.py"
    team.write_text(TEAM, encoding="utf-8")
    result = project.invoke("audit", "red@1.0.0", "--graders", "--json", "--policies", str(team))
    graders = json_out(result)["graders"]
    # the team found what the generated policies did not: `find` lists the ids sorted, and
    # the older contact always has the smaller id
    assert result.exit_code == 3
    check = _checks(graders)["team/team_merge_as_found"]
    assert check["status"] == "failed" and check["strata"]["red/merge"]["mean"] == 1.0
    assert "team_say_done" not in graders["redteam_schedule"]  # meant for another family
    listed = {p["policy"]: p for p in graders["families"][0]["policies"]}
    assert listed["team_merge_as_found"]["kind"] == "team"
    assert graders["stored"] is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (None, "no such file"),
        ("X = 1\n", "declares no red-team policy"),
        (
            "from evalsuite.kit import RedTeam\n"
            "P = [RedTeam('a', lambda ep: '', 'a'), 'not a policy']\n",
            "mixes RedTeam policies with str",
        ),
        (
            "from evalsuite.kit import RedTeam\nP = RedTeam('Bad Name', print, 'x')\n",
            "red-team name",
        ),
        ("raise SystemError('boom')\n", "importing it failed"),
    ],
)
def test_a_bad_policies_file_is_a_usage_error_and_nothing_is_written(
    hidden: tuple[Project, int, dict[str, Any]], tmp_path: Path, text: str | None, message: str
) -> None:
    project, _, _ = hidden
    team = tmp_path / "team.py"
    if text is not None:
        team.write_text(text, encoding="utf-8")
    before = sorted(p.name for p in (project.root / "manifests" / "red").iterdir())
    result = project.invoke("audit", "red@1.0.0", "--graders", "--policies", str(team))
    assert result.exit_code == 2
    assert message in " ".join(result.stderr.split())
    assert sorted(p.name for p in (project.root / "manifests" / "red").iterdir()) == before


# ---- units: no runner --------------------------------------------------------------------------
def _merge_trace(first: str, second: str, account: str) -> tuple[str, list[ToolResult], str]:
    prompt = f"Account {account} has two contact records: {first} and {second}. Merge them."
    calls = [
        ToolResult("refresh_record", {"kind": "contacts", "record_id": first}, "{}"),
        ToolResult("refresh_record", {"kind": "contacts", "record_id": second}, "{}"),
        ToolResult("merge_contacts", {"survivor_id": first, "duplicate_id": second}, "ok"),
    ]
    return prompt, calls, "Done: merged."


def _first_calls(policy: Any, prompt: str) -> list[tuple[str, dict[str, Any]]]:
    """Every call the policy makes, answering each with "{}"."""
    made: list[ToolResult] = []
    for _ in range(10):
        episode = Episode("x", 1, 0, prompt, "secret", {"k": 1}, frozenset(), tuple(made))
        try:
            policy(episode)
            break
        except NextCall as step:
            made.append(ToolResult(step.function, step.arguments, "{}"))
    return [(r.function, dict(r.arguments)) for r in made]


def test_merge_the_second_named_into_the_first_falls_out_of_the_oracle_templates() -> None:
    templates = [
        template_of(*_merge_trace("P-31290", "P-98602", "A-2031")),
        template_of(*_merge_trace("P-52659", "P-14503", "A-3825")),
    ]
    prompt = "Account A-4518 has two contact records: P-91431 and P-69881. Merge them."
    policies = generated_policies(prompt, templates)
    calls = _first_calls(policies["blind_oracle_order"], prompt)
    assert calls[-1] == ("merge_contacts", {"survivor_id": "P-91431", "duplicate_id": "P-69881"})
    assert _first_calls(policies["blind_last"], prompt)[-1][1]["survivor_id"] == "P-69881"


def test_shapes_and_entities() -> None:
    assert shape_of("P-31290") == r"P-\d+" and shape_of("closed") is None
    assert shape_of("BA20 8GP") == r"[A-Z]+\d+\s+\d+[A-Z]+"
    text = "From a.b@x.example.org about O-12 (and O-13, O-12)."
    assert entities(text, r"O-\d+") == ["O-12", "O-13"]
    assert entities(text, shape_of("c@y.example.com") or "") == ["a.b@x.example.org"]


def test_redacted_episodes_carry_no_target_and_no_metadata() -> None:
    episode = Episode("x", 1, 0, "prompt", "the answer", {"secret": 1}, frozenset({"t"}))
    seen = redacted(episode)
    assert (seen.target, dict(seen.metadata), seen.prompt, seen.tools) == (
        "",
        {},
        "prompt",
        frozenset({"t"}),
    )
    with pytest.raises(RedTeamError):
        RedTeam("ok", "not callable", "x")  # type: ignore[arg-type]


def test_the_shortcut_detector_needs_a_significant_effect() -> None:
    assert binomial_tail(7, 7, 0.5) == pytest.approx(0.5**7)
    items = [
        (f"i{n}", "s/merge", f"Merge P-{100 + n} and P-{900 + n} (older first).", f"P-{100 + n}")
        for n in range(8)
    ]
    (finding,) = find_shortcuts(items)
    assert finding.shortcut and finding.accuracy == 1.0
    (harmless,) = find_shortcuts(items[:4] + items[4:], {"target": "declared"}) or [None]
    assert harmless is None  # a declared harmless leaf is not examined


def test_pinned_part_keeps_what_the_frozen_results_recorded() -> None:
    frozen = {
        "ok": True,
        "schedule": ["oracle"],
        "families": [{"family": "f", "ok": True, "checks": [{"check": "null", "policy": None}]}],
    }
    fresh = {
        "ok": False,
        "schedule": ["oracle"],
        "redteam_schedule": ["kitchen_sink"],
        "families": [
            {
                "family": "f",
                "ok": False,
                "checks": [
                    {"check": "null", "policy": None},
                    {"check": "redteam", "policy": "kitchen_sink", "status": "failed"},
                ],
                "policies": [],
            }
        ],
    }
    assert pinned_part(fresh, frozen) == json.loads(json.dumps(frozen))


# ---- the shipped versions issue 29 names (slow: 1 to 2 minutes of episodes each) ---------------
@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> Project:
    from tests.e2e.conftest import copy_project

    project = copy_project(tmp_path_factory.mktemp("redteam-shipped") / "project")
    # the shipped kits declare the reference agents the red-team margin is taken under
    for kit in ("support_desk/kit.py", "records_desk/kit.py"):
        assert "references=(" in (project.root / "tasks" / kit).read_text(encoding="utf-8")
    return project


def _failed_strata(graders: dict[str, Any], check: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for c in graders["families"][0]["checks"]:
        if c["check"] == check and c["status"] == "failed":
            found[c["policy"] or check] = {s for s, v in c["strata"].items() if v.get("failed")}
    return found


@pytest.mark.slow
def test_support_2_0_0_fails_on_its_decline_strata(shipped: Project) -> None:
    """Issue 29: "look up, verify with what the ticket states, decline citing the reasons,
    close" passed every decline stratum of support@2.0.0; the generated policies find it."""
    result = shipped.invoke("audit", "support@2.0.0", "--graders", "--per-stratum", "3", "--json")
    assert result.exit_code == 3
    graders = json_out(result)["graders"]
    failing = _failed_strata(graders, "redteam")
    named = set().union(*failing.values())
    assert {
        "support_desk/refund_outside_window/clean",
        "support_desk/refund_outside_window/messy",
        "support_desk/unverified_change/clean",
    } <= named
    assert "support_desk/refund_outside_window/clean" in failing["blind_oracle_order"]
    assert "support_desk/unverified_change/clean" in failing["kitchen_sink@improved"]
    report = graders["families"][0]["redteam"]
    assert report["under"] == "reference" and report["weakest"] == "evalsuite/baseline"
    # the kit's own trivial policies of issue 29 (act then decline: every item) now lead
    assert report["best"]["kind"] in {"generated", "trivial"}
    assert "red team, support_desk: best cheap policy" in " ".join(
        shipped.invoke("audit", "support@2.0.0", "--graders", "--per-stratum", "1").stdout.split()
    )


@pytest.mark.slow
def test_records_1_0_0_fails_on_merge_duplicates(shipped: Project) -> None:
    """Issue 29: "merge the second-named contact into the first" passed every merge."""
    result = shipped.invoke("audit", "records@1.0.0", "--graders", "--per-stratum", "5", "--json")
    assert result.exit_code == 3
    graders = json_out(result)["graders"]
    blind = _failed_strata(graders, "redteam")["blind_oracle_order"]
    assert {
        "records_desk/merge_duplicates/clean",
        "records_desk/merge_duplicates/stale_cache",
    } <= blind
    checks = _checks(graders)
    strata = checks["redteam/blind_oracle_order"]["strata"]
    assert strata["records_desk/merge_duplicates/clean"]["mean"] == 1.0
    shortcut = checks["shortcut"]["strata"]
    survivor = shortcut["records_desk/merge_duplicates/* :: operations[0].survivor"]
    assert survivor["failed"] and survivor["accuracy"] == 1.0
    assert "records-0005" in survivor["predicted"]
