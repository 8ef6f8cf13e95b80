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
from typing import Any

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

NO_WEIGHTS = "the suite declares no deployment weights"

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

    def to_dict(self) -> dict[str, Any]:
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
    payload: dict[str, Any] = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
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


def run_label(run: Mapping[str, Any]) -> str:
    """``model (run id)``: how every output names a run."""
    model = run.get("model") or "unknown model"
    return model if model == run["run_id"] else f"{model} (run {run['run_id']})"


def _suite_ref(run: Mapping[str, Any]) -> str:
    if not run.get("suite"):
        return "ingested runs (no manifest)"
    return f"{run['suite']}@{run['version']} {run.get('split') or ''}".rstrip()


def _has_weights(weighted: Mapping[str, Any] | None) -> bool:
    return bool(weighted) and bool((weighted or {}).get("weights"))


def _audit_phrase(audits: Sequence[Mapping[str, Any]]) -> str:
    """``suite audit passed`` or the markers of the suite versions that did not pass."""
    markers = sorted({str(a["marker"]) for a in audits if a and a.get("marker")})
    if markers:
        return "suite audit: " + "; ".join(markers)
    return "suite audit passed"


def is_unfinished(run: Mapping[str, Any]) -> bool:
    """A run (its `run_facts`) still running or interrupted: its health is not judged yet.

    Such a run is "not complete", never "invalid": its planned attempts not yet run count as
    harness errors, so its validity says nothing until it finishes (docs/design/outcomes.md).
    """
    return run.get("status", "complete") in ("running", "interrupted")


def _state_phrase(runs: Sequence[Mapping[str, Any]]) -> str:
    unfinished = [f"{run_label(r)} ({r['status']})" for r in runs if is_unfinished(r)]
    invalid = [run_label(r) for r in runs if not r.get("valid", True) and not is_unfinished(r)]
    partial = [run_label(r) for r in runs if r.get("partial")]
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


def _alerts(runs: Sequence[Mapping[str, Any]], audits: Sequence[Mapping[str, Any]]) -> list[str]:
    out = []
    for run, audit in zip(runs, audits, strict=True):
        if audit and audit.get("marker"):
            out.append(f"{audit['marker']}: {run_label(run)}: {audit.get('detail') or 'n/a'}")
    for run in runs:
        if run.get("partial"):
            of = f" of {run['n_items_split']}" if run.get("n_items_split") is not None else ""
            limit = f" (--limit {run['item_limit']})" if run.get("item_limit") else ""
            split = f" {run['split']}" if run.get("split") else ""
            out.append(
                f"PARTIAL RUN: {run.get('n_items_run', 'n/a')}{of}{split} items were run"
                f"{limit} by {run_label(run)}; its numbers describe those items, not the suite"
            )
    for run in runs:
        if is_unfinished(run):
            still = "was interrupted" if run["status"] == "interrupted" else "is still running"
            out.append(
                f"RUN NOT COMPLETE: {run_label(run)} {still}; its numbers describe the attempts "
                "stored so far, and its attempts not yet run count as harness errors"
            )
        elif not run.get("valid", True):
            out.append(
                f"INVALID RUN {run_label(run)}: too many harness errors; its numbers measure "
                "the harness, not the model"
            )
    return out


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


def _gate_line(gate: Mapping[str, Any] | None, weighted: Mapping[str, Any] | None) -> str | None:
    if not gate:
        return None
    source = gate.get("source")
    asked = f", {source}" if source else ""
    line = (
        f"non-inferiority gate (margin {gate['margin']:g}, one-sided "
        f"{1 - gate['alpha']:.0%}{asked}): {gate['status']}: lower bound of the unweighted "
        f"difference {fmt_signed(gate['lower_bound'])} "
        + ("is above" if gate["passed"] else "is not above")
        + f" −{gate['margin']:g}"
        + _bounded(gate)
    )
    wgate = (weighted or {}).get("gate")
    if wgate:
        line += (
            f"; deployment-weighted: {wgate['status']} (lower bound "
            f"{fmt_signed(wgate['lower_bound'])}{_bounded(wgate)})"
        )
    return line


def _planned_epochs(p: Mapping[str, Any]) -> str:
    """``3 epoch(s)``, with the usable ones when fewer were stored (an unfinished run).

    An adaptive run has no fixed epochs: ``adaptive, 2 round(s)``.
    """
    adaptive = p.get("adaptive")
    if adaptive:
        return f"adaptive, {len(adaptive.get('rounds') or [])} round(s)"
    text = f"{p['epochs']} epoch(s)"
    usable = p.get("epochs_usable")
    if is_number(usable) and usable < p["epochs"]:
        text += f" planned, at most {usable} usable per item"
    return text


