"""The grader audit's results stored with a suite version, and the version's audit status.

The dev audit of a version lives beside its manifest, ``manifests/<suite>/<version>.audit.json``
(a holdout audit, the look's ids and counts only, in ``<version>.holdout-audit.json``). The
file holds the results and the hash of their hashed part (everything but run ids, timing and
log paths). `freeze` writes it and records that hash in the manifest (``audit`` stamp), so it
is as tamper-evident as the manifest. A version frozen before audits existed can be audited
later (``evalsuite audit --graders``): its file then stands alone (its own hash and the
manifest hash it audited are checked).

The audit grows: a check added after a version was frozen (the tamper library, the red-team
policies of issue 29) is not in the results its manifest pins. A complete dev audit of such a
version that agrees with the pinned results on every check they hold, and adds checks, is kept
beside them as ``<version>.later-audit.json`` (standing alone, like an audit of a version frozen
before audits); the version's status is then that of the later audit: an old version whose
grader a newer probe breaks audits as failing, which is the truth about it. An audit that
disagrees with the pinned results on a check they hold is refused (the family code, tools or
grader changed since the freeze).

A version's audit status is one of ``passed``, ``failed`` (audited after freeze and a check
failed), ``skipped`` (frozen with ``--skip-audit``, with the reason), ``unaudited``, or
``damaged`` (the file is missing, edited, or belongs to other content). The audit itself
lives in `evalsuite.audit`; this module only reads what it stored, so that every stage can
show the status. Design: docs/design/grader-audit.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from evalsuite._core.hashing import content_hash
from evalsuite._core.layout import Layout
from evalsuite.errors import EvalsuiteError
from evalsuite.manifest._lean import ManifestSummary, load_manifest_summary

if TYPE_CHECKING:
    from evalsuite.manifest._schema import Manifest

__all__ = [
    "AUDIT_UNHASHED",
    "AuditStatus",
    "audit_file_path",
    "audit_results_path",
    "audit_status",
    "judge_audit_file",
    "judge_states",
    "read_audit_file",
    "read_judge_audit",
    "suite_audit_status",
]

StatusName = Literal["passed", "failed", "skipped", "unaudited", "damaged"]
JudgeState = Literal["passed", "failing", "unaudited", "damaged"]
AUDIT_UNHASHED = ("runs", "seconds", "logs")
"""Fields of the results that vary between identical audits (left out of the hash)."""


def audit_file_path(suite: str, version: str) -> str:
    """``manifests/<suite>/<version>.audit.json`` (relative to the project)."""
    return f"manifests/{suite}/{version}.audit.json"


def audit_results_path(layout: Layout, suite: str, version: str, split: str = "dev") -> Path:
    """Where the audit results of ``suite@version`` on `split` are stored.

    `split` ``later`` names the latest complete dev audit of a version whose freeze-time
    results are pinned by its manifest, by an audit with checks added since the freeze
    (``<version>.later-audit.json``; see the module doc).
    """
    if split == "holdout":
        return layout.manifest_dir(suite) / f"{version}.holdout-audit.json"
    if split == "later":
        return layout.manifest_dir(suite) / f"{version}.later-audit.json"
    return layout.root / audit_file_path(suite, version)


def read_audit_file(
    layout: Layout, suite: str, version: str, split: str = "dev"
) -> tuple[dict[str, Any] | None, list[str]]:
    """The stored results of a version's audit and what is wrong with the file (if anything).

    Returns:
        (results, problems): results None when there is no file (or it is unreadable).
    """
    path = audit_results_path(layout, suite, version, split)
    if not path.is_file():
        return None, []
    shown = path.relative_to(layout.root) if path.is_relative_to(layout.root) else path
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        return None, [f"{shown} cannot be read ({type(exc).__name__}); restore it"]
    if not isinstance(data, dict):
        return None, [f"{shown} is not an audit results file; restore it"]
    hashed = {k: v for k, v in data.items() if k not in (*AUDIT_UNHASHED, "content_hash")}
    actual = content_hash(hashed)
    if actual != data.get("content_hash"):
        return data, [
            f"{shown} was edited after the audit (its results hash to {actual}, it records "
            f"{data.get('content_hash')}); restore it from version control or audit again"
        ]
    return data, []


def _failed_checks(results: dict[str, Any]) -> list[str]:
    """The failed checks of stored results, as ``family: check/policy``."""
    return [
        f"{family['family']}: {c['check']}" + (f"/{c['policy']}" if c.get("policy") else "")
        for family in results.get("families", [])
        for c in family.get("checks", [])
        if c.get("status") == "failed"
    ]


@dataclass(slots=True)
class AuditStatus:
    """A version's audit status, for `verify`, `run`, `score`, `compare` and the report."""

    state: StatusName
    detail: str
    problems: list[str] = field(default_factory=list)
    """Integrity problems of the audit record (``damaged``)."""
    results: dict[str, Any] | None = None
    """The stored dev results (None when there are none)."""
    judges: dict[str, JudgeState] = field(default_factory=dict)
    """Each judged family's judge audit (`judge_states`); empty when no family has a judge."""

    @property
    def trusted(self) -> bool:
        """True when the version's graders passed an audit."""
        return self.state == "passed"

    def judge_marker(self) -> str | None:
        """``JUDGE FAILING``/``JUDGE UNAUDITED``/... naming the families (None: all passed)."""
        worst = [
            (label, [f for f, s in sorted(self.judges.items()) if s == state])
            for state, label in _JUDGE_LABELS
        ]
        shown = [f"{label} ({', '.join(families)})" for label, families in worst if families]
        return "; ".join(shown) or None

    def marker(self) -> str | None:
        """What every output shows beside a number from this version (None: audited, passed).

        A judged family whose judge audit failed (or is missing or damaged) marks every number
        of the version as the grader audit does (docs/design/judge-audit.md).
        """
        grader = (
            None
            if self.trusted
            else {
                "failed": "GRADER AUDIT FAILED",
                "skipped": "GRADER AUDIT SKIPPED",
                "unaudited": "UNAUDITED SUITE",
                "damaged": "GRADER AUDIT RECORD DAMAGED",
            }.get(self.state, "UNAUDITED SUITE")
        )
        shown = [m for m in (grader, self.judge_marker()) if m]
        return "; ".join(shown) or None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the ``audit`` field of `run`, `score`, `compare`, `verify`)."""
        failures = _failed_checks(self.results) if self.results is not None else []
        return {
            "status": self.state,
            "detail": self.detail + _judge_detail(self.judges),
            "problems": list(self.problems),
            "failed_checks": failures,
            "judges": dict(sorted(self.judges.items())),
        }


_JUDGE_LABELS: tuple[tuple[JudgeState, str], ...] = (
    ("failing", "JUDGE FAILING"),
    ("damaged", "JUDGE AUDIT DAMAGED"),
    ("unaudited", "JUDGE UNAUDITED"),
)


def _judge_detail(judges: dict[str, JudgeState]) -> str:
    """The judge audits' part of the status sentence ("" when every judge passed)."""
    said = {
        "failing": "failed its judge audit (below its declared floor or a planted bias caught)",
        "damaged": "has a judge audit record that cannot be trusted",
        "unaudited": "has no judge audit (`evalsuite audit SUITE@VERSION --judge --labels FILE`)",
    }
    parts = [
        f"judged family {family} {said[state]}"
        for family, state in sorted(judges.items())
        if state != "passed"
    ]
    return "; " + "; ".join(parts) if parts else ""


