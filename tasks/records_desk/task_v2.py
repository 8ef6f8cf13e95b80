"""Records desk, version 2 (evalsuite task family `records_desk`; records@2.0.0).

Version 1's records system, tools, policy, verifier and limits (`task.py`, `kit.py`), with
version 2's requests (ids ``records-v2-NNNN`` in `items.jsonl`, beside version 1's dev items;
`generate.py --version 2`; issue 29): version 1 named
the surviving contact of a merge first, and named the record to change together with the
value to write, so policies that never read a record passed merge, address and order items.
A version 2 request names at most one of a merge's two contacts (which one is drawn), names
the record to change only through a related record or the account, and draws its wording and
the order of its facts; only the records tell the answer. Design notes:
docs/design/records-desk.md.

Loading: the folder is imported once as a package under a private name derived from its path
(shared with `task.py`), so two copies of the project never share module state.
"""

from collections.abc import Sequence
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.solver import system_message, use_tools

from evalsuite.kit import Limits, family_package

HERE = Path(__file__).resolve().parent
VERSION = 2
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
SYSTEM_PROMPT = kit.SYSTEM_PROMPT_V2
"""Version 2's policy (`kit.POLICY_V2`): a merge's three choices, the tracking's date."""
leak_surface = kit.leak_surface
leak_secrets = kit.leak_secrets_v2


@task
def records_desk(dataset: Sequence[Sample] | None = None) -> Task:
    """The records_desk family, version 2; `dataset` is given by the evalsuite runner
    (default: version 2's dev items in this folder's items.jsonl)."""
    samples = list(dataset) if dataset is not None else kit.version_samples(HERE / "items.jsonl", 2)
    return Task(
        dataset=samples,
        setup=episode.reset_records(),
        solver=[
            system_message(SYSTEM_PROMPT),
            use_tools(tools.records_tools()),
            kit.records_agent(),
        ],
        scorer=verifier.records_verifier(),
        time_limit=LIMITS.time_s,
        message_limit=LIMITS.messages,
        token_limit=LIMITS.tokens,
        version=VERSION,
    )


FAMILY = kit.records_kit(records_desk, VERSION, LIMITS)
"""The records_desk family kit, version 2 (`kit.py`: the blind policies score 0 here)."""
