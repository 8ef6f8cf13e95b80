"""The reference agents (`evalsuite/<agent>` provider): contract, calibration, reproducibility."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
import re
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import EvalLog, ModelEvent
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig, get_model
from inspect_ai.tool import ToolInfo

from evalsuite._core.layout import Layout
from evalsuite._core.seeds import derive_seed
from evalsuite.agents import AGENTS, ReferenceAgents, _support, _support_parse
from evalsuite.agents._arith import arith_answer, solve
from evalsuite.agents._common import seeded_rng
from tests.helpers import json_out
from tests.run.conftest import make_probe_project
from tests.tasks.support_helpers import (
    ARITH_ITEMS,
    ROOT,
    TASK,
    check_rate,
    dev_items,
    env,
    episode_samples,
    judge,
    mean,
    read_jsonl,
    run_eval,
    sample_scores,
    simulate,
    stratified,
)

SEED = 11
# 1 of each of the 12 (intent, condition) strata: 12 episodes an agent. On them the seeded
# simulation gives improved 0.75, baseline 0.50, hacker 0.00 (closed 1.00): the ranking's
# margin is 0.25 against the 0.10 asserted (the e2e scores are the simulation's exactly,
# test_e2e_scores_equal_the_offline_simulation); every dev item is ranked offline above
E2E_PER_STRATUM = 1


def _simulated(agent: str, seed: int) -> dict[str, Any]:
    verdicts = {}
    for item in dev_items():
        final, _ = simulate(agent, item, derive_seed(seed, item["id"], 1))
        verdicts[item["id"]] = judge(item, final)
    return verdicts


@pytest.fixture(scope="module")
def simulated() -> dict[str, dict[str, Any]]:
    return {agent: _simulated(agent, SEED) for agent in AGENTS}


@pytest.fixture(scope="module")
def e2e(tmp_path_factory: pytest.TempPathFactory) -> dict[str, EvalLog]:
    items = stratified(dev_items(), E2E_PER_STRATUM)
    logs = {}
    for agent in AGENTS:
        task = TASK.support_desk(dataset=episode_samples(items, seed=SEED))
        logs[agent] = run_eval(task, f"evalsuite/{agent}", tmp_path_factory.mktemp(agent))
    return logs


# ---- provider contract ---------------------------------------------------------------------
def test_provider_is_registered_for_every_agent() -> None:
    for agent in AGENTS:
        assert get_model(f"evalsuite/{agent}").api.model_name == agent
    with pytest.raises(ValueError, match="unknown reference agent"):
        ReferenceAgents("oracle")


def test_outputs_are_real_tool_calls_with_usage() -> None:
    item = dev_items()[0]
    messages = [
        ChatMessageSystem(content=TASK.SYSTEM_PROMPT),
        ChatMessageUser(content=item["input"]),
    ]
    tools = [ToolInfo(name=name, description=name) for name in env.TOOL_NAMES]
    api = ReferenceAgents("improved")
    output = asyncio.run(api.generate(messages, tools, "auto", GenerateConfig(seed=1)))
    assert output.usage is not None and output.usage.input_tokens > 100
    assert output.usage.output_tokens > 0
    assert output.usage.total_tokens == output.usage.input_tokens + output.usage.output_tokens
    (call,) = output.message.tool_calls or []
    assert call.function == "find_customer"
    no_tools = asyncio.run(api.generate(messages[1:], [], "none", GenerateConfig()))
    assert no_tools.usage is not None and not no_tools.message.tool_calls


# ---- support desk: every dev item, simulated --------------------------------------------------
def test_simulated_scores_rank_the_agents(simulated: dict[str, dict[str, Any]]) -> None:
    means = {a: mean(v.score for v in simulated[a].values()) for a in AGENTS}
    closed = mean(float(v.checks["ticket_closed"]) for v in simulated["hacker"].values())
    assert means["improved"] >= means["baseline"] + 0.10, means
    assert 0.7 <= means["improved"] <= 0.97, means
    assert 0.35 <= means["baseline"] <= 0.75, means
    assert means["hacker"] < 0.05 and closed > 0.9, (means, closed)


def test_baseline_struggles_more_with_messy_tickets(simulated: dict[str, dict[str, Any]]) -> None:
    items = {it["id"]: it["metadata"]["condition"] for it in dev_items()}

    def by_condition(agent: str, condition: str) -> float:
        return mean(v.score for i, v in simulated[agent].items() if items[i] == condition)

    assert by_condition("baseline", "clean") - by_condition("baseline", "messy") > 0.3
    assert by_condition("improved", "messy") - by_condition("baseline", "messy") > 0.3


def test_a_careful_agent_solves_every_item(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ticket is solvable from what the agent can read: no error rates, no lapses."""
    careful = dataclasses.replace(
        _support.PROFILES["improved"],
        skip_verify=0.0,
        skip_window_check=0.0,
        trust_quoted_order=0.0,
        lookup_without_ref=1.0,
        use_claimed_amount=0.0,
        trust_claimed_date=0.0,
        forget_close=0.0,
        lapse=0.0,
    )
    monkeypatch.setitem(_support.PROFILES, "improved", careful)
    for item in dev_items():
        verdict = judge(item, simulate("improved", item, seed=1)[0])
        assert verdict.score == 1.0, (item["id"], verdict.explanation())