def judge_audit_file(layout: Layout, suite: str, version: str) -> Path:
    """Where the judge audit of ``suite@version`` is kept (written by `audit --judge`)."""
    return layout.state / "audits" / suite / f"{version}.judge.json"


def _judged_families(manifest: Manifest | ManifestSummary) -> list[str]:
    if isinstance(manifest, ManifestSummary):
        families = manifest.record().get("families") or []
        return [str(f["name"]) for f in families if isinstance(f, dict) and f.get("judge")]
    return [f.name for f in manifest.families if f.judge is not None]


def read_judge_audit(
    layout: Layout, manifest: Manifest | ManifestSummary
) -> tuple[dict[str, bool] | None, str | None]:
    """The stored judge audit's verdicts (family -> passed), or what is wrong with it.

    Returns:
        (verdicts, problem): verdicts None when there is no file or it cannot be trusted;
        problem ``"unreadable"`` or ``"other manifest"`` (a judge declaration changed since),
        else None.
    """
    path = judge_audit_file(layout, manifest.suite, manifest.version)
    if not path.is_file():
        return None, None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        stored = {str(f["family"]): bool(f["passed"]) for f in data["families"]}
        same = data["manifest_hash"] == manifest.manifest_hash
    except (OSError, ValueError, KeyError, TypeError):
        return None, "unreadable"
    return (stored, None) if same else (None, "other manifest")


