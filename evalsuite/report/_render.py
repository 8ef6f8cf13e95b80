"""Render a report as one self-contained HTML file, Markdown and JSON, written atomically."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jinja2
import markupsafe

from evalsuite._core.atomic import atomic_write_text
from evalsuite._core.jsonout import dumps_json
from evalsuite.report._build import NotCompared, ReportData
from evalsuite.service import (
    AdaptiveResult,
    ResultView,
    RunFacts,
    Scorecard,
    ScoreResult,
    TableView,
    adaptive_view,
    comparison_view,
    fmt,
    fmt_ci,
    fmt_counts,
    fmt_pct,
    fmt_signed,
    fmt_time,
    is_unfinished,
    score_view,
    scorecard,
    validity_view,
)

__all__ = [
    "render_html",
    "render_markdown",
    "render_view_html",
    "render_view_markdown",
    "view_markdown",
    "write_report",
]


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("evalsuite.report", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["fmt"] = fmt
    env.filters["pct"] = fmt_pct
    env.filters["ci"] = fmt_ci
    env.filters["time"] = fmt_time
    return env


def _title(payload: dict[str, Any]) -> str:
    suites = sorted({f"{r['suite']}@{r['version']}" for r in payload["runs"] if r["suite"]})
    models = ", ".join(dict.fromkeys(r["model"] for r in payload["runs"]))
    return f"evalsuite report: {', '.join(suites) or 'ingested runs'} · {models}"


def _escaped(values: list[str]) -> list[str]:
    """Each text HTML-escaped as `markupsafe.escape` escapes it, in one call for all.

    Escaping acts on each character alone, so the texts are joined with a NUL, escaped once
    and split again; when a text holds a NUL itself, each is escaped on its own.
    """
    if not values:
        return []
    joined = "\0".join(values)
    if joined.count("\0") != len(values) - 1:
        return [str(markupsafe.escape(v)) for v in values]
    return str(markupsafe.escape(joined)).split("\0")


def _escape_once(seen: dict[Any, str], value: Any) -> str:
    """`escape(value)` as text, remembered in `seen` when the value is a text."""
    text = str(markupsafe.escape(value))
    if type(value) is str:
        seen[value] = text
    return text


def _cells(values: list[Any], digits: int) -> list[str]:
    """`escape(fmt(value, digits))` of each value; a finite float needs no escaping."""
    finite = math.isfinite
    return [
        f"{v:.{digits}f}"
        if type(v) is float and finite(v)
        else str(markupsafe.escape(fmt(v, digits)))
        for v in values
    ]


def _item_rows(payload: dict[str, Any]) -> markupsafe.Markup:
    """The rows of the items table: one per item, with a mean per run.

    Escaped as the template escapes; built here rather than by a template loop, which took
    seconds at 100,000 items, and column by column: each text column escaped in one call,
    each number column formatted in one pass (docs/design/analysis-scale.md).
    """
    items = payload["items"]
    run_ids = [r["run_id"] for r in payload["runs"]]
    strata: dict[Any, str] = {}
    columns = [
        _escaped([str(i["item_id"]) for i in items]),
        [  # few distinct strata: each escaped once
            strata[s] if type(s) is str and s in strata else _escape_once(strata, s)
            for s in (i["stratum"] for i in items)
        ],
        _escaped([str((i["item_hash"] or "–")[:19]) for i in items]),
        _cells([i["difficulty"] for i in items], 2),
        _cells([i["flip_rate"] for i in items], 2),
        *(_cells([i["means"].get(r) for i in items], 2) for r in run_ids),
    ]
    template = (
        '<tr><td class="mono">%s</td><td>%s</td>\n'
        '    <td class="mono">%s</td><td class="num">%s</td>\n'
        '    <td class="num">%s</td>\n' + '<td class="num">%s</td>' * len(run_ids) + "</tr>"
    )
    return markupsafe.Markup("".join([template % row for row in zip(*columns, strict=True)]))


def _views(report: ReportData) -> list[ResultView | None]:
    """The view of each comparison (None: not compared), built from its typed result."""
    return [None if isinstance(c, NotCompared) else comparison_view(c) for c in report.comparisons]


def _scorecard(payload: dict[str, Any]) -> Scorecard:
    """The report's scorecard, from the comparisons it holds (`evalsuite.service.scorecard`)."""
    return scorecard(payload["comparisons"])


