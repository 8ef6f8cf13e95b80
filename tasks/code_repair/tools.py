"""The code-repair tools: list, read and write files, run the visible tests. No shell.

Every body runs through `guarded_call` (the episode's tool timeout and injected faults). A
timeout there is the harness's fault (``harness_error``): the agent's own code running too long
is caught earlier, by the command's own limit (`COMMAND_TIMEOUT_S`), and reported to the agent
as a test result, so a slow fix costs the agent, never the harness. Bad paths and oversized
content are `ToolError`s the agent sees.
"""

import json

from inspect_ai.tool import Tool, ToolError, tool
from inspect_ai.util import sandbox

from evalsuite.run import HarnessFault, guarded_call

from .workspace import (
    COMMAND_TIMEOUT_S,
    READ_CHARS,
    WRITE_CHARS,
    cap,
    check_path,
    content_hash,
    repo_store,
    run_runner,
)


def _checked(path: str) -> str:
    problem = check_path(path)
    if problem is not None:
        raise ToolError(f"bad path {path!r}: {problem}")
    return path


@tool
def list_files() -> Tool:
    async def execute() -> str:
        """List the repository's files (paths relative to the repository root).

        The files the repository started with and every file written since (no process:
        the episode's record of the repository).

        Returns:
            One path per line.
        """

        async def call() -> str:
            store = repo_store()
            if not store.python:
                raise HarnessFault("code_repair repository is not set up")
            return cap("\n".join(sorted({*store.files, *store.writes})))

        return await guarded_call("list_files", call)

    return execute


@tool
def read_file() -> Tool:
    async def execute(path: str) -> str:
        """Read one file of the repository.

        Args:
            path: Path relative to the repository root, e.g. "pkg/module.py".

        Returns:
            The file's text.
        """

        async def call() -> str:
            try:
                text = await sandbox().read_file(_checked(path))
            except FileNotFoundError:
                raise ToolError(f"no file {path!r}; list_files shows what exists") from None
            except (IsADirectoryError, UnicodeDecodeError):
                raise ToolError(f"{path!r} is not a text file") from None
            return cap(text, READ_CHARS)

        return await guarded_call("read_file", call)

    return execute


@tool
def write_file() -> Tool:
    async def execute(path: str, content: str) -> str:
        """Replace (or create) one file of the repository with `content`.

        Args:
            path: Path relative to the repository root, e.g. "pkg/module.py".
            content: The file's complete new text.

        Returns:
            JSON {"written": path, "chars": n}.
        """

        async def call() -> str:
            checked = _checked(path)
            if len(content) > WRITE_CHARS:
                raise ToolError(
                    f"content has {len(content)} characters; the limit is {WRITE_CHARS}"
                )
            await sandbox().write_file(checked, content)
            store = repo_store()
            store.writes = {**store.writes, checked: content_hash(content)}
            if checked.startswith("tests/"):
                store.test_writes += 1
            return json.dumps({"written": checked, "chars": len(content)})

        return await guarded_call("write_file", call)

    return execute


@tool
def run_tests() -> Tool:
    async def execute() -> str:
        """Run the repository's visible tests (every tests/test*.py file) with unittest.

        Returns:
            A summary line ("Ran N tests: ...") and the failures, cut to a few thousand
            characters.
        """

        async def call() -> str:
            try:
                done = await run_runner({"discover": "tests"}, COMMAND_TIMEOUT_S)
            except TimeoutError:
                return f"The tests did not finish within {COMMAND_TIMEOUT_S}s and were stopped."
            text = done.stdout
            if done.returncode != 0:
                text += f"\n[test process exited with code {done.returncode}]\n{done.stderr}"
            return cap(text)

        return await guarded_call("run_tests", call)

    return execute


def repair_tools() -> list[Tool]:
    """Every tool of the family, in a stable order."""
    return [list_files(), read_file(), write_file(), run_tests()]
