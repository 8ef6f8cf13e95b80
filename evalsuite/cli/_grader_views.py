"""How the grader audit shows up on the command line: its results, and a version's status.

`audit --graders` prints the checks of every family; `verify` adds the audit status and the
action-space check of each version (`_verify_cmd`, which prints without rich); `run`, `runs`,
`score` and `compare` mark a number that comes from an unaudited, skipped or failing suite
version (docs/design/grader-audit.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NoReturn

from rich.text import Text

from evalsuite._core.layout import Layout
from evalsuite.cli._common import Context, console, emit_json, err_console, exit_after_output
from evalsuite.cli._views import print_view
from evalsuite.errors import GraderAuditError
from evalsuite.service import AuditResult, audit_view

if TYPE_CHECKING:
    from evalsuite.audit import GraderAudit

__all__ = [
    "audit_field",
    "mark",
    "print_freeze_audit",
    "print_grader_audit",
    "refused_freeze",
]


def print_grader_audit(result: Mapping[str, Any]) -> None:
    """The results of `audit --graders`: its view, one table per family, failures first."""
    print_view(console, audit_view(AuditResult.from_dict({"graders": result})))


def _status(layout: Layout, suite: str | None, version: str | None) -> tuple[str, str, str | None]:
    from evalsuite.manifest import suite_audit_status

    status = suite_audit_status(layout, suite, version)
    return status.state, status.detail, status.marker()


def audit_field(ctx: Context, suite: str | None, version: str | None) -> dict[str, Any]:
    """The ``audit`` field of a run's JSON: the status of its suite version."""
    state, detail, marker = _status(ctx.layout, suite, version)
    return {"status": state, "detail": detail, "marker": marker}


def mark(ctx: Context, suite: str | None, version: str | None, *, to_stderr: bool = False) -> None:
    """Print a warning when a number comes from a suite version that is not audited."""
    _state, detail, marker = _status(ctx.layout, suite, version)
    if marker is None:
        return
    line = Text(f"⚠ {marker}: {suite}@{version} {detail}", style="bold yellow")
    (err_console if to_stderr else console).print(line)


def refused_freeze(error: GraderAuditError, audit: GraderAudit | None, as_json: bool) -> NoReturn:
    """A freeze its grader audit refused: show the audit, then exit 3."""
    results = audit.to_dict() if audit is not None else None
    if as_json:
        emit_json(
            {"error": type(error).__name__, "message": str(error), "exit_code": 3}
            | {"audit": results}
        )
    elif results is not None:
        print_grader_audit(results)
    exit_after_output(error)


def print_freeze_audit(payload: Mapping[str, Any]) -> None:
    """`freeze`'s lines on the grader audit."""
    if payload.get("status") == "skipped":
        console.print(Text(f"  grader audit SKIPPED: {payload['reason']}", style="bold yellow"))
    elif payload.get("status") == "passed":
        results = payload.get("results") or {}
        checks = sum(len(f["checks"]) for f in results.get("families", []))
        console.print(
            f"  grader audit passed ({checks} checks, {results.get('seconds', 0):.0f} s): "
            f"{payload['file']}"
        )