def _run_diffs(payload: dict[str, Any]) -> dict[str, str]:
    """Candidate run id -> its unweighted difference from its baseline, with the baseline."""
    out = {}
    for c in payload["comparisons"]:
        if "skipped" in c:
            out[c["candidate"]] = "not compared"
        else:
            out[c["candidate"]] = f"{fmt_signed(c['diff'])} vs {c['baseline']}"
    return out


def _adaptive_views(payload: dict[str, Any]) -> list[ResultView]:
    """The view of each adaptive run (the payload's ``adaptive``: each run's result as JSON)."""
    return [adaptive_view(AdaptiveResult.from_dict(s)) for s in payload.get("adaptive") or []]


def _md_adaptive(views: Sequence[ResultView]) -> list[str]:
    """The "Adaptive runs" section: each adaptive run's view, as `run` prints it."""
    if not views:
        return []
    lines = ["## Adaptive runs", ""]
    for view in views:
        lines += view_markdown(view, heading="###")
    return lines


def render_html(report: ReportData) -> str:
    """One self-contained HTML page: inline CSS and inline SVG figures, no network fetches."""
    template = _environment().get_template("report.html.j2")
    return template.render(
        p=report.payload,
        scores=report.scores,
        card=_scorecard(report.payload),
        views=_views(report),
        run_diffs=_run_diffs(report.payload),
        validity_views=[validity_view(v) for v in report.payload.get("validity") or []],
        adaptive_views=_adaptive_views(report.payload),
        figures=report.figures,
        title=_title(report.payload),
        item_rows=_item_rows(report.payload),
        item_views=report.item_views,
    )


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return [*lines, ""]


def _validity_word(run: RunFacts) -> str:
    """A run's validity as the report shows it: yes, NO, or not judged (not complete)."""
    if is_unfinished(run):
        return f"not judged ({run.status})"
    return "yes" if run.valid else "NO"


def _md_run(result: ScoreResult) -> list[str]:
    """A run's section: its score view (what `evalsuite score` prints), under its heading."""
    run = result.run
    state = _validity_word(run)
    heading = (
        f"## Run {run.run_id} · {run.model}"
        + {"yes": "", "NO": " · **INVALID**"}.get(state, " · **NOT COMPLETE**")
        + (" · **PARTIAL**" if run.partial else "")
        + (f" · **{result.audit.marker}**" if result.audit.marker else "")
    )
    return [heading, "", *_view_body_markdown(score_view(result))]


def _md_health(sections: Sequence[dict[str, Any]]) -> list[str]:
    """The environment health section: audit per family, harness errors, limit hits."""
    if not sections:
        return []
    lines = ["## Environment health", ""]
    for h in sections:
        lines += [
            f"### {h['suite']}@{h['version']} · family {h['family']} · grader audit: "
            f"**{h['audit']['status']}**",
            "",
            h["audit"]["detail"],
            "",
        ]
        if h["checks"]:
            lines += _md_table(
                ["check", "status", "what was found"],
                [
                    [
                        c["check"] + (f"/{c['policy']}" if c["policy"] else ""),
                        c["status"],
                        c["summary"],
                    ]
                    for c in h["checks"]
                ],
            )
        lines += _md_table(
            ["run", "model", "attempts", "harness errors", "error rate", "limit hits"],
            [
                [
                    r["run_id"],
                    r["model"],
                    r["attempts"],
                    r["harness_errors"],
                    fmt_pct(r["harness_error_rate"]),
                    fmt_counts(r["limits_by_type"], none="–"),
                ]
                for r in h["runs"]
            ],
        )
    return lines


def _md_view_tables(tables: Sequence[TableView]) -> list[str]:
    lines: list[str] = []
    for t in tables:
        lines += [f"**{t.title}**", ""]
        lines += _md_table([c.name for c in t.columns], t.rows)
    return lines


def view_markdown(view: ResultView, *, heading: str = "###") -> list[str]:
    """`view` as Markdown lines in the CLI's reading order, every column, caveats last."""
    return [f"{heading} {view.title}", "", *_view_body_markdown(view)]


