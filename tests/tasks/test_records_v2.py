"""records_desk version 2 (records@2.0.0, issue 29): the requests give nothing away.

records@1.0.0 named the surviving contact of a merge first (and its e-mail first), and named
the record to change together with the value to write: "merge the second-named into the
first" passed every merge item with ids, and writing what a request states to the first record
it names passed most address and order items, all without reading a record. The measurement
below asks, per intent, how often each simple rule over a request's surface (the first,
second, last or longest id of a kind, an e-mail's owner, the first, last, earliest or latest
date, each resolution code) names the whole answer: the record to change and what to write,
or both contacts of a merge in the right direction. Run as a script, it prints the table
(``PYTHONPATH=. python -m tests.tasks.test_records_v2``).

Version 2 must give every such rule nothing, and nothing but ``created_at`` may tell a merge's
survivor: rules that read the records but not ``created_at`` (the contact named first, the
one without a phone, the one without the extra order, the one whose name or date format is
clean, the lower id, what a stale cached copy says) are right about half the time, and wrong
the rest. The kit's blind policies (`scripted.py`) score 0 on every stratum of version 2's dev
split and more than 0 on version 1's; the reference agents still separate.
"""

from __future__ import annotations

import json
import shutil
import sys
import tomllib
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from evalsuite._core.seeds import derive_seed
from tests.helpers import Project, json_out
from tests.redteam import cheap_models
from tests.tasks.records_helpers import (
    ROOT,
    TASK,
    TASK_V2,
    dev_items,
    dev_items_v2,
    generate,
    play,
    play_redteam,
    scripted,
    simulate,
    stratum,
)

surface = TASK.submodule("surface")
INTENTS = generate.INTENTS
RESOLUTIONS = ("delivered", "refunded", "cancelled", "replaced")
PICKS: dict[str, Callable[[Sequence[str]], str | None]] = {
    "first": lambda xs: xs[0] if xs else None,
    "second": lambda xs: xs[1] if len(xs) > 1 else None,
    "last": lambda xs: xs[-1] if xs else None,
    "longest": lambda xs: max(xs, key=len) if xs else None,
}
DATE_PICKS: dict[str, Callable[[Sequence[str]], str | None]] = {
    "first": PICKS["first"],
    "last": PICKS["last"],
    "latest": lambda xs: max(xs) if xs else None,
    "earliest": lambda xs: min(xs) if xs else None,
}
CHANCE_BAND = (0.25, 0.75)
"""Where a coin-flip tell of 40 merges falls (a binomial 95% band is about 0.34 to 0.66)."""


@cache
def all_items(version: int) -> tuple[dict[str, Any], ...]:
    """Every item (dev and holdout) the generator writes for `version`."""
    return tuple(generate.generate_items(version))


def _op(item: dict[str, Any]) -> dict[str, Any]:
    """The item's first operation (a version 2 merge may add an update of its survivor)."""
    ops = json.loads(item["target"])["operations"]
    assert len(ops) == 1 or (ops[0]["op"] == "merge" and len(ops) == 2), ops
    return dict(ops[0])


def _email_owners(item: dict[str, Any], emails: Sequence[str]) -> list[str]:
    """The contacts the request's e-mails belong to (one indexed search each, no record read)."""
    contacts = item["metadata"]["initial_state"]["source"]["contacts"]
    owners = []
    for email in emails:
        owners += [c for c, r in sorted(contacts.items()) if r["email"].casefold() == email]
    return owners


def _answer(item: dict[str, Any]) -> tuple[str, ...]:
    """What a rule has to name: the record to change and what to write (or a merge's pair)."""
    op = _op(item)
    if op["op"] == "merge":
        return (op["survivor"], op["duplicate"])
    if op["op"] == "close":
        return (op["case"], op["resolution"])
    if op["kind"] == "contacts":  # the address is the request's to state (GIVEN_FIELDS)
        return (op["id"],)
    if op["kind"] == "orders":
        return (op["id"], op["fields"]["delivered_on"])
    return (op["id"], op["fields"]["balance"])