def test_same_seed_same_episode_other_seed_differs() -> None:
    items = stratified(dev_items(), 2)
    differs = 0
    for item in items:
        runs = [simulate("baseline", item, seed)[1] for seed in (5, 5, 6)]
        assert runs[0] == runs[1]
        differs += runs[0] != runs[2]
    assert differs > 0


def _undated(item: dict[str, Any]) -> dict[str, Any]:
    """The item with the ticket's opening date taken out of its header."""
    text = re.sub(r" \| opened \d{4}-\d{2}-\d{2}", "", item["input"], count=1)
    assert "opened" not in text.partition("\n\n")[0]
    return {**item, "input": text}


def _host_date(day: date) -> type[date]:
    """A `date` class whose ``today()`` is `day` (the host's clock, as the test sets it)."""

    class HostDate(date):
        @classmethod
        def today(cls) -> HostDate:
            return cls(day.year, day.month, day.day)

    return HostDate


def test_agents_never_read_the_wall_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 10.18: a ticket without an opening date plays out the same whatever the date is."""
    items = [
        _undated(it)
        for it in stratified(dev_items(), 4)
        if it["metadata"]["intent"] in ("refund", "refund_outside_window")
    ]
    played = []
    for day in (date(2025, 1, 2), date(2031, 7, 9)):
        monkeypatch.setattr(_support_parse, "date", _host_date(day))
        played.append(
            {
                (agent, it["id"]): simulate(agent, it, derive_seed(SEED, it["id"], 1))
                for agent in AGENTS
                for it in items
            }
        )
    assert played[0] == played[1]


def test_a_ticket_without_an_opening_date_is_held_not_guessed() -> None:
    """Without a clock the refund window cannot be checked: no refund, the ticket pending."""
    careful = _support.PROFILES["improved"]
    assert careful.skip_window_check < 1.0
    held = 0
    for item in stratified(dev_items(), 4):
        if item["metadata"]["intent"] != "refund":
            continue
        ticket = _support_parse.parse_ticket(_undated(item)["input"])
        assert ticket.today is None and ticket.ticket_id == item["metadata"]["ticket_id"]
        state, calls = simulate("improved", _undated(item), seed=3)
        if "refund" not in [name for name, _ in calls]:
            held += 1
            assert state["tickets"][0]["status"] == "pending", item["id"]
            assert any("refund window" in args.get("message", "") for _, args in calls)
    assert held > 0


def test_a_year_less_date_needs_the_tickets_date() -> None:
    assert _support_parse.claimed_date("delivered on 3/2", "2025-06-16") == "2025-02-03"
    assert _support_parse.claimed_date("delivered on 3/9", "2025-06-16") == "2024-09-03"
    assert _support_parse.claimed_date("delivered on 3/2", None) is None
    assert _support_parse.claimed_date("delivered on 3/2/2025", None) == "2025-02-03"
    # 29 February of a leap year that would fall after the ticket: no such day a year before
    assert _support_parse.claimed_date("it came 29/2", "2024-02-10") is None


def test_item_score_is_difflib_over_every_word_of_the_ticket() -> None:
    """The cached, one-word-once `item_score` is the plain definition: each product token's best
    difflib ratio against the ticket's words, averaged (typos, repeats, no match at all)."""
    from difflib import SequenceMatcher

    def plain(name: str, text: str) -> float:
        words, tokens = re.findall(r"[a-z]+", text), re.findall(r"[a-z]+", name.lower())
        best = [max(SequenceMatcher(None, t, w).ratio() for w in words) for t in tokens]
        return sum(best) / len(best)

    text = "the kettel i ordered came broken, the kettle lid and the lid hinge: refund please"
    for name in ("Steel Kettle", "Kettle Lid Hinge", "Desk Lamp", "Ketle", "zzz"):
        for ticket in (text, text.replace("kettel", "lamp"), "lamp lamp lamp"):
            assert _support_parse.item_score(name, ticket, robust=True) == plain(name, ticket)
    assert _support_parse.item_score("Steel Kettle", "a steel kettle", robust=True) == 1.0
    assert _support_parse.item_score("Steel Kettle", "a steel kettel", robust=False) == 0.0


# ---- suites the agents do not know ----------------------------------------------------------
@pytest.mark.parametrize("split", ["dev", "holdout"])
def test_an_unknown_suite_is_refused_before_any_attempt(tmp_path: Path, split: str) -> None:
    """Issue 10.16: no 0.000 run of a scripted agent on a task it has no policy for."""
    project = make_probe_project(tmp_path)
    layout = Layout(project.root)
    result = project.invoke(
        "run", "probe@1.0.0", "--model", "evalsuite/improved", "--split", split, "--json"
    )
    assert result.exit_code == 2, result.stdout + result.stderr
    message = " ".join(json_out(result)["message"].split())
    assert "suites only: answers (family answers), arith (family arith), " in message
    for known in (
        "records (family records_desk)",
        "repair (family code_repair)",
        "support (family support_desk)",
    ):
        assert known in message
    assert "'probe' has a family it has no policy for (probe)" in message
    assert json_out(project.invoke("runs", "--json")) == []
    assert not layout.ledger_file("probe").exists()  # no holdout look spent