def _view_body_markdown(view: ResultView) -> list[str]:
    """`view` below its title: alerts, headline, gate, tables, facts, caveats."""
    lines = [f"> **{alert}**" for alert in view.alerts] + ([""] if view.alerts else [])
    lines += [f"**{view.headline}**", ""]
    if view.gate_line:
        lines += [f"Gate: {view.gate_line}.", ""]
    lines += _md_view_tables(view.tables)
    lines += [f"- {fact}" for fact in view.facts] + ([""] if view.facts else [])
    if view.caveats:
        lines += ["Caveats:", "", *(f"- {c}" for c in view.caveats), ""]
    return lines


def render_view_markdown(view: ResultView) -> str:
    """One result view as a Markdown section (`view_markdown`)."""
    return "\n".join(view_markdown(view)) + "\n"


def render_view_html(view: ResultView) -> str:
    """One result view as an HTML section (the report's ``view_section`` macro), escaped."""
    template = _environment().from_string(
        '{% from "_view.html.j2" import view_section %}{{ view_section(view) }}'
    )
    return template.render(view=view)


def _md_scorecard(card: Scorecard) -> list[str]:
    """The scorecard as a Markdown table (a badge is its label; a bad one in bold)."""
    if not card.rows:
        return []
    table = card.table()
    bold = [
        tuple(
            f"**{cell}**" if badge is not None and badge.tone == "bad" else cell
            for cell, badge in zip(
                row, (None, None, None, None, r.gate, r.validity, r.audit), strict=True
            )
        )
        for row, r in zip(table.rows, card.rows, strict=True)
    ]
    return _md_table([c.name for c in table.columns], bold)


def _md_answer(p: dict[str, Any], figure_files: dict[str, str]) -> list[str]:
    """The first screen: the scorecard, then per comparison its sentence, gate and plot."""
    lines = ["## Answer", ""]
    lines += _md_scorecard(_scorecard(p))
    if not p["comparisons"]:
        lines += [f"**{s}**" for s in p["summary"]]
        return [*lines, "", "Gate: none (a gate needs two runs of one suite).", ""]
    for i, c in enumerate(p["comparisons"]):
        if "skipped" in c:
            lines += [f"- {c['candidate']} vs {c['baseline']}: not compared ({c['skipped']})", ""]
            continue
        lines += [c["headline"], ""]
        lines += [
            f"Gate: {c['gate_line']}."
            if c.get("gate_line")
            else "Gate: none asked for this comparison (`compare --gate noninferior --margin D` "
            "records one; `report --margin D` asks for one in every comparison).",
            "",
        ]
        if f"answer_{i}" in figure_files:
            lines += [f"![paired difference]({figure_files[f'answer_{i}']})", ""]
    return lines


def _md_why(why: dict[str, Any]) -> list[str]:
    """The "why it failed" section (docs/review.md); nothing when no run was reviewed."""
    if not why.get("runs"):
        return []
    lines = ["## Why it failed", ""]
    lines += [f"    {line}" for line in why["lines"]]
    return [*lines, ""]


def _md_provenance(r: dict[str, Any]) -> list[str]:
    suite = f"{r['suite']}@{r['version']}" if r["manifest"] else "ingested, no manifest"
    args = ", ".join(f"{k}={v}" for k, v in sorted((r.get("model_args") or {}).items()))
    return [
        f"### {r['model']} (run {r['run_id']})",
        "",
        f"- suite: {suite}; split: {r['split'] or '–'}; manifest: "
        + (f"`{r['manifest_hash']}`" if r["manifest_hash"] else "n/a (ingested)"),
        f"- model: `{r['model']}`"
        + (f" ({args})" if args else "")
        + (
            f"; adaptive, {len(r['adaptive'].get('rounds') or [])} round(s)"
            if r.get("adaptive")
            else f"; epochs {r['epochs']}"
        )
        + f"; seed {fmt(r['seed'])}",
        f"- started {fmt_time(r['started_at'])}, finished {fmt_time(r['finished_at'])}",
        "",
    ]


def _md_comparisons(report: ReportData, figure_files: dict[str, str]) -> list[str]:
    """Each comparison's view: headline, verdict, tables, facts, figure, caveats."""
    p = report.payload
    if not p["comparisons"]:
        return []
    lines = ["## Comparisons", ""]
    for i, (c, view) in enumerate(zip(p["comparisons"], _views(report), strict=True)):
        if view is None:
            lines += [f"- {c['candidate']} vs {c['baseline']}: not compared ({c['skipped']})"]
            continue
        lines += [f"### {view.title}", "", view.headline, ""]
        lines += [f"Paired-t verdict: **{c['verdict']}**: {c['sentence']}", ""]
        lines += _md_view_tables(view.tables)
        lines += [f"- {fact}" for fact in view.facts] + [""]
        figure = figure_files.get(f"comparison_{i}")
        if figure:
            lines += [f"![paired difference per stratum]({figure})", ""]
        lines += [f"> {caveat}" for caveat in view.caveats] + [""]
    return lines


