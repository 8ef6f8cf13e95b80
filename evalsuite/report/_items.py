"""The figure of the report's "Item analysis" section: the item map.

For each suite version among the report's runs that enough models ran
(`evalsuite.service.item_sections`), the section is the view of ``evalsuite items
SUITE@X.Y.Z`` (`evalsuite.service.items_view`), rendered by the Markdown writer and the
``_items.html.j2`` template alike, with the item map (difficulty x discrimination) drawn here
after its headline. See docs/design/items.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from matplotlib.figure import Figure

from evalsuite.report._figures import MARKERS, PALETTE, to_svg

__all__ = ["item_figures", "item_map"]
_SHOWN = ("dead", "flaky", "harness-suspect", "negatively-discriminating", "leaky")


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
