"""A family's task reference and task arguments, as written in a suite file.

A family names its inspect task in one of three forms (docs/design/foreign-tasks.md):

* a file relative to ``tasks/``: ``"evals/triage.py@triage"`` (or ``"arith/task.py"``, the
  function then being named like the family);
* a module path: ``"mypkg.evals:triage"`` (an importable module and a function in it);
* an inspect registry name: ``"inspect_evals/gsm8k"`` (a task registered by an installed
  package).

This module only checks the syntax (no import: the manifest layer never loads inspect);
`evalsuite.run` resolves and builds the task.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any, Literal

__all__ = [
    "TASK_REFERENCE_FORMS",
    "TaskRefKind",
    "check_run_args",
    "check_task_args",
    "check_task_reference",
    "task_reference_kind",
]

TaskRefKind = Literal["file", "module", "registry"]
TASK_REFERENCE_FORMS = (
    "a task file relative to tasks/ ('evals/triage.py@triage'), a module path "
    "('mypkg.evals:triage') or an inspect registry name ('inspect_evals/gsm8k')"
)

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_FILE = re.compile(rf"^(?P<file>[^@:\s][^@\s]*\.py)(?:@(?P<name>{_IDENT}))?$")
_MODULE = re.compile(rf"^(?P<module>{_IDENT}(?:\.{_IDENT})*):(?P<name>{_IDENT})$")
_REGISTRY = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*/[A-Za-z_][A-Za-z0-9_\-]*$")
_ARG = re.compile(rf"^{_IDENT}$")


def task_reference_kind(reference: str) -> TaskRefKind:
    """Which of the three forms `reference` is written in.

    Raises:
        ValueError: it is none of them (the message lists the forms).
    """
    if _FILE.match(reference):
        path = reference.partition("@")[0]
        if path.startswith(("/", "~")) or ".." in path.split("/") or "\\" in path:
            raise ValueError(
                f"task file {path!r} must be a relative path inside tasks/ (no '/', '~' or "
                "'..' at its start, no backslash)"
            )
        return "file"
    if _MODULE.match(reference):
        return "module"
    if _REGISTRY.match(reference):
        return "registry"
    raise ValueError(f"task = {reference!r} is not a task reference; write {TASK_REFERENCE_FORMS}")


def check_task_reference(value: str) -> str:
    """Validate a ``task`` value (pydantic validator form)."""
    task_reference_kind(value)
    return value


def _json_problem(value: Any) -> str | None:
    if value is None or isinstance(value, bool | int | str):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else "a number that is not finite"
    if isinstance(value, list):
        return next((p for v in value if (p := _json_problem(v)) is not None), None)
    if isinstance(value, Mapping):
        if not all(isinstance(k, str) for k in value):
            return "a table with keys that are not strings"
        return next((p for v in value.values() if (p := _json_problem(v)) is not None), None)
    return f"a {type(value).__name__}"


def check_task_args(value: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Validate ``task_args``: argument names mapped to JSON values (hashed into the manifest).

    Raises:
        ValueError: a name is not an identifier, or a value is not JSON (a TOML date, NaN).
    """
    if value is None:
        return None
    for name, arg in value.items():
        if not _ARG.match(name):
            raise ValueError(f"task_args: {name!r} is not a Python argument name")
        problem = _json_problem(arg)
        if problem is not None:
            raise ValueError(
                f"task_args.{name} is {problem}; task arguments are frozen as JSON (strings, "
                "numbers, booleans, arrays, tables)"
            )
    json.dumps(dict(value))
    return dict(value)


def check_run_args(value: list[str] | None) -> list[str] | None:
    """Validate ``run_args``: names of task arguments that may be set at run time (``-T``).

    Raises:
        ValueError: a name is not an identifier, or is listed twice.
    """
    if value is None:
        return None
    for name in value:
        if not _ARG.match(name):
            raise ValueError(f"run_args: {name!r} is not a Python argument name")
    if len(set(value)) != len(value):
        raise ValueError(f"run_args lists a name twice: {value}")
    return list(value)
