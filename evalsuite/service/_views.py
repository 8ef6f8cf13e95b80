"""One view model per result, rendered by the CLI (rich), Markdown, HTML and JSON alike.

A view holds what a reader sees, already worded: the headline sentence, the alerts that must
come first (invalid, partial, unaudited), the gate line, tables of formatted cells, further
facts, and the caveats (deduplicated, shown once at the end). Renderers only lay it out, so
a new statistic is one row or column here and appears in every output. The JSON payload (the
``--json`` contract) travels with the view and gains ``headline``, ``gate_line`` and
``caveats``. See docs/design/result-model.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalsuite._core.jsonout import JsonObject
from evalsuite.service._adaptive import anytime_phrase, level_text, versus_phrase
from evalsuite.service._format import (
    fmt,
    fmt_ci,
    fmt_counts,
    fmt_p,
    fmt_pct,
    fmt_signed,
    is_number,
)
from evalsuite.service._results import NO_WEIGHTS, AuditInfo, RunFacts

if TYPE_CHECKING:  # the use cases load the analyses; the views only read their results
    from evalsuite.analyse import Estimate, GateResult
    from evalsuite.service._compare import ComparisonResult
    from evalsuite.service._score import ScoreResult

__all__ = ["Column", "ResultView", "TableView", "comparison_view", "run_label", "score_view"]


@dataclass(frozen=True, slots=True)
class Column:
    """A table column; a column that is not `essential` is shown only with ``--wide``."""

    name: str
    essential: bool = True
    numeric: bool = True


@dataclass(frozen=True, slots=True)
class TableView:
    """A titled table of formatted cells (every cell a string, ``n/a`` when undefined)."""

    title: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[str, ...], ...]

    def narrow(self) -> TableView:
        """The essential columns only (what fits a 100-column terminal)."""
        keep = [i for i, c in enumerate(self.columns) if c.essential]
        return TableView(
            self.title,
            tuple(self.columns[i] for i in keep),
            tuple(tuple(row[i] for i in keep) for row in self.rows),
        )

    def to_dict(self) -> JsonObject:
        """``{"title", "columns", "rows"}``."""
        return {
            "title": self.title,
            "columns": [c.name for c in self.columns],
            "rows": [list(r) for r in self.rows],
        }


@dataclass(frozen=True, slots=True)
class ResultView:
    """What every renderer shows of one result, in reading order.

    Attributes:
        kind: ``score``, ``comparison``, ``validity``, ``audit`` or ``guard``.
        title: one line naming the result (models, runs, suite).
        headline: the answer, one sentence with model names.
        alerts: what must be read before any number (invalid, partial, unaudited).
        gate_line: the non-inferiority gate's result, or None when no gate was asked.
        tables: the numbers.
        facts: further lines (MDE with its assumption, pass@k, reliability, health).
        caveats: notes, deduplicated, shown once after everything else.
        payload: the JSON payload (every ``--json`` field) this view was built from.
    """

    kind: str
    title: str
    headline: str
    alerts: tuple[str, ...]
    gate_line: str | None
    tables: tuple[TableView, ...]
    facts: tuple[str, ...]
    caveats: tuple[str, ...]
    payload: JsonObject = field(repr=False)

    def to_dict(self) -> JsonObject:
        """The ``--json`` payload with the view's sentences added (no field renamed).

        ``gate_line`` is a field of the results that can carry a gate (score, comparison).
        """
        gate = {"gate_line": self.gate_line} if self.kind in ("score", "comparison") else {}
        return self.payload | {"headline": self.headline, **gate, "caveats": list(self.caveats)}


def dedupe(lines: Iterable[str]) -> tuple[str, ...]:
    """`lines` in first-seen order without repeats or blanks."""
    seen: dict[str, None] = {}
    for line in lines:
        text = str(line).strip()
        if text:
            seen.setdefault(text, None)
    return tuple(seen)


def run_label(run: RunFacts | Mapping[str, Any]) -> str:
    """``model (run id)``: how every output names a run."""
    if isinstance(run, RunFacts):
        model, run_id = run.model or "unknown model", run.run_id
    else:
        model, run_id = run.get("model") or "unknown model", run["run_id"]
    return model if model == run_id else f"{model} (run {run_id})"


def suite_ref(suite: str | None, version: str | None, split: str | None) -> str:
    """``suite@version split``: how every view names what a run ran.

    A run ingested without a suite is ``ingested runs (no manifest)``.
    """
    if not suite:
        return "ingested runs (no manifest)"
    return f"{suite}@{version} {split or ''}".rstrip()


def _suite_ref(run: RunFacts) -> str:
    return suite_ref(run.suite, run.version, run.split)


def _audit_phrase(audits: Sequence[AuditInfo]) -> str:
    """``suite audit passed`` or the markers of the suite versions that did not pass."""
    markers = sorted({a.marker for a in audits if a.marker})
    if markers:
        return "suite audit: " + "; ".join(markers)
    return "suite audit passed"


def is_unfinished(run: RunFacts | Mapping[str, Any]) -> bool:
    """A run (its `RunFacts`, or their JSON) still running or interrupted: not judged yet.

    Such a run is "not complete", never "invalid": its planned attempts not yet run count as
    harness errors, so its validity says nothing until it finishes (docs/design/outcomes.md).
    """
    if isinstance(run, RunFacts):
        return run.unfinished
    return run.get("status", "complete") in ("running", "interrupted")


def _state_phrase(runs: Sequence[RunFacts]) -> str:
    unfinished = [f"{run_label(r)} ({r.status})" for r in runs if r.unfinished]
    invalid = [run_label(r) for r in runs if not r.valid and not r.unfinished]
    partial = [run_label(r) for r in runs if r.partial]
    parts = []
    if unfinished:
        parts.append("NOT COMPLETE: " + ", ".join(unfinished))
    if invalid:
        parts.append("INVALID: " + ", ".join(invalid))
    if partial:
        parts.append("PARTIAL: " + ", ".join(partial))
    if parts:
        return "; ".join(parts)
    return "both runs valid and complete" if len(runs) == 2 else "run valid and complete"


def _alerts(runs: Sequence[RunFacts], audits: Sequence[AuditInfo]) -> list[str]:
    out = []
    for run, audit in zip(runs, audits, strict=True):
        if audit.marker:
            out.append(f"{audit.marker}: {run_label(run)}: {audit.detail or 'n/a'}")
    for run in runs:
        c = run.completeness
        if c.partial:
            of = f" of {c.n_items_split}" if c.n_items_split is not None else ""
            limit = f" (--limit {c.item_limit})" if c.item_limit else ""
            split = f" {run.split}" if run.split else ""
            out.append(
                f"PARTIAL RUN: {c.n_items_run}{of}{split} items were run"
                f"{limit} by {run_label(run)}; its numbers describe those items, not the suite"
            )
    for run in runs:
        if run.unfinished:
            still = "was interrupted" if run.status == "interrupted" else "is still running"
            out.append(
                f"RUN NOT COMPLETE: {run_label(run)} {still}; its numbers describe the attempts "
                "stored so far, and its attempts not yet run count as harness errors"
            )
        elif not run.valid:
            out.append(
                f"INVALID RUN {run_label(run)}: too many harness errors; its numbers measure "
                "the harness, not the model"
            )
    return out


def _not_marked(notes: Iterable[str], audits: Sequence[AuditInfo]) -> list[str]:
    """`notes` without the audit notes (the alerts already say which suite is not audited)."""
    markers = tuple(str(a.marker) for a in audits if a.marker)
    return [n for n in notes if not (markers and str(n).startswith(markers))]


# ----------------------------------------------------------------------------- comparison


def _direction(cand: str, base: str, diff: Any, p: Any, alpha: float, mde: Any) -> tuple[str, str]:
    """(subject phrase, verb phrase) of the verdict on one difference."""
    if not is_number(diff):
        return f"{cand} and {base}", "cannot be compared"
    if is_number(p) and p < alpha:
        word = "better" if diff > 0 else "worse"
        return f"{cand}", f"is {word} than {base}"
    return (
        f"{cand}",
        f"is not detectably different from {base} (the smallest difference this comparison "
        f"detects with power 0.8 is {fmt(mde)})",
    )


def _gate_line(gate: GateResult | None, source: str | None, wgate: GateResult | None) -> str | None:
    if gate is None:
        return None
    asked = f", {source}" if source else ""
    line = (
        f"non-inferiority gate (margin {gate.margin:g}, one-sided "
        f"{1 - gate.alpha:.0%}{asked}): {gate.status}: lower bound of the unweighted "
        f"difference {fmt_signed(gate.lower_bound)} "
        + ("is above" if gate.passed else "is not above")
        + f" −{gate.margin:g}"
        + _bounded(gate)
    )
    if wgate is not None:
        line += (
            f"; deployment-weighted: {wgate.status} (lower bound "
            f"{fmt_signed(wgate.lower_bound)}{_bounded(wgate)})"
        )
    return line


def _planned_epochs(r: ScoreResult) -> str:
    """``3 epoch(s)``, with the usable ones when fewer were stored (an unfinished run).

    An adaptive run has no fixed epochs: ``adaptive, 2 round(s)``.
    """
    if r.adaptive:
        rounds: Any = r.adaptive.get("rounds") or []
        return f"adaptive, {len(rounds)} round(s)"
    text = f"{r.run.epochs} epoch(s)"
    usable = r.estimates.epochs_usable
    if is_number(usable) and usable < r.run.epochs:
        text += f" planned, at most {usable} usable per item"
    return text


def _k_epochs(k0: Any, r: ScoreResult) -> str:
    """The K of the reliability's K-epoch mean: its own ANOVA K0.

    That is the usable epochs per item, averaged; never the planned epochs of a run that
    stored fewer.
    """
    if is_number(k0):
        return f"{float(k0):.3g}"
    return str(r.estimates.epochs_usable or r.run.epochs)


def _anytime_cell(block: Mapping[str, Any] | None) -> str:
    """An adaptive run's anytime-valid score interval, for the compare runs table."""
    if not block:
        return "–"
    return (
        f"{fmt(block.get('estimate'))}, {block.get('interval') or 'anytime-valid'} "
        f"{fmt_ci(block.get('ci'))} "
        f"({level_text(block.get('level'))}, {block.get('method')})"
    )


