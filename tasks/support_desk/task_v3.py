"""Customer-support desk, version 3 (evalsuite task family `support_desk`; support@3.0.0).

The environment, tools and limits are version 2's (`task_v2.py`, kept unchanged for
support@2.0.0). What changed:

* the verifier (`verifier_v3.py`): a decline passes only when it is the decision the policy
  requires for the facts the agent established itself (``get_order`` of the ticket's order
  and its delivery date; ``verify_identity`` failing with every detail the customer stated),
  and the reply gives that reason and no reason that does not apply; every reply states the
  record's facts of what was done (rule 10) and an identity decline the last four digits of
  the phone on file (rule 9); no reply claims an action the final state does not show, a
  request that was due is never refused, and identity is never checked with a detail the
  customer did not give. Version 2 passed a canned decline citing both reasons after the
  lookups on all 36 decline items of the dev split (issue 29);
* the policy (`policy.POLICY_V3`, POLICY_v3.md): rules 8 to 11 tell the agent what the
  verifier grades;
* the items (`items_v3.py`, ids ``support-v3-NNNN``): refunds inside and outside the window
  read alike and never quote their own order, address changes state one or two details of
  which one may verify, look-alike orders, and facts that differ from item to item in a
  stratum (docs/design/support-desk.md);
* the kit's version 3 (`kit.support_kit_v3`): its oracle, issue 29's cheap policies and one
  more among its trivial policies, the new address declared as the ticket's wording.

Loading is version 1's (see `task.py`): the folder is imported once as a package under a
private name derived from its path, shared by every version's task file.
History of this family's version: tasks/README.md.
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
VERSION = 3
LIMITS = Limits(time_s=900, messages=40, tokens=400_000)


_PACKAGE = family_package(HERE, "support_desk")
PACKAGE = _PACKAGE.name
"""The private module name this folder is imported under (`evalsuite.kit.family_package`)."""
submodule = _PACKAGE.submodule


env = submodule("env")
episode = submodule("episode")
tools = submodule("tools")
verifier = submodule("verifier_v3")
POLICY: str = submodule("policy").POLICY_V3

SYSTEM_PROMPT = (
    "You are a customer-support agent for Northwind Homeware. Work the ticket in the next "
    "message using the tools, and follow the policy below exactly: check every detail the "
    "customer gives against the records before acting. When you are done, reply to the "
    "customer, set the ticket status, and finish with a one-line summary without a tool call."
    "\n\n" + POLICY
)


@solver
def support_agent() -> Solver:
    """The agent loop: generate and run tool calls until the agent answers without one.

    `evalsuite.kit.tool_loop`: inspect's ``generate(state, tool_calls="loop")`` with the
    tool definitions built once per episode (docs/design/run-speed.md).
    """

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
    """The answer key: the expected resolution, and any internal decline reason (leak audit)."""
    import json

    target = json.loads(str(payload["target"]))
    secrets = [str(payload["target"])]
    if target.get("reason"):
        secrets.append(str(target["reason"]))
    if target.get("order"):
        secrets.append(" ".join(str(target[k]) for k in ("action", "order", "line") if k in target))
    return secrets


FAMILY = submodule("kit").support_kit_v3(
    support_desk, VERSION, LIMITS, leak_surface=leak_surface, leak_secrets=leak_secrets
)
