"""Suite and family names, and the suites a project declares (read by `_lean` and `_suite`)."""

from __future__ import annotations

import re

from evalsuite._core.layout import Layout

__all__ = ["NAME_PATTERN", "list_suite_names"]

NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_\-]*$")
"""Suite and family names: lowercase letters, digits, '_' or '-', starting with a letter."""


def list_suite_names(layout: Layout) -> list[str]:
    """Names of the suites declared in `tasks/`, sorted."""
    if not layout.tasks.is_dir():
        return []
    return sorted(p.stem for p in layout.tasks.glob("*.toml"))