def _k_epochs(k0: Any, p: Mapping[str, Any]) -> str:
    """The K of the reliability's K-epoch mean: its own ANOVA K0.

    That is the usable epochs per item, averaged; never the planned epochs of a run that
    stored fewer.
    """
    if is_number(k0):
        return f"{float(k0):.3g}"
    return str(p.get("epochs_usable") or p["epochs"])


def _anytime_cell(adaptive: Mapping[str, Any], role: str) -> str:
    """An adaptive run's anytime-valid score interval, for the compare runs table."""
    block = adaptive.get(role)
    if not block:
        return "–"
    return (
        f"{fmt(block.get('estimate'))}, anytime-valid {fmt_ci(block.get('ci'))} "
        f"({level_text(block.get('level'))}, {block.get('method')})"
    )


def _bounded(gate: Mapping[str, Any]) -> str:
    """`` (the t's lower bound −1.414, bounded to [−1, 1] ...)`` when it was bounded."""
    low = (gate.get("unclipped_bounds") or [None])[0]
    if not (gate.get("clipped") and is_number(low) and low < -1.0):
        return ""
    return (
        f" (the t's lower bound {fmt_signed(low)}, bounded to [-1, 1], the range of a difference)"
    )


def comparison_view(p: Mapping[str, Any]) -> ResultView:
    """The view of a `compare_payload` (the ``compare --json`` payload)."""
    runs = [p["runs"]["baseline"], p["runs"]["candidate"]]
    base, cand = (run_label(r) for r in runs)
    audits = [(p.get("audit") or {}).get(k) or {} for k in ("baseline", "candidate")]
    level = f"{p['level']:.0%}"
    alpha = float(p["alpha"])
    weighted = p.get("weighted")
    use_weighted = _has_weights(weighted) and weighted is not None
    weighted_defined = use_weighted and is_number((weighted or {}).get("diff"))
    if weighted_defined and weighted is not None:
        subject, verb = _direction(
            cand, base, weighted["diff"], weighted["p_value"], alpha, weighted["mde"]
        )
        by = (
            f"deployment-weighted difference {fmt_signed(weighted['diff'])} ({level} CI "
            f"{fmt_ci(weighted['ci'], signed=True)}, p {fmt_p(weighted['p_value'])}), "
            f"unweighted {fmt_signed(p['diff'])} ({fmt_ci(p['ci'], signed=True)})"
        )
    else:
        subject, verb = _direction(cand, base, p["diff"], p["p_value"], alpha, p["mde"])
        by = (
            f"difference {fmt_signed(p['diff'])} ({level} CI {fmt_ci(p['ci'], signed=True)}, "
            f"p {fmt_p(p['p_value'])})"
        )
        if use_weighted:  # the suite has weights, but their comparison is undefined
            by += f", deployment-weighted n/a ({(weighted or {}).get('reason') or 'undefined'})"
    gate = p.get("gate")
    gate_phrase = (
        f"; non-inferiority gate (margin {gate['margin']:g}) {gate['status']}" if gate else ""
    )
    common = p.get("common_items") or {}
    paired = (
        f"{p['n_items']} paired items common to versions {common['versions']['baseline']} "
        f"and {common['versions']['candidate']} (common items only)"
        if common.get("cross_version")
        else f"{p['n_items']} paired items"
    )
    adaptive = p.get("adaptive") or {}
    if adaptive:  # a paired t of an adaptive run's attempts is a fixed-sample test
        by = "fixed-sample paired t (not valid under the adaptive stopping rule): " + by
    versus = versus_phrase(adaptive.get("candidate"), p["baseline"])
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
    if use_weighted and weighted is not None:
        rows.append(
            (
                "deployment-weighted",
                fmt_signed(weighted["diff"]),
                fmt(weighted["se"]),
                fmt_ci(weighted["ci"], signed=True),
                fmt_p(weighted["p_value"]),
                "–",
                fmt(weighted["mde"]),
                str(weighted["n_items"]),
            )
        )
    rows.append(
        (
            "unweighted" if use_weighted else "overall",
            fmt_signed(p["diff"]),
            fmt(p["se"]),
            fmt_ci(p["ci"], signed=True),
            fmt_p(p["p_value"]),
            "–",
            fmt(p["mde"]),
            str(p["n_items"]),
        )
    )
    rows += [
        (
            f"  {s['stratum']}",
            fmt_signed(s["diff"]),
            fmt(s["se"]),
            fmt_ci(s["ci"], signed=True),
            fmt_p(s["p_value"]),
            fmt_p(s["p_holm"]),
            fmt(s.get("mde")),
            str(s["n_items"]),
        )
        for s in p["strata"]
    ]
    means = TableView(
        "runs: score on the common items of both versions"
        if common.get("cross_version")
        else "runs",
        (
            Column("run", numeric=False),
            Column("role", numeric=False, essential=False),
            Column("mean"),
            Column("diff"),
            *((Column("adaptive run's own interval", numeric=False),) if adaptive else ()),
        ),
        (
            (base, "baseline", fmt(p["baseline_mean"]), "–", _anytime_cell(adaptive, "baseline")),
            (
                cand,
                "candidate",
                fmt(p["candidate_mean"]),
                fmt_signed(p["diff"]),
                _anytime_cell(adaptive, "candidate"),
            ),
        )
        if adaptive
        else (
            (base, "baseline", fmt(p["baseline_mean"]), "–"),
            (cand, "candidate", fmt(p["candidate_mean"]), fmt_signed(p["diff"])),
        ),
    )
    facts = [
        "MDE: "
        + ((p.get("mde_assumption") or {}).get("description") or "n/a (no standard error)")
        + ".",
        f"sign-flip permutation p {fmt_p(p['p_value_permutation'])}"
        + (
            f"; McNemar mid-p {fmt_p(p['p_value_mcnemar_midp'])}"
            if is_number(p.get("p_value_mcnemar_midp"))
            else ""
        ),
    ]
    if use_weighted and weighted is not None:
        facts.append(
            "deployment-weighted MDE: the same power-0.8 two-sided paired t at α = "
            f"{alpha:g}, on Satterthwaite's {fmt(weighted['df'], 1)} df, with the suite's "
            f"deployment weights ({len(weighted['weights'])} strata)"
            + (
                ", every stratum's variance taken under the alternative (baseline ± δ)"
                if weighted.get("mde_variance", "alternative") == "alternative"
                else f", at the weighted SE ({weighted.get('mde_note')})"
            )
        )
    if p["n_unpaired_baseline"] or p["n_unpaired_candidate"]:
        facts.append(
            f"unpaired items: {p['n_unpaired_baseline']} baseline, "
            f"{p['n_unpaired_candidate']} candidate (dropped from both)"
        )
    # the alerts already say which suite is not audited
    markers = tuple(str(a["marker"]) for a in audits if a and a.get("marker"))
    caveats = [n for n in p.get("notes") or [] if not (markers and str(n).startswith(markers))]
    reason = (weighted or {}).get("reason")
    if reason and reason != NO_WEIGHTS:  # a suite without weights needs no such line
        caveats.append(f"deployment-weighted comparison n/a: {reason}")
    bounded = weighted or {}
    if bounded.get("clipped"):
        caveats.append(
            f"the deployment-weighted t interval {fmt_ci(bounded['unclipped_ci'], signed=True)} "
            "reaches beyond [-1, 1], the range of a difference of two scores in [0, 1]; it is "
            f"shown bounded to it {fmt_ci(bounded['ci'], signed=True)}, which keeps its "
            "coverage"
        )
    return ResultView(
        kind="comparison",
        title=f"{cand} vs {base} · {_suite_ref(runs[1])}",
        headline=headline,
        alerts=dedupe(_alerts(runs, audits)),
        gate_line=_gate_line(gate, weighted),
        tables=(
            TableView("paired difference (candidate − baseline)", columns, tuple(rows)),
            means,
        ),
        facts=tuple(facts),
        caveats=dedupe(caveats),
        payload=dict(p),
    )


