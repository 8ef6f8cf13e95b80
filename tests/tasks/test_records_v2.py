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
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from evalsuite._core.seeds import derive_seed
from tests.helpers import Project, json_out
from tests.tasks.records_helpers import (
    ROOT,
    TASK,
    TASK_V2,
    dev_items,
    dev_items_v2,
    generate,
    play,
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
    ops = json.loads(item["target"])["operations"]
    assert len(ops) == 1
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
    for rule, (right, decided) in v2.items():
        if rule == "the contact with an odd date format is the duplicate":
            assert decided == 0  # both dates of a messy merge are in odd formats
            continue
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
    assert TASK_V2.LIMITS == TASK.LIMITS and TASK_V2.SYSTEM_PROMPT == TASK.SYSTEM_PROMPT
    assert [d.on_timeout for d in TASK_V2.FAMILY.tools] == [d.on_timeout for d in TASK.FAMILY.tools]
    assert TASK_V2.tools is TASK.tools  # one package: the very same tools module


SEED = 11
MEASURED_V2 = {"baseline": 0.29, "improved": 0.93}
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
@pytest.mark.slow  # a full dev audit of version 2 (every policy on 100 items): about 2.5 min
def test_the_freeze_audit_plays_every_blind_policy_to_0_on_every_version_2_stratum(
    tmp_path: Path,
) -> None:
    """A throwaway project with version 2's items only, frozen, then audited (every kit
    policy through the real runner, tools and verifier): each blind policy passes no item of
    any stratum, the oracle every item. The audit still fails version 2 on one check, the
    shortcut detector (`update_order_status`: the delivery date is the date next to the
    request's wording), which keeps records@2.0.0 unfrozen (docs/design/records-desk.md,
    "Not frozen yet")."""
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
    assert result.exit_code == 3, result.stderr
    (family,) = json_out(result)["graders"]["families"]
    checks = {c["check"] + (f"/{c['policy']}" if c["policy"] else ""): c for c in family["checks"]}
    assert checks["oracle"]["status"] == "passed"
    failed = {label for label, c in checks.items() if c["status"] == "failed"}
    # the kit declares its reference agents: their generated copies pass stale-cache items too
    assert failed == {
        "shortcut",
        "redteam/copy_oracle_order@baseline",
        "redteam/copy_oracle_order@improved",
        "redteam/kitchen_sink@baseline",
        "redteam/kitchen_sink@improved",
    }, failed
    assert {
        s.split(" :: ")[0]
        for s in checks["shortcut"]["strata"]
        if checks["shortcut"]["strata"][s].get("failed")
    } <= {
        "records_desk/update_order_status/*",
        "records_desk/update_order_status/clean",
        "records_desk/update_order_status/slow_tool",
        "records_desk/update_order_status/messy",
        "records_desk/update_order_status/stale_cache",
    }
    for policy in TASK_V2.kit.BLIND:
        check = checks[f"trivial/{policy.name}"]
        assert check["status"] == "passed" and check["counts"] == {"items": 100, "passed": 0}
        assert len(check["strata"]) == 20
        assert all(s["passed"] == 0 for s in check["strata"].values())


if __name__ == "__main__":  # pragma: no cover
    _table()
    sys.exit(0)
