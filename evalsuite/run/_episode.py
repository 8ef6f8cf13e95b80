"""What a task family needs from the runner: the episode's seed, and guarded tool calls.

The runner puts an `EpisodeSpec` into every sample's metadata (key ``"evalsuite"``) and
prepends `episode_setup()` to the task's setup. Task code then

* passes `episode_seed(state)` to ``generate(..., seed=...)`` so that every (item, epoch)
  has its own reproducible seed (inspect sends one seed to every epoch otherwise). A task
  that was not written for evalsuite does not: `episode_setup` also makes the seed the
  sample's default generation seed (inspect's active ``GenerateConfig``, which every
  ``generate`` of the model under test merges), so its plain ``generate()`` gets it too;
* runs each environment tool through `guarded_call`, which applies the tool timeout and the
  harness-fault plan: a hang or an injected fault raises `HarnessFault`, which inspect records
  as a sample error and evalsuite counts as a ``harness_error``, never as a model failure. A
  tool the family declares model-bound (``on_timeout="limit"``: e.g. a query too broad for a
  slow tool) instead tells the model it timed out and marks the episode, which evalsuite
  records as a ``limit`` of type ``tool_time`` (score 0); the kit declares which
  (`evalsuite.kit.ToolDecl`) and the grader audit checks the two agree.

Run standalone (``inspect eval tasks/<family>/task.py``), the same code works with a seed
derived from the sample id and epoch and no faults.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal, TypeVar

import anyio
from inspect_ai.model import GenerateConfig
from inspect_ai.model._generate_config import active_generate_config, set_active_generate_config
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolError
from inspect_ai.util import Store, StoreModel, store, store_as
from pydantic import BaseModel, ConfigDict, Field

from evalsuite._core.seeds import derive_seed

__all__ = [
    "EPISODE_KEY",
    "TOOL_LIMIT_KEY",
    "EpisodeSpec",
    "EpisodeState",
    "HarnessFault",
    "ToolTimeLimit",
    "episode_seed",
    "episode_setup",
    "episode_spec",
    "guarded_call",
]

EPISODE_KEY = "evalsuite"
TOOL_LIMIT_KEY = "EpisodeState:tool_limit"
"""Sample-store key of `EpisodeState.tool_limit` (read by the outcome classification)."""
GUARDED_KEY = "EpisodeState:guarded"
"""Sample-store key of `EpisodeState.guarded` (read by the grader audit)."""
T = TypeVar("T")
FaultKind = Literal["none", "error", "hang"]

_TRIES: dict[str, int] = {}
"""token -> how many times the episode was started in this process (1 = first try)."""


class HarnessFault(RuntimeError):
    """The harness failed (environment, tool, grader): counted, excluded, never scored."""


class ToolTimeLimit(TimeoutError):
    """A tool's simulated duration exceeded its own declared time limit (no real waiting).

    Raised by a tool's work inside `guarded_call`, which treats it as that tool running out
    of time: a ``limit`` tool tells the model and marks the episode, a ``harness_error`` tool
    raises `HarnessFault`. Families that simulate latency (a declared cost per call against
    the tool's limit) use it so that runs stay fast and deterministic.
    """

    def __init__(self, seconds: float, limit_s: float) -> None:
        super().__init__(f"simulated {seconds:g}s > limit {limit_s:g}s")
        self.seconds = seconds
        self.limit_s = limit_s


class EpisodeSpec(BaseModel):
    """Per-(item, epoch) instructions from the runner, carried in sample metadata."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    item_id: str
    epoch: int = Field(ge=1)
    seed: int
    fault: FaultKind = "none"
    fault_mode: Literal["persistent", "transient"] = "persistent"
    """persistent: the fault recurs on every retry; transient: only on the first try."""
    tool_timeout: float = Field(default=30.0, gt=0)
    token: str = ""
    """Unique per run and (item, epoch): keys the retry counter."""


class EpisodeState(StoreModel):
    """Per-sample store: the spec, which try this is, and how many tool calls were made."""

    item_id: str = ""
    epoch: int = 1
    seed: int = 0
    fault: str = "none"
    fault_mode: str = "persistent"
    tool_timeout: float = 30.0
    attempt: int = 1
    tool_calls: int = 0
    guarded: list[str] = Field(default_factory=list)
    """``<tool>:<on_timeout>`` of every call that ran under `guarded_call`, in order (the
    grader audit compares them with the episode's tool calls: an unguarded call is
    unbounded)."""
    tool_limit: str = ""
    """Set when a model-bound tool ran out of time: ``<tool> (<seconds>s)``."""


def episode_spec(state: TaskState) -> EpisodeSpec:
    """The runner's spec for this sample, or a standalone default (seeded from id and epoch)."""
    raw = (state.metadata or {}).get(EPISODE_KEY)
    if raw is not None:
        return EpisodeSpec.model_validate(raw)
    return EpisodeSpec(
        item_id=str(state.sample_id),
        epoch=state.epoch,
        seed=derive_seed("standalone", state.sample_id, state.epoch),
    )


def episode_seed(state: TaskState) -> int:
    """The seed of this (item, epoch), to pass to ``generate(..., seed=...)``."""
    return episode_spec(state).seed


@solver
def episode_setup() -> Solver:
    """Load the episode spec into the sample's store, count this try, and seed the sample.

    The seed becomes the default ``seed`` of every generate call of the model under test in
    this sample (inspect keeps the active generation config in a context variable, which
    each sample has its own copy of); an explicit ``generate(..., seed=...)`` still wins.
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        spec = episode_spec(state)
        set_active_generate_config(active_generate_config().merge(GenerateConfig(seed=spec.seed)))
        token = spec.token or f"{spec.item_id}\x1f{spec.epoch}\x1f{spec.seed}"
        _TRIES[token] = _TRIES.get(token, 0) + 1
        store_as(EpisodeState)  # every field in the store, with its default
        data = store()
        # by key: the values an `EpisodeState` would set, without re-validating the whole
        # model at each field (`_episode_store`)
        for field, value in (
            ("item_id", spec.item_id),
            ("epoch", spec.epoch),
            ("seed", spec.seed),
            ("fault", spec.fault),
            ("fault_mode", spec.fault_mode),
            ("tool_timeout", float(spec.tool_timeout)),
            ("attempt", _TRIES[token]),
            ("tool_calls", 0),
        ):
            data.set(_key(field), value)
        return state

    return solve


def _key(field: str) -> str:
    """The sample-store key of `EpisodeState`'s `field` (what ``store_as`` reads and writes)."""
    return f"{EpisodeState.__name__}:{field}"


def _episode_store() -> Store:
    """The sample's store, holding every `EpisodeState` field.

    `guarded_call` reads and writes the fields by their store keys: a `StoreModel` bound with
    ``store_as`` re-validates every field it sets and builds a type adapter for each list it
    reads, several times per tool call (docs/design/run-speed.md). The values and keys are
    the ones ``store_as(EpisodeState)`` keeps; a sample that `episode_setup` did not set up
    (a task run without the runner) gets the defaults written by ``store_as`` once.
    """
    data = store()
    if _key("tool_calls") not in data:
        store_as(EpisodeState)
    return data


async def guarded_call(
    name: str,
    call: Callable[[], Awaitable[T]],
    *,
    on_timeout: Literal["harness_error", "limit"] = "harness_error",
) -> T:
    """Run one environment tool call under the episode's timeout and fault plan.

    Args:
        name: The tool's name.
        call: The tool's work.
        on_timeout: What running out of time is: ``harness_error`` (the tool failed) or
            ``limit`` (the model asked for too much: it sees a timeout message, and the
            attempt is recorded as a ``tool_time`` limit). Declare the same in the family
            kit (`evalsuite.kit.ToolDecl`).

    Raises:
        HarnessFault: the call exceeded the tool timeout, or its work raised `ToolTimeLimit`
            (``harness_error`` tools), or the
            runner injected a fault into this episode (on its first tool call; on every try
            when persistent, on the first try only when transient).
        ToolError: a ``limit`` tool exceeded the timeout (the model sees it).
    """
    data = _episode_store()
    calls = int(data.get(_key("tool_calls"))) + 1
    data.set(_key("tool_calls"), calls)
    data.set(GUARDED_KEY, [*data.get(GUARDED_KEY), f"{name}:{on_timeout}"])
    fault, timeout = data.get(_key("fault")), float(data.get(_key("tool_timeout")))
    faulty = calls == 1 and (
        data.get(_key("fault_mode")) == "persistent" or data.get(_key("attempt")) == 1
    )
    if faulty and fault == "error":
        # One message for every fault of a tool and mode: the item, the epoch and the retries
        # are the attempt's own fields (the store's row, inspect's sample and its retried
        # errors), and inspect renders the traceback of each distinct text anew (seconds of
        # CPU for a few dozen faults; docs/design/run-speed.md, "Cold first run").
        raise HarnessFault(
            f"injected fault: tool {name!r} failed ({data.get(_key('fault_mode'))} fault)"
        )
    try:
        with anyio.fail_after(timeout):
            if faulty and fault == "hang":
                await anyio.sleep(timeout * 10)
            return await call()
    except TimeoutError as exc:
        limit_s = exc.limit_s if isinstance(exc, ToolTimeLimit) else timeout
        if on_timeout == "limit" and not (faulty and fault == "hang"):
            data.set(TOOL_LIMIT_KEY, f"{name} ({limit_s:g}s)")
            raise ToolError(
                f"tool {name!r} did not answer within {limit_s:g}s: the request "
                "was too large; narrow it"
            ) from None
        raise HarnessFault(f"tool {name!r} did not answer within {limit_s:g}s") from None