def _bounded(gate: GateResult) -> str:
    """`` (the t's lower bound −1.414, bounded to [−1, 1] ...)`` when it was bounded."""
    low = gate.unclipped_bounds[0]
    if not (gate.clipped and is_number(low) and low < -1.0):
        return ""
    return (
        f" (the t's lower bound {fmt_signed(low)}, bounded to [-1, 1], the range of a difference)"
    )


def comparison_view(result: ComparisonResult) -> ResultView:
    """The view of a `ComparisonResult` (what ``compare`` shows, in every renderer)."""
    c = result.comparison
    t = c.test
    runs = list(result.runs)
    base, cand = (run_label(r) for r in runs)
    audits = list(result.audits)
    level = f"{result.level:.0%}"
    alpha = float(result.options.alpha)
    weighted = result.weighted
    use_weighted = weighted is not None and bool(weighted.weights)
    if weighted is not None and use_weighted and is_number(weighted.diff):
        subject, verb = _direction(cand, base, weighted.diff, weighted.p_value, alpha, weighted.mde)
        by = (
            f"deployment-weighted difference {fmt_signed(weighted.diff)} ({level} CI "
            f"{fmt_ci(weighted.ci, signed=True)}, p {fmt_p(weighted.p_value)}), "
            f"unweighted {fmt_signed(t.diff)} ({fmt_ci(t.ci, signed=True)})"
        )
    else:
        subject, verb = _direction(cand, base, t.diff, t.p_value, alpha, t.mde)
        by = (
            f"difference {fmt_signed(t.diff)} ({level} CI {fmt_ci(t.ci, signed=True)}, "
            f"p {fmt_p(t.p_value)})"
        )
        if use_weighted:  # the suite has weights, but their comparison is undefined
            by += f", deployment-weighted n/a ({(weighted and weighted.reason) or 'undefined'})"
    gate = c.gate
    gate_phrase = f"; non-inferiority gate (margin {gate.margin:g}) {gate.status}" if gate else ""
    common = result.common
    paired = (
        f"{t.n_items} paired items common to versions {common.versions[0]} "
        f"and {common.versions[1]} (common items only)"
        if common.cross_version
        else f"{t.n_items} paired items"
    )
    adaptive = result.adaptive
    base_block, cand_block = adaptive if adaptive is not None else (None, None)
    if adaptive is not None:  # a paired t of an adaptive run's attempts is a fixed-sample test
        by = "fixed-sample paired t (not valid under the adaptive stopping rule): " + by
    versus = versus_phrase(cand_block, result.baseline)
    headline = (
        f"On {_suite_ref(runs[1])}, {subject} {verb}: {by} over {paired}"
        f"{gate_phrase}; {_state_phrase(runs)}; {_audit_phrase(audits)}."
    )
    if versus:  # the candidate's own anytime-valid verdict against this baseline leads
        headline = (
            f"On {_suite_ref(runs[1])}, {cand} vs {base}, the candidate's {versus}; "
            f"secondary, {by} over {paired}{gate_phrase}; {_state_phrase(runs)}; "
            f"{_audit_phrase(audits)}."
        )
    columns = (
        Column("comparison", numeric=False),
        Column("diff"),
        Column("se", essential=False),
        Column(f"{level} CI"),
        Column("p"),
        Column("p (Holm)"),
        Column("MDE", essential=False),
        Column("items"),
    )
    rows: list[tuple[str, ...]] = []
    if weighted is not None and use_weighted:
        rows.append(
            (
                "deployment-weighted",
                fmt_signed(weighted.diff),
                fmt(weighted.se),
                fmt_ci(weighted.ci, signed=True),
                fmt_p(weighted.p_value),
                "–",
                fmt(weighted.mde),
                str(weighted.n_items),
            )
        )
    rows.append(
        (
            "unweighted" if use_weighted else "overall",
            fmt_signed(t.diff),
            fmt(t.se),
            fmt_ci(t.ci, signed=True),
            fmt_p(t.p_value),
            "–",
            fmt(t.mde),
            str(t.n_items),
        )
    )
    rows += [
        (
            f"  {s.stratum}",
            fmt_signed(s.test.diff),
            fmt(s.test.se),
            fmt_ci(s.test.ci, signed=True),
            fmt_p(s.test.p_value),
            fmt_p(s.p_holm),
            fmt(s.test.mde),
            str(s.test.n_items),
        )
        for s in c.strata
    ]
    means = TableView(
        "runs: score on the common items of both versions" if common.cross_version else "runs",
        (
            Column("run", numeric=False),
            Column("role", numeric=False, essential=False),
            Column("mean"),
            Column("diff"),
            *((Column("adaptive run's own interval", numeric=False),) if adaptive else ()),
        ),
        (
            (base, "baseline", fmt(c.baseline_mean), "–", _anytime_cell(base_block)),
            (
                cand,
                "candidate",
                fmt(c.candidate_mean),
                fmt_signed(t.diff),
                _anytime_cell(cand_block),
            ),
        )
        if adaptive
        else (
            (base, "baseline", fmt(c.baseline_mean), "–"),
            (cand, "candidate", fmt(c.candidate_mean), fmt_signed(t.diff)),
        ),
    )
    facts = [
        "MDE: "
        + (
            (c.mde_detail.to_dict().get("description") if c.mde_detail is not None else None)
            or "n/a (no standard error)"
        )
        + ".",
        f"sign-flip permutation p {fmt_p(c.p_value_permutation)}"
        + (
            f"; McNemar mid-p {fmt_p(c.p_value_mcnemar_midp)}"
            if is_number(c.p_value_mcnemar_midp)
            else ""
        ),
    ]
    if weighted is not None and use_weighted:
        facts.append(
            "deployment-weighted MDE: the same power-0.8 two-sided paired t at α = "
            f"{alpha:g}, on Satterthwaite's {fmt(weighted.df, 1)} df, with the suite's "
            f"deployment weights ({len(weighted.weights)} strata)"
            + (
                ", every stratum's variance taken under the alternative (baseline ± δ)"
                if weighted.mde_variance == "alternative"
                else f", at the weighted SE ({weighted.mde_note})"
            )
        )
    if c.n_unpaired_baseline or c.n_unpaired_candidate:
        facts.append(
            f"unpaired items: {c.n_unpaired_baseline} baseline, "
            f"{c.n_unpaired_candidate} candidate (dropped from both)"
        )
    caveats = _not_marked(result.notes, audits)
    reason = weighted.reason if weighted is not None else result.weighted_reason
    if reason and reason != NO_WEIGHTS:  # a suite without weights needs no such line
        caveats.append(f"deployment-weighted comparison n/a: {reason}")
    if weighted is not None and weighted.unclipped_ci is not None:
        caveats.append(
            f"the deployment-weighted t interval {fmt_ci(weighted.unclipped_ci, signed=True)} "
            "reaches beyond [-1, 1], the range of a difference of two scores in [0, 1]; it is "
            f"shown bounded to it {fmt_ci(weighted.ci, signed=True)}, which keeps its "
            "coverage"
        )
    return ResultView(
        kind="comparison",
        title=f"{cand} vs {base} · {_suite_ref(runs[1])}",
        headline=headline,
        alerts=dedupe(_alerts(runs, audits)),
        gate_line=_gate_line(gate, result.gate_source, weighted.gate if weighted else None),
        tables=(
            TableView("paired difference (candidate − baseline)", columns, tuple(rows)),
            means,
        ),
        facts=tuple(facts),
        caveats=dedupe(caveats),
        payload=result.to_dict(),
    )


