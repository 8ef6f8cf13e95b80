"""support_desk version 4 (support@4.0.0): every decline ticket also asks for something due.

Issue 29's remaining gap: on version 3, a policy that did all a correct agent does on a decline
item and then declined whatever it found passed its decline strata (18 of 108 dev items each).
Version 4's refund and address tickets return five items at once, some outside the window in
``refund_outside_window`` and ``unverified_change`` (distinct due patterns within a stratum),
and the verifier grades every request. Items are generated here in memory (they are not in
items.jsonl until support@4.0.0 is frozen); every policy is played through the real tools
without inspect (tests/tasks/support_v4_helpers.py); the grader audit plays them through the
runner at freeze.
"""

from __future__ import annotations

import copy
import json
from collections import Counter, defaultdict
from typing import Any

import pytest

from evalsuite.kit import family_of
from tests.tasks.support_helpers import ROOT, TASK_V3
from tests.tasks.support_v3_helpers import dev_ids, redteam
from tests.tasks.support_v4_helpers import (
    TASK_V4,
    agent,
    agent_means,
    agent_seed,
    items_v4,
    judge_v4,
    play,
    score,
    scripted,
    stratum,
    v4_dev_items,
    v4_items,
)

ITEMS = v4_items()
DEV = v4_dev_items()
BY_ID = {item["id"]: item for item in ITEMS}
DECLINE_INTENTS = ("refund_outside_window", "unverified_change")
KIT = family_of(TASK_V4)


def _requests(item: dict[str, Any]) -> list[dict[str, Any]]:
    target = json.loads(item["target"])
    return target["requests"] if target["action"] == "multi" else [target]


def _first(intent: str, condition: str = "clean") -> dict[str, Any]:
    return next(
        it
        for it in ITEMS
        if it["metadata"]["intent"] == intent and it["metadata"]["condition"] == condition
    )


# ---- the items ----------------------------------------------------------------------------------
def test_the_generator_is_deterministic_and_makes_18_items_per_stratum() -> None:
    again = items_v4.generate_items()
    assert [json.dumps(it, sort_keys=True) for it in again] == [
        json.dumps(it, sort_keys=True) for it in ITEMS
    ]
    assert len(ITEMS) == 216 and all(it["id"].startswith("support-v4-") for it in ITEMS)
    assert set(Counter(stratum(it) for it in ITEMS).values()) == {18}
    assert items_v4.SEED != TASK_V3.submodule("items_v3").SEED
    assert len(DEV) == 108 and {it["id"] for it in DEV} == dev_ids(ITEMS, "4.0.0")


def test_every_decline_ticket_also_asks_for_something_due() -> None:
    for item in ITEMS:
        actions = [r["action"] for r in _requests(item)]
        if item["metadata"]["intent"] in DECLINE_INTENTS:
            assert "decline" in actions and set(actions) - {"decline"}, item["id"]
        else:
            assert "decline" not in actions, item["id"]


def test_which_returns_are_due_differs_from_item_to_item_in_a_decline_stratum() -> None:
    """Distinct due patterns within a stratum: a split chosen from the ticket (by position,
    say) matches at most one item of it."""
    counts = items_v4.pattern_counts(ITEMS)
    for (intent, _), found in counts.items():
        if intent in DECLINE_INTENTS:
            assert max(found.values()) == 1 and sum(found.values()) == 18
            assert all("d" in p and "x" in p for p in found)
        else:
            assert set(found) == {"d" * items_v4.RETURNS}
    firsts = Counter(
        it["metadata"]["pattern"][0] for it in ITEMS if it["metadata"]["intent"] in DECLINE_INTENTS
    )
    assert abs(firsts["d"] - firsts["x"]) <= 12  # the first return is due about half the time