# ----------------------------------------------------------------------------- one run


def _estimate_rows(p: Mapping[str, Any]) -> list[tuple[str, ...]]:
    adaptive = p.get("adaptive")
    fixed = " (fixed-sample)" if adaptive else ""

    def row(name: str, e: Mapping[str, Any]) -> tuple[str, ...]:
        return (
            name + fixed,
            fmt(e["mean"]),
            fmt(e["se"]),
            fmt_ci(e["ci"]),
            str(e["n_items"]),
            str(e.get("method") or "n/a"),
        )

    rows = [row("unweighted" if p.get("weights") else "overall", p["overall"])]
    if p.get("weights"):
        rows.insert(0, row("deployment-weighted", p["weighted"]))
    if adaptive:  # the interval valid under the run's stopping rule comes first
        at = "" if adaptive.get("level") == p["level"] else f", {level_text(adaptive['level'])}"
        rows.insert(
            0,
            (
                f"adaptive (anytime-valid{at})",
                fmt(adaptive.get("estimate")),
                "–",
                fmt_ci(adaptive.get("ci")),
                str(p["overall"]["n_items"]),
                str(adaptive.get("method")),
            ),
        )
    return rows


def score_view(p: Mapping[str, Any]) -> ResultView:
    """The view of a `score_payload` (the ``score --json`` payload)."""
    label = run_label(p)
    level = f"{p['level']:.0%}"
    audit = p.get("audit") or {}
    weighted = bool(p.get("weights"))
    main = p["weighted"] if weighted else p["overall"]
    headline = (
        f"{label} scores {fmt(main['mean'])}"
        + (" deployment-weighted" if weighted else "")
        + f" on {_suite_ref(p)} ({level} CI {fmt_ci(main['ci'])}, {main['n_items']} items"
        + (f"; unweighted {fmt(p['overall']['mean'])}" if weighted else "")
        + f"); {_state_phrase([p])}; {_audit_phrase([audit])}."
    )
    adaptive = p.get("adaptive")
    if adaptive:  # the interval it stopped on first; the fixed-sample one secondary
        headline = (
            f"{label} scores {fmt(adaptive.get('estimate'))} on {_suite_ref(p)}, adaptive run "
            f"({anytime_phrase(adaptive)}, valid under the run's stopping rule; "
            f"{adaptive.get('calls')} attempts over {main['n_items']} items); fixed-sample "
            f"{level} CI {fmt_ci(main['ci'])} of the item means {fmt(main['mean'])} "
            f"({main['method']}), not valid under the run's stopping rule; "
            f"{_state_phrase([p])}; {_audit_phrase([audit])}."
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
        tuple(_estimate_rows(p)),
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
                s["stratum"],
                *([fmt(s["weight"], 2)] if weighted else []),
                fmt(s["mean"]),
                fmt(s["se"]),
                fmt_ci(s["ci"]),
                str(s["n_items"]),
                str(s.get("method") or "n/a"),
            )
            for s in p["strata"]
        ),
    )
    tables = [est, strata]
    if p.get("secondary"):
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
                        s["name"],
                        fmt(s["mean"]),
                        fmt(s["se"]),
                        fmt_ci(s["ci"]),
                        str(s["n_items"]),
                        str(s["n_missing"]),
                    )
                    for s in p["secondary"]
                ),
            )
        )
    h = p["harness"]
    facts = [
        f"harness: {h['planned']} planned, {h['scored']} scored, {h['limits']} limit(s) "
        f"({fmt_counts(h.get('limits_by_type'))}), {h['harness_errors']} harness error(s) "
        f"({fmt_pct(h['error_rate'])}; {fmt_counts(h.get('errors_by_kind'))}), excluded from "
        "the score"
    ]
    if h.get("top_errors"):
        facts.append("top harness error reasons:")
    for g in h.get("top_errors") or []:
        example = (
            f" (e.g. item {g['example_item']}, epoch {g['example_epoch']})"
            if g.get("example_item")
            else ""
        )
        facts.append(f"  {g['count']} × {g['message']}{example}; what to do: {g['advice']}")
    if p.get("pass_at_k"):
        ks = sorted(p["pass_at_k"], key=int)
        n_k = p.get("pass_k_n_items") or {}
        facts += [
            "pass@k: " + "  ".join(f"k={k} {fmt(p['pass_at_k'][k])}" for k in ks),
            "pass^k: " + "  ".join(f"k={k} {fmt(p['pass_hat_k'][k])}" for k in ks),
            "items:  " + "  ".join(f"k={k} {fmt(n_k.get(k))}" for k in ks),
        ]
    r = p["reliability"]
    reason = r.get("reason")
    why = f" ({reason})" if reason else ""
    epochs = r.get("k_recommended")
    facts.append(
        f"reliability: flip rate {fmt(r.get('flip_rate'))}, ICC(1) {fmt(r.get('icc1'))}, "
        f"reliability of the {_k_epochs(r.get('epochs'), p)}-epoch mean {fmt(r.get('icc1k'))}, "
        "run-to-run noise "
        f"floor {fmt(r.get('noise_floor'))} (sd), suggested epochs "
        + (str(epochs) if epochs is not None else f"n/a{why or ' (not estimable)'}")
    )
    assumption = r.get("mde_assumption") or {}
    facts.append(
        f"pilot MDE {fmt(r.get('mde'))}: "
        + (assumption.get("description") or f"n/a{why or ' (not estimable)'}")
    )
    return ResultView(
        kind="score",
        title=f"{label} · {_suite_ref(p)} · {_planned_epochs(p)}",
        headline=headline,
        alerts=dedupe(_alerts([p], [audit])),
        gate_line=None,
        tables=tuple(tables),
        facts=tuple(facts),
        caveats=dedupe(
            n
            for n in p.get("notes") or []
            if not (audit.get("marker") and str(n).startswith(str(audit["marker"])))
        ),
        payload=dict(p),
    )
