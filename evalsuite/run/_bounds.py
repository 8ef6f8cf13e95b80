"""What bounds a family's episodes in a run (docs/design/run-limits.md).

The limits in force (the run's options, else the task's own, else its kit's declaration), and
the refusal of a family that no limit bounds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from inspect_ai import Task

from evalsuite.errors import UsageError
from evalsuite.kit import FamilyKitError, Limits, family_of_task
from evalsuite.manifest import Manifest
from evalsuite.run._limits import LimitsInForce
from evalsuite.run._spec import RunSpec

__all__ = ["declared_limits", "limits_in_force", "refuse_unbounded"]


def declared_limits(function: Callable[..., Task]) -> Limits | None:
    """The limits the family's kit declares (`evalsuite.kit.Limits`), or None without a kit."""
    try:
        kit = family_of_task(function)
    except FamilyKitError:
        return None  # two kits: `check_action_space` refuses the run and says why
    return kit.limits if kit is not None else None


def limits_in_force(task: Task, spec: RunSpec, declared: Limits | None = None) -> LimitsInForce:
    """The limits `task`'s episodes run under in run `spec` (docs/design/run-limits.md).

    Per limit: the run's option where it gives one, else the task's own (inspect's
    precedence), else the one its family kit declares (`declared`), which the runner then
    applies to the task.
    """

    def pick(*values: float | None) -> float | None:
        return next((v for v in values if v is not None), None)

    kit = declared
    messages = pick(spec.message_limit, task.message_limit, kit.messages if kit else None)
    tokens = pick(spec.token_limit, task.token_limit, kit.tokens if kit else None)
    return LimitsInForce(
        messages=int(messages) if messages is not None else None,
        tokens=int(tokens) if tokens is not None else None,
        time_s=pick(spec.time_limit, task.time_limit, kit.time_s if kit else None),
        working_s=task.working_limit,
    )


def refuse_unbounded(manifest: Manifest, limits: Mapping[str, LimitsInForce]) -> None:
    """Refuse a family that no limit bounds: its agent loop could run forever."""
    unbounded = sorted(name for name, in_force in limits.items() if not in_force.bounded)
    if not unbounded:
        return
    tasks = {f.name: f.task for f in manifest.families}
    named = ", ".join(f"{name!r} ({tasks.get(name, '?')})" for name in unbounded)
    raise UsageError(
        f"{manifest.ref}: family {named} declares no message, token or time limit, and this "
        "run sets none, so nothing would stop an agent loop that never ends (nothing was "
        "stored). Give one of --message-limit N, --token-limit N or --time-limit SECONDS "
        "(e.g. --message-limit 100), or declare one in the task (Task(message_limit=...)) or "
        "in its family kit (evalsuite.kit.Limits) and freeze a new version."
    )