def judge_states(layout: Layout, manifest: Manifest | ManifestSummary) -> dict[str, JudgeState]:
    """Each judged family of a version: ``passed``, ``failing``, ``unaudited`` or ``damaged``.

    ``damaged``: the stored judge audit cannot be read or is of another manifest (a judge
    declaration changed since, which changes the manifest hash).
    """
    status: dict[str, JudgeState] = dict.fromkeys(_judged_families(manifest), "unaudited")
    if not status:
        return status
    stored, problem = read_judge_audit(layout, manifest)
    if problem is not None:
        return dict.fromkeys(status, "damaged")
    for family, passed in (stored or {}).items():
        if family in status:
            status[family] = "passed" if passed else "failing"
    return status


def audit_status(layout: Layout, manifest: Manifest | ManifestSummary) -> AuditStatus:
    """The audit status of a frozen version (see the module doc); the same for its summary.

    It carries the judge audit of each judged family (`judge_states`) too.
    """
    status = _grader_status(layout, manifest)
    status.judges = judge_states(layout, manifest)
    return status


def _grader_status(layout: Layout, manifest: Manifest | ManifestSummary) -> AuditStatus:
    stamp = manifest.audit
    data, problems = read_audit_file(layout, manifest.suite, manifest.version)
    if stamp is not None and stamp.status == "skipped":
        return AuditStatus("skipped", f"frozen without the grader audit: {stamp.reason}")
    if stamp is not None and stamp.status == "passed":
        if data is None and not problems:
            problems = [
                f"{stamp.file} is missing: freeze wrote the audit results there and recorded "
                f"their hash {stamp.content_hash}; restore it from version control"
            ]
        elif data is not None and data.get("content_hash") != stamp.content_hash:
            problems.append(
                f"{stamp.file} holds results hashing to {data.get('content_hash')}, but "
                f"{manifest.ref} recorded {stamp.content_hash} at freeze; restore it"
            )
        if problems:
            return AuditStatus("damaged", "; ".join(problems), problems, data)
        later = _later_status(layout, manifest)
        if later is not None:
            return later
        return AuditStatus("passed", "passed the grader audit at freeze", [], data)
    if data is None:
        if problems:
            return AuditStatus("damaged", "; ".join(problems), problems)
        return AuditStatus("unaudited", "no grader audit: run `evalsuite audit --graders`")
    if data.get("manifest_hash") != manifest.audited_hash():
        problems.append(
            f"the audit results of {manifest.ref} are of other content (manifest "
            f"{data.get('manifest_hash')}, the version hashes to {manifest.audited_hash()})"
        )
    if problems:
        return AuditStatus("damaged", "; ".join(problems), problems, data)
    if data.get("ok"):
        return AuditStatus("passed", "passed the grader audit (audited after freeze)", [], data)
    return AuditStatus("failed", "failed the grader audit (audited after freeze)", [], data)


def _later_status(layout: Layout, manifest: Manifest | ManifestSummary) -> AuditStatus | None:
    """The status a later audit gives a version that passed at freeze (None: no later audit)."""
    data, problems = read_audit_file(layout, manifest.suite, manifest.version, "later")
    if data is None and not problems:
        return None
    if data is not None and data.get("manifest_hash") != manifest.audited_hash():
        problems.append(
            f"the later audit results of {manifest.ref} are of other content (manifest "
            f"{data.get('manifest_hash')}, the version hashes to {manifest.audited_hash()})"
        )
    if data is None or problems:
        return AuditStatus("damaged", "; ".join(problems), problems, data)
    added = list(data.get("added_checks", []))
    if data.get("ok"):
        shown = f"{len(added)} check(s) added since" if added else "no check added since"
        return AuditStatus(
            "passed", f"passed the grader audit at freeze and a later audit ({shown})", [], data
        )
    failing = _failed_checks(data)
    more = f" and {len(failing) - 4} more" if len(failing) > 4 else ""
    return AuditStatus(
        "failed",
        f"passed the grader audit at freeze; a later audit, with {len(added)} check(s) added "
        f"since, fails {', '.join(failing[:4])}{more}",
        [],
        data,
    )


def suite_audit_status(layout: Layout, suite: str | None, version: str | None) -> AuditStatus:
    """`audit_status` of ``suite@version``; ``unaudited`` when it cannot be read."""
    if not suite or not version:
        return AuditStatus("unaudited", "not a run of a frozen suite version")
    try:
        manifest = load_manifest_summary(layout, suite, version)
    except EvalsuiteError as exc:
        return AuditStatus("unaudited", f"{suite}@{version} cannot be read ({exc})")
    return audit_status(layout, manifest)