# ----------------------------------------------------------------------------- one run


def _estimate_row(name: str, e: Estimate) -> tuple[str, ...]:
    return (name, fmt(e.mean), fmt(e.se), fmt_ci(e.ci), str(e.n_items), str(e.method or "n/a"))


def _estimate_rows(r: ScoreResult) -> list[tuple[str, ...]]:
    adaptive: Mapping[str, Any] | None = r.adaptive
    fixed = " (fixed-sample)" if adaptive else ""
    rows = [_estimate_row(("unweighted" if r.weights else "overall") + fixed, r.overall)]
    if r.weights:
        rows.insert(0, _estimate_row("deployment-weighted" + fixed, r.weighted))
    if adaptive:  # the interval valid under the run's stopping rule comes first
        at = "" if adaptive.get("level") == r.level else f", {level_text(adaptive['level'])}"
        rows.insert(
            0,
            (
                f"adaptive ({adaptive.get('interval') or 'anytime-valid'}{at})",
                fmt(adaptive.get("estimate")),
                "–",
                fmt_ci(adaptive.get("ci")),
                str(r.overall.n_items),
                str(adaptive.get("method")),
            ),
        )
    return rows


def score_view(result: ScoreResult) -> ResultView:
    """The view of a `ScoreResult` (what ``score`` shows, in every renderer)."""
    run = result.run
    label = run_label(run)
    level = f"{result.level:.0%}"
    audit = result.audit
    weighted = bool(result.weights)
    main = result.weighted if weighted else result.overall
    headline = (
        f"{label} scores {fmt(main.mean)}"
        + (" deployment-weighted" if weighted else "")
        + f" on {_suite_ref(run)} ({level} CI {fmt_ci(main.ci)}, {main.n_items} items"
        + (f"; unweighted {fmt(result.overall.mean)}" if weighted else "")
        + f"); {_state_phrase([run])}; {_audit_phrase([audit])}."
    )
    adaptive: Mapping[str, Any] | None = result.adaptive
    if adaptive:  # the interval it stopped on first; the fixed-sample one secondary
        headline = (
            f"{label} scores {fmt(adaptive.get('estimate'))} on {_suite_ref(run)}, adaptive "
            f"run ({anytime_phrase(adaptive)}, valid under the run's stopping rule; "
            f"{adaptive.get('calls')} attempts over {main.n_items} items); fixed-sample "
            f"{level} CI {fmt_ci(main.ci)} of the item means {fmt(main.mean)} "
            f"({main.method}), not valid under the run's stopping rule; "
            f"{_state_phrase([run])}; {_audit_phrase([audit])}."
        )
    est = TableView(
        "estimates",
        (
            Column("estimate", numeric=False),
            Column("mean"),
            Column("se", essential=False),
            Column(f"{level} CI"),
            Column("items"),
            Column("method", numeric=False, essential=False),
        ),
        tuple(_estimate_rows(result)),
    )
    strata_cols = [Column("stratum", numeric=False)]
    if weighted:
        strata_cols.append(Column("weight"))
    strata_cols += [
        Column("mean"),
        Column("se", essential=False),
        Column(f"{level} CI"),
        Column("items"),
        Column("method", numeric=False, essential=False),
    ]
    strata = TableView(
        "strata",
        tuple(strata_cols),
        tuple(
            (
                s.stratum,
                *([fmt(s.weight, 2)] if weighted else []),
                fmt(s.estimate.mean),
                fmt(s.estimate.se),
                fmt_ci(s.estimate.ci),
                str(s.estimate.n_items),
                str(s.estimate.method or "n/a"),
            )
            for s in result.estimates.strata
        ),
    )
    tables = [est, strata]
    if result.secondary:
        tables.append(
            TableView(
                "secondary metrics",
                (
                    Column("metric", numeric=False),
                    Column("mean"),
                    Column("se", essential=False),
                    Column(f"{level} CI"),
                    Column("items"),
                    Column("without a value", essential=False),
                ),
                tuple(
                    (
                        s.name,
                        fmt(s.estimate.mean),
                        fmt(s.estimate.se),
                        fmt_ci(s.estimate.ci),
                        str(s.estimate.n_items),
                        str(s.n_missing),
                    )
                    for s in result.secondary
                ),
            )
        )
    h = result.harness
    facts = [
        f"harness: {h.planned} planned, {h.scored} scored, {h.limits} limit(s) "
        f"({fmt_counts(h.limits_by_type)}), {h.harness_errors} harness error(s) "
        f"({fmt_pct(h.error_rate)}; {fmt_counts(h.errors_by_kind)}), excluded from "
        "the score"
    ]
    if h.top_errors:
        facts.append("top harness error reasons:")
    for g in h.top_errors or []:
        example = (
            f" (e.g. item {g.example_item}, epoch {g.example_epoch})" if g.example_item else ""
        )
        facts.append(f"  {g.count} × {g.message}{example}; what to do: {g.advice}")
    pass_k = result.estimates.pass_k
    if pass_k:
        facts += [
            "pass@k: " + "  ".join(f"k={p.k} {fmt(p.pass_at_k.mean)}" for p in pass_k),
            "pass^k: " + "  ".join(f"k={p.k} {fmt(p.pass_hat_k.mean)}" for p in pass_k),
            "items:  " + "  ".join(f"k={p.k} {fmt(p.pass_hat_k.n_items)}" for p in pass_k),
        ]
    rel = result.estimates.reliability
    why = f" ({rel.reason})" if rel.reason else ""
    facts.append(
        f"reliability: flip rate {fmt(rel.flip_rate)}, ICC(1) {fmt(rel.icc1)}, "
        f"reliability of the {_k_epochs(rel.epochs, result)}-epoch mean {fmt(rel.icc1k)}, "
        f"run-to-run noise floor {fmt(rel.noise_floor)} (sd), suggested epochs "
        + (
            str(rel.k_recommended)
            if rel.k_recommended is not None
            else f"n/a{why or ' (not estimable)'}"
        )
    )
    assumption: Any = rel.to_dict().get("mde_assumption") or {}
    facts.append(
        f"pilot MDE {fmt(rel.mde)}: "
        + (assumption.get("description") or f"n/a{why or ' (not estimable)'}")
    )
    return ResultView(
        kind="score",
        title=f"{label} · {_suite_ref(run)} · {_planned_epochs(result)}",
        headline=headline,
        alerts=dedupe(_alerts([run], [audit])),
        gate_line=None,
        tables=tuple(tables),
        facts=tuple(facts),
        caveats=dedupe(_not_marked(result.notes, [audit])),
        payload=result.to_dict(),
    )
