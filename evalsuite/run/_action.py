"""Action-space drift: the tools a family declares now against the tools frozen with it.

`freeze` records each family's action space (tool name -> hash of the schema a model is
shown, `evalsuite.kit.action_space`) in the manifest. A run refuses (exit 3) a family whose
kit now declares other tools: the model would be shown another environment than the one the
version froze, so its scores would not be comparable. Manifests frozen before action spaces
were recorded (no ``tools`` in a family) are not checked; ``evalsuite audit --graders`` says
so. See docs/design/grader-audit.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from inspect_ai import Task

from evalsuite.errors import GraderAuditError
from evalsuite.kit import FamilyKitError, action_space, action_space_changes, family_of_task
from evalsuite.manifest import Manifest

__all__ = ["action_space_problems", "check_action_space"]


def action_space_problems(
    manifest: Manifest, functions: Mapping[str, Callable[..., Task]]
) -> list[str]:
    """One message per family whose declared tools differ from the frozen ones.

    Args:
        manifest: The frozen version.
        functions: Family name -> its loaded ``@task`` function (families left out are not
            checked).
    """
    problems = []
    for family in manifest.families:
        if family.tools is None or family.name not in functions:
            continue
        try:
            kit = family_of_task(functions[family.name])
        except FamilyKitError as exc:
            problems.append(f"family {family.name!r}: {exc}")
            continue
        if kit is None:
            problems.append(
                f"family {family.name!r} was frozen with its tools recorded, but {family.task} "
                "declares no family kit now, so its tools cannot be checked"
            )
            continue
        try:
            current = action_space([d.tool for d in kit.tools])
        except Exception as exc:  # the family's own tool definitions
            problems.append(
                f"family {family.name!r}: its tools cannot be described to a model "
                f"({type(exc).__name__}: {str(exc)[:200]})"
            )
            continue
        changes = action_space_changes(family.tools, current)
        if changes:
            problems.append(
                f"family {family.name!r} exposes other tools than {manifest.ref} froze: "
                + "; ".join(changes)
            )
    return problems


def check_action_space(manifest: Manifest, functions: Mapping[str, Callable[..., Task]]) -> None:
    """Refuse a run whose families' tools drifted since the freeze.

    Raises:
        GraderAuditError: a family's tools differ from the frozen action space (exit 3).
    """
    problems = action_space_problems(manifest, functions)
    if problems:
        raise GraderAuditError(
            f"{manifest.ref}: the action space changed after freezing, refusing to run "
            f"(nothing was stored): {'; '.join(problems)}. Restore the tools, or freeze a new "
            "major version."
        )
