"""The episode-state checks shared by the families with a simulated environment."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from evalsuite.run import HarnessFault, checked_initial_state, state_copy


def _hash(state: dict[str, Any]) -> str:
    return "sha256:" + hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest()


def test_the_initial_state_is_returned_when_it_hashes_as_recorded() -> None:
    initial = {"orders": [{"id": "O-1"}]}
    metadata = {"initial_state": initial, "state_hash": _hash(initial)}
    got = checked_initial_state(metadata, family="fam", what="fam state", state_hash=_hash)
    assert got == initial


def test_a_missing_or_altered_state_is_a_harness_fault_in_the_familys_words() -> None:
    with pytest.raises(HarnessFault, match=r"^fam item has no initial_state/state_hash"):
        checked_initial_state({}, family="fam", what="fam state", state_hash=_hash)
    initial: dict[str, Any] = {"orders": []}
    altered = {"initial_state": {"orders": [1]}, "state_hash": _hash(initial)}
    with pytest.raises(HarnessFault, match=r"^initial fam state does not match its recorded hash"):
        checked_initial_state(altered, family="fam", what="fam state", state_hash=_hash)


def test_a_state_copy_is_deep_and_refuses_a_state_never_set_up() -> None:
    state = {"log": [{"call": 1}]}
    copied = state_copy(state, "sha256:x", unset="not set up")
    copied["log"].append({"call": 2})
    assert state == {"log": [{"call": 1}]}
    for empty_state, empty_hash in (({}, "sha256:x"), (state, "")):
        with pytest.raises(HarnessFault, match=r"^not set up$"):
            state_copy(empty_state, empty_hash, unset="not set up")
