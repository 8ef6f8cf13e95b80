"""The scorecard: one compact row per comparison, what a reader takes in at a glance.

A row holds the suite, the baseline and the candidate (by model name where the name tells the
run apart, else by run id), the difference that leads the comparison's headline with its
interval, and three badges: the gate, the runs' validity and the suite's audit. The full
headline sentence and the gate line travel with the row, for the renderers to show one line
below. Every renderer lays the same `Scorecard` out: the report's first screen (HTML, the
``_scorecard.html.j2`` partial), the Markdown report (`Scorecard.table`), ``report.json``
(`Scorecard.to_dict`) and the terminal (`evalsuite.cli._views.print_scorecard`).

The scorecard is built from the comparison results the caller already has. It reads them in
one place, `_read_comparison`, an adapter from today's comparison payload (the ``compare
--json`` dict, with the view's ``headline`` and ``gate_line`` when present, or a report's
``{"baseline", "candidate", "skipped"}`` entry) to the few typed fields the scorecard needs;
nothing else here touches a payload (docs/design/result-model.md, "The scorecard").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from evalsuite._core.jsonout import JsonObject
from evalsuite.service._format import NA, fmt_ci, fmt_signed, is_number
from evalsuite.service._views import (
    Column,
    TableView,
    comparison_view,
    is_unfinished,
    suite_ref,
)

if TYPE_CHECKING:  # the comparison's module imports the analyses: not at start-up
    from evalsuite.service._compare import ComparisonResult

__all__ = ["Badge", "Scorecard", "ScorecardRow", "ScorecardRun", "scorecard"]

Tone = Literal["good", "bad", "warn", "neutral"]
"""How a badge is coloured: passed, failed, needs a look, or nothing to judge."""

_TONE_RANK: dict[str, int] = {"good": 0, "neutral": 1, "warn": 2, "bad": 3}

_AUDIT_BADGES: dict[str, tuple[str, Tone]] = {
    "passed": ("passed", "good"),
    "failed": ("FAILED", "bad"),
    "damaged": ("RECORD DAMAGED", "bad"),
    "skipped": ("SKIPPED", "warn"),
    "unaudited": ("UNAUDITED", "warn"),
}
"""The audit state of a suite version (`manifest.AuditStatus`) as a badge."""

_GATE_TONES: dict[str, Tone] = {"PASS": "good", "FAIL": "bad", "INCONCLUSIVE": "warn"}


@dataclass(frozen=True, slots=True)
class Badge:
    """A short status word with its tone, and the longer text behind it.

    Attributes:
        label: what the badge says (``PASS``, ``valid``, ``FAILED``), a few characters.
        tone: ``good``, ``bad``, ``warn`` or ``neutral``.
        detail: the sentence behind the label (a tooltip in HTML); may be empty.
    """

    label: str
    tone: Tone
    detail: str = ""

    def to_dict(self) -> dict[str, str]:
        """``{"label", "tone", "detail"}``."""
        return {"label": self.label, "tone": self.tone, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class ScorecardRun:
    """One run of a row, as the scorecard names it.

    Attributes:
        run_id: the run's id.
        model: the model it ran (None when unknown, e.g. a comparison that was not made).
        label: what the scorecard shows: the model name where it is unique among the runs of
            this suite shown in the scorecard, else the run id.
    """

    run_id: str
    model: str | None
    label: str

    def to_dict(self) -> JsonObject:
        """``{"run_id", "model", "label"}``."""
        return {"run_id": self.run_id, "model": self.model, "label": self.label}


@dataclass(frozen=True, slots=True)
class ScorecardRow:
    """One comparison at a glance (every text already formatted).

    Attributes:
        suite: ``support@2.0.0 holdout`` (or ``ingested runs (no manifest)``).
        baseline: the baseline run.
        candidate: the candidate run.
        difference: candidate − baseline with its sign (``+0.224``), ``n/a`` when undefined,
            ``not compared`` when the comparison was not made.
        interval: its interval (``[+0.133, +0.314]``), ``n/a`` when undefined.
        basis: which difference: ``deployment-weighted``, ``unweighted`` (the suite has
            weights but their comparison is undefined) or ``overall`` (no weights).
        gate: the non-inferiority gate's result, or ``no gate``.
        validity: ``valid``, or what is wrong with a run (INVALID, PARTIAL, NOT COMPLETE).
        audit: the suite's grader audit (``passed``, ``FAILED``, ``UNAUDITED`` ...).
        sentence: the comparison's full headline, shown one line below the scorecard.
        gate_line: the gate's full sentence, or None when no gate was asked.
    """

    suite: str
    baseline: ScorecardRun
    candidate: ScorecardRun
    difference: str
    interval: str
    basis: str
    gate: Badge
    validity: Badge
    audit: Badge
    sentence: str
    gate_line: str | None

    @property
    def difference_text(self) -> str:
        """``+0.224 [+0.133, +0.314]``, ``weighted`` added for the deployment-weighted one."""
        if self.interval == NA and self.difference in (NA, "not compared"):
            return self.difference
        text = f"{self.difference} {self.interval}"
        return f"{text} weighted" if self.basis == "deployment-weighted" else text

    def to_dict(self) -> JsonObject:
        """The row as JSON (``report.json``'s ``scorecard.rows``)."""
        return {
            "suite": self.suite,
            "baseline": self.baseline.to_dict(),
            "candidate": self.candidate.to_dict(),
            "difference": self.difference,
            "interval": self.interval,
            "basis": self.basis,
            "gate": self.gate.to_dict(),
            "validity": self.validity.to_dict(),
            "audit": self.audit.to_dict(),
            "sentence": self.sentence,
            "gate_line": self.gate_line,
        }


@dataclass(frozen=True, slots=True)
class Scorecard:
    """The rows of every comparison shown, in the order given, and their confidence level."""

    rows: tuple[ScorecardRow, ...]
    level: str = "95%"
    """The intervals' level, as text (``95%``)."""

    @property
    def columns(self) -> tuple[Column, ...]:
        """The scorecard's columns, in the order every renderer shows them."""
        return (
            Column("suite", numeric=False),
            Column("baseline", numeric=False),
            Column("candidate", numeric=False),
            Column(f"difference ({self.level} CI)"),
            Column("gate", numeric=False),
            Column("validity", numeric=False),
            Column("audit", numeric=False),
        )

    def table(self) -> TableView:
        """The scorecard as plain cells (a badge is its label), for Markdown and text."""
        return TableView(
            "scorecard",
            self.columns,
            tuple(
                (
                    r.suite,
                    r.baseline.label,
                    r.candidate.label,
                    r.difference_text,
                    r.gate.label,
                    r.validity.label,
                    r.audit.label,
                )
                for r in self.rows
            ),
        )

    def to_dict(self) -> JsonObject:
        """``{"level", "columns", "rows"}``: ``report.json``'s ``scorecard``."""
        return {
            "level": self.level,
            "columns": [c.name for c in self.columns],
            "rows": [r.to_dict() for r in self.rows],
        }


# ----------------------------------------------------------------------------- the adapter


@dataclass(frozen=True, slots=True)
class _Run:
    run_id: str
    model: str | None
    valid: bool = True
    unfinished: str | None = None  # "running" or "interrupted"
    partial: bool = False
    audit_state: str | None = None
    audit_detail: str = ""


@dataclass(frozen=True, slots=True)
class _Comparison:
    """What the scorecard reads of one comparison result."""

    baseline: _Run
    candidate: _Run
    suite: str = NA
    level: float = 0.95
    diff: float | None = None
    ci: tuple[float, float] | None = None
    basis: str = "overall"
    gate_status: str | None = None
    gate_margin: float | None = None
    weighted_gate_status: str | None = None
    headline: str = ""
    gate_line: str | None = None
    skipped: str | None = None


def _finite(value: Any) -> float | None:
    return float(value) if is_number(value) else None


def _interval(value: Any) -> tuple[float, float] | None:
    if isinstance(value, Sequence) and len(value) == 2 and all(is_number(v) for v in value):
        return (float(value[0]), float(value[1]))
    return None


def _read_comparison(payload: Mapping[str, Any]) -> _Comparison:
    """The scorecard's fields of one comparison payload: the ONLY reader of a payload here.

    `payload` is a comparison view's ``to_dict`` (with ``headline`` and ``gate_line``; a
    typed `ComparisonResult` is turned into one by `scorecard`), or a report's entry for a
    pair it did not compare (``{"baseline", "candidate", "skipped"}``).
    """
    if "skipped" in payload:
        base, cand = str(payload["baseline"]), str(payload["candidate"])
        return _Comparison(
            baseline=_Run(base, None),
            candidate=_Run(cand, None),
            headline=f"{cand} vs {base}: not compared ({payload['skipped']})",
            skipped=str(payload["skipped"]),
        )
    if "headline" not in payload:
        raise TypeError(
            "a scorecard reads a comparison's view (`comparison_view(result).to_dict()`) or "
            "its typed `ComparisonResult`, not the bare payload: the view words its sentences"
        )
    headline, gate_line = str(payload["headline"]), payload.get("gate_line")
    audit = payload.get("audit") or {}

    def run(role: str) -> _Run:
        facts = payload["runs"][role]
        audit_role = audit.get(role) or {}
        return _Run(
            run_id=str(facts["run_id"]),
            model=facts.get("model") or None,
            valid=bool(facts.get("valid", True)),
            unfinished=str(facts["status"]) if is_unfinished(facts) else None,
            partial=bool(facts.get("partial")),
            audit_state=audit_role.get("status"),
            audit_detail=str(audit_role.get("detail") or ""),
        )

    weighted = payload.get("weighted") or {}
    diff, ci, basis = payload.get("diff"), payload.get("ci"), "overall"
    if weighted and weighted.get("weights"):
        basis = "unweighted"
        if is_number(weighted.get("diff")):
            diff, ci, basis = weighted["diff"], weighted.get("ci"), "deployment-weighted"
    gate = payload.get("gate") or {}
    weighted_gate = weighted.get("gate") or {}
    candidate = payload["runs"]["candidate"]
    return _Comparison(
        baseline=run("baseline"),
        candidate=run("candidate"),
        suite=suite_ref(candidate.get("suite"), candidate.get("version"), candidate.get("split")),
        level=float(payload.get("level", 0.95)),
        diff=_finite(diff),
        ci=_interval(ci),
        basis=basis,
        gate_status=gate.get("status") if gate else None,
        gate_margin=_finite(gate.get("margin")) if gate else None,
        weighted_gate_status=weighted_gate.get("status") if weighted_gate else None,
        headline=headline,
        gate_line=str(gate_line) if gate_line else None,
    )


# ----------------------------------------------------------------------------- the rows


def _labels(comparisons: Sequence[_Comparison]) -> dict[tuple[str, str], str]:
    """(suite, run id) -> the name shown: the model where unique among that suite's runs."""
    runs: dict[str, dict[str, str | None]] = {}
    for c in comparisons:
        for r in (c.baseline, c.candidate):
            runs.setdefault(c.suite, {})[r.run_id] = r.model
    labels: dict[tuple[str, str], str] = {}
    for suite, models in runs.items():
        counts: dict[str, int] = {}
        for model in models.values():
            if model:
                counts[model] = counts.get(model, 0) + 1
        for run_id, model in models.items():
            unique = bool(model) and counts.get(model or "", 0) == 1
            labels[(suite, run_id)] = model if unique and model else run_id
    return labels


def _gate_badge(c: _Comparison) -> Badge:
    if c.skipped is not None:
        return Badge(NA, "neutral", "not compared")
    if c.gate_status is None:
        return Badge(
            "no gate",
            "neutral",
            "none asked (`compare --gate noninferior --margin D` records one)",
        )
    tone = _GATE_TONES.get(c.gate_status, "warn")
    margin = f"{c.gate_margin:g}" if c.gate_margin is not None else NA
    detail = f"non-inferiority gate, margin {margin}"
    label = c.gate_status
    weighted = c.weighted_gate_status
    if weighted and weighted != c.gate_status:
        label = f"{c.gate_status} · weighted {weighted}"
        wtone = _GATE_TONES.get(weighted, "warn")
        tone = wtone if _TONE_RANK[wtone] > _TONE_RANK[tone] else tone
    return Badge(label, tone, detail)


def _validity_badge(c: _Comparison) -> Badge:
    if c.skipped is not None:
        return Badge(NA, "neutral", "not compared")
    roles = (("baseline", c.baseline), ("candidate", c.candidate))
    problems: list[tuple[str, Tone, str]] = []  # (label, tone, detail)
    unfinished = [f"{role} {r.unfinished}" for role, r in roles if r.unfinished]
    invalid = [role for role, r in roles if not r.valid and not r.unfinished]
    partial = [role for role, r in roles if r.partial]
    if invalid:
        problems.append(("INVALID", "bad", f"too many harness errors: {', '.join(invalid)}"))
    if unfinished:
        problems.append(("NOT COMPLETE", "warn", ", ".join(unfinished)))
    if partial:
        problems.append(("PARTIAL", "warn", f"run on a subset of items: {', '.join(partial)}"))
    if not problems:
        return Badge("valid", "good", "both runs valid and complete")
    tone = max((t for _, t, _ in problems), key=lambda t: _TONE_RANK[t])
    return Badge(
        ", ".join(label for label, _, _ in problems),
        tone,
        "; ".join(detail for _, _, detail in problems),
    )


def _audit_badge(c: _Comparison) -> Badge:
    if c.skipped is not None:
        return Badge(NA, "neutral", "not compared")
    roles = (("baseline", c.baseline), ("candidate", c.candidate))
    states = [_AUDIT_BADGES.get(r.audit_state or "", ("UNAUDITED", "warn")) for _, r in roles]
    details = [r.audit_detail for _, r in roles]
    both = "; ".join(f"{role}: {d}" for (role, _), d in zip(roles, details, strict=True) if d)
    if states[0] == states[1]:  # one suite version, or two in the same state
        label, tone = states[1]
        return Badge(label, tone, details[1] if details[0] == details[1] else both)
    tone = max((t for _, t in states), key=lambda t: _TONE_RANK[t])
    return Badge(f"baseline {states[0][0]} · candidate {states[1][0]}", tone, both)


def scorecard(comparisons: Iterable[Mapping[str, Any] | ComparisonResult]) -> Scorecard:
    """The scorecard of `comparisons` (comparison payloads, in the order they are shown).

    Runs are named by model where the model name is unique among the runs of the same suite
    in the scorecard (the suite column tells the suites apart), else by run id: two runs of
    one model on one suite (run-to-run noise, a rerun) are told apart by their ids.
    """
    read = [
        _read_comparison(c if isinstance(c, Mapping) else comparison_view(c).to_dict())
        for c in comparisons
    ]
    labels = _labels(read)
    rows = []
    for c in read:
        if c.skipped is not None:
            difference, interval = "not compared", NA
        else:
            difference, interval = fmt_signed(c.diff), fmt_ci(c.ci, signed=True)
        rows.append(
            ScorecardRow(
                suite=c.suite,
                baseline=ScorecardRun(
                    c.baseline.run_id, c.baseline.model, labels[(c.suite, c.baseline.run_id)]
                ),
                candidate=ScorecardRun(
                    c.candidate.run_id, c.candidate.model, labels[(c.suite, c.candidate.run_id)]
                ),
                difference=difference,
                interval=interval,
                basis=c.basis,
                gate=_gate_badge(c),
                validity=_validity_badge(c),
                audit=_audit_badge(c),
                sentence=c.headline,
                gate_line=c.gate_line,
            )
        )
    level = next((f"{c.level:.0%}" for c in read if c.skipped is None), "95%")
    return Scorecard(rows=tuple(rows), level=level)
