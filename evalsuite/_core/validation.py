"""Turn pydantic validation errors into one readable sentence per problem."""

from __future__ import annotations

from pydantic import ValidationError

__all__ = ["describe_validation_error"]


def _location(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def describe_validation_error(
    error: ValidationError, *, allowed: list[str] | None = None, show_input: bool = False
) -> list[str]:
    """One line per problem in `error`: where, what was wrong, and the expectation.

    Args:
        error: The pydantic error.
        allowed: Field names to list when a key is unknown.
        show_input: Include the offending value. Keep False wherever the value could be
            holdout text.

    Returns:
        Lines such as ``"unknown key 'holdout_fractoin' (allowed: canary, name, ...)"``.
    """
    lines: list[str] = []
    for problem in error.errors():
        where = _location(tuple(problem["loc"]))
        kind = problem["type"]
        if kind == "extra_forbidden":
            hint = f" (allowed: {', '.join(sorted(allowed))})" if allowed else ""
            lines.append(f"unknown key {where!r}{hint}")
        elif kind == "missing":
            lines.append(f"missing required key {where!r}")
        else:
            got = f" (got {problem['input']!r})" if show_input else ""
            lines.append(f"{where}: {problem['msg']}{got}")
    return lines
