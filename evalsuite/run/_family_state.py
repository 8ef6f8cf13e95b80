"""The per-episode state of a family with a simulated environment (a shop, a records system).

Such a family keeps its item's initial state and that state's hash in the item's metadata;
each episode builds its runtime state from them and keeps it in the sample's own store. These
helpers are the checks every such family makes, with the family's own wording: the initial
state is there and still hashes as frozen, and a tool reads a state that was set up
(tasks/README.md). They live beside `HarnessFault`, which they raise.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from evalsuite.run._episode import HarnessFault

__all__ = ["checked_initial_state", "state_copy"]


def checked_initial_state(
    metadata: Mapping[str, Any],
    *,
    family: str,
    what: str,
    state_hash: Callable[[dict[str, Any]], str],
) -> dict[str, Any]:
    """The item's ``initial_state``, after checking it against its recorded ``state_hash``.

    Args:
        metadata: The item's metadata.
        family: The family's name, for the message (``records_desk``).
        what: What the state is, for the message (``records state``).
        state_hash: The family's hash of a state (as recorded at generation).

    Raises:
        HarnessFault: the metadata lacks the state or its hash, or the hash does not match.
    """
    initial = metadata.get("initial_state")
    expected = metadata.get("state_hash")
    if not isinstance(initial, dict) or not isinstance(expected, str):
        raise HarnessFault(f"{family} item has no initial_state/state_hash in its metadata")
    actual = state_hash(initial)
    if actual != expected:
        raise HarnessFault(
            f"initial {what} does not match its recorded hash (expected {expected[:19]}…, "
            f"got {actual[:19]}…): the item or the environment was altered"
        )
    return initial


def state_copy(state: dict[str, Any], initial_hash: str, *, unset: str) -> dict[str, Any]:
    """A deep copy of an episode's runtime `state`, which its reset must have set up.

    Raises:
        HarnessFault: `state` or `initial_hash` is empty (the message is `unset`).
    """
    if not state or not initial_hash:
        raise HarnessFault(unset)
    return copy.deepcopy(state)
