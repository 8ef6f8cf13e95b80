"""Per-episode records state: built fresh from the item's metadata and hash-checked at reset.

No `from __future__ import annotations` here: a StoreModel defined under it breaks under the
inspect CLI (docs/inspect.md, point 11).
"""

from collections.abc import Callable
from typing import Any, TypeVar

from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import StoreModel, store, store_as
from pydantic import Field

from evalsuite.run import HarnessFault, checked_initial_state, state_copy

from .env import Records, State, fresh_runtime, initial_view, state_hash

T = TypeVar("T")
STORE_INSTANCE = "records_desk"
STATE_KEY = f"RecordsStore:{STORE_INSTANCE}:state"
"""Sample-store key of the runtime state (what the verifier and the audit read)."""
HASH_KEY = f"RecordsStore:{STORE_INSTANCE}:initial_hash"
"""Sample-store key of `RecordsStore.initial_hash`."""


class RecordsStore(StoreModel):
    """The records of one (item, epoch): in the sample's own store, never at module level."""

    state: dict[str, Any] = Field(default_factory=dict)
    initial_hash: str = ""


def records_store() -> RecordsStore:
    """This sample's records store (only valid inside a running sample)."""
    return store_as(RecordsStore, instance=STORE_INSTANCE)


def build_episode(metadata: dict[str, Any]) -> State:
    """A fresh runtime state from item metadata, after checking the initial state's hash.

    Raises:
        HarnessFault: metadata lacks the state or its hash, or the hash does not match.
    """
    initial = checked_initial_state(
        metadata, family="records_desk", what="records state", state_hash=state_hash
    )
    return fresh_runtime(initial)


@solver
def reset_records() -> Solver:
    """Build this episode's records from the sample metadata, then re-check the store."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        metadata = dict(state.metadata or {})
        runtime = build_episode(metadata)
        store = records_store()
        store.state = runtime
        store.initial_hash = metadata["state_hash"]
        held = store.state
        if held.get("log") or state_hash(initial_view(held)) != metadata["state_hash"]:
            raise HarnessFault("the episode store does not hold the item's initial records")
        return state

    return solve


def read_records() -> State:
    """A deep copy of this episode's runtime state.

    Raises:
        HarnessFault: the records were never set up for this sample.
    """
    # by key: the values a `RecordsStore` bound with ``store_as`` reads, without building and
    # validating the model at every tool call (docs/design/run-speed.md)
    data = store()
    return state_copy(
        data.get(STATE_KEY) or {},
        data.get(HASH_KEY) or "",
        unset="records_desk is not initialised (reset_records did not run)",
    )


def with_records(operation: Callable[[Records], T]) -> T:
    """Run `operation` on this episode's records and persist the state (the log, the clock,
    the cache and any write), also when the operation fails."""
    state = read_records()
    try:
        return operation(Records(state))
    finally:
        store().set(STATE_KEY, state)