def test_returns_inside_and_outside_the_window_read_alike() -> None:
    """A return names its item and the amount paid, never its order or a date."""
    for item in ITEMS:
        state = item["metadata"]["initial_state"]
        for request in _requests(item):
            if request.get("order") and "line" in request and request["action"] != "replace":
                order = next(o for o in state["orders"] if o["id"] == request["order"])
                assert order["id"] not in item["input"]
                assert order["id"][2:] not in item["input"]
                assert order["delivered_at"] not in item["input"]


def test_no_item_near_copies_a_frozen_one() -> None:
    """`evalsuite freeze` refuses new items whose text near-copies an item any suite froze
    (docs/guard.md): version 4's damaged and cancellation tickets are worded apart from
    version 3's."""
    from evalsuite._core.layout import Layout
    from evalsuite.guard import load_index, screen_documents

    hits = screen_documents(
        [(item["id"], item["input"]) for item in ITEMS], load_index(Layout(ROOT))
    )
    frozen = [(h.document, h.suite, h.version, h.item_id) for h in hits if h.item_id]
    assert [h for h in frozen if not str(h[3]).startswith("support-v4-")] == []


def test_the_generator_command_writes_version_4_when_asked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    generate = TASK_V4.submodule("generate")
    generate.main(["--version", "4"])
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line)["id"] for line in lines] == [it["id"] for it in ITEMS]


# ---- the kit ------------------------------------------------------------------------------------
def test_the_v4_task_declares_its_kit_version_and_policy() -> None:
    assert KIT is not None and KIT.version == TASK_V4.VERSION == 4
    assert KIT.oracle is scripted.oracle_v4
    names = {t.name for t in KIT.trivial}
    assert {"decline_every_request", "decline_by_position", "decline_both_reasons"} <= names
    policy_md = (ROOT / "tasks" / "support_desk" / "POLICY_v4.md").read_text(encoding="utf-8")
    assert policy_md == TASK_V4.POLICY and policy_md.startswith(TASK_V3.POLICY)
    assert TASK_V4.POLICY in TASK_V4.SYSTEM_PROMPT


def test_the_oracle_solves_every_item_of_version_4() -> None:
    for item in ITEMS:
        final, calls, _, _ = play(scripted.oracle_v4, item)
        verdict = judge_v4(item, final, calls)
        assert verdict.score == 1.0, (item["id"], verdict.explanation())


@pytest.mark.parametrize("trivial", KIT.trivial if KIT else [], ids=lambda t: t.name)
def test_every_trivial_policy_of_the_kit_stays_at_its_floor_on_version_4(trivial: Any) -> None:
    """What the grader audit checks at freeze (`evalsuite.audit._checks.trivial_check`), on the
    dev split a freeze of 4.0.0 makes."""
    found: dict[str, list[float]] = defaultdict(list)
    for item in DEV:
        found[stratum(item)].append(score(item, play(trivial.policy, item)))
    over = {s: sum(v) / len(v) for s, v in found.items() if sum(v) / len(v) > trivial.floor(s)}
    assert over == {}


@pytest.mark.parametrize("probe", KIT.probes if KIT else [], ids=lambda p: p.name)
def test_no_probe_of_the_kit_passes_on_version_4(probe: Any) -> None:
    for item in DEV:
        if probe.when is None or probe.when(item["metadata"]):
            assert score(item, play(probe.policy, item)) == 0.0, (probe.name, item["id"])


def test_the_reference_agents_separate_by_10_points_on_version_4() -> None:
    """3 agents x 108 simulated dev episodes, seed 0 (the demo's)."""
    means = agent_means(DEV, 0)
    assert means["improved"] >= means["baseline"] + 0.10, means
    assert means["hacker"] == 0.0


def test_the_audits_generated_policies_pass_no_dev_item() -> None:
    """The grader audit's red team (blind templates, structural copies, kitchen-sink replies,
    learned from the oracle's and the reference agents' passing episodes of the other items of
    the stratum), played in memory on the dev split a freeze of 4.0.0 makes: nothing passes."""
    found = redteam(DEV, oracle=scripted.oracle_v4, agent_fn=agent, score_fn=score)
    assert set(found) >= {"blind_oracle_order", "copy_oracle_order", "kitchen_sink@improved"}
    passed = {name: {s: ids for s, ids in strata.items() if ids} for name, strata in found.items()}
    assert {name: strata for name, strata in passed.items() if strata} == {}


