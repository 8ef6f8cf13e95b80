"""A toy tool-using family for the adversarial audit's tests (issue 29), one weakness plantable.

``PLANT`` (rewritten by the tests) chooses the family:

* ``positional``: merge two duplicate contacts, the newer into the older; the ticket names both
  ids, the older always first (a positional shortcut: "merge the second into the first" passes
  without reading);
* ``hidden``: the same merges, but the ticket names the person only (ids not to hand): the
  agent must find the records and read their creation times;
* ``regex``: decline a refund, giving the reason the order's record shows; the grader
  regex-searches the reply for that reason (every reason at once passes);
* ``strict``: the same declines, graded on the reason that applies and no other.

``REFERENCES`` (rewritten by the tests) becomes the kit's reference agents.
"""

import json
from collections.abc import Sequence
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Scorer, Target, accuracy, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver, use_tools
from inspect_ai.tool import Tool, ToolError, tool
from inspect_ai.util import store

from evalsuite.kit import Episode, Family, FinalView, Limits, ToolDecl
from evalsuite.run import episode_seed, guarded_call

PLANT = "positional"
REFERENCES: tuple[str, ...] = ()
LIMITS = Limits(time_s=120, messages=16, tokens=50_000)
REASONS = ("expired", "final_sale", "used")


def _state() -> dict[str, Any]:
    return store().get("toy_red")  # type: ignore[no-any-return]


@tool
def find() -> Tool:
    async def execute(name: str) -> str:
        """Find a person's contact records.

        Args:
            name: The person's name.
        """

        async def impl() -> str:
            ids = sorted(c for c, r in _state()["contacts"].items() if r["name"] == name)
            return json.dumps(ids)

        return await guarded_call("find", impl)

    return execute


@tool
def read() -> Tool:
    async def execute(record_id: str) -> str:
        """Read a contact or an order.

        Args:
            record_id: Its id.
        """

        async def impl() -> str:
            state = _state()
            found = state["contacts"].get(record_id) or state["orders"].get(record_id)
            if found is None:
                raise ToolError(f"no record {record_id!r}")
            return json.dumps({"id": record_id, **found})

        return await guarded_call("read", impl)

    return execute


@tool
def merge() -> Tool:
    async def execute(survivor: str, duplicate: str) -> str:
        """Merge the duplicate contact into the survivor.

        Args:
            survivor: The contact that stays.
            duplicate: The contact merged into it.
        """

        async def impl() -> str:
            state = dict(_state())
            if survivor not in state["contacts"] or duplicate not in state["contacts"]:
                raise ToolError("no such contact")
            state["merged"] = [*state["merged"], [survivor, duplicate]]
            store().set("toy_red", state)
            return "merged"

        return await guarded_call("merge", impl)

    return execute


@tool
def reply() -> Tool:
    async def execute(text: str) -> str:
        """Reply to the customer.

        Args:
            text: The reply.
        """

        async def impl() -> str:
            state = dict(_state())
            state["replies"] = [*state["replies"], text]
            store().set("toy_red", state)
            return "sent"

        return await guarded_call("reply", impl)

    return execute


@solver
def reset() -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        start = dict(state.metadata["start"])
        store().set("toy_red", {**start, "merged": [], "replies": []})
        return state

    return solve


@solver
def agent() -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return await generate(state, tool_calls="loop", seed=episode_seed(state))

    return solve


@scorer(metrics=[accuracy()])
def grader() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        want = json.loads(target.text)
        final = _state()
        if "survivor" in want:
            ok = final["merged"] == [[want["survivor"], want["duplicate"]]]
        else:
            text = " ".join(final["replies"])
            ok = want["reason"] in text
            if PLANT == "strict":
                ok = ok and not any(r in text for r in REASONS if r != want["reason"])
        return Score(value=1.0 if ok else 0.0)

    return score


@task
def red(dataset: Sequence[Sample] | None = None) -> Task:
    return Task(
        dataset=list(dataset or []),
        setup=reset(),
        solver=[use_tools(find(), read(), merge(), reply()), agent()],
        scorer=grader(),
        time_limit=LIMITS.time_s,
        message_limit=LIMITS.messages,
        token_limit=LIMITS.tokens,
        version=1,
    )


# ---- the kit --------------------------------------------------------------------------------
def oracle(ep: Episode) -> str:
    want = ep.target_json()
    if "survivor" in want:
        if PLANT == "hidden":
            ep.call("find", name=ep.metadata["name"])
        ep.call("read", record_id=want["survivor"])
        ep.call("read", record_id=want["duplicate"])
        ep.call("merge", survivor=want["survivor"], duplicate=want["duplicate"])
        return "Merged."
    order = ep.metadata["order"]
    status = ep.call("read", record_id=order).parsed()["status"]
    ep.call("reply", text=f"Sorry, I cannot refund order {order}: it is {status}.")
    return "Declined."


def every_answer(ep: Episode) -> str:
    want = ep.target_json()
    if "survivor" in want:
        ep.call("merge", survivor=want["survivor"], duplicate=want["duplicate"])
        ep.call("merge", survivor=want["duplicate"], duplicate=want["survivor"])
        return "Merged."
    ep.call("reply", text="Sorry: " + ", ".join(REASONS) + ".")
    return "Declined."


def _final_state(view: FinalView) -> object:
    return view.store.get("toy_red")


FAMILY = Family(
    name="red",
    version=1,
    task=red,
    limits=LIMITS,
    tools=[
        ToolDecl(find(), "harness_error"),
        ToolDecl(read(), "harness_error"),
        ToolDecl(merge(), "harness_error"),
        ToolDecl(reply(), "harness_error"),
    ],
    final_state=_final_state,
    oracle=oracle,
    every_answer=every_answer,
    references=REFERENCES,
)