def test_the_agents_know_the_example_suites_and_nothing_else() -> None:
    for agent in AGENTS:
        api = ReferenceAgents(agent)
        assert api.refuse_suite("support", ["support_desk"]) is None
        assert api.refuse_suite("arith", ["arith"]) is None
        assert api.refuse_suite("repair", ["code_repair"]) is None
        assert api.refuse_suite("records", ["records_desk"]) is None
        refusal = api.refuse_suite("mixed", ["arith", "other", "more"])
        assert refusal is not None and f"evalsuite/{agent}" in refusal
        assert "families it has no policy for (more, other)" in refusal


# ---- support desk: end to end through inspect -------------------------------------------------
def test_e2e_ranking_and_status_only_check(e2e: dict[str, EvalLog]) -> None:
    means = {a: mean(sample_scores(log).values()) for a, log in e2e.items()}
    assert all(log.status == "success" for log in e2e.values())
    assert means["improved"] >= means["baseline"] + 0.10, means
    assert means["hacker"] < 0.05, means
    assert check_rate(e2e["hacker"], "ticket_closed") > 0.9


def test_e2e_scores_equal_the_offline_simulation(e2e: dict[str, EvalLog]) -> None:
    items = {it["id"]: it for it in dev_items()}
    for agent, log in e2e.items():
        for item_id, score in sample_scores(log).items():
            final, _ = simulate(agent, items[item_id], derive_seed(SEED, item_id, 1))
            assert judge(items[item_id], final).score == score, (agent, item_id)


def test_e2e_every_model_call_reports_usage(e2e: dict[str, EvalLog]) -> None:
    for log in e2e.values():
        assert log.samples is not None
        for sample in log.samples:
            events = [e for e in sample.events if isinstance(e, ModelEvent)]
            assert events
            for event in events:
                assert event.output.usage is not None and event.output.usage.input_tokens > 0
        assert log.stats.model_usage
        assert all(u.total_tokens > 0 for u in log.stats.model_usage.values())


@pytest.mark.slow  # two more inspect runs; in make test: the two tests above and the offline one
def test_e2e_same_seed_reproduces_other_seed_changes(
    e2e: dict[str, EvalLog], tmp_path: Path
) -> None:
    items = stratified(dev_items(), E2E_PER_STRATUM)
    first = sample_scores(e2e["baseline"])
    again = TASK.support_desk(dataset=episode_samples(items, seed=SEED))
    assert sample_scores(run_eval(again, "evalsuite/baseline", tmp_path, max_samples=7)) == first
    other = TASK.support_desk(dataset=episode_samples(items, seed=SEED + 1))
    changed = sample_scores(run_eval(other, "evalsuite/baseline", tmp_path))
    assert sum(changed[i] != first[i] for i in first) > 0


# ---- arith ---------------------------------------------------------------------------------
def test_arith_policies_rank_as_designed() -> None:
    items = read_jsonl(ARITH_ITEMS)
    assert all(solve(it["input"]) is not None for it in items)
    assert all(str(solve(it["input"])[0]) == it["target"] for it in items)  # type: ignore[index]

    def accuracy(agent: str, seed: int) -> float:
        hits = 0
        for it in items:
            reply = arith_answer(agent, it["input"], seeded_rng(seed, agent, it["id"]))
            hits += reply.rsplit("ANSWER:", 1)[1].strip() == it["target"]
        return hits / len(items)

    for seed in (1, 2):
        assert accuracy("improved", seed) > accuracy("baseline", seed) + 0.05
        assert accuracy("hacker", seed) == 0.0


def test_arith_end_to_end(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location(
        "arith_by_path", ROOT / "tasks" / "arith" / "task.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    samples = episode_samples(read_jsonl(ARITH_ITEMS)[:20], seed=SEED)
    scores = {}
    for agent in ("improved", "hacker"):
        log = run_eval(module.arith(dataset=samples), f"evalsuite/{agent}", tmp_path)
        assert log.samples is not None
        scores[agent] = mean(float(s.scores["final_answer"].value) for s in log.samples)  # type: ignore[index,arg-type]
    assert scores["improved"] >= 0.8 and scores["hacker"] == 0.0


@pytest.mark.slow
def test_dev_calibration() -> None:
    """Dev means over every dev item: `python -m tests.agents.calibrate`.

    The holdout is measured only through the runner (budgeted, ledgered), in
    tests/e2e/test_support_holdout.py.
    """
    from tests.agents.calibrate import calibrate

    row = calibrate([SEED])["dev"]
    assert row["improved"]["score"] >= row["baseline"]["score"] + 0.10, row
    assert row["hacker"]["score"] < 0.05 and row["hacker"]["closed"] > 0.9, row
