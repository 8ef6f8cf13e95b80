"""The path parameter of every command: `click.Path`, but an empty value is refused.

click turns ``''`` into ``Path('')``, which is the current directory: ``report --out ''``
wrote the report into the directory the user stood in, and ``--root ''`` read the project
there. An empty path is never what a user meant, so it is a usage error (exit 2) naming the
option.
"""

from __future__ import annotations

from typing import Any

import click

__all__ = ["PathParam"]


class PathParam(click.Path):
    """`click.Path` that refuses an empty value instead of reading it as ``.``."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str | bytes) and len(value) == 0:
            self.fail(
                "an empty path was given: name the file or directory (use . for the current "
                "directory)",
                param,
                ctx,
            )
        return super().convert(value, param, ctx)
