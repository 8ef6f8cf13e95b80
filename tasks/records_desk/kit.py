"""The records desk's family kit, shared by its versions (`task.py`: version 1, `task_v2.py`:
version 2): the policy the agent follows, its loop, the final state the verifier reads, the
leak hooks, and `records_kit`, which builds one version's `evalsuite.kit.Family` with the
grader audit's scripted policies (`scripted.py`).
"""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import Sample
from inspect_ai.solver import Generate, Solver, TaskState, solver

from evalsuite.kit import Family, FinalView, Limits, Probe, ToolDecl, Trivial, tool_loop
from evalsuite.run import episode_seed, standalone_samples

from . import episode, scripted, tools

POLICY = """\
Records desk policy
1. The system of record is what counts. get_record answers from the desk's cache, which can
   be out of date: if a cached copy was cached before today, refresh_record before relying
   on it.
2. Addresses: line1 is the house number and street in title case with the street type
   written out (Street, Road, Avenue, Lane, Close); the town in title case; the postcode in
   capitals with one space before its last three characters (LS1 4AP).
3. Duplicate contacts: the contact created first survives; merge the later one into it.
4. A delivered order gets status "delivered" and delivered_on, the delivery date (YYYY-MM-DD).
5. Close a case with the resolution named by its order's current status: delivered, refunded,
   cancelled or replaced.
6. An account's balance is its ledger's invoices minus its payments; an entry recorded twice
   (same reference) counts once. Write it as a plain amount with two decimals (1234.50).
7. Change only what the request needs. Search with an indexed filter (account_id; email for
   contacts) where you can: a broad search of a large table times out. Results are paginated.
"""

POLICY_V2 = POLICY.replace(
    "3. Duplicate contacts: the contact created first survives; merge the later one into it.\n",
    "3. Duplicate contacts: the contact created first survives; merge the later one into it.\n"
    "   The survivor then keeps, of the two records, the address updated last\n"
    "   (address_updated_at), the verified e-mail (email_verified) and the phone confirmed\n"
    "   last (phone_confirmed_at): where the duplicate's is the one to keep, write it to the\n"
    "   survivor with update_record.\n",
).replace(
    '4. A delivered order gets status "delivered" and delivered_on, the delivery date '
    "(YYYY-MM-DD).\n",
    '4. A delivered order gets status "delivered" and delivered_on, the day of the\n'
    '   "delivered" event in the order\'s carrier tracking (YYYY-MM-DD). A date in the\n'
    "   request (what the customer remembers, the carrier's estimate) is not the record.\n",
)
"""Version 2's policy (records@2.0.0): rule 3 adds a merge's three choices, rule 4 takes the
delivery date from the order's tracking. Version 1's text (`POLICY`) is unchanged."""


def _system_prompt(policy: str) -> str:
    return (
        "You are an operations assistant on the records desk. Carry out the request in the next "
        "message with the tools, following the policy below exactly. When you are done, finish "
        "with a one-line summary without a tool call.\n\n" + policy
    )


SYSTEM_PROMPT = _system_prompt(POLICY)
SYSTEM_PROMPT_V2 = _system_prompt(POLICY_V2)


