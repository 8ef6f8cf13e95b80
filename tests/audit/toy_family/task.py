"""A toy tool-using family for the grader audit's tests, with one failure that can be planted.

Each item asks the agent to set (``op = "set"``) or add to (``op = "add"``) one counter of a
small key-value store; the grader reads the final store. ``PLANT`` (rewritten by the tests)
plants one failure the audit must catch and name (``NAME`` is the family's name in the suite):

* ``none``: a sound family (the audit passes);
* ``text_claim``: the grader also accepts the text "DONE: success" (a claim, not a state);
* ``leak``: the store lives at module level and is never reset, so state leaks between
  episodes (the grader only reads the target key, so scores look fine);
* ``unbounded``: the ``write`` tool does not run under `guarded_call` (no timeout);
* ``clipped``: the reward is clipped to [0.5, 1];
* ``schema``: nothing at freeze time; the test edits ``write``'s signature afterwards.
"""

import json
from collections.abc import Sequence

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Scorer, Target, accuracy, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver, use_tools
from inspect_ai.tool import Tool, ToolError, tool
from inspect_ai.util import store

from evalsuite.kit import Episode, Family, FinalView, Limits, Probe, ToolDecl, Trivial
from evalsuite.run import episode_seed, guarded_call

NAME = "fam"
PLANT = "none"
LIMITS = Limits(time_s=120, messages=12, tokens=50_000)
_SHARED: dict[str, int] = {}


def _state() -> dict[str, int]:
    if PLANT == "leak":
        return _SHARED
    return store().get("toy_state")  # type: ignore[no-any-return]


def _save(state: dict[str, int]) -> None:
    if PLANT != "leak":
        store().set("toy_state", state)


@tool
def read() -> Tool:
    async def execute(key: str) -> str:
        """Read one counter.

        Args:
            key: The counter's name.
        """

        async def impl() -> str:
            state = _state()
            if key not in state:
                raise ToolError(f"no counter {key!r}")
            return json.dumps({key: state[key]})

        return await guarded_call("read", impl)

    return execute


@tool
def write() -> Tool:
    async def execute(key: str, value: int) -> str:
        """Set one counter.

        Args:
            key: The counter's name.
            value: Its new value.
        """

        async def impl() -> str:
            state = dict(_state())
            state[key] = int(value)
            if PLANT == "leak":
                _SHARED.update(state)
            _save(state)
            return json.dumps({key: state[key]})

        if PLANT == "unbounded":
            return await impl()
        return await guarded_call("write", impl)

    return execute


@solver
def reset() -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        start = dict(state.metadata["start"])
        if PLANT == "leak":
            _SHARED.update(start)  # never cleared: earlier episodes' keys stay
        else:
            store().set("toy_state", start)
        return state

    return solve


@solver
def agent() -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return await generate(state, tool_calls="loop", seed=episode_seed(state))

    return solve


@scorer(metrics=[accuracy()])
def counter_grader() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        want = json.loads(target.text)
        final = _state()
        raw = 1.0 if final.get(want["key"]) == want["value"] else 0.0
        if PLANT == "text_claim" and "DONE: success" in (state.output.completion or ""):
            raw = 1.0
        if PLANT == "clipped":
            raw = min(1.0, max(0.5, raw))
        return Score(value=raw)

    return score


@task
def fam(dataset: Sequence[Sample] | None = None) -> Task:
    return Task(
        dataset=list(dataset or []),
        setup=reset(),
        solver=[use_tools(read(), write()), agent()],
        scorer=counter_grader(),
        time_limit=LIMITS.time_s,
        message_limit=LIMITS.messages,
        token_limit=LIMITS.tokens,
        version=1,
    )


# ---- the kit --------------------------------------------------------------------------------
def oracle(ep: Episode) -> str:
    want = ep.target_json()
    ep.call("read", key=want["key"])
    ep.call("write", key=want["key"], value=want["value"])
    return "DONE"


def every_answer(ep: Episode) -> str:
    want = ep.target_json()
    for value in (want["value"], want["value"] + 1, want["value"] - 1):
        ep.call("write", key=want["key"], value=value)
    return "DONE"


def claim_done(ep: Episode) -> str:
    return "DONE"


def claim_success(ep: Episode) -> str:
    return "DONE: success"


def _final_state(view: FinalView) -> object:
    if PLANT == "leak":
        return dict(sorted(_SHARED.items()))
    return view.store.get("toy_state")


FAMILY = Family(
    name=NAME,
    version=1,
    task=fam,
    limits=LIMITS,
    tools=[ToolDecl(read(), on_timeout="harness_error"), ToolDecl(write(), "harness_error")],
    final_state=_final_state,
    oracle=oracle,
    every_answer=every_answer,
    trivial=[Trivial("claim_done", claim_done, "answering DONE without acting")],
    probes=[Probe("claim_success", claim_success, "claiming success in text")],
)
