"""The `audit` use case: grader audit, leak audit and canary probe of a suite version.

`audit_suite` runs the stages an `AuditRequest` asks for, through the audit stage's front
(`evalsuite.audit`, which plays policies through inspect: it is imported inside the function
that runs, so importing the service layer loads no inspect; docs/architecture.md), stores what
the version keeps (a complete grader audit, the leak audit), and returns an `AuditOutcome`: the
typed `AuditResult` and the failure the command exits with after printing it. The result's one
view is `audit_view` (terminal, Markdown, HTML); its `to_dict()` is the ``audit --json``
payload (docs/cli.md).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from evalsuite._core.jsonout import JsonObject
from evalsuite.errors import (
    ContaminationError,
    EvalsuiteError,
    GraderAuditError,
    IntegrityError,
    UsageError,
)

if TYPE_CHECKING:
    from evalsuite._core.layout import Layout
    from evalsuite.manifest import KeySpec
    from evalsuite.store import Store

__all__ = [
    "AuditOutcome",
    "AuditRequest",
    "AuditResult",
    "CanaryProbeResult",
    "GraderAuditResult",
    "Leak",
    "LeakAuditResult",
    "audit_suite",
]


def _str_map(value: object) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, Mapping) else {}


def _int_map(value: object) -> dict[str, int]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): int(v) for k, v in value.items()}


def _int(value: object) -> int:
    return int(value) if isinstance(value, int | float | str) else 0


@dataclass(frozen=True, slots=True)
class GraderAuditResult:
    """``audit --graders``: the grader audit of one suite version on one split.

    Attributes:
        suite: the suite.
        version: the version audited.
        split: ``dev`` or ``holdout``.
        ok: every check of every family passed.
        complete: every item of the split was audited (not ``--per-stratum``).
        content_hash: the hash of the results (what the version's stamp records).
        stored: where the results were stored with the version, relative to the project
            (None: not stored: partial, with team policies, or refused).
        failures: one line per failed check (family, check, strata, items).
        record: the audit's results as the audit stage writes them to
            ``manifests/<suite>/<version>.audit.json`` (`GraderAudit.to_dict`: families,
            checks, policies per stratum, red-team report); JSON by nature.
    """

    suite: str
    version: str
    split: str
    ok: bool
    complete: bool
    content_hash: str | None
    stored: str | None
    failures: tuple[str, ...]
    record: JsonObject

    def to_dict(self) -> JsonObject:
        """``audit --json``'s ``graders``: the record with ``content_hash`` and ``stored``."""
        return self.record | {"content_hash": self.content_hash, "stored": self.stored}

    @classmethod
    def from_dict(cls, payload: Mapping[str, object]) -> GraderAuditResult:
        """The result from its JSON form (``audit --json``'s ``graders``)."""
        record = {k: v for k, v in payload.items() if k not in ("content_hash", "stored")}
        sample = payload.get("sample")
        complete = isinstance(sample, Mapping) and sample.get("items") == sample.get("of")
        hash_, stored = payload.get("content_hash"), payload.get("stored")
        return cls(
            suite=str(payload.get("suite")),
            version=str(payload.get("version")),
            split=str(payload.get("split")),
            ok=bool(payload.get("ok")),
            complete=complete,
            content_hash=None if hash_ is None else str(hash_),
            stored=None if stored is None else str(stored),
            failures=(),
            record=record,
        )


@dataclass(frozen=True, slots=True)
class Leak:
    """An item whose target shows in a surface the agent can read."""

    item_id: str
    split: str
    surface: str
    how: str

    def to_dict(self) -> JsonObject:
        """JSON form (``audit --json``'s ``leaks.findings[]``)."""
        return {
            "item_id": self.item_id,
            "split": self.split,
            "surface": self.surface,
            "how": self.how,
        }


@dataclass(frozen=True, slots=True)
class LeakAuditResult:
    """``audit --leaks``: what the leak audit checked and found.

    Attributes:
        suite: the suite.
        version: the version audited.
        checked: items checked per split.
        findings: the items that show their target to the agent.
        skipped: item id -> why it could not be audited (e.g. target too short).
    """

    suite: str
    version: str
    checked: dict[str, int] = field(default_factory=dict)
    findings: tuple[Leak, ...] = ()
    skipped: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """No item leaks."""
        return not self.findings

    def to_dict(self) -> JsonObject:
        """``audit --json``'s ``leaks`` (the leak audit's JSON form, `LeakReport.to_dict`)."""
        return {
            "suite": self.suite,
            "version": self.version,
            "ok": self.ok,
            "checked": dict(self.checked),
            "findings": [f.to_dict() for f in self.findings],
            "skipped": dict(self.skipped),
        }

    @classmethod
    def from_dict(cls, payload: Mapping[str, object]) -> LeakAuditResult:
        """The result from its JSON form."""
        findings = payload.get("findings")
        return cls(
            suite=str(payload.get("suite")),
            version=str(payload.get("version")),
            checked=_int_map(payload.get("checked")),
            findings=tuple(
                Leak(str(f["item_id"]), str(f["split"]), str(f["surface"]), str(f["how"]))
                for f in (findings if isinstance(findings, Sequence) else ())
                if isinstance(f, Mapping)
            ),
            skipped=_str_map(payload.get("skipped")),
        )


@dataclass(frozen=True, slots=True)
class CanaryProbeResult:
    """``audit --canary-probe``: did the model complete the suite's canary.

    Attributes:
        suite: the suite.
        model: the model asked.
        tries: completions asked for.
        hidden_chars: characters of the canary's hidden part.
        best_match: the longest prefix of the hidden part any try reproduced.
        completions_matching: tries that reproduced the whole hidden part.
        memorised: a try reproduced the whole hidden part (or its first 12 characters).
        seeds: the seed of each try.
    """

    suite: str
    model: str
    tries: int
    hidden_chars: int
    best_match: int
    completions_matching: int
    memorised: bool
    seeds: tuple[int, ...] = ()

    def to_dict(self) -> JsonObject:
        """``audit --json``'s ``canary_probe`` (`CanaryProbe.to_dict`)."""
        return {
            "suite": self.suite,
            "model": self.model,
            "tries": self.tries,
            "hidden_chars": self.hidden_chars,
            "best_match": self.best_match,
            "completions_matching": self.completions_matching,
            "memorised": self.memorised,
            "seeds": list(self.seeds),
        }

    @classmethod
    def from_dict(cls, payload: Mapping[str, object]) -> CanaryProbeResult:
        """The result from its JSON form."""
        seeds = payload.get("seeds")
        return cls(
            suite=str(payload.get("suite")),
            model=str(payload.get("model")),
            tries=_int(payload.get("tries")),
            hidden_chars=_int(payload.get("hidden_chars")),
            best_match=_int(payload.get("best_match")),
            completions_matching=_int(payload.get("completions_matching")),
            memorised=bool(payload.get("memorised")),
            seeds=tuple(_int(s) for s in (seeds if isinstance(seeds, Sequence) else ())),
        )


@dataclass(frozen=True, slots=True)
class AuditResult:
    """What `audit` found; each part None when it was not asked for.

    Attributes:
        graders: ``audit --graders``: the grader audit.
        leaks: ``audit --leaks`` (the default): the leak audit.
        canary_probe: ``audit --canary-probe``: the memorisation probe.
    """

    graders: GraderAuditResult | None = None
    leaks: LeakAuditResult | None = None
    canary_probe: CanaryProbeResult | None = None

    @property
    def graders_ok(self) -> bool | None:
        """Did every check of every family pass (None: no grader audit)."""
        return None if self.graders is None else self.graders.ok

    @property
    def leaking_items(self) -> tuple[str, ...]:
        """``split item_id`` of every item whose target the agent can read, sorted."""
        if self.leaks is None:
            return ()
        return tuple(sorted({f"{f.split} {f.item_id}" for f in self.leaks.findings}))

    @property
    def memorised(self) -> bool | None:
        """Did the model reproduce the canary (None: no probe)."""
        return None if self.canary_probe is None else self.canary_probe.memorised

    def to_dict(self) -> JsonObject:
        """The ``audit --json`` payload: ``graders``, ``leaks``, ``canary_probe``, as asked."""
        parts = {"graders": self.graders, "leaks": self.leaks, "canary_probe": self.canary_probe}
        return {k: v.to_dict() for k, v in parts.items() if v is not None}

    @classmethod
    def from_dict(cls, payload: Mapping[str, object]) -> AuditResult:
        """The result from the ``audit --json`` payload (extra keys, e.g. the view's, ignored)."""
        graders, leaks, canary = (
            payload.get("graders"),
            payload.get("leaks"),
            payload.get("canary_probe"),
        )
        return cls(
            graders=GraderAuditResult.from_dict(graders) if isinstance(graders, Mapping) else None,
            leaks=LeakAuditResult.from_dict(leaks) if isinstance(leaks, Mapping) else None,
            canary_probe=(
                CanaryProbeResult.from_dict(canary) if isinstance(canary, Mapping) else None
            ),
        )


@dataclass(frozen=True, slots=True)
class AuditRequest:
    """What `evalsuite audit` is asked to do (with no part asked for: the leak audit)."""

    suite: str
    """The suite."""
    version: str | None = None
    """The frozen version (None: the latest)."""
    graders: bool = False
    """Run the grader audit."""
    split: str = "dev"
    """The grader audit's split (``holdout``: one budgeted, ledgered look)."""
    purpose: str | None = None
    """A holdout grader audit: why (the ledger)."""
    per_stratum: int | None = None
    """Audit only the first N items of each stratum (partial: not stored)."""
    policies: Path | None = None
    """A Python file of the team's own red-team policies (the audit is then not stored)."""
    leaks: bool = False
    """Run the leak audit (also when nothing else is asked for)."""
    canary_probe: bool = False
    """Ask `model` to complete the suite's canary."""
    model: str | None = None
    """The model of the canary probe."""
    model_args: Mapping[str, object] = field(default_factory=dict)
    """The model's arguments (``-M``)."""
    tries: int = 5
    """The canary probe's tries."""
    seed: int = 0
    """Seed of the grader audit and the probe."""
    skip_holdout: bool = False
    """Audit dev items only for leaks (no key needed)."""

    @property
    def do_leaks(self) -> bool:
        """The leak audit runs: asked for, or nothing else was."""
        return self.leaks or not (self.canary_probe or self.graders)


@dataclass(frozen=True, slots=True)
class AuditOutcome:
    """What `audit_suite` found, and the failure the command exits with after showing it.

    `failure` is the first of: the grader audit failed or could not be stored
    (`GraderAuditError`, exit 3), an item leaks its target (`IntegrityError`, exit 3), the
    model reproduced the canary (`ContaminationError`, exit 4); None: all clean.
    """

    result: AuditResult
    failure: EvalsuiteError | None = None


def audit_suite(
    layout: Layout,
    request: AuditRequest,
    *,
    keys: KeySpec,
    store: Callable[[], Store] | None = None,
) -> AuditOutcome:
    """Run the audits `request` asks for on a frozen suite version.

    A complete dev grader audit is stored with the version, the leak audit always (`evalsuite
    items` flags the leaky items from it). What the runs print goes to stderr, so that
    ``--json`` stays alone on stdout.

    Args:
        layout: The project.
        request: What to audit.
        keys: Where the vault key is (the holdout split).
        store: Opens the results store (a holdout grader audit records its look there).

    Raises:
        UsageError: the request is inconsistent (a probe without a model, policies without
            the grader audit, a holdout audit without a purpose).
        NotFoundError: unknown suite or version.
    """
    if request.canary_probe and request.model is None:
        raise UsageError("--canary-probe needs --model")
    if request.policies is not None and not request.graders:
        raise UsageError("--policies goes with --graders (the team's red-team policies)")
    if request.graders and request.split == "holdout" and not request.purpose:
        raise UsageError("a holdout audit is a budgeted look: give --purpose (the ledger)")
    graders: GraderAuditResult | None = None
    leaks: LeakAuditResult | None = None
    canary: CanaryProbeResult | None = None
    failure: EvalsuiteError | None = None
    if request.graders:
        graders, failure = _graders(layout, request, keys, store)
    if request.do_leaks:
        leaks = _leaks(layout, request, keys)
        if not leaks.ok and failure is None:
            failure = IntegrityError(
                f"{len(leaks.findings)} item(s) of {request.suite}@{leaks.version} show their "
                "target to the agent; fix or retire them in a new version"
            )
    if request.canary_probe and request.model is not None:
        canary = _canary(layout, request, request.model)
        if canary.memorised and failure is None:
            failure = ContaminationError(
                f"{request.model} reproduced the canary of {request.suite}: the suite (or an "
                "export of it) was in its training data"
            )
    return AuditOutcome(AuditResult(graders=graders, leaks=leaks, canary_probe=canary), failure)


def _graders(
    layout: Layout, request: AuditRequest, keys: KeySpec, store: Callable[[], Store] | None
) -> tuple[GraderAuditResult, EvalsuiteError | None]:
    from evalsuite.audit import AuditOptions, audit_graders, load_team_policies, store_audit
    from evalsuite.manifest import load_manifest

    holdout = request.split == "holdout"
    team = load_team_policies(request.policies) if request.policies is not None else ()
    manifest = load_manifest(layout, request.suite, request.version)
    with contextlib.redirect_stdout(sys.stderr):
        audit = audit_graders(
            layout,
            manifest.suite,
            manifest.version,
            keys=keys,
            store=store() if holdout and store is not None else None,
            options=AuditOptions(
                split="holdout" if holdout else "dev",
                per_stratum=request.per_stratum,
                seed=request.seed,
                purpose=request.purpose,
                team=team,
            ),
        )
    failure: EvalsuiteError | None = None
    stored: str | None = None
    try:
        # a team's own policies are not part of the version's record: printed, never stored
        path = store_audit(layout, manifest, audit) if not team else None
        stored = str(path.relative_to(layout.root)) if path else None
    except GraderAuditError as exc:
        failure = exc
    if not audit.ok:
        failure = GraderAuditError(
            f"the grader audit of {manifest.ref} failed: "
            + " ".join(f"{line}." for line in audit.failures())
        )
    result = GraderAuditResult(
        suite=audit.suite,
        version=audit.version,
        split=audit.split,
        ok=audit.ok,
        complete=audit.complete,
        content_hash=audit.content_hash(),
        stored=stored,
        failures=tuple(audit.failures()),
        record=audit.to_dict(),
    )
    return result, failure


def _leaks(layout: Layout, request: AuditRequest, keys: KeySpec) -> LeakAuditResult:
    from evalsuite.audit import audit_leaks, store_leak_audit

    holdout = not request.skip_holdout
    report = audit_leaks(layout, request.suite, request.version, keys=keys, holdout=holdout)
    # kept with the version: `evalsuite items` flags the leaky items from it
    store_leak_audit(layout, report, holdout=holdout)
    return LeakAuditResult(
        suite=report.suite,
        version=report.version,
        checked=dict(report.checked),
        findings=tuple(Leak(f.item_id, f.split, f.surface, f.how) for f in report.findings),
        skipped=dict(report.skipped),
    )


def _canary(layout: Layout, request: AuditRequest, model: str) -> CanaryProbeResult:
    from evalsuite.audit import canary_probe
    from evalsuite.manifest import load_manifest

    manifest = load_manifest(layout, request.suite, request.version)
    with contextlib.redirect_stdout(sys.stderr):
        probe = canary_probe(
            request.suite,
            manifest.canary,
            model,
            model_args=dict(request.model_args),
            tries=request.tries,
            seed=request.seed,
        )
    return CanaryProbeResult(
        suite=probe.suite,
        model=probe.model,
        tries=probe.tries,
        hidden_chars=probe.hidden_chars,
        best_match=probe.best_match,
        completions_matching=probe.completions_matching,
        memorised=probe.memorised,
        seeds=tuple(probe.seeds),
    )