def surface_guesses(item: dict[str, Any]) -> dict[str, tuple[str | None, ...]]:
    """Every simple rule's guess at `_answer` from the request's text alone."""
    body = surface.request_body(item["input"])
    intent = item["metadata"]["intent"]
    emails = _email_owners(item, surface.named_emails(body))
    guesses: dict[str, tuple[str | None, ...]] = {}
    if intent in ("fix_address", "merge_duplicates"):
        for source, ids in (("id", surface.named_ids(body, "P")), ("e-mail", emails)):
            for name, pick in PICKS.items():
                if intent == "fix_address":
                    guesses[f"{name} contact {source}"] = (pick(ids),)
            if intent == "merge_duplicates":
                first, second, last = PICKS["first"](ids), PICKS["second"](ids), PICKS["last"](ids)
                guesses[f"{source}: second into first"] = (first, second)
                guesses[f"{source}: first into second"] = (second, first)
                guesses[f"{source}: last into first"] = (first, last)
                guesses[f"{source}: first into last"] = (last, first)
    elif intent == "update_order_status":
        orders, dates = surface.named_ids(body, "O"), surface.named_dates(body)
        for name, pick in PICKS.items():
            for when, pick_date in DATE_PICKS.items():
                guesses[f"{name} order, {when} date"] = (pick(orders), pick_date(dates))
    elif intent == "close_case":
        cases = surface.named_ids(body, "K")
        for name, pick in PICKS.items():
            for code in RESOLUTIONS:
                guesses[f"{name} case, {code}"] = (pick(cases), code)
    else:
        accounts, amounts = surface.named_ids(body, "A"), surface.named_amounts(body)
        for name, pick in PICKS.items():
            for which, pick_amount in PICKS.items():
                guesses[f"{name} account, {which} amount"] = (pick(accounts), pick_amount(amounts))
    return guesses


