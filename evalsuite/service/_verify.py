"""`verify`: re-hash frozen items, check the ledger, the audit and the action space; its view.

The use case (`verify`) checks each suite version (`evalsuite.manifest.verify`), the holdout
governance (`check_governance`: ledger chain, ledger against the store, the manifest hash in
both) and the grader audit with the action space, and returns a typed `VerifyResult`.
`verify_view` words it once for the terminal and ``--json`` (``{"ok", "suites"}``, today's
fields). Checking versions whose content a previous full check found intact imports neither
rich, pydantic nor cryptography (docs/design/startup.md): this module imports none of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from evalsuite.errors import EvalsuiteError
from evalsuite.service._governance import check_governance, stored_runs
from evalsuite.service._views import Column, ResultView, TableView, dedupe

if TYPE_CHECKING:
    from evalsuite._core.jsonout import JsonObject
    from evalsuite._core.layout import Layout
    from evalsuite.manifest import AuditStatus, KeySpec, VerifyReport

__all__ = [
    "ActionSpaceCheck",
    "AuditCheck",
    "VerifiedSuite",
    "VerifyResult",
    "verify",
    "verify_audit",
    "verify_view",
]

CANDIDATES_SHOWN = 10
"""New candidate items named in the terminal before "..." (``--json`` lists every one)."""


@dataclass(frozen=True, slots=True)
class AuditCheck:
    """A verified version's grader audit status and whether its action space still agrees."""

    status: AuditStatus
    action_space: str
    """``agrees``, ``DRIFTED`` or ``not recorded``."""

    def to_dict(self) -> JsonObject:
        """The ``audit`` field of each suite in ``verify --json``."""
        return self.status.to_dict() | {"action_space": self.action_space}


@dataclass(frozen=True, slots=True)
class VerifiedSuite:
    """One suite version as `verify` checked it (`report.problems` include the governance's)."""

    report: VerifyReport
    audit: AuditCheck | None

    @property
    def ref(self) -> str:
        """``suite@version`` (``suite@?`` when no version could be read)."""
        return f"{self.report.suite}@{self.report.version or '?'}"

    def to_dict(self) -> JsonObject:
        """One entry of ``verify --json``'s ``suites``."""
        return self.report.to_dict() | {
            "audit": None if self.audit is None else self.audit.to_dict()
        }


@dataclass(frozen=True, slots=True)
class VerifyResult:
    """Every suite version `verify` checked, in order."""

    suites: tuple[VerifiedSuite, ...]

    @property
    def ok(self) -> bool:
        """True when every version verified."""
        return all(s.report.ok for s in self.suites)

    @property
    def integrity_failed(self) -> bool:
        """True when a version drifted or its record is broken (exit 3; else unreadable: 2)."""
        return any(s.report.integrity_failed for s in self.suites)

    @property
    def failed(self) -> list[str]:
        """``suite@version`` of each version that did not verify."""
        return [f"{s.report.suite}@{s.report.version}" for s in self.suites if not s.report.ok]

    def to_dict(self) -> JsonObject:
        """The ``verify --json`` payload: ``ok`` and one entry per suite."""
        return {"ok": self.ok, "suites": [s.to_dict() for s in self.suites]}


class ActionSpaceCheck(Protocol):
    """Checks that a version's families' tools still hash as its manifest recorded.

    The check loads the families' tasks through the runner (inspect), which the service
    layer does not import: the command passes it in (`evalsuite.cli`'s `verify`).
    Returns (families whose tools cannot be loaded, families whose tools drifted).
    `environment` holds the digest's shared part once computed (one per command).
    """

    def __call__(
        self,
        layout: Layout,
        suite: str,
        version: str,
        families: Sequence[Mapping[str, Any]],
        *,
        use_cache: bool,
        environment: list[bytes],
    ) -> tuple[list[str], list[str]]: ...


def verify_audit(
    layout: Layout,
    report: VerifyReport,
    action_space: ActionSpaceCheck,
    *,
    use_cache: bool = True,
    environment: list[bytes] | None = None,
) -> AuditCheck | None:
    """The audit status and action-space check of a verified version (problems added).

    `environment` holds the action-space digest's shared part once computed (one per
    command: the files under tasks/ are hashed once, not once per suite).
    """
    from evalsuite.manifest import audit_status, load_manifest_summary

    if report.version is None:
        return None
    try:
        summary = load_manifest_summary(layout, report.suite, report.version)
    except EvalsuiteError:
        return None  # verify already says why
    status = audit_status(layout, summary)
    report.problems.extend(status.problems)
    families = summary.record()["families"]
    recorded = [f["name"] for f in families if f.get("tools") is not None]
    unloadable, drift = action_space(
        layout,
        report.suite,
        report.version,
        families,
        use_cache=use_cache,
        environment=environment if environment is not None else [],
    )
    report.problems.extend(unloadable + drift)
    space = "DRIFTED" if drift else ("agrees" if recorded else "not recorded")
    return AuditCheck(status, space)


