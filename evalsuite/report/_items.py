"""The report's "Item analysis" section: item map, flagged items and the saturation watch.

For each suite version among the report's runs, when the store holds runs of it from at least
`MIN_REPORT_MODELS` models, the section shows the item analysis over all of them
(`evalsuite.items`, the same numbers as ``evalsuite items SUITE@X.Y.Z``): the item map
(difficulty x discrimination), the flags table and the strata the saturation watch names.
Self-contained: the report's layout only includes it (``_items.html.j2``), and the Markdown
comes from `md_items`. See docs/design/items.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from matplotlib.figure import Figure

from evalsuite._core.layout import Layout
from evalsuite.report._figures import MARKERS, PALETTE, to_svg
from evalsuite.service import fmt
from evalsuite.store import Store

__all__ = ["MIN_REPORT_MODELS", "item_figures", "item_map", "items_sections", "md_items"]

MIN_REPORT_MODELS = 3
"""The section is shown for a suite version with stored runs of at least this many models
(fewer: no item-rest correlation can be computed)."""
_SHOWN = ("dead", "flaky", "harness-suspect", "negatively-discriminating", "leaky")


def items_sections(
    store: Store, layout: Layout, runs: Sequence[dict[str, Any]], *, level: float
) -> list[dict[str, Any]]:
    """The item analysis of each suite version of `runs` that enough models ran, in order."""
    sections = []
    seen: set[tuple[str, str]] = set()
    for run in runs:
        suite, version = run.get("suite"), run.get("version")
        if not suite or not version or not run.get("manifest") or (suite, version) in seen:
            continue
        seen.add((suite, version))
        from evalsuite.items import analysed_runs

        # the runs `items` reads: complete and valid (docs/design/items.md, "What is read")
        read, _ = analysed_runs([r for r in store.list_runs(suite=suite) if r.version == version])
        if len({r.model for r in read}) < MIN_REPORT_MODELS:
            continue
        from evalsuite.items import item_analysis  # scipy.stats: only for a section drawn

        payload = item_analysis(store, layout, suite, version, level=level).to_dict()
        payload["flagged"] = [i for i in payload["items"] if i["flags"]]
        sections.append(payload)
    return sections


def item_map(section: dict[str, Any]) -> Figure:
    """Solve rate (x) against discrimination (y) per item; one marker shape per flag."""
    fitted = bool(section["irt"]["fitted"])
    key = "irt_a" if fitted else "item_rest_r"
    figure = Figure(figsize=(6.0, 3.8))
    ax = figure.add_subplot()
    groups: dict[str, list[tuple[float, float]]] = {}
    for item in section["items"]:
        x, y = item["solve_rate"], item[key]
        if x is None or y is None or not math.isfinite(x) or not math.isfinite(y):
            continue
        name = item["flags"][0] if item["flags"] else "no flag"
        groups.setdefault(name, []).append((x, y))
    for k, name in enumerate(["no flag", *_SHOWN]):
        points = groups.get(name)
        if not points:
            continue
        xs, ys = zip(*points, strict=True)
        ax.scatter(
            xs,
            ys,
            s=14 if name == "no flag" else 28,
            marker=MARKERS[k % len(MARKERS)],
            color=PALETTE[k % len(PALETTE)],
            alpha=0.6 if name == "no flag" else 0.9,
            label=f"{name} ({len(points)})",
        )
    ax.axhline(0.0, color="#999999", linewidth=0.8)
    ax.set_xlim(-0.03, 1.03)
    ax.set_xlabel("difficulty: solve rate across models (0 = nobody solves it)")
    ax.set_ylabel("discrimination: " + ("2PL a" if fitted else "item-rest correlation"))
    ax.set_title(f"Item map of {section['suite']}@{section['version']}")
    if groups:
        ax.legend(loc="best", fontsize=7, frameon=False)
    return figure


def item_figures(sections: Sequence[dict[str, Any]]) -> dict[str, str]:
    """The item map of each section as SVG (``items_<i>``)."""
    return {
        f"items_{i}": to_svg(item_map(s), f"Item map of {s['suite']}@{s['version']}")
        for i, s in enumerate(sections)
    }


def md_items(sections: Sequence[dict[str, Any]], figure_files: dict[str, str]) -> list[str]:
    """Markdown lines of the section (none without a suite version enough models ran)."""
    lines: list[str] = []
    for i, s in enumerate(sections):
        counts = ", ".join(f"{k} {v}" for k, v in s["flag_counts"].items())
        irt = s["irt"]
        lines += [
            f"## Item analysis: {s['suite']}@{s['version']}",
            "",
            f"{s['n_items']} items, {len(s['models'])} models, {len(s['runs'])} stored runs. "
            f"Flags: {counts}.",
            "",
            (
                f"2PL IRT fitted ({'converged' if irt['converged'] else 'NOT converged'}, "
                f"{irt['iterations']} iterations)."
                if irt["fitted"]
                else f"2PL IRT not fitted: {irt['reason']}."
            ),
            "",
        ]
        if f"items_{i}" in figure_files:
            lines += [f"![item map]({figure_files[f'items_{i}']})", ""]
        watched = [w for w in s["strata"] if w["watch"]]
        lines += ["### Saturation watch", ""]
        if not watched:
            lines += [
                f"No stratum is saturated (best model above {s['saturation_threshold']:g}) "
                "or below its noise floor.",
                "",
            ]
        for w in watched:
            lines += [f"- **{w['stratum']}**: " + "; ".join(w["reasons"])]
        lines += [""] if watched else []
        if s["flagged"]:
            lines += [
                "### Flagged items",
                "",
                "| item | stratum | solve rate | item-rest r | flags | reasons |",
                "|---|---|---|---|---|---|",
            ]
            lines += [
                f"| {f['item_id']} | {f['stratum']} | {fmt(f['solve_rate'])} | "
                f"{fmt(f['item_rest_r'], 2)} | {', '.join(f['flags'])} | "
                + "; ".join(f"{k}: {v}" for k, v in f["flag_reasons"].items()).replace("|", "/")
                + " |"
                for f in s["flagged"]
            ]
            lines.append("")
    return lines
