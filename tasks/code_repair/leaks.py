"""What the agent can read of a code_repair item, and what of it is secret (leak audit).

Shared by both versions' task files.
"""

import ast
import json
from typing import Any


def leak_surface(payload: dict[str, Any]) -> dict[str, str]:
    """What the agent can read: the issue and the repository's files (leak audit)."""
    repo = payload.get("metadata", {}).get("repo", {})
    return {"input": str(payload["input"]), **{f"repo:{p}": str(t) for p, t in repo.items()}}


def _shown(case: str, visible: str) -> bool:
    """True when a hidden case's call repeats a visible one or runs on the visible input."""
    if case.replace("same(self, ", "self.assertEqual(", 1) in visible:
        return True
    try:
        call = ast.parse(case).body[0].value  # type: ignore[attr-defined]
        first = call.args[1].args[0]
        return repr(ast.literal_eval(first)) in visible
    except (SyntaxError, AttributeError, IndexError, ValueError):
        return False


def leak_secrets(payload: dict[str, Any]) -> list[str]:
    """The answer key: the reference patch's new text, and the hidden tests' own cases.

    A hidden case that repeats a visible one, or runs on the visible test's own input (the
    next page of the list the visible test shows), is not secret: the agent reads its input
    in the visible test.
    """
    metadata = payload.get("metadata", {})
    repo = metadata.get("repo", {})
    visible = "\n".join(str(repo.get(path, "")) for path in metadata.get("test_files", []))
    key = json.loads(str(payload["target"]))
    secrets = [edit["after"].strip() for edit in key["patch"]]
    for test in key["hidden_tests"]:
        for line in test["source"].splitlines():
            case = line.strip()
            if case.startswith("same(self, ") and not _shown(case, visible):
                secrets.append(case)
    return [s for s in secrets if s]