def surface_accuracy(items: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per intent, per rule: the fraction of the intent's items the rule names the answer of."""
    right: dict[str, Counter[str]] = defaultdict(Counter)
    count: Counter[str] = Counter()
    for item in items:
        intent = item["metadata"]["intent"]
        count[intent] += 1
        answer = _answer(item)
        for rule, guess in surface_guesses(item).items():
            right[intent][rule] += guess == answer
    return {
        intent: {rule: right[intent][rule] / count[intent] for rule in right[intent]}
        for intent in right
    }


def _created_first(record: dict[str, Any]) -> str:
    (day,) = surface.named_dates(record["created_at"])
    return str(day)


def _noisy(name: str) -> bool:
    """A name with encoding noise, stray spaces or in capitals (a messy merge's)."""
    return name != name.strip() or "Ã" in name or name.isupper()


def merge_tells(items: Sequence[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """Per rule that reads the records but not ``created_at``: (right, decided) over merges.

    Each rule names a survivor, or abstains where it cannot tell (e.g. both records blank).
    """
    tells: dict[str, list[bool]] = defaultdict(list)
    for item in items:
        if item["metadata"]["intent"] != "merge_duplicates":
            continue
        op = _op(item)
        state = item["metadata"]["initial_state"]
        contacts = state["source"]["contacts"]
        pair = [op["survivor"], op["duplicate"]]
        records = {c: contacts[c] for c in pair}
        assert _created_first(records[op["survivor"]]) < _created_first(records[op["duplicate"]])

        other = {pair[0]: pair[1], pair[1]: pair[0]}
        body = surface.request_body(item["input"])
        named = [c for c in surface.named_ids(body, "P") if c in pair]
        named += [c for c in _email_owners(item, surface.named_emails(body)) if c in pair]
        blank = [c for c in pair if not records[c]["phone"]]
        ordered = {o["contact_id"] for o in state["source"]["orders"].values()}
        holders = [c for c in pair if c in ordered]
        noisy = [c for c in pair if _noisy(records[c]["name"])]
        odd = [c for c in pair if "-" not in records[c]["created_at"]]
        votes: list[tuple[str, str | None]] = [
            ("the contact named first survives", named[0] if named else None),
            ("the contact without a phone survives", blank[0] if len(blank) == 1 else None),
            (
                "the contact with an order is the duplicate",
                other[holders[0]] if len(holders) == 1 else None,
            ),
            (
                "the contact with a noisy name is the duplicate",
                other[noisy[0]] if len(noisy) == 1 else None,
            ),
            (
                "the contact with an odd date format is the duplicate",
                other[odd[0]] if len(odd) == 1 else None,
            ),
            ("the lower id survives", min(pair)),
        ]
        for c in pair:
            cached = state["cache"].get(f"contacts/{c}")
            if cached and cached["record"].get("merged_into"):
                votes.append(("what a stale cached copy says", cached["record"]["merged_into"]))
        for rule, guess in votes:
            if guess is not None:
                tells[rule].append(guess == op["survivor"])
    return {rule: (sum(v), len(v)) for rule, v in tells.items()}


# ---- the measurement ----------------------------------------------------------------------------
def _text_only(rule: str) -> bool:
    """Rules that read nothing: an e-mail's owner takes one (indexed) search."""
    return "e-mail" not in rule


def test_a_surface_rule_names_the_answer_of_version_1_and_none_of_version_2() -> None:
    v1, v2 = surface_accuracy(all_items(1)), surface_accuracy(all_items(2))
    best_v1 = {i: max(a for r, a in rules.items() if _text_only(r)) for i, rules in v1.items()}
    best_v2 = {i: max(a for r, a in rules.items() if _text_only(r)) for i, rules in v2.items()}
    # version 1, from the text alone: the merge pair in naming order (clean and stale items),
    # the named contact, the named order with the latest date, the named case with the most
    # common code; with one search per e-mail, messy merges too (the 0.75 of merges)
    assert v1["merge_duplicates"]["id: second into first"] == 0.5
    assert v1["merge_duplicates"]["e-mail: second into first"] == 0.25
    assert best_v1["fix_address"] >= 0.5 and best_v1["update_order_status"] >= 0.7, best_v1
    assert best_v1["close_case"] > 0.2
    # version 2: no rule that reads nothing names any item's answer
    assert set(best_v2) == set(INTENTS)
    assert all(best == 0.0 for best in best_v2.values()), best_v2
    # and the e-mails of a messy merge (a quarter of the merges) come in either order
    for rule in ("e-mail: second into first", "e-mail: first into second"):
        assert 0.05 <= v2["merge_duplicates"][rule] <= 0.2, v2["merge_duplicates"]


def test_only_created_at_tells_the_survivor_of_a_version_2_merge() -> None:
    v1, v2 = merge_tells(all_items(1)), merge_tells(all_items(2))
    # version 1: five tells, each always right where it decides
    for rule in (
        "the contact named first survives",
        "the contact without a phone survives",
        "the contact with an order is the duplicate",
        "the contact with a noisy name is the duplicate",
        "the contact with an odd date format is the duplicate",
        "what a stale cached copy says",
    ):
        right, decided = v1[rule]
        assert decided > 0 and right == decided, (rule, v1[rule])
    # version 2: each is a coin flip, right on about half the merges and wrong on the rest
    for rule in ("the contact with an odd date format is the duplicate",):
        assert rule not in v2  # every date of a messy merge is in an odd format
    assert "the contact without a phone survives" not in v2  # both have a phone
    for rule, (right, decided) in v2.items():
        assert decided >= 10, (rule, decided)
        assert CHANCE_BAND[0] <= right / decided <= CHANCE_BAND[1], (rule, right, decided)


def test_version_2_draws_and_records_what_a_request_names() -> None:
    items = all_items(2)
    named = Counter(
        (i["metadata"]["intent"], i["metadata"]["surface"]["named"])
        for i in items
        if i["metadata"]["condition"] != "slow_tool"
    )
    assert 10 <= named["merge_duplicates", "survivor"] <= 20
    assert 10 <= named["merge_duplicates", "duplicate"] <= 20
    templates = Counter(
        (i["metadata"]["intent"], i["metadata"]["surface"]["template"]) for i in items
    )
    for intent in INTENTS:  # every intent's wording is drawn from more than one template
        assert len([t for (n, t) in templates if n == intent]) >= 2
    lengths = defaultdict(list)
    for item in items:  # no request length marks a stratum's answer: the same template, any answer
        if item["metadata"]["intent"] == "merge_duplicates":
            lengths[item["metadata"]["surface"]["named"]].append(len(item["input"]))
    assert (
        abs(
            sum(lengths["survivor"]) / len(lengths["survivor"])
            - sum(lengths["duplicate"]) / len(lengths["duplicate"])
        )
        < 15
    )


# ---- version 2's decisions: a merge's choices, the tracking's date, no answer shared ------------
CHOICES = {"address": ("line1", "city", "postcode"), "email": ("email",), "phone": ("phone",)}


def _iso(text: str) -> str:
    (day,) = surface.named_dates(text)
    return str(day)


def _takes(item: dict[str, Any]) -> frozenset[str]:
    """The choices a merge's target takes from the duplicate (the survivor's update)."""
    ops = json.loads(item["target"])["operations"]
    fields = set(ops[1]["fields"]) if len(ops) == 2 else set()
    return frozenset(c for c, names in CHOICES.items() if fields >= set(names))


def _merges(version: int = 2) -> list[dict[str, Any]]:
    return [i for i in all_items(version) if i["metadata"]["intent"] == "merge_duplicates"]


def test_a_version_2_merge_takes_each_value_by_its_field_and_a_guess_is_right_on_an_eighth() -> (
    None
):
    """Each choice follows its field (the address updated last, the verified e-mail, the phone
    confirmed last) and nothing else; a fixed set of choices with a guessed direction is right
    on at most about an eighth of the merges."""
    merges = _merges()
    for item in merges:
        op = _op(item)
        contacts = item["metadata"]["initial_state"]["source"]["contacts"]
        s, d = contacts[op["survivor"]], contacts[op["duplicate"]]
        expected = set()
        if _iso(d["address_updated_at"]) > _iso(s["address_updated_at"]):
            expected.add("address")
        if d["email_verified"]:
            assert not s["email_verified"]
            expected.add("email")
        if _iso(d["phone_confirmed_at"]) > _iso(s["phone_confirmed_at"]):
            expected.add("phone")
        assert _takes(item) == expected == set(item["metadata"]["surface"]["takes"]), item["id"]
        ops = json.loads(item["target"])["operations"]
        if expected:  # written to the survivor: the duplicate's values, field by field
            record = {**d, **d["address"]}
            assert ops[1]["fields"] == {n: record[n] for c in expected for n in CHOICES[c]}
    for choice in CHOICES:  # each choice balanced: taken on about half the merges
        taken = sum(choice in _takes(i) for i in merges)
        assert 0.35 <= taken / len(merges) <= 0.65, (choice, taken)
    subsets = Counter(_takes(i) for i in merges)
    lower = Counter(
        (_takes(i), _op(i)["survivor"] < _op(i)["duplicate"]) for i in merges
    )  # one guessed direction (the lower id survives, or the higher) with one fixed set
    assert max(subsets.values()) / len(merges) <= 0.25, subsets
    assert max(lower.values()) / len(merges) <= 0.125, lower


def test_no_two_items_of_a_version_2_stratum_share_the_shape_of_their_answer() -> None:
    """A copy of one item's procedure fails on every other item of its stratum: each
    fix_address item writes its own town, each close_case item's case has its own rank among
    the account's open cases, each merge its own combination of direction and choices."""
    shapes: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for item in all_items(2):
        meta, op = item["metadata"], _op(item)
        source = meta["initial_state"]["source"]
        if meta["intent"] == "fix_address":
            shape: Any = op["fields"]["city"]
        elif meta["intent"] == "close_case":
            case = source["cases"][op["case"]]
            open_ids = sorted(
                c
                for c, r in source["cases"].items()
                if r["account_id"] == case["account_id"] and r["status"] == "open"
            )
            assert len(open_ids) >= 10
            shape = open_ids.index(op["case"])
        elif meta["intent"] == "merge_duplicates":
            shape = (op["survivor"] < op["duplicate"], _takes(item))
        else:
            continue
        shapes[meta["intent"], meta["condition"]].append(shape)
    assert len(shapes) == 12
    for stratum_, found in shapes.items():
        assert len(set(found)) == len(found) == 10, (stratum_, found)


def test_the_delivery_date_is_only_in_the_orders_tracking() -> None:
    """No version 2 request states the date delivered (a stated date is the customer's
    recollection or the carrier's estimate, always another day); the order's tracking has it
    in a ``delivered`` event; a stale cached copy shows another day; the day it was placed
    plus any fixed number of days is right on at most one item of a stratum."""
    said = Counter()
    plus: Counter[int] = Counter()
    for item in all_items(2):
        if item["metadata"]["intent"] != "update_order_status":
            continue
        op = _op(item)
        state = item["metadata"]["initial_state"]
        order = state["source"]["orders"][op["id"]]
        on = op["fields"]["delivered_on"]
        assert on not in surface.named_dates(surface.request_body(item["input"]))
        scans = [e for e in order["tracking"] if e["event"] == "delivered"]
        assert [e["at"][:10] for e in scans] == [on] and order["delivered_on"] is None
        cached = state["cache"].get(f"orders/{op['id']}")
        if cached is not None:  # a fresh copy (the source's), or a stale one dated wrongly
            assert cached["record"]["delivered_on"] != on
            stale = item["metadata"]["condition"] == "stale_cache"
            assert stale == (cached["record"]["status"] == "delivered")
        said[item["metadata"]["surface"]["said"]] += 1
        plus[(date.fromisoformat(on) - date.fromisoformat(order["placed_at"])).days] += 1
    assert set(said) == {"none", "think", "estimate"}
    assert max(plus.values()) / sum(plus.values()) <= 0.1, plus  # one item per stratum


def test_a_stale_cached_account_never_holds_the_balance_to_write() -> None:
    for item in all_items(2):
        if item["metadata"]["intent"] != "reconcile":
            continue
        op = _op(item)
        cached = item["metadata"]["initial_state"]["cache"].get(f"accounts/{op['id']}")
        if cached is not None:
            assert cached["record"]["balance"] != op["fields"]["balance"], item["id"]


def test_a_merges_copied_values_are_not_its_secret_and_its_direction_is() -> None:
    """A version 2 merge copies the survivor's address, e-mail and phone from one of its two
    records, both of which the agent reads: those values show in the state by design (the
    leak audit found 5 such items before `leak_secrets_v2` dropped them). Which record
    survives is the answer: planted in the request, it is found."""
    from evalsuite._core.text import normalise_words
    from evalsuite.audit._leaks import _leaks

    copied = 0
    for item in all_items(2):
        if item["metadata"]["intent"] != "merge_duplicates":
            continue
        state = normalise_words(json.dumps(item["metadata"]["initial_state"], sort_keys=True))
        merge, *updates = TASK_V2.leak_secrets(item)
        assert json.loads(merge)["op"] == "merge"
        for secret in (merge, *updates):
            assert _leaks(secret, state) is None, item["id"]
            if "fields" in json.loads(secret):
                assert json.loads(secret)["fields"] == {}, item["id"]
        full = json.loads(item["target"])["operations"]
        copied += any(_leaks(json.dumps(op, sort_keys=True), state) for op in full[1:])
        planted = f"{item['input']}\n(internal answer key: {merge})"
        assert _leaks(merge, normalise_words(planted)) is not None, item["id"]
    assert copied >= 1  # the copied values do show in some items' state: the case covered


def _weighted(by_stratum: dict[str, list[float]]) -> float:
    weights = tomllib.loads((ROOT / "tasks" / "records.toml").read_text())["weights"]
    return sum(weights[f"records_desk/{s}"] * sum(v) / len(v) for s, v in by_stratum.items())


def test_every_cheap_red_team_policy_scores_at_most_3_percent_on_version_2s_dev_items() -> None:
    """Every cheap policy of tests/redteam/cheap_models.py's records section (and the
    generic ones), played offline on the conversation the provider sees: at most 0.03 of the
    dev items, unweighted and weighted by the suite's deployment weights. (The same through
    `evalsuite run` on a local freeze: docs/design/red-team.md.)"""
    scores = {}
    for name in cheap_models.schedule("records"):
        by_stratum: dict[str, list[float]] = defaultdict(list)
        for item in dev_items_v2():
            by_stratum[stratum(item)].append(play_redteam(name, item, TASK_V2.SYSTEM_PROMPT).score)
        mean = sum(sum(v) for v in by_stratum.values()) / len(dev_items_v2())
        scores[name] = (round(mean, 3), round(_weighted(by_stratum), 3))
    cheap = {n: s for n, s in scores.items() if cheap_models.POLICIES[n].kind == "cheap"}
    assert len(cheap) >= 25
    assert all(max(s) <= 0.03 for s in cheap.values()), scores


# ---- the items and the kit ----------------------------------------------------------------------
def test_the_version_2_generator_is_seeded_and_the_dev_items_are_its_output() -> None:
    assert generate.generate_items(2) == list(all_items(2))
    assert [i["id"] for i in all_items(2)][:1] == ["records-v2-0001"]
    strata = Counter((i["metadata"]["intent"], i["metadata"]["condition"]) for i in all_items(2))
    assert len(strata) == 20 and set(strata.values()) == {10}
    by_id = {i["id"]: i for i in all_items(2)}
    dev = dev_items_v2()
    assert len(dev) == 100  # the freeze moved the rest into the vault
    assert len(dev_items()) == 100  # beside version 1's, which records@1.0.0 still runs
    for item in dev:
        assert by_id[item["id"]] == item


def test_every_blind_policy_scores_0_on_every_version_2_stratum_and_pays_on_version_1() -> None:
    blind = {t.name: t.policy for t in TASK_V2.kit.BLIND}
    assert {t.name for t in TASK_V2.FAMILY.trivial} >= set(blind)
    assert {t.name for t in TASK.FAMILY.trivial} >= set(blind)
    for name, policy in blind.items():
        v1 = [play(policy, item).score for item in dev_items()]
        assert sum(v1) > 0, name
        by_stratum: dict[str, list[float]] = defaultdict(list)
        for item in dev_items_v2():
            by_stratum[stratum(item)].append(play(policy, item).score)
        assert len(by_stratum) == 20
        assert all(sum(v) == 0 for v in by_stratum.values()), (name, by_stratum)


def test_every_scripted_policy_scores_as_the_kit_says_on_every_version_2_dev_item() -> None:
    policies = {p.name: p for p in [*TASK_V2.FAMILY.trivial, *TASK_V2.FAMILY.probes]}
    for item in dev_items_v2():
        assert play(scripted.oracle, item).score == 1.0, item["id"]
        assert play(scripted.every_answer, item).score == 0.0, item["id"]
        for name, policy in policies.items():
            if getattr(policy, "applies", lambda _: True)(item["metadata"]):
                assert play(policy.policy, item).score == 0.0, (name, item["id"])


def test_version_2_keeps_version_1s_task_apart_from_its_items() -> None:
    assert (TASK_V2.VERSION, TASK_V2.FAMILY.version, TASK.FAMILY.version) == (2, 2, 1)
    assert TASK_V2.LIMITS == TASK.LIMITS and TASK.SYSTEM_PROMPT == TASK.kit.SYSTEM_PROMPT
    # version 2's policy adds a merge's three choices and the tracking's date; version 1's
    # prompt is unchanged (records@1.0.0 keeps running it)
    assert TASK_V2.SYSTEM_PROMPT == TASK.kit.SYSTEM_PROMPT_V2 != TASK.SYSTEM_PROMPT
    assert "email_verified" in TASK_V2.SYSTEM_PROMPT and "email_verified" not in TASK.SYSTEM_PROMPT
    assert {p.name for p in TASK_V2.FAMILY.probes} - {p.name for p in TASK.FAMILY.probes} == {
        "merge_defaults",
        "merge_flipped_choices",
    }
    assert [d.on_timeout for d in TASK_V2.FAMILY.tools] == [d.on_timeout for d in TASK.FAMILY.tools]
    assert TASK_V2.tools is TASK.tools  # one package: the very same tools module


SEED = 11
MEASURED_V2 = {"baseline": 0.25, "improved": 0.93}
"""Dev-split means on version 2 (seed 11, one epoch; offline simulation)."""


def test_the_reference_agents_still_separate_on_version_2() -> None:
    means = {}
    for agent in (*MEASURED_V2, "hacker"):
        scores = [simulate(agent, i, derive_seed(SEED, i["id"], 1)).score for i in dev_items_v2()]
        means[agent] = sum(scores) / len(scores)
    for agent, measured in MEASURED_V2.items():
        assert abs(means[agent] - measured) <= 0.06, means
    assert means["improved"] >= means["baseline"] + 0.10 and means["hacker"] == 0.0


def _table() -> None:  # pragma: no cover - a report for people
    out = sys.stdout.write
    for version in (1, 2):
        out(f"records_desk version {version}: best rules per intent (fraction of its items)\n")
        for intent, rules in surface_accuracy(all_items(version)).items():
            best = sorted(rules.items(), key=lambda kv: -kv[1])[:3]
            out(f"  {intent:<20} " + "; ".join(f"{r} {a:.2f}" for r, a in best) + "\n")
        out(f"records_desk version {version}: merge tells (right / decided)\n")
        for rule, (right, decided) in merge_tells(all_items(version)).items():
            out(f"  {rule:<55} {right}/{decided}\n")


# ---- through the real runner --------------------------------------------------------------------
@pytest.mark.slow  # a full dev audit of version 2 with its reference agents: about 2 to 3 min
def test_the_freeze_audit_plays_every_blind_policy_to_0_on_every_version_2_stratum(
    tmp_path: Path,
) -> None:
    """A throwaway project with version 2's items only, frozen, then audited (every kit
    policy, the generated red team, the reference agents' copies and the shortcut detector,
    through the real runner, tools and verifier): the audit passes entirely; each blind policy
    passes no item of any stratum, nor does any policy generated from the oracle's or a
    reference agent's episodes (`copy_oracle_order@baseline`, `kitchen_sink@improved`, ...);
    the oracle passes every item."""
    root = tmp_path / "project"
    shutil.copytree(
        ROOT / "tasks" / "records_desk",
        root / "tasks" / "records_desk",
        ignore=shutil.ignore_patterns("__pycache__", "items*.jsonl"),
    )
    suite = (ROOT / "tasks" / "records.toml").read_text(encoding="utf-8")
    suite = suite.replace("version = 1\n", "version = 2\n").replace(
        '"records_desk/task.py@records_desk"', '"records_desk/task_v2.py@records_desk"'
    )
    assert 'task_v2.py@records_desk"' in suite and "version = 2\n" in suite
    (root / "tasks" / "records.toml").write_text(suite, encoding="utf-8")
    (root / "tasks" / "records_desk" / "items.jsonl").write_text(
        "".join(json.dumps(i, sort_keys=True, ensure_ascii=False) + "\n" for i in all_items(2))
    )
    project = Project(root=root, key_dir=tmp_path / "keys")
    frozen = project.invoke("freeze", "records", "--version", "1.0.0")
    assert frozen.exit_code == 0, frozen.stderr
    result = project.invoke("audit", "records@1.0.0", "--graders", "--json")
    assert result.exit_code == 0, result.stderr
    (family,) = json_out(result)["graders"]["families"]
    checks = {c["check"] + (f"/{c['policy']}" if c["policy"] else ""): c for c in family["checks"]}
    assert checks["oracle"]["status"] == "passed"
    failed = {label for label, c in checks.items() if c["status"] == "failed"}
    assert failed == set(), failed
    assert checks["shortcut"]["status"] == "passed"
    generated = {label for label in checks if label.startswith("redteam/")}
    for variant in ("copy_oracle_order", "kitchen_sink", "blind_oracle_order"):
        assert {f"redteam/{variant}@baseline", f"redteam/{variant}@improved"} <= generated
    for label in generated:
        check = checks[label]
        assert check["status"] == "passed", label
        assert all(s.get("passed", 0) == 0 for s in check["strata"].values()), label
    assert family["redteam"]["best"]["mean"] == 0.0, family["redteam"]
    for policy in TASK_V2.kit.BLIND:
        check = checks[f"trivial/{policy.name}"]
        assert check["status"] == "passed" and check["counts"] == {"items": 100, "passed": 0}
        assert len(check["strata"]) == 20
        assert all(s["passed"] == 0 for s in check["strata"].values())


if __name__ == "__main__":  # pragma: no cover
    _table()
    sys.exit(0)
