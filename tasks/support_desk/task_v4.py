"""Customer-support desk, version 4 (evalsuite task family `support_desk`; support@4.0.0).

The environment and tools are version 2's, the loop version 3's (`task_v3.py`, kept unchanged
for support@3.0.0). What changed:

* the items (`items_v4.py`, ids ``support-v4-NNNN``): a refund ticket returns several items,
  some inside the refund window and some (in ``refund_outside_window``) outside, in any order;
  an address change comes with returns, and when identity fails (``unverified_change``) some
  of those returns are due. Every ticket whose answer holds a decline also asks for something
  due, and which requests are due only the records tell. Version 3's two full-work decliners
  (do all a correct agent does, then decline whatever was found) passed its decline strata,
  18 of 108 dev items each (issue 29; docs/design/red-team.md);
* the verifier (`verifier_v4.py`): every request of a ticket is graded, on the trace and the
  final state (the due changes exactly, each decline resting on the agent's own lookups, every
  reason that applies and no other, the amounts and dates of the records);
* the policy (`policy.POLICY_V4`, POLICY_v4.md): rule 12, several requests in one ticket;
* the limits: more messages (a ticket with five requests takes about twenty tool calls);
* the kit's version 4 (`kit.support_kit_v4`): its oracle, and policies that attack the shape
  (grant the due half only, decline by position, decline by kind).
"""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.solver import Generate, Solver, TaskState, solver, system_message, use_tools

from evalsuite.kit import Limits, family_package, tool_loop
from evalsuite.run import episode_seed, standalone_samples

HERE = Path(__file__).resolve().parent
VERSION = 4
LIMITS = Limits(time_s=900, messages=80, tokens=600_000)


_PACKAGE = family_package(HERE, "support_desk")
PACKAGE = _PACKAGE.name
"""The private module name this folder is imported under (`evalsuite.kit.family_package`)."""
submodule = _PACKAGE.submodule


env = submodule("env")
episode = submodule("episode")
tools = submodule("tools")
verifier = submodule("verifier_v4")
POLICY: str = submodule("policy").POLICY_V4

SYSTEM_PROMPT = (
    "You are a customer-support agent for Northwind Homeware. Work the ticket in the next "
    "message using the tools, and follow the policy below exactly: check every detail the "
    "customer gives against the records before acting, and decide each request of the ticket "
    "on its own. When you are done, reply to the customer, set the ticket status, and finish "
    "with a one-line summary without a tool call.\n\n" + POLICY
)


@solver
def support_agent() -> Solver:
    """The agent loop (`evalsuite.kit.tool_loop`), as version 3's."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return await tool_loop(state, seed=episode_seed(state))

    return solve


@task
def support_desk(dataset: Sequence[Sample] | None = None) -> Task:
    """The support_desk family; `dataset` is given by the evalsuite runner (default: dev items)."""
    samples = list(dataset) if dataset is not None else standalone_samples(HERE / "items.jsonl")
    return Task(
        dataset=samples,
        setup=episode.reset_shop(),
        solver=[system_message(SYSTEM_PROMPT), use_tools(tools.support_tools()), support_agent()],
        scorer=verifier.support_verifier(),
        time_limit=LIMITS.time_s,
        message_limit=LIMITS.messages,
        token_limit=LIMITS.tokens,
        version=VERSION,
    )


def leak_surface(payload: dict[str, Any]) -> dict[str, str]:
    """What the agent can read: the ticket, and the shop state its tools return (leak audit)."""
    import json

    state = payload.get("metadata", {}).get("initial_state", {})
    return {"input": str(payload["input"]), "state": json.dumps(state, sort_keys=True)}


def leak_secrets(payload: dict[str, Any]) -> list[str]:
    """The answer key: the expected resolution of each request, and any internal decline
    reason (leak audit)."""
    import json

    target = json.loads(str(payload["target"]))
    secrets = [str(payload["target"])]
    requests = target["requests"] if target.get("action") == "multi" else [target]
    for request in requests:
        if request.get("reason"):
            secrets.append(str(request["reason"]))
        if request.get("order"):
            secrets.append(
                " ".join(str(request[k]) for k in ("action", "order", "line") if k in request)
            )
    return secrets


FAMILY = submodule("kit").support_kit_v4(
    support_desk, VERSION, LIMITS, leak_surface=leak_surface, leak_secrets=leak_secrets
)
