"""Records desk, version 1 (evalsuite task family `records_desk`; records@1.0.0).

A CRM-like system of record (accounts, contacts, orders, cases, a ledger) behind a
read-through cache, with a slow, rate-limited, paginated search; the agent works one request
from the operations team with the tools (`tools.py`) and the written policy (`kit.py`, shared
with version 2, `task_v2.py`). The
verifier (`verifier.py`) reads the source of truth in the final state, never the cache and
never the agent's text. Item conditions (clean, messy, stale_cache, slow_tool) are described
in `generate.py`; design notes in docs/design/records-desk.md.

Loading: the folder is imported once as a package under a private name derived from its path
(as support_desk does), so two copies of the project never share module state.
"""

from collections.abc import Sequence
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.solver import system_message, use_tools

from evalsuite.kit import Limits, family_package

HERE = Path(__file__).resolve().parent
VERSION = 1
LIMITS = Limits(time_s=600, messages=50, tokens=400_000)


_PACKAGE = family_package(HERE, "records_desk")
PACKAGE = _PACKAGE.name
"""The private module name this folder is imported under (`evalsuite.kit.family_package`)."""
submodule = _PACKAGE.submodule


env = submodule("env")
episode = submodule("episode")
tools = submodule("tools")
verifier = submodule("verifier")
scripted = submodule("scripted")

kit = submodule("kit")
POLICY = kit.POLICY
SYSTEM_PROMPT = kit.SYSTEM_PROMPT
records_agent = kit.records_agent
final_records = kit.final_records
leak_surface = kit.leak_surface
leak_secrets = kit.leak_secrets
GIVEN_FIELDS = kit.GIVEN_FIELDS


@task
def records_desk(dataset: Sequence[Sample] | None = None) -> Task:
    """The records_desk family; `dataset` is given by the evalsuite runner (default: all items)."""
    samples = list(dataset) if dataset is not None else kit.version_samples(HERE / "items.jsonl", 1)
    return Task(
        dataset=samples,
        setup=episode.reset_records(),
        solver=[system_message(SYSTEM_PROMPT), use_tools(tools.records_tools()), records_agent()],
        scorer=verifier.records_verifier(),
        time_limit=LIMITS.time_s,
        message_limit=LIMITS.messages,
        token_limit=LIMITS.tokens,
        version=VERSION,
    )


FAMILY = kit.records_kit(records_desk, VERSION, LIMITS)
"""The records_desk family kit (`kit.py`; the blind policies added by issue 29 fail this
version, whose requests name the answer by position)."""
