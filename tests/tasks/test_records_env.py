"""records_desk: the environment, the generator and the verifier, without inspect (issue 14)."""

from __future__ import annotations

import copy
import json
from collections import Counter
from typing import Any

import pytest

from tests.tasks.records_helpers import TASK, dev_items, env, generate, play, scripted, verifier


def _item(intent: str, condition: str) -> dict[str, Any]:
    return next(
        i
        for i in dev_items()
        if i["metadata"]["intent"] == intent and i["metadata"]["condition"] == condition
    )


def _runtime(item: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    state = env.fresh_runtime(item["metadata"]["initial_state"])
    return state, env.Records(state)


def test_the_generator_is_seeded_and_the_dev_items_are_its_output() -> None:
    first, second = generate.generate_items(), generate.generate_items()
    assert first == second
    assert len(first) == 200
    strata = Counter((i["metadata"]["intent"], i["metadata"]["condition"]) for i in first)
    assert len(strata) == 20 and set(strata.values()) == {10}  # 5 intents x 4 conditions
    by_id = {i["id"]: i for i in first}
    dev = dev_items()
    assert len(dev) == 100
    for item in dev:  # the frozen dev split is exactly what the generator wrote
        assert by_id[item["id"]] == item
        assert item["canary"] == generate.CANARY


def test_every_item_is_solved_by_its_target_and_not_by_doing_nothing() -> None:
    for item in generate.generate_items():
        initial = item["metadata"]["initial_state"]
        assert env.state_hash(initial) == item["metadata"]["state_hash"]
        target = json.loads(item["target"])
        expected = env.apply_expected(initial, target["operations"])
        assert verifier.evaluate(initial, expected, target).passed, item["id"]
        untouched = verifier.evaluate(initial, initial["source"], target)
        assert not untouched.passed and untouched.checks["records_expected"] >= 1


def test_get_record_serves_the_stale_cached_copy_and_refresh_reads_the_source() -> None:
    item = _item("update_order_status", "stale_cache")
    order_id = json.loads(item["target"])["operations"][0]["id"]
    state, records = _runtime(item)
    cached = records.get("orders", order_id)
    assert cached["served_from"] == "cache"
    assert cached["cached_at"][:10] < state["today"]
    assert cached["record"]["status"] == "delivered"  # what the stale copy claims
    fresh = records.refresh("orders", order_id)
    assert (fresh["served_from"], fresh["record"]["status"]) == ("source", "shipped")
    assert records.get("orders", order_id)["record"]["status"] == "shipped"  # cache refreshed


def test_a_write_goes_to_the_source_and_drops_the_cached_copy() -> None:
    item = _item("fix_address", "stale_cache")
    op = json.loads(item["target"])["operations"][0]
    state, records = _runtime(item)
    assert f"contacts/{op['id']}" in state["cache"]
    records.update("contacts", op["id"], op["fields"])
    assert f"contacts/{op['id']}" not in state["cache"]
    assert state["source"]["contacts"][op["id"]]["address"] == op["fields"]


def test_a_value_written_into_the_cache_only_is_no_fix() -> None:
    item = _item("reconcile", "clean")
    op = json.loads(item["target"])["operations"][0]
    state, records = _runtime(item)
    records.edit_cache("accounts", op["id"], op["fields"])
    assert records.get("accounts", op["id"])["record"]["balance"] == op["fields"]["balance"]
    verdict = verifier.evaluate(
        item["metadata"]["initial_state"], state["source"], json.loads(item["target"])
    )
    assert not verdict.passed and verdict.checks["records_changed"] == 0


def test_a_broad_search_of_a_large_table_runs_out_of_time_and_a_narrow_one_does_not() -> None:
    item = _item("fix_address", "slow_tool")
    contact = json.loads(item["target"])["operations"][0]["id"]
    state, records = _runtime(item)
    record = state["source"]["contacts"][contact]
    with pytest.raises(env.TooSlow) as slow:
        records.search("contacts", {"name": record["name"]}, 1)
    assert slow.value.seconds > env.SEARCH_LIMIT_S == slow.value.limit_s
    found = records.search("contacts", {"email": record["email"].upper()}, 1)
    assert [r["id"] for r in found["results"]] == [contact]
    assert state["clock_s"] <= env.SEARCH_LIMIT_S + 1  # simulated, never slept


def test_search_results_are_paginated_and_rate_limited() -> None:
    item = _item("reconcile", "messy")
    account = json.loads(item["target"])["operations"][0]["id"]
    _, records = _runtime(item)
    first = records.search("ledger", {"account_id": account}, 1)
    assert first["pages"] == 2 and len(first["results"]) == env.PAGE_SIZE
    second = records.search("ledger", {"account_id": account}, 2)
    assert first["total"] == env.PAGE_SIZE + len(second["results"])
    for _ in range(env.SEARCH_QUOTA - 2):
        records.search("accounts", {"account_id": account}, 1)
    with pytest.raises(env.RecordsError, match="rate limited"):
        records.search("accounts", {"account_id": account}, 1)


def test_writes_check_the_formats_the_policy_names() -> None:
    item = _item("fix_address", "clean")
    contact = json.loads(item["target"])["operations"][0]["id"]
    state, records = _runtime(item)
    before = copy.deepcopy(state["source"])
    for fields, problem in [
        ({"postcode": "ls14ap"}, "capitals, one space"),
        ({"status": "done"}, "cannot be updated"),
    ]:
        with pytest.raises(env.RecordsError, match=problem):
            records.update("contacts", contact, fields)
    with pytest.raises(env.RecordsError, match="two decimals"):
        records.update("accounts", next(iter(state["source"]["accounts"])), {"balance": "12.5"})
    assert state["source"] == before  # nothing half-written


@pytest.mark.parametrize(
    ("intent", "change", "check"),
    [
        # a status flipped without its delivery date
        ("update_order_status", {"delivered_on": None}, "target_done"),
        # the right change, and another record touched
        ("fix_address", "other", "no_side_effects"),
    ],
)
def test_the_verifier_names_a_half_done_change_and_a_side_effect(
    intent: str, change: Any, check: str
) -> None:
    item = _item(intent, "clean")
    initial = item["metadata"]["initial_state"]
    target = json.loads(item["target"])
    final = env.apply_expected(initial, target["operations"])
    op = target["operations"][0]
    if change == "other":
        other = next(c for c in final["contacts"] if c != op["id"])
        final["contacts"][other]["phone"] = "0"
    else:
        final[op["kind"]][op["id"]].update(change)
    verdict = verifier.evaluate(initial, final, target)
    assert not verdict.passed and verdict.checks[check] is False


def test_every_scripted_policy_scores_as_the_kit_says_on_every_dev_item() -> None:
    """Every policy but the blind ones, which version 1's requests pay (issue 29; they are
    played on both versions in test_records_v2.py)."""
    blind = {t.name for t in TASK.kit.BLIND}
    policies = {
        p.name: p for p in [*TASK.FAMILY.trivial, *TASK.FAMILY.probes] if p.name not in blind
    }
    for item in dev_items():
        assert play(scripted.oracle, item).score == 1.0, item["id"]
        assert play(scripted.every_answer, item).score == 0.0, item["id"]
        for name, policy in policies.items():
            if getattr(policy, "applies", lambda _: True)(item["metadata"]):
                assert play(policy.policy, item).score == 0.0, (name, item["id"])


def test_the_kit_declares_which_tool_timeout_is_whose_fault() -> None:
    declared = {TASK.tools.TIMEOUT_OUTCOME[n]: n for n in TASK.tools.TIMEOUT_OUTCOME}
    assert TASK.FAMILY.timeout_outcome("search_records") == "limit"
    assert declared["limit"] == "search_records"
    for name in TASK.tools.TIMEOUT_OUTCOME:
        if name != "search_records":
            assert TASK.FAMILY.timeout_outcome(name) == "harness_error"
    assert (TASK.FAMILY.limits.time_s, TASK.FAMILY.limits.messages) == (600, 50)


def test_leak_secrets_keep_what_the_agent_must_work_out_and_drop_what_the_request_states() -> None:
    """A stale cache holding the requested new address is the stratum's trap, not a leak; a
    computed balance is secret wherever it shows, the request included."""
    from evalsuite._core.text import normalise_words
    from evalsuite.audit._leaks import _leaks

    items = dev_items()
    stated = next(
        i
        for i in items
        if i["metadata"]["intent"] == "fix_address" and i["metadata"]["condition"] == "stale_cache"
    )
    new_address = json.loads(stated["target"])["operations"][0]["fields"]
    state = json.dumps(stated["metadata"]["initial_state"], sort_keys=True)
    assert json.dumps(new_address, sort_keys=True)[1:-1] in state  # the cache holds it
    (secret,) = TASK.leak_secrets(stated)
    assert json.loads(secret)["fields"] == {}
    assert _leaks(secret, normalise_words(state)) is None

    computed = next(i for i in items if i["metadata"]["intent"] == "reconcile")
    (secret,) = TASK.leak_secrets(computed)
    balance = json.loads(computed["target"])["operations"][0]["fields"]["balance"]
    assert json.loads(secret)["fields"] == {"balance": balance}
    planted = copy.deepcopy(computed)
    planted["input"] = f"{computed['input']}\n(internal answer key: {secret})"
    (again,) = TASK.leak_secrets(planted)
    assert _leaks(again, normalise_words(planted["input"])) is not None
