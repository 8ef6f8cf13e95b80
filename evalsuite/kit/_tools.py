"""The action space: tool names and JSON schemas, hashed one tool at a time.

What a model sees of a tool is inspect's `ToolInfo` (name, description, parameter schema);
its canonical JSON is hashed. A family's declared tools give one map name -> hash, frozen
into the manifest (``ManifestFamily.tools``); the audit compares the tools every episode
actually offered with it, and `run` refuses a suite whose declared tools differ from the
frozen map (docs/design/grader-audit.md, "Action space").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from inspect_ai.tool import Tool, ToolDef, ToolInfo

from evalsuite._core.hashing import content_hash

__all__ = ["action_space", "action_space_changes", "info_hash", "tool_name_of"]


def tool_name_of(tool: Tool) -> str:
    """The name inspect gives `tool`."""
    return ToolDef(tool).name


def _info(tool: Tool) -> ToolInfo:
    definition = ToolDef(tool)
    return ToolInfo(
        name=definition.name,
        description=definition.description,
        parameters=definition.parameters,
        options=definition.options,
    )


def info_hash(info: ToolInfo) -> str:
    """Hash of what a model is shown of one tool (name, description, parameter schema)."""
    data: dict[str, Any] = info.model_dump(mode="json", exclude_none=True)
    return content_hash(data)


def action_space(tools: Sequence[Tool]) -> dict[str, str]:
    """Tool name -> hash of its schema, for the tools of a family (sorted by name)."""
    hashes = {}
    for tool in tools:
        info = _info(tool)
        hashes[info.name] = info_hash(info)
    return dict(sorted(hashes.items()))


def action_space_changes(frozen: Mapping[str, str], current: Mapping[str, str]) -> list[str]:
    """What differs between two action spaces, one phrase per tool (empty: identical)."""
    changes = [f"tool {name!r} removed" for name in sorted(set(frozen) - set(current))]
    changes += [f"tool {name!r} added" for name in sorted(set(current) - set(frozen))]
    changes += [
        f"tool {name!r} has another schema (frozen {frozen[name][:19]}…, now {current[name][:19]}…)"
        for name in sorted(set(frozen) & set(current))
        if frozen[name] != current[name]
    ]
    return changes
