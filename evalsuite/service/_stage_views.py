"""The views of the validity, audit and guard stages, with the conventions of `comparison_view`.

Each is built once from the stage's ``--json`` payload and rendered by the CLI (rich), the
Markdown and HTML report writers and JSON alike: the headline first, alerts before any
number, tables whose wide-only columns drop out of a 100-column terminal, and every caveat
once, at the end. See docs/design/result-model.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from evalsuite.service._audit_report import AuditResult, CanaryProbeResult, LeakAuditResult
from evalsuite.service._format import fmt, fmt_ci, fmt_counts, fmt_mb, is_number
from evalsuite.service._views import Column, ResultView, TableView, dedupe

if TYPE_CHECKING:  # the views load no statistics and no guard (the CLI's start-up)
    from evalsuite.guard import GuardReport
    from evalsuite.service._validity_report import ValidityResult

__all__ = ["audit_view", "guard_view", "validity_view"]

GUARD_ROWS = 200
"""Hits shown in a table; the rest are counted (``--json`` lists every one)."""
_SHOWN = 8
"""Items or predictors named in one line before "and N more"."""


def _some(names: Sequence[str], limit: int = _SHOWN) -> str:
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


# ----------------------------------------------------------------------------- validity


def _predictor_table(p: Mapping[str, Any]) -> TableView:
    """The predictors, the main one (the suite's own score) first, then the rest ranked."""
    main = p.get("main_predictor")
    predictors = sorted(p["predictors"], key=lambda x: x["name"] != main)
    level = f"{p.get('level', 0.95):.0%}"
    return TableView(
        "predictors",
        (
            Column("predictor", numeric=False),
            Column("n"),
            Column("Spearman"),
            Column("CI"),
            Column("Kendall", essential=False),
            Column("Pearson"),
            Column(f"{level} CI", essential=False),
            Column("disattenuated"),
            Column("Deming slope", essential=False),
            Column("LOO error", essential=False),
        ),
        tuple(
            (
                x["name"],
                str(x["n"]),
                fmt(x["spearman"]),
                fmt_ci(x["spearman_ci"]),
                fmt(x["kendall"]),
                fmt(x["pearson"]),
                fmt_ci(x["pearson_ci"]),
                fmt(x["disattenuated"]),
                fmt(x["deming_slope"]),
                fmt(x["loo_error"]),
            )
            for x in predictors
        ),
    )


_NUMBER = re.compile(r"[−-]?\d+(?:\.\d+)?")


def _grouped(pairs: Sequence[tuple[str, str]], every: Sequence[str] = ()) -> list[str]:
    """Each text of (text, subject) once, naming its subjects.

    Texts that differ only in their numbers are one line: the first text, then "likewise
    for" the other subjects. Subjects that are all of `every` read "every predictor".
    """
    groups: dict[str, list[tuple[str, str]]] = {}
    for text, subject in pairs:
        groups.setdefault(_NUMBER.sub("#", text), []).append((text, subject))
    out = []
    for members in groups.values():
        texts = list(dict.fromkeys(t for t, _ in members))
        names = list(dict.fromkeys(n for _, n in members))
        if len(texts) == 1:
            whom = "every predictor" if every and set(names) == set(every) else _some(names, 4)
            out.append(f"{texts[0]} ({whom})")
            continue
        first = [n for t, n in members if t == texts[0]]
        rest = [n for n in names if n not in first]
        out.append(
            f"{texts[0]} ({_some(first, 4)}; likewise, with other figures, for {_some(rest, 4)})"
        )
    return out


def _grouped_flags(predictors: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each flag once, naming the predictors it applies to (not once per stratum)."""
    pairs = [(str(f), str(x["name"])) for x in predictors for f in x.get("flags") or []]
    return _grouped(pairs, [str(x["name"]) for x in predictors])


_NOT_COMPARED = re.compile(r"^(?P<pair>.+?) not compared: (?P<why>.+)$")


def _grouped_notes(notes: Sequence[str]) -> list[str]:
    """The notes, "A vs B not compared: why" grouped by why (once, naming the pairs)."""
    pairs, out = [], []
    for note in notes:
        match = _NOT_COMPARED.match(str(note))
        if match:
            pairs.append((f"not compared: {match['why']}", match["pair"]))
        else:
            out.append(str(note))
    return _grouped(pairs) + out


def _validity_headline(p: Mapping[str, Any]) -> str:
    main = p.get("main_predictor")
    level = f"{p.get('level', 0.95):.0%}"
    found = [x for x in p["predictors"] if x["name"] == main]
    if not found:
        return f"No predictor of {p['metric']} could be analysed ({p['n_models']} models)."
    x = found[0]
    if not is_number(x["spearman"]):
        why = "; ".join(x.get("flags") or []) or "the correlation is undefined on these data"
        return f"{main} cannot be judged as a predictor of {p['metric']}: n/a ({why})."
    return (
        f"Over {x['n']} models, {main} predicted {p['metric']} with Spearman r_s "
        f"{fmt(x['spearman'])} ({level} CI {fmt_ci(x['spearman_ci'])}) and Pearson r "
        f"{fmt(x['pearson'])} ({fmt_ci(x['pearson_ci'])}); disattenuated "
        f"{fmt(x['disattenuated'])}."
    )


def validity_view(result: ValidityResult | Mapping[str, Any]) -> ResultView:
    """The view of a `validity_report` result.

    Also of its JSON form (``validity report --json``), which is what a report keeps in its
    payload (report.json) and renders from.
    """
    p: Mapping[str, Any] = result if isinstance(result, Mapping) else result.to_dict()
    split = f", {p['split']} split" if p.get("split") else ""
    title = (
        f"predictive validity for {p['metric']} ({p['source']}{split}; {p['n_models']} models "
        "with a deployment result)"
    )
    alerts = []
    if p.get("partial_runs"):
        alerts.append(
            f"PARTIAL RUN(S) used (--allow-partial): {_some(list(p['partial_runs']))}; their "
            "scores describe a subset of the split's items"
        )
    facts = [str(s) for s in p.get("statements") or []]
    facts += [f"compare: {c['statement']}" for c in p.get("comparisons") or []]
    return ResultView(
        kind="validity",
        title=title,
        headline=_validity_headline(p),
        alerts=dedupe(alerts),
        gate_line=None,
        tables=(_predictor_table(p),),
        facts=dedupe(facts),
        caveats=dedupe([*_grouped_flags(p["predictors"]), *_grouped_notes(p.get("notes") or [])]),
        payload=dict(p),
    )


# ----------------------------------------------------------------------------- audit


def _checked(checked: Any) -> str:
    """``{'dev': 108, 'holdout': 96}`` as ``108 dev and 96 holdout items``."""
    if isinstance(checked, Mapping):
        return " and ".join(f"{n} {split}" for split, n in checked.items()) + " items"
    return f"{fmt(checked)} items"


def _label(check: Mapping[str, Any]) -> str:
    return str(check["check"]) + (f"/{check['policy']}" if check.get("policy") else "")


def _graders_part(
    g: Mapping[str, Any],
) -> tuple[str, list[str], list[TableView], list[str], list[str]]:
    """(headline phrase, alerts, tables, facts, caveats) of ``audit --graders``."""
    sample = g["sample"]
    scope = f"{sample['items']} of {sample['of']} {g['split']} items"
    phrase = (
        f"grader audit {'passed' if g['ok'] else 'FAILED'} ({scope}, "
        f"{len(g.get('schedule') or [])} policies, {fmt(g.get('seconds'), 0)} s)"
    )
    alerts, tables = [], []
    for family in g["families"]:
        tables.append(
            TableView(
                f"family {family['family']}",
                (
                    Column("check", numeric=False),
                    Column("status", numeric=False),
                    Column("what was found", numeric=False),
                ),
                tuple(
                    (_label(c), str(c["status"]).replace("_", " "), str(c["summary"]))
                    for c in family["checks"]
                ),
            )
        )
        for c in family["checks"]:
            if c["status"] != "failed":
                continue
            strata = [s for s, v in sorted((c.get("strata") or {}).items()) if v.get("failed")]
            where = f" in {', '.join(strata)}" if strata else ""
            items = f": items {_some(list(c['items']))}" if c.get("items") else ""
            alerts.append(f"FAILED {family['family']} {_label(c)}{where}{items}")
    facts = [_redteam_fact(f["family"], f["redteam"]) for f in g["families"] if f.get("redteam")]
    if g.get("redteam_schedule"):
        facts.append(
            f"red-team policies tried: {len(g['redteam_schedule'])} generated or team "
            f"policies besides the {len(g.get('schedule') or [])} of the kits (every policy's "
            "score per stratum: --json, families[].policies)"
        )
    if g.get("stored"):
        facts.append(f"results stored with the version: {g['stored']}")
    if g.get("logs"):
        facts.append(f"logs of the audit's runs: {', '.join(g['logs'])}")
    caveats = []
    if sample.get("per_stratum"):
        caveats.append(
            f"a partial audit (the first {sample['per_stratum']} items of each stratum): its "
            "results are not stored and do not make the version audited"
        )
    return phrase, alerts, tables, facts, caveats


def _redteam_fact(family: str, report: Mapping[str, Any]) -> str:
    """One line of the red-team report: the best cheap policy and its margin."""
    best = report.get("best")
    if not best:
        return f"red team, {family}: no cheap policy was played"
    under = report.get("weakest")
    kind = "reference agent" if report.get("under") == "reference" else "oracle (no reference)"
    return (
        f"red team, {family}: best cheap policy {best['policy']} ({best['kind']}) scores "
        f"{float(best['mean']):.3f}; margin {float(report.get('margin', 0.0)):+.3f} under the "
        f"weakest {kind} {under} ({float(report.get('weakest_mean', 0.0)):.3f})"
    )


def _leaks_part(
    leaks: LeakAuditResult,
) -> tuple[str, list[str], list[TableView], list[str]]:
    """(headline phrase, alerts, tables, caveats) of the leak audit."""
    findings = leaks.findings
    checked = _checked(leaks.checked)
    if not findings:
        return f"no leaks in {checked}", [], [], _skipped_leaks(leaks)
    items = sorted({f"{f.split} {f.item_id}" for f in findings})
    table = TableView(
        "items that show their target to the agent",
        (
            Column("split", numeric=False),
            Column("item", numeric=False),
            Column("how", numeric=False),
            Column("where", numeric=False),
        ),
        tuple((f.split, f.item_id, f.how, f.surface) for f in findings),
    )
    alert = (
        f"LEAKS: {len(items)} item(s) show their target to the agent ({_some(items)}); fix or "
        "retire them in a new version"
    )
    return f"LEAKS in {len(items)} of {checked}", [alert], [table], _skipped_leaks(leaks)


def _skipped_leaks(leaks: LeakAuditResult) -> list[str]:
    if not leaks.skipped:
        return []
    reasons = fmt_counts(_count(leaks.skipped.values()))
    return [f"{len(leaks.skipped)} item(s) could not be audited for leaks ({reasons})"]


def _count(values: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[str(v)] = out.get(str(v), 0) + 1
    return out


def _canary_phrase(c: CanaryProbeResult) -> str:
    verdict = "MEMORISED the canary" if c.memorised else "did not reproduce the canary"
    return (
        f"{c.model} {verdict} (best {c.best_match} of {c.hidden_chars} hidden "
        f"characters over {c.tries} tries)"
    )


def audit_view(result: AuditResult | Mapping[str, Any]) -> ResultView:
    """The view of an `AuditResult`, or of its JSON form (``audit --json``)."""
    typed = AuditResult.from_dict(result) if isinstance(result, Mapping) else result
    parts: list[str] = []
    alerts: list[str] = []
    tables: list[TableView] = []
    facts: list[str] = []
    caveats: list[str] = []
    ref = "the suite"
    graders, leaks, canary = typed.graders, typed.leaks, typed.canary_probe
    if graders is not None:
        ref = f"{graders.suite}@{graders.version}"
        phrase, g_alerts, g_tables, g_facts, g_caveats = _graders_part(graders.to_dict())
        parts.append(phrase)
        alerts += g_alerts
        tables += g_tables
        facts += g_facts
        caveats += g_caveats
    if leaks is not None:
        ref = f"{leaks.suite}@{leaks.version}"
        phrase, l_alerts, l_tables, l_caveats = _leaks_part(leaks)
        parts.append(phrase)
        alerts += l_alerts
        tables += l_tables
        caveats += l_caveats
    if canary is not None:
        if ref == "the suite":
            ref = canary.suite or ref
        parts.append(_canary_phrase(canary))
        if canary.memorised:
            alerts.append(
                f"CANARY MEMORISED: {canary.model} reproduced the canary of {ref}: the "
                "suite (or an export of it) was in its training data"
            )
    headline = f"{ref}: " + ("; ".join(parts) if parts else "nothing audited") + "."
    return ResultView(
        kind="audit",
        title=f"audit of {ref}",
        headline=headline,
        alerts=dedupe(alerts),
        gate_line=None,
        tables=tuple(tables),
        facts=dedupe(facts),
        caveats=dedupe(caveats),
        payload=typed.to_dict(),
    )


# ----------------------------------------------------------------------------- guard


def guard_view(report: GuardReport | Mapping[str, Any]) -> ResultView:
    """The view of a `guard_report` result, or of its JSON form (``GuardReport.to_dict``)."""
    p: Mapping[str, Any] = report if isinstance(report, Mapping) else report.to_dict()
    seconds = float(p["seconds"])
    mb = int(p["bytes_scanned"]) / 1e6
    speed = f"{mb / seconds:.0f} MB/s" if seconds > 0 else "speed n/a: under a millisecond"
    scope = (
        f"screened {p['documents_scanned']} documents ({fmt_mb(p['bytes_scanned'])}) in "
        f"{seconds:.1f} s ({speed}) against {len(p['manifests'])} manifest(s), threshold "
        f"{p['threshold']:g}"
    )
    hits = list(p["contaminated"])
    flagged = int(p["documents_flagged"])
    alerts = []
    if flagged:
        headline = f"CONTAMINATED: {flagged} document(s) overlap frozen evaluation items: {scope}."
        alerts.append(
            f"CONTAMINATED: {flagged} document(s) overlap frozen evaluation items or carry a "
            "suite canary; remove them from the curriculum before training"
        )
    else:
        headline = f"clean: {scope}."
    tables = []
    if hits:
        tables.append(
            TableView(
                "hits",
                (
                    Column("document", numeric=False),
                    Column("suite@version", numeric=False),
                    Column("split", numeric=False),
                    Column("item", numeric=False),
                    Column("overlap"),
                    Column("how", numeric=False),
                ),
                tuple(
                    (
                        str(h["document"]),
                        f"{h['suite']}@{h['version']}",
                        str(h.get("split") or "n/a (canary)"),
                        str(h.get("item_id") or "(canary)"),
                        fmt(h["overlap"], 2),
                        str(h["how"]),
                    )
                    for h in hits[:GUARD_ROWS]
                ),
            )
        )
    facts = []
    if len(hits) > GUARD_ROWS:
        facts.append(f"... and {len(hits) - GUARD_ROWS} more hits (see --json)")
    caveats = [f"skipped ({s['reason']}): {s['path']}" for s in p.get("skipped_details") or []] + [
        f"{ref} has fingerprints in an older format only, which miss copies with their "
        f"punctuation stripped or JSON-escaped; `evalsuite fingerprints {ref}` adds the current "
        "ones (needs the vault key)"
        for ref in p.get("legacy_only") or []
    ]
    return ResultView(
        kind="guard",
        title="curriculum guard",
        headline=headline,
        alerts=dedupe(alerts),
        gate_line=None,
        tables=tuple(tables),
        facts=tuple(facts),
        caveats=dedupe(caveats),
        payload=dict(p),
    )
