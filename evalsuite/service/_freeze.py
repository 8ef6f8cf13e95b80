"""The `freeze` use case: check the suite's tasks, run its grader audit, freeze the version.

`evalsuite freeze` parses its options into a `FreezeRequest` and calls `freeze_suite`. The
manifest stage writes the version (`evalsuite.manifest.freeze`) and never imports inspect, so
this use case finds every family's task the way `run` will (`evalsuite.run`) and runs the
grader audit before anything is written (`evalsuite.audit.FreezeAuditor`), through their
fronts (docs/architecture.md, "Where each stage lives"). An audit that fails refuses the
freeze with `FreezeRefused`, which carries the audit's results for the caller to show.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from evalsuite._core.jsonout import JsonObject
from evalsuite.errors import ContaminationError, GraderAuditError, UsageError

if TYPE_CHECKING:
    from evalsuite._core.layout import Layout
    from evalsuite.audit import FreezeAuditor, GraderAudit
    from evalsuite.manifest import FreezeAudit, FreezeResult, KeySpec, TaskRecords

__all__ = ["FreezeOutcome", "FreezeRefused", "FreezeRequest", "freeze_suite"]


class FreezeRefused(GraderAuditError):
    """The grader audit refused the freeze: nothing was written (exit 3).

    `error` is the manifest stage's `GraderAuditError` (its message and its name in
    ``--json``), `audit` the audit's results for the caller to show (None when no audit ran,
    e.g. the action spaces drifted).
    """

    def __init__(self, error: GraderAuditError, audit: GraderAudit | None) -> None:
        super().__init__(str(error))
        self.error = error
        self.audit = audit


@dataclass(frozen=True, slots=True)
class FreezeRequest:
    """What `evalsuite freeze` is asked to freeze."""

    suite: str
    """``tasks/<suite>.toml``."""
    version: str
    """The new version, ``X.Y.Z``."""
    note: str | None = None
    """Why this version exists (manifest and changelog)."""
    retire: tuple[str, ...] = ()
    """Item ids to drop from this version."""
    retire_flagged: Path | None = None
    """``evalsuite items --json`` output of the latest version: retire its items carrying
    any of `flags` (with `flags`)."""
    flags: Sequence[str] | None = None
    """With `retire_flagged`: the flags to retire (dead, flaky, ...; `parse_flags`)."""
    skip_audit: bool = False
    """Freeze without the grader audit (needs `reason`; recorded in manifest and changelog)."""
    reason: str | None = None
    """Why the grader audit is skipped."""


@dataclass(frozen=True, slots=True)
class FreezeOutcome:
    """What a freeze did: the manifest stage's result, the items retired by flag, the audit."""

    result: FreezeResult
    retired_flagged: tuple[str, ...]
    """Items retired because `items --json` flagged them (``--retire-flagged``)."""
    audit: GraderAudit | None
    """The grader audit run for this freeze (None when skipped, or when nothing new ran)."""
    root: Path
    """The project's root: paths in `to_dict` are relative to it."""

    def audit_dict(self) -> JsonObject:
        """``freeze --json``'s ``audit``: the manifest's stamp, the results, the tools."""
        manifest = self.result.manifest
        stamp = manifest.audit
        payload: JsonObject = stamp.model_dump(mode="json") if stamp else {"status": None}
        if self.audit is not None:
            payload["results"] = self.audit.to_dict()
        payload["tools"] = {f.name: f.tools for f in manifest.families}
        return payload

    def to_dict(self) -> JsonObject:
        """The ``freeze --json`` payload (docs/cli.md, "freeze")."""
        result = self.result
        m = result.manifest
        return {
            "suite": m.suite,
            "version": m.version,
            "status": result.status,
            "bump": result.bump,
            "manifest_hash": m.manifest_hash,
            "manifest": str(result.path.relative_to(self.root)),
            "n_dev": len(m.items_by_split("dev")),
            "n_holdout": len(m.items_by_split("holdout")),
            "strata": m.strata(),
            "diff": m.diff.model_dump(),
            "parent": m.parent.model_dump() if m.parent else None,
            "removed_from_sources": result.removed_from_sources,
            "removed_files": result.removed_files,
            "key": result.key_source,
            "retired_flagged": list(self.retired_flagged),
            "still_retired": list(result.still_retired),
            "note": m.note,
            "audit": self.audit_dict(),
        }


def _task_records(layout: Layout, suite: str) -> TaskRecords:
    """Find every family's task the way `run` will, and read the datasets of item-less ones.

    manifest/ cannot do this itself: it never imports inspect.
    """
    from evalsuite.manifest import TASK_REFERENCE_FORMS, load_suite
    from evalsuite.run import check_family_scoring, load_task_function, suite_task_records

    config = load_suite(layout, suite)
    hint = (
        f"Fix the family's `task` or `task_args` in {config.path_hint} ({TASK_REFERENCE_FORMS}); "
        "nothing was frozen."
    )
    for family in config.families:
        function = load_task_function(layout, config.name, family, hint=hint)
        check_family_scoring(function, family, suite=config.name)
    return suite_task_records(layout, config)