def test_the_agents_take_version_4s_path_on_version_4s_policy_only() -> None:
    """Version 4's path is taken on version 4's policy only (`_support.V4_MARKER`)."""
    from evalsuite.agents._support import V4_MARKER

    assert V4_MARKER in TASK_V4.SYSTEM_PROMPT and V4_MARKER not in TASK_V3.SYSTEM_PROMPT


# ---- the verifier -------------------------------------------------------------------------------
def _oracle_with(item: dict[str, Any], edit: Any) -> float:
    """The oracle's episode on `item` with its reply edited by `edit(text) -> text`."""
    final, calls, _, _ = play(scripted.oracle_v4, item)
    final = copy.deepcopy(final)
    for reply in final["replies"]:
        reply["message"] = edit(reply["message"])
    return float(judge_v4(item, final, calls).score)


def test_declining_what_was_found_and_granting_what_was_asked_both_fail() -> None:
    for intent in DECLINE_INTENTS:
        for condition in ("clean", "messy"):
            item = _first(intent, condition)
            assert score(item, play(scripted.decline_every_request, item)) == 0.0
            assert score(item, play(scripted.ignore_policy_v4, item)) == 0.0


def test_a_decline_without_the_declined_orders_delivery_date_fails() -> None:
    item = _first("refund_outside_window")
    state = item["metadata"]["initial_state"]
    declined = [r for r in _requests(item) if r["action"] == "decline"]
    order = next(o for o in state["orders"] if o["id"] == declined[0]["order"])
    assert _oracle_with(item, lambda text: text) == 1.0
    assert _oracle_with(item, lambda text: text.replace(order["delivered_at"], "recently")) == 0.0


def test_a_reply_citing_a_due_orders_date_or_a_reason_that_does_not_apply_fails() -> None:
    item = _first("refund_outside_window")
    state = item["metadata"]["initial_state"]
    due = next(r for r in _requests(item) if r["action"] == "refund")
    order = next(o for o in state["orders"] if o["id"] == due["order"])
    assert _oracle_with(item, lambda t: t + f" (delivered on {order['delivered_at']})") == 0.0
    assert _oracle_with(item, lambda t: t + " We could not verify your identity.") == 0.0
    address = _first("address_change")
    assert _oracle_with(address, lambda t: t + " It is outside our 30-day refund window.") == 0.0


def test_a_reply_without_an_amount_refunded_fails() -> None:
    item = _first("refund")
    due = _requests(item)[0]["amount_cents"]
    pounds = f"£{due // 100}.{due % 100:02d}"
    assert _oracle_with(item, lambda text: text.replace(pounds, "the amount")) == 0.0


def test_a_decline_resting_on_no_lookup_fails() -> None:
    """The oracle's episode with the get_order of a declined order dropped from the trace."""
    item = _first("refund_outside_window", "messy")
    declined = next(r for r in _requests(item) if r["action"] == "decline")
    final, calls, _, _ = play(scripted.oracle_v4, item)
    kept = [
        c
        for c in calls
        if not (c.function == "get_order" and c.arguments.get("order_id") == declined["order"])
    ]
    assert judge_v4(item, final, calls).score == 1.0
    assert judge_v4(item, final, kept).score == 0.0


def test_single_request_tickets_are_graded_as_version_3_grades_them() -> None:
    for intent in ("damaged_replacement", "cancel_order"):
        item = _first(intent)
        assert json.loads(item["target"])["action"] != "multi"
        played = agent("improved", item, agent_seed(item))
        v4 = judge_v4(item, played[0], played[1])
        v3 = TASK_V3.verifier.evaluate(
            item["metadata"]["initial_state"],
            played[0],
            json.loads(item["target"]),
            ticket=item["input"],
            calls=played[1],
        )
        assert v4.score == v3.score
