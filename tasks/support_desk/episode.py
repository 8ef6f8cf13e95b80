"""Per-episode shop state: built fresh from the item's metadata and hash-checked at every reset.

No `from __future__ import annotations` here: a StoreModel defined under it breaks under the
inspect CLI (docs/inspect.md, point 11).
"""

from collections.abc import Callable
from typing import Any, TypeVar

from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import StoreModel, store, store_as
from pydantic import Field

from evalsuite.run import HarnessFault, checked_initial_state, state_copy

from .env import Shop, State, fresh_runtime, initial_view, state_hash

T = TypeVar("T")
STORE_INSTANCE = "support_desk"
STATE_KEY = f"ShopStore:{STORE_INSTANCE}:state"
"""Sample-store key of `ShopStore.state`: the runtime state the verifier and the audit read."""
HASH_KEY = f"ShopStore:{STORE_INSTANCE}:initial_hash"
"""Sample-store key of `ShopStore.initial_hash`."""


class ShopStore(StoreModel):
    """The shop of one (item, epoch): lives in the sample's own store, never at module level."""

    state: dict[str, Any] = Field(default_factory=dict)
    initial_hash: str = ""
    item_id: str = ""


def shop_store() -> ShopStore:
    """This sample's shop store (only valid inside a running sample)."""
    return store_as(ShopStore, instance=STORE_INSTANCE)


def build_episode(metadata: dict[str, Any]) -> State:
    """A fresh runtime state from item metadata, after checking the initial state's hash.

    Raises:
        HarnessFault: metadata lacks the state or its hash, or the hash does not match.
    """
    initial = checked_initial_state(
        metadata, family="support_desk", what="shop state", state_hash=state_hash
    )
    return fresh_runtime(initial)


@solver
def reset_shop() -> Solver:
    """Build this episode's shop from the sample metadata, then re-check what the store holds."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        metadata = dict(state.metadata or {})
        runtime = build_episode(metadata)
        store = shop_store()
        store.state = runtime
        store.initial_hash = metadata["state_hash"]
        store.item_id = str(metadata.get("item_id", state.sample_id))
        held = store.state
        if any(held.get(key) for key in ("refunds", "shipments", "replies", "log")) or (
            state_hash(initial_view(held)) != metadata["state_hash"]
        ):
            raise HarnessFault("the episode store does not hold the item's initial shop state")
        return state

    return solve


def read_shop() -> State:
    """A deep copy of this episode's runtime state.

    Raises:
        HarnessFault: the shop was never set up for this sample.
    """
    # by key: the values a `ShopStore` bound with ``store_as`` reads, without building and
    # validating the model at every tool call (docs/design/run-speed.md)
    data = store()
    return state_copy(
        data.get(STATE_KEY) or {},
        data.get(HASH_KEY) or "",
        unset="support_desk shop is not initialised (reset_shop did not run)",
    )


def with_shop(operation: Callable[[Shop], T], *, mutate: bool) -> T:
    """Run `operation` on this episode's shop; persist the state when `mutate`.

    A failing operation (ShopError) leaves the stored state untouched.
    """
    state = read_shop()
    result = operation(Shop(state))
    if mutate:
        store().set(STATE_KEY, state)
    return result
