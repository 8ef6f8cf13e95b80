"""Code repair (evalsuite task family `code_repair`, version 2; repair@2.0.0).

Each item is a small Python repository with a bug and an issue text. The agent works in its
own sandbox (inspect's ``local`` sandbox by default: a private temporary directory per
episode; ``docker`` where available) through four tools (`tools.py`: list_files, read_file,
write_file, run_tests; no shell), and finishes with a one-line summary. The verifier
(`verifier.py`) runs the item's hidden tests on the agent's final files, with the visible test
files restored from the item. Limits (episode time, messages, tokens; per-command time, CPU,
memory and output) are explicit here and in `workspace.py`. The family kit (`FAMILY`, built in
`kit.py`) declares the oracle, trivial policies and exploit probes of the grader audit.

What version 2 changes (issue 29): under the local sandbox every test process runs in the jail
(`jail.py`: own namespaces, a root holding only the system, the interpreter and the
repository), and the verifier (`verifier_v2.py`) sends only the hidden calls to it and compares
their raw results with the expected values in its own process. Tools, prompts and limits are
version 1's.

The folder is imported once as a package under a private name derived from its path (the
task file is loaded by path, so its relative imports need a package). Design notes:
docs/design/code_repair.md; history of the family's version: tasks/README.md.
"""

from collections.abc import Sequence
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.solver import Generate, Solver, TaskState, solver, system_message, use_tools

from evalsuite.kit import Limits, family_package, tool_loop
from evalsuite.run import episode_seed, standalone_samples

HERE = Path(__file__).resolve().parent
VERSION = 2
LIMITS = Limits(time_s=300, messages=40, tokens=200_000)


_PACKAGE = family_package(HERE, "code_repair")
PACKAGE = _PACKAGE.name
"""The private module name this folder is imported under (`evalsuite.kit.family_package`)."""
submodule = _PACKAGE.submodule


workspace = submodule("workspace")
tools = submodule("tools")
verifier = submodule("verifier_v2")
_leaks = submodule("leaks")
leak_surface = _leaks.leak_surface
leak_secrets = _leaks.leak_secrets

SYSTEM_PROMPT = (
    "You are a software engineer fixing a bug in a small Python repository. The issue is in "
    "the next message. Use the tools to list and read the files, edit the source with "
    "write_file (give the whole file), and run the visible tests with run_tests. Fix the "
    "cause for every input the docstring and the issue describe, not just the example; do "
    "not edit the tests. When you are done, answer with a one-line summary and no tool call."
)


@solver
def repair_agent() -> Solver:
    """The agent loop: generate and run tool calls until the agent answers without one.

    `evalsuite.kit.tool_loop`: inspect's ``generate(state, tool_calls="loop")`` with the
    tool definitions built once per episode (docs/design/run-speed.md).
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return await tool_loop(state, seed=episode_seed(state))

    return solve


@task
def code_repair(dataset: Sequence[Sample] | None = None, sandbox: str = "local") -> Task:
    """The code_repair family; `dataset` is given by the evalsuite runner (default: dev items).

    Args:
        dataset: The frozen items (default: this folder's items.jsonl).
        sandbox: ``local`` (default) or ``docker`` (an image with python3).
    """
    if sandbox not in workspace.SANDBOXES:
        raise ValueError(
            f"code_repair: sandbox {sandbox!r} is not supported; use one of "
            + ", ".join(workspace.SANDBOXES)
        )
    samples = list(dataset) if dataset is not None else standalone_samples(HERE / "items.jsonl")
    return Task(
        dataset=samples,
        setup=workspace.reset_repo(sandbox, jail=True),
        solver=[system_message(SYSTEM_PROMPT), use_tools(tools.repair_tools()), repair_agent()],
        scorer=verifier.repair_verifier_v2(),
        sandbox=sandbox,
        time_limit=LIMITS.time_s,
        message_limit=LIMITS.messages,
        token_limit=LIMITS.tokens,
        version=VERSION,
    )


FAMILY = submodule("kit").repair_kit(
    code_repair, VERSION, LIMITS, leak_surface=leak_surface, leak_secrets=leak_secrets
)
