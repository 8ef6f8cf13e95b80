"""The family kit: found by type, policies replayed turn by turn, action spaces hashed."""

from __future__ import annotations

import types

import pytest
from inspect_ai import Task, task
from inspect_ai.tool import Tool, tool

from evalsuite.kit import (
    Episode,
    Family,
    FamilyKitError,
    Limits,
    NextCall,
    Probe,
    ToolResult,
    Trivial,
    action_space,
    action_space_changes,
    family_of,
    null_policy,
)


@task
def toy(dataset: object = None) -> Task:
    return Task(dataset=[])


def _answer(ep: Episode) -> str:
    return "42"


def _family(name: str = "toy") -> Family:
    return Family(
        name=name,
        version=1,
        task=toy,
        limits=Limits(time_s=60, messages=10, tokens=1000),
        oracle=_answer,
        every_answer=_answer,
    )


def test_a_task_module_declares_its_kit_by_type_not_by_name() -> None:
    module = types.ModuleType("task_module")
    assert family_of(module) is None
    kit = _family()
    module.anything = kit  # type: ignore[attr-defined]
    module.alias = kit  # type: ignore[attr-defined]  # the same object twice is one kit
    assert family_of(module) is kit
    module.other = _family("other")  # type: ignore[attr-defined]
    with pytest.raises(FamilyKitError, match="declares 2 family kits"):
        family_of(module)


def test_policies_are_named_and_floors_default_to_zero() -> None:
    trivial = Trivial("lazy", null_policy, "doing little", floors={"toy/a": 0.25})
    probe = Probe("sneak", null_policy, "sneaking", when=lambda m: m.get("kind") == "x")
    kit = Family(
        name="toy",
        version=1,
        task=toy,
        limits=Limits(time_s=60, messages=10, tokens=1000),
        oracle=_answer,
        every_answer=_answer,
        trivial=[trivial],
        probes=[probe],
    )
    assert set(kit.policies()) == {"oracle", "empty_answer", "every_answer", "lazy", "sneak"}
    assert (trivial.floor("toy/a"), trivial.floor("toy/b")) == (0.25, 0.0)
    assert probe.applies({"kind": "x"}) and not probe.applies({"kind": "y"})


def _episode(results: list[ToolResult]) -> Episode:
    return Episode(
        item_id="i",
        epoch=1,
        seed=1,
        prompt="p",
        target='{"key": "a"}',
        metadata={},
        tools=frozenset({"read", "write"}),
        results=results,
    )


def _policy(ep: Episode) -> str:
    found = ep.call("read", key=ep.target_json()["key"])
    ep.call("write", key="a", value=found.parsed()["a"] + 1)
    return "done"


def test_a_policy_is_replayed_turn_by_turn() -> None:
    with pytest.raises(NextCall) as first:
        _policy(_episode([]))
    assert (first.value.function, first.value.arguments) == ("read", {"key": "a"})
    read = ToolResult("read", {"key": "a"}, '{"a": 1}')
    with pytest.raises(NextCall) as second:
        _policy(_episode([read]))
    assert (second.value.function, second.value.arguments) == ("write", {"key": "a", "value": 2})
    wrote = ToolResult("write", {"key": "a", "value": 2}, '{"a": 2}')
    assert _policy(_episode([read, wrote])) == "done"
    # a recorded call of another tool at this position: the policy sees an error, not data
    stray = _episode([ToolResult("write", {}, "{}")])
    result = stray.call("read", key="a")
    assert not result.ok and result.error == "conversation out of step"


@tool
def lookup() -> Tool:
    async def execute(key: str) -> str:
        """Look a key up.

        Args:
            key: The key.
        """
        return key

    return execute


@tool(name="lookup")
def lookup_v2() -> Tool:
    async def execute(key: str, exact: bool = True) -> str:
        """Look a key up.

        Args:
            key: The key.
            exact: Match exactly.
        """
        return key

    return execute


def test_an_action_space_names_each_tool_that_changed() -> None:
    frozen = action_space([lookup()])
    assert action_space([lookup()]) == frozen
    assert list(frozen) == ["lookup"] and frozen["lookup"].startswith("sha256:")
    changed = action_space([lookup_v2()])
    (change,) = action_space_changes(frozen, changed)
    assert change.startswith("tool 'lookup' has another schema")
    assert action_space_changes(frozen, {}) == ["tool 'lookup' removed"]
    assert action_space_changes({}, frozen) == ["tool 'lookup' added"]
