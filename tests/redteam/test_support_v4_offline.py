"""The red team's support_desk policies on version 4's items, before support@4.0.0 is frozen.

As tests/redteam/test_support_v3_offline.py does for version 3: every support policy of the
``redteam`` provider plays version 4's dev items (generated in memory, split as a freeze of
4.0.0 splits them) through the same conversation a model sees, without inspect
(tests/tasks/support_v4_helpers.py): each ``cheap`` policy scores at most 3% of the family,
each ``reckless`` one 0 where the policy forbids what it does, and version 3's two full-work
decliners, which passed its decline strata (18 of 108 dev items each), at most 3% too: every
ticket whose answer holds a decline now also asks for something due.
"""

from __future__ import annotations

from collections import defaultdict
from functools import cache
from typing import Any

import pytest
from inspect_ai.model import ChatMessage
from inspect_ai.tool import ToolInfo

from evalsuite.agents._common import NextCall, Replay, read_conversation
from tests.redteam import cheap_models
from tests.redteam.scores import THRESHOLD
from tests.tasks.support_v4_helpers import Played, Turn, converse, score, stratum, v4_dev_items

ITEMS = v4_dev_items()
FULL_WORK_DECLINERS = (
    "verify_each_then_decline_with_phone",
    "find_order_then_decline_window_dated",
)
VERSION_4_ATTACKS = (
    "decline_first_return",
    "decline_last_return",
    "decline_address_grant_returns",
    "decline_every_request_dated",
)
"""The red team's policies written against version 4's shape (cheap_models.py)."""


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


@cache
def scores(name: str) -> dict[str, tuple[float, ...]]:
    found: dict[str, list[float]] = defaultdict(list)
    for item in ITEMS:
        found[stratum(item)].append(score(item, run(name, item)))
    return {s: tuple(v) for s, v in found.items()}


def mean(name: str) -> float:
    return sum(sum(v) for v in scores(name).values()) / len(ITEMS)


@pytest.mark.slow  # about 4 min of CPU: `make slow`; the fast tests below keep the six that
# attack version 4 (the full-work decliners and the new shape attacks)
@pytest.mark.parametrize("name", cheap_models.schedule("support"))
def test_every_support_policy_holds_on_version_4s_dev_items(name: str) -> None:
    policy = cheap_models.POLICIES[name]
    found = scores(name)
    if policy.kind == "cheap":
        assert mean(name) <= THRESHOLD, {s: sum(v) for s, v in found.items() if sum(v)}
    for name_, values in found.items():
        inside = name_.partition("/")[2]
        if any(inside.startswith(p) for p in policy.must_fail):
            assert sum(values) == 0, (name_, values)


@pytest.mark.parametrize("name", FULL_WORK_DECLINERS)
def test_the_full_work_decliners_no_longer_pass_the_decline_strata(name: str) -> None:
    """Version 3's residual (docs/design/red-team.md): they did all a correct agent does on a
    decline item, then declined whatever they found. Version 4's decline tickets also ask for
    something due, so declining what was found fails them."""
    assert mean(name) <= THRESHOLD, {s: sum(v) for s, v in scores(name).items() if sum(v)}


@pytest.mark.parametrize("name", VERSION_4_ATTACKS)
def test_the_attacks_on_version_4s_shape_stay_at_most_3_percent(name: str) -> None:
    assert cheap_models.POLICIES[name].family == "support"
    assert mean(name) <= THRESHOLD, {s: sum(v) for s, v in scores(name).items() if sum(v)}
