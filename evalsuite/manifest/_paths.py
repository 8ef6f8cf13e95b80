"""Item sources and task files must stay inside the project (symlinks resolved).

A suite file names its families' item sources and task files relative to `tasks/`. A path that
leads out of the project (``items = "../../outside/items.jsonl"``, or a link under `tasks/`
pointing elsewhere) would make `freeze` read, and rewrite, a file that is not part of the
project, and record a manifest whose items no one else can check. `freeze` refuses such a suite
before it reads anything, and `verify` reports it without reading the file
(docs/design/holdout-governance.md, section 10).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from evalsuite._core.layout import Layout
from evalsuite.manifest._task_ref import task_reference_kind

__all__ = ["EscapingPath", "escaping_paths"]


class _Family(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def task(self) -> str: ...
    @property
    def items(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class EscapingPath:
    """One family path that resolves outside the project."""

    family: str
    field: str
    """``items`` or ``task``."""
    declared: str
    """The value as written (relative to `tasks/`)."""

    def message(self, where: str) -> str:
        """What is wrong, for a message naming `where` it is declared."""
        return (
            f"family {self.family!r} of {where} declares {self.field} = {self.declared!r}, "
            "which leads out of the project (symlinks resolved): a suite reads and freezes only "
            "files inside its project. Move the file under tasks/ and declare it relative to "
            "tasks/"
        )


def _declared_paths(family: _Family) -> list[tuple[str, str]]:
    paths = [("items", family.items)] if family.items is not None else []
    try:
        if task_reference_kind(family.task) == "file":
            paths.append(("task", family.task.partition("@")[0]))
    except ValueError:
        pass  # not a task reference at all: the suite file's own validation says so
    return paths


def escaping_paths(layout: Layout, families: Iterable[_Family]) -> list[EscapingPath]:
    """The item sources and task files of `families` that resolve outside the project."""
    found: list[EscapingPath] = []
    for family in families:
        for field, declared in _declared_paths(family):
            if not layout.contains(layout.tasks / declared):
                found.append(EscapingPath(family.name, field, declared))
    return found