def _freeze_audit(
    layout: Layout, request: FreezeRequest, notify: Callable[[str], None]
) -> tuple[FreezeAudit, FreezeAuditor | None]:
    """What `freeze` records and runs: action spaces, and the audit or its reasoned skip.

    Raises:
        UsageError: --skip-audit without --reason, or --reason without --skip-audit.
    """
    from evalsuite.audit import FreezeAuditor, declared_action_spaces
    from evalsuite.manifest import FreezeAudit

    skip, reason = request.skip_audit, request.reason
    if skip and not (reason and reason.strip()):
        raise UsageError("--skip-audit needs --reason: say why the grader audit is skipped")
    if reason is not None and not skip:
        raise UsageError("--reason goes with --skip-audit (why the grader audit is skipped)")
    tools = declared_action_spaces(layout, request.suite)
    if skip:
        return FreezeAudit(tools=tools, skip_reason=reason), None
    auditor = FreezeAuditor(layout)
    notify(f"running the grader audit of {request.suite} (dev split) before freezing ...")
    return FreezeAudit(tools=tools, run=auditor), auditor


def _refuse_overlaps(layout: Layout, suite: str, retire: Sequence[str]) -> None:
    """Refuse (exit 4, nothing written) when a new item near-copies a frozen one.

    docs/guard.md, "Before a freeze": whichever split the new item lands in, the pair would
    put holdout text in public or public text in the holdout.
    """
    from evalsuite.guard import new_item_overlaps

    overlaps = new_item_overlaps(layout, suite, retire=retire)
    if not overlaps:
        return
    shown = "\n".join(f"  {o.describe()}" for o in overlaps[:20])
    more = f"\n  ... and {len(overlaps) - 20} more" if len(overlaps) > 20 else ""
    raise ContaminationError(
        f"{len(overlaps)} new item(s) of {suite} near-copy items an earlier version froze:\n"
        f"{shown}{more}\nWhichever split a new item lands in, the freeze would put holdout "
        "text in public or public text in the holdout. Change or drop these items (or "
        "--retire them), then freeze again; nothing was frozen."
    )


def freeze_suite(
    request: FreezeRequest,
    *,
    layout: Layout,
    keys: KeySpec,
    now: datetime | None = None,
    notify: Callable[[str], None] = lambda message: None,
) -> FreezeOutcome:
    """Freeze `request.suite` as `request.version`: manifest, vault, fingerprints, changelog.

    Every family's task is found and checked first, then the grader audit runs on the
    candidate's dev split (unless skipped with a reason); only then is anything written.

    Args:
        request: What to freeze.
        layout: The project.
        keys: Where vault keys live.
        now: The freeze time recorded in the manifest (default: now, UTC).
        notify: Told, in a sentence, when the grader audit starts (it takes a while).

    Raises:
        FreezeRefused: the grader audit failed (exit 3); nothing is written.
        ContaminationError: a new item near-copies a frozen item of another id (exit 4;
            docs/guard.md, "Before a freeze"); nothing is written.
        UsageError: --retire-flagged without --flag (or the reverse), --skip-audit without
            --reason (or the reverse), a task reference that finds no task; and whatever
            `evalsuite.manifest.freeze` raises (version errors, an existing version frozen
            with other content: exit 3).
    """
    from evalsuite.manifest import flagged_retirements, freeze

    retire, note = request.retire, request.note
    retired_flagged: tuple[str, ...] = ()
    if (request.retire_flagged is None) != (request.flags is None):
        raise UsageError("--retire-flagged FILE and --flag F[,F...] go together")
    if request.retire_flagged is not None and request.flags is not None:
        flagged = flagged_retirements(
            layout, request.suite, request.retire_flagged, list(request.flags)
        )
        retired_flagged = tuple(flagged.item_ids)
        retire = tuple(dict.fromkeys([*retire, *flagged.item_ids]))
        note = f"{note.strip()}. {flagged.note}" if note and note.strip() else flagged.note
    task_records = _task_records(layout, request.suite)
    _refuse_overlaps(layout, request.suite, retire)
    audit, auditor = _freeze_audit(layout, request, notify)
    try:
        result = freeze(
            layout,
            request.suite,
            request.version,
            keys=keys,
            now=now or datetime.now(UTC),
            note=note,
            retire=retire,
            task_records=task_records,
            audit=audit,
        )
    except GraderAuditError as exc:
        raise FreezeRefused(exc, auditor.audit if auditor is not None else None) from exc
    return FreezeOutcome(
        result=result,
        retired_flagged=retired_flagged,
        audit=auditor.audit if auditor is not None else None,
        root=layout.root,
    )
