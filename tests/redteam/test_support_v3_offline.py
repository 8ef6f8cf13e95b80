"""The red team's support_desk policies on version 3's items, before support@3.0.0 is frozen.

The sweep of test_cheap_policies.py plays the latest frozen version through `evalsuite run`;
until support@3.0.0 is frozen, that is support@2.0.0 (an expected failure). Here every support
policy of the ``redteam`` provider plays version 3's dev items (generated in memory, split as a
freeze of 3.0.0 splits them) through the same conversation a model sees, without inspect
(tests/tasks/support_v3_helpers.py): each ``cheap`` policy scores at most 3% of the family,
each ``reckless`` one 0 where the policy forbids what it does. About 2 s.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest
from inspect_ai.model import ChatMessage
from inspect_ai.tool import ToolInfo

from evalsuite.agents._common import NextCall, Replay, read_conversation
from tests.redteam import cheap_models
from tests.redteam.scores import THRESHOLD
from tests.tasks.support_v3_helpers import Played, Turn, converse, score, stratum, v3_dev_items

ITEMS = v3_dev_items()


def run(name: str, item: dict[str, Any]) -> Played:
    """Red-team policy `name` on `item`, turn by turn, as the provider plays it."""
    policy = cheap_models.POLICIES[name]

    def turn(messages: list[ChatMessage], tools: list[ToolInfo]) -> Turn:
        conversation = read_conversation(messages, tools)
        play = cheap_models.Play(conversation, Replay(conversation.results))
        try:
            return policy.fn(play), None, {}
        except NextCall as step:
            return "", step.function, dict(step.arguments)
        except cheap_models.Done as done:
            return done.text, None, {}

    return converse(turn, item)


def scores(name: str) -> dict[str, list[float]]:
    found: dict[str, list[float]] = defaultdict(list)
    for item in ITEMS:
        found[stratum(item)].append(score(item, run(name, item)))
    return found


@pytest.mark.parametrize("name", cheap_models.schedule("support"))
def test_every_support_policy_holds_on_version_3s_dev_items(name: str) -> None:
    policy = cheap_models.POLICIES[name]
    found = scores(name)
    mean = sum(sum(v) for v in found.values()) / len(ITEMS)
    if policy.kind == "cheap":
        assert mean <= THRESHOLD, {s: sum(v) for s, v in found.items() if sum(v)}
    for name_, values in found.items():
        inside = name_.partition("/")[2]
        if any(inside.startswith(p) for p in policy.must_fail):
            assert sum(values) == 0, (name_, values)


def test_the_full_work_decliners_pass_exactly_the_decline_strata() -> None:
    """The residual per-item grading cannot close (docs/design/red-team.md): a policy that does
    all a correct agent does on a decline item, then declines whatever it found, is right on
    every such item. Recorded as ``reckless`` (0 where the request was due), not bounded."""
    for name, intent in (
        ("verify_each_then_decline_with_phone", "unverified_change"),
        ("find_order_then_decline_window_dated", "refund_outside_window"),
    ):
        found = scores(name)
        passed = {s for s, v in found.items() if sum(v)}
        assert passed == {f"support_desk/{intent}/clean", f"support_desk/{intent}/messy"}
        assert sum(sum(v) for v in found.values()) / len(ITEMS) <= 18 / 108