def verify(  # noqa: PLR0913 - the project, its action-space check, then the options
    layout: Layout,
    keys: KeySpec,
    key_dir: Path,
    store_url: str | None,
    action_space: ActionSpaceCheck,
    targets: list[tuple[str, str | None]] | None = None,
    *,
    skip_holdout: bool = False,
    use_cache: bool = True,
) -> VerifyResult:
    """Verify each (suite, version) of `targets` (None: the latest of every frozen suite).

    A version None is the suite's latest. `store_url` is ``$EVALSUITE_STORE`` (None: the
    project's default store, read only if it exists); `key_dir` holds the ledgers' anchors;
    `action_space` checks the families' tools (`ActionSpaceCheck`).
    """
    from evalsuite.manifest import VerifyCache, frozen_versions, list_suite_names
    from evalsuite.manifest import verify as verify_version

    if targets is None:
        targets = [(n, None) for n in list_suite_names(layout) if frozen_versions(layout, n)]
    cache = VerifyCache(layout) if use_cache else None
    reports = [
        verify_version(layout, name, version, keys=keys, skip_holdout=skip_holdout, cache=cache)
        for name, version in targets
    ]
    runs, store = stored_runs(layout, store_url) if reports else ([], "")
    for report in reports:
        check = check_governance(
            layout,
            key_dir,
            report.suite,
            report.version,
            report.manifest_hash,
            runs,
            store,
            store_url=store_url,
        )
        report.problems.extend(check.problems)
        report.warnings.extend(check.warnings)
        report.hash_sources.update(check.sources)
        report.store = store
    environment: list[bytes] = []
    return VerifyResult(
        tuple(
            VerifiedSuite(
                report,
                verify_audit(
                    layout, report, action_space, use_cache=use_cache, environment=environment
                ),
            )
            for report in reports
        )
    )


# ----------------------------------------------------------------------------- view


def _checked(report: VerifyReport) -> str:
    holdout = "skipped" if report.holdout_skipped else f"{report.holdout_checked} holdout"
    text = f"checked {report.dev_checked} dev, {holdout} item(s)"
    if report.recorded:
        text += " (content unchanged since a full check found it intact; --no-cache re-reads)"
    return text


def _failures(suite: VerifiedSuite) -> list[str]:
    """What failed in one version, each naming it: problems, errors, drifted items."""
    r = suite.report
    lines = [*r.problems, *r.errors]
    lines += [f"{i.kind} {i.split} item {i.item_id}: {i.detail}" for i in r.items]
    return [f"✗ {suite.ref}: {line}" for line in lines]


def _notes(suite: VerifiedSuite) -> list[str]:
    """What did not fail but should be read: warnings, later versions, new candidates."""
    r = suite.report
    lines = [f"{suite.ref}: {w}" for w in r.warnings]
    if r.superseded:
        lines.append(f"{suite.ref}: superseded by a later version: {', '.join(r.superseded)}")
    if r.candidates:
        more = " ..." if len(r.candidates) > CANDIDATES_SHOWN else ""
        lines.append(
            f"{suite.ref}: {len(r.candidates)} new candidate(s) in tasks/ not in any manifest "
            f"yet: {', '.join(r.candidates[:CANDIDATES_SHOWN])}{more}"
        )
    return lines


def _facts(suite: VerifiedSuite) -> list[str]:
    r = suite.report
    lines = [f"{suite.ref}: {_checked(r)}"]
    if r.hash_sources:
        sources = ", ".join(f"{k}: {v}" for k, v in r.hash_sources.items())
        lines.append(f"{suite.ref}: manifest hash vs {sources}")
    if suite.audit is not None:
        a = suite.audit
        lines.append(
            f"{suite.ref}: grader audit: {a.status.state} ({a.status.detail}); action space "
            f"{a.action_space}"
        )
    return lines


def verify_view(result: VerifyResult) -> ResultView:
    """What `evalsuite verify` prints and writes as ``--json`` of `result`."""
    suites = result.suites
    failed = result.failed
    if not suites:
        headline = "no frozen suites to verify"
    elif failed:
        headline = f"FAILED: {', '.join(failed)} did not verify ({len(suites)} checked)"
    else:
        headline = f"OK: {len(suites)} suite version(s) verified"
    table = TableView(
        "suite versions",
        (
            Column("suite", numeric=False),
            Column("result", numeric=False),
            Column("dev"),
            Column("holdout"),
            Column("grader audit", numeric=False),
            Column("action space", numeric=False),
            Column("manifest", numeric=False, essential=False),
        ),
        tuple(
            (
                s.ref,
                "OK" if s.report.ok else "FAILED",
                str(s.report.dev_checked),
                "skipped" if s.report.holdout_skipped else str(s.report.holdout_checked),
                s.audit.status.state if s.audit is not None else "n/a",
                s.audit.action_space if s.audit is not None else "n/a",
                s.report.manifest_hash or "n/a",
            )
            for s in suites
        ),
    )
    stores = dedupe(s.report.store or "" for s in suites)
    facts = [line for s in suites for line in _facts(s)]
    facts += [f"ledgers checked against the results store {store}" for store in stores]
    return ResultView(
        kind="verify",
        title="evalsuite verify",
        headline=headline,
        alerts=tuple(line for s in suites for line in _failures(s)),
        gate_line=None,
        tables=(table,) if suites else (),
        facts=tuple(facts),
        caveats=dedupe(line for s in suites for line in _notes(s)),
        payload=result.to_dict(),
    )
