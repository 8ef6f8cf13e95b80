"""Customer-support desk (evalsuite task family `support_desk`, version 1).

The agent works one support ticket of a simulated shop with tools (look customers and orders
up, verify identity, refund, ship replacements, change addresses, cancel, reply, set the ticket
status) under a written policy (POLICY.md). The verifier checks the FINAL shop state: the
customer's problem fixed (or properly declined), no forbidden side effect, policy followed, the
customer answered and the ticket closed; every sub-check is in `Score.metadata`.

Loading: inspect loads this file by path under a path-derived module name, and the evalsuite
runner loads it with importlib; in both cases the sibling modules are imported through
`evalsuite.kit.family_package`, which registers this folder once in `sys.modules` under a private
name derived from its absolute path. So no `sys.path` entry is needed and two copies of the
folder never mix.
History of this family's version: tasks/README.md.
"""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.solver import Generate, Solver, TaskState, solver, system_message, use_tools

from evalsuite.kit import family_package
from evalsuite.run import episode_seed, standalone_samples

HERE = Path(__file__).resolve().parent
VERSION = 1
MESSAGE_LIMIT = 40


_PACKAGE = family_package(HERE, "support_desk")
PACKAGE = _PACKAGE.name
"""The private module name this folder is imported under (`evalsuite.kit.family_package`)."""
submodule = _PACKAGE.submodule


env = submodule("env")
episode = submodule("episode")
tools = submodule("tools")
verifier = submodule("verifier")
POLICY: str = submodule("policy").POLICY

SYSTEM_PROMPT = (
    "You are a customer-support agent for Northwind Homeware. Work the ticket in the next "
    "message using the tools, and follow the policy below exactly: check every detail the "
    "customer gives against the records before acting. When you are done, reply to the "
    "customer, set the ticket status, and finish with a one-line summary without a tool call."
    "\n\n" + POLICY
)


@solver
def support_agent() -> Solver:
    """The agent loop: generate and run tool calls until the agent answers without one."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return await generate(state, tool_calls="loop", seed=episode_seed(state))

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
        message_limit=MESSAGE_LIMIT,
        version=VERSION,
    )


def leak_surface(payload: dict[str, Any]) -> dict[str, str]:
    """What the agent can read: the ticket, and the shop state its tools return (leak audit)."""
    import json

    state = payload.get("metadata", {}).get("initial_state", {})
    return {"input": str(payload["input"]), "state": json.dumps(state, sort_keys=True)}


def leak_secrets(payload: dict[str, Any]) -> list[str]:
    """The answer key: the expected resolution, and any internal decline reason (leak audit).

    Order ids, line ids and amounts are legitimately in the state; what must not show is the
    verifier's verdict: the resolution as a whole, or its reason code.
    """
    import json

    target = json.loads(str(payload["target"]))
    secrets = [str(payload["target"])]
    if target.get("reason"):
        secrets.append(str(target["reason"]))
    if target.get("order"):
        secrets.append(" ".join(str(target[k]) for k in ("action", "order", "line") if k in target))
    return secrets


# ---- family kit ---------------------------------------------------------------------------------
# Added for the grader audit (issue 13). Version 1's task, tools, verifier and limits above are
# unchanged: the kit only declares them, with the limits the family should run under, so that
# `evalsuite audit support@1.0.0 --graders` can tell the truth about this version (its task
# applies no time or token limit).
from evalsuite.kit import Limits  # noqa: E402  (the kit comes after the frozen code)

FAMILY = submodule("kit").support_kit(
    support_desk,
    VERSION,
    Limits(time_s=900, messages=MESSAGE_LIMIT, tokens=400_000),
    leak_surface=leak_surface,
    leak_secrets=leak_secrets,
)