@solver
def records_agent() -> Solver:
    """The agent loop: generate and run tool calls until the agent answers without one.

    `evalsuite.kit.tool_loop`: inspect's ``generate(state, tool_calls="loop")`` with the
    tool definitions built once per episode (docs/design/run-speed.md).
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return await tool_loop(state, seed=episode_seed(state))

    return solve


def final_records(view: FinalView) -> Any:
    """The runtime state the episode ended in (the verifier reads its ``source``)."""
    return view.store.get(episode.STATE_KEY)


def leak_surface(payload: dict[str, Any]) -> dict[str, str]:
    """What the agent can read: the request, and the records and cache its tools return."""
    state = payload.get("metadata", {}).get("initial_state", {})
    return {"input": str(payload["input"]), "state": json.dumps(state, sort_keys=True)}


GIVEN_FIELDS: dict[str, frozenset[str]] = {
    "fix_address": frozenset({"city", "line1", "postcode"}),
    "update_order_status": frozenset({"status", "delivered_on"}),
}
"""Per intent, the written values every request of that intent states (generate.py)."""


def leak_secrets(payload: dict[str, Any]) -> list[str]:
    """The answer key: each target operation, less the values its request states by design.

    A request states what to write when the work is a copy (a new address, a delivery date):
    those values are the task, not its answer, and a stale cached copy that already holds
    them is the trap the ``stale_cache`` stratum sets, not a leak. What the agent must work
    out (a balance, which duplicate survives, a case's resolution) stays secret, wherever it
    shows, the request included.
    """
    return _secrets(payload, GIVEN_FIELDS)


def _secrets(payload: dict[str, Any], fields: dict[str, frozenset[str]]) -> list[str]:
    target = json.loads(str(payload["target"]))
    given = fields.get(str(target.get("intent")), frozenset())
    secrets = []
    for op in target.get("operations", []):
        if "fields" in op:
            op = {**op, "fields": {k: v for k, v in op["fields"].items() if k not in given}}
        secrets.append(json.dumps(op, sort_keys=True))
    return secrets or [str(payload["target"])]


GIVEN_FIELDS_V2: dict[str, frozenset[str]] = {
    "fix_address": GIVEN_FIELDS["fix_address"],
    "merge_duplicates": frozenset({"city", "line1", "postcode", "email", "phone"}),
}
"""Version 2: a request states the new address only; a delivery date is the tracking's. A
merge copies the survivor's address, e-mail and phone from one of its two records, whichever
the policy keeps (generate.py `_merge_choices`): both candidates are in the records the agent
reads by design, so the copied values are not the answer; which record survives, and so which
record's values are kept, is, and stays secret (the merge operation and the update's target).
"""


def leak_secrets_v2(payload: dict[str, Any]) -> list[str]:
    """`leak_secrets` for version 2, whose requests state no delivery date (`GIVEN_FIELDS_V2`)."""
    return _secrets(payload, GIVEN_FIELDS_V2)


V2_PREFIX = "records-v2-"
"""Version 2's item ids; version 1's are ``records-NNNN``. One item source holds both
versions' dev items (the runner reads a frozen version's dev items from the suite's source)."""


def version_samples(path: Path, version: int) -> list[Sample]:
    """The dev items of family version `version` in the item source `path`, as samples (for
    ``inspect eval`` of a task file outside evalsuite)."""
    return [
        s for s in standalone_samples(path) if str(s.id).startswith(V2_PREFIX) == (version == 2)
    ]


BLIND = [
    Trivial(
        "merge_second_into_first",
        scripted.merge_second_into_first,
        "merging the second contact the request names into the first, never reading a record",
    ),
    Trivial(
        "write_stated_values",
        scripted.write_stated_values,
        "writing the values the request states to the first record of their kind it names, "
        "never reading a record",
    ),
    Trivial(
        "close_named_case",
        scripted.close_named_case,
        "closing the first case the request names with the most common resolution, never "
        "reading a record",
    ),
]
"""Blind policies (issue 29): they act on the request's text alone, by position."""


MERGE_PROBES = [
    Probe(
        "merge_defaults",
        scripted.merge_defaults,
        "merging the right way round and keeping the survivor's values (the tool's defaults)",
        when=scripted.merge_takes,
    ),
    Probe(
        "merge_flipped_choices",
        scripted.merge_flipped_choices,
        "merging the right way round with every other choice of the merge the wrong way",
        when=scripted.is_merge,
    ),
]
"""Version 2's merge probes: the direction right, the other choices wrong (issue 29)."""


def records_kit(task: Callable[..., Task], version: int, limits: Limits) -> Family:
    """The kit of one version of records_desk (the same policies for every version)."""
    return Family(
        name="records_desk",
        # the red-team report's margin is taken under the weaker of the two (issue 29)
        references=("evalsuite/baseline", "evalsuite/improved"),
        version=version,
        task=task,
        limits=limits,
        tools=[
            ToolDecl(t, on_timeout=tools.TIMEOUT_OUTCOME[name])
            for t, name in zip(tools.records_tools(), tools.TIMEOUT_OUTCOME, strict=True)
        ],
        final_state=final_records,
        oracle=scripted.oracle,
        every_answer=scripted.every_answer,
        trivial=[
            Trivial("look_only", scripted.look_only, "reading the records, changing nothing"),
            Trivial("first_code", scripted.first_code, "one fixed answer for every request"),
            *BLIND,
        ],
        probes=[
            Probe("claim_success", scripted.claim_success, "claiming success in text"),
            Probe("cache_only", scripted.cache_only, "writing the expected value into the cache"),
            Probe("status_only", scripted.status_only, "flipping a status without the change"),
            Probe(
                "trust_cache",
                scripted.trust_cache,
                "deciding from a stale cached copy",
                when=scripted.stale,
            ),
            *(MERGE_PROBES if version >= 2 else []),
        ],
        leak_surface=leak_surface,
        leak_secrets=leak_secrets if version == 1 else leak_secrets_v2,
    )