def _md_items(views: Sequence[ResultView], figure_files: dict[str, str]) -> list[str]:
    """The item-analysis sections: each `items_view`, its item map after it."""
    lines: list[str] = []
    for i, view in enumerate(views):
        lines += view_markdown(view, heading="##")
        if f"items_{i}" in figure_files:
            lines += [f"![item map]({figure_files[f'items_{i}']})", ""]
    return lines


def render_markdown(report: ReportData, figure_files: dict[str, str]) -> str:
    """The report as Markdown, in the HTML's order: the answer first, provenance last."""
    p = report.payload
    level = f"{p['level']:.0%}"
    lines = [
        f"# {_title(p)}",
        "",
        f"Generated {fmt_time(p['generated_at'])} by evalsuite "
        f"{p['evalsuite_version']}; {level} intervals; analysis seed {p['analysis_seed']}.",
        "",
    ]
    lines += _md_answer(p, figure_files)
    lines += _md_why(p.get("why_it_failed") or {})
    if p["invalid_runs"]:
        lines += [
            f"> **INVALID RUN(S): {', '.join(p['invalid_runs'])}** — too many harness "
            "errors; their numbers measure the harness, not the model.",
            "",
        ]
    if p.get("unfinished_runs"):
        lines += [
            f"> **RUN(S) NOT COMPLETE: {', '.join(p['unfinished_runs'])}** — still running or "
            "interrupted; their numbers describe the attempts stored so far, and the attempts "
            "not yet run count as harness errors.",
            "",
        ]
    if p.get("partial_runs"):
        lines += [
            f"> **PARTIAL RUN(S): {', '.join(p['partial_runs'])}** — run on a subset of their "
            "split's items (`run --limit`); their numbers describe those items, not the suite.",
            "",
        ]
    for u in p.get("unaudited_runs") or []:
        lines += [
            f"> **{u['marker']}**: run {u['run_id']} is of "
            + (f"{u['suite']}@{u['version']}" if u["suite"] else "no frozen suite (ingested)")
            + f", which {u['detail']}; its numbers are only as good as that suite's graders.",
            "",
        ]
    lines += [f"> {note}" for note in p["notes"]] + ([""] if p["notes"] else [])
    lines += _md_comparisons(report, figure_files)
    lines += _md_health(p.get("environment_health") or [])
    lines += _md_adaptive(_adaptive_views(p))
    lines += _md_items(report.item_views, figure_files)
    for result in report.scores:
        lines += _md_run(result)
    for name, path in figure_files.items():
        if not name.startswith(("comparison_", "answer_", "items_")):
            lines += [f"![{name}]({path})", ""]
    for v in p.get("validity") or []:
        view = validity_view(v)
        split = f", {v['split']} split" if v.get("split") else ""
        lines += [f"## Predictive validity: {v['metric']} ({v['source']}{split})", ""]
        lines += view_markdown(view, heading="###")
    lines += ["## Provenance", ""]
    for r in p["runs"]:
        lines += _md_provenance(r)
    lines += ["---", ""] + [f"Canary: `{c}`" for c in p["canaries"]]
    return "\n".join(lines) + "\n"


def write_report(report: ReportData, out_dir: Path) -> dict[str, Path]:
    """Write index.html, report.md, report.json and figures/*.svg into `out_dir` atomically.

    Every file is written to a temporary name and renamed, so a reader never sees half a
    report; existing files of an older report are replaced one by one.
    """
    figure_files = {name: f"figures/{name}.svg" for name in report.figures}
    # render everything before the first write: a rendering error leaves no partial report
    texts = {
        "json": ("report.json", dumps_json(report.payload) + "\n"),
        "markdown": ("report.md", render_markdown(report, figure_files)),
        "html": ("index.html", render_html(report)),
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, svg in report.figures.items():
        atomic_write_text(out_dir / figure_files[name], svg)
    paths = {}
    for kind, (filename, text) in texts.items():
        atomic_write_text(out_dir / filename, text)
        paths[kind] = out_dir / filename
    return paths
