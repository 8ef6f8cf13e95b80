"""Figures of a report: matplotlib, rendered to inline SVG.

Readable in print and for colour-blind readers: the Okabe–Ito palette, a distinct marker per
run, labelled axes with units, no meaning carried by colour alone.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.ticker import FixedFormatter, FuncFormatter

from evalsuite._core.display import printable

__all__ = [
    "PALETTE",
    "comparison_forest",
    "pass_k_curves",
    "reliability_panel",
    "strata_forest",
    "to_svg",
    "validity_over_time_plot",
    "validity_scatter",
]

PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X"]
_STYLE: Any = {
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "svg.fonttype": "none",
    "svg.hashsalt": "evalsuite",
}


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def _escaped(func: Callable[..., Any]) -> Callable[..., str]:
    def label(*args: Any) -> str:
        return printable(str(func(*args)))

    return label


def to_svg(figure: Figure, title: str) -> str:
    """The figure as an SVG document string (deterministic ids), with an accessible title."""
    for text in figure.findobj(Text):
        # a model name, stratum or run id holding ESC or a bidi override: matplotlib's
        # 'Glyph 27 missing' warning would print it raw on stderr (and into the SVG)
        text.set_text(printable(text.get_text()))
    for axes in figure.axes:
        for axis in (axes.xaxis, axes.yaxis):
            names = axis.get_major_formatter()
            if isinstance(names, FixedFormatter):  # tick labels are drawn from these strings
                names.seq = [printable(str(name)) for name in names.seq]
            elif isinstance(names, FuncFormatter):  # set_yticks(ticks, labels) makes one
                names.func = _escaped(names.func)
    buffer = io.StringIO()
    with plt.rc_context(_STYLE):  # svg.hashsalt applies at save time: deterministic ids
        figure.savefig(
            buffer,
            format="svg",
            bbox_inches="tight",
            metadata={"Date": None, "Title": printable(title)},
        )
    plt.close(figure)
    svg = buffer.getvalue()
    return svg[svg.index("<svg") :]


def _label(run: dict[str, Any]) -> str:
    return f"{run['model']} ({run['run_id'][-6:]})"


def strata_forest(runs: Sequence[dict[str, Any]]) -> Figure:
    """Score with its interval per stratum, overall and weighted, one marker per run."""
    strata = sorted({s["stratum"] for r in runs for s in r["strata"]})
    # "weighted" only when a run's suite declares deployment weights (else it is "overall")
    weighted = ["weighted"] if any(r.get("weights") for r in runs) else []
    rows = [*weighted, "overall", *strata]
    with plt.rc_context(_STYLE):
        fig, ax = plt.subplots(figsize=(7.2, 0.32 * len(rows) * max(1, len(runs)) + 1.4))
        step = 0.8 / max(len(runs), 1)
        for k, run in enumerate(runs):
            by_name = {"overall": run["overall"], "weighted": run["weighted"]}
            by_name.update({s["stratum"]: s for s in run["strata"]})
            ys, xs, lows, highs = [], [], [], []
            for i, row in enumerate(rows):
                est = by_name.get(row)
                if est is None or not _finite(est["mean"]):
                    continue
                ys.append(len(rows) - 1 - i + 0.4 - step * (k + 0.5))
                xs.append(est["mean"])
                low, high = est["ci"]
                lows.append(est["mean"] - low if _finite(low) else 0.0)
                highs.append(high - est["mean"] if _finite(high) else 0.0)
            ax.errorbar(
                xs,
                ys,
                xerr=[lows, highs],
                fmt=MARKERS[k % len(MARKERS)],
                color=PALETTE[k % len(PALETTE)],
                capsize=2.5,
                markersize=5,
                label=_label(run),
                clip_on=False,  # a score of exactly 0 or 1 is drawn whole, not cut at the axis
            )
        ax.set_yticks(range(len(rows)), list(reversed(rows)))
        ax.axhline(len(strata) - 0.5, color="#999999", linewidth=0.6)
        ax.set_xlim(-0.05, 1.05)
        ax.set_xlabel(f"score (mean of item means; {runs[0]['level']:.0%} confidence interval)")
        ax.grid(axis="x", color="#dddddd", linewidth=0.6)
        ax.legend(
            loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=min(len(runs), 3), frameon=False
        )
    return fig


def pass_k_curves(runs: Sequence[dict[str, Any]]) -> Figure:
    """pass@k and pass^k against k, with item-level intervals."""
    with plt.rc_context(_STYLE):
        fig, axes = plt.subplots(1, 2, figsize=(7.2, 2.8), sharey=True)
        drawn = False
        for k, run in enumerate(runs):
            for ax, key in zip(axes, ("pass_at_k", "pass_hat_k"), strict=True):
                points = sorted(
                    (int(p["k"]), p[key], p[f"{key}_ci"])
                    for p in run.get("pass_k", [])
                    if _finite(p.get(key))
                )
                if not points:
                    continue
                drawn = True
                ks = [p[0] for p in points]
                means = [p[1] for p in points]
                lows = [p[1] - p[2][0] if _finite(p[2][0]) else 0.0 for p in points]
                highs = [p[2][1] - p[1] if _finite(p[2][1]) else 0.0 for p in points]
                ax.errorbar(
                    ks,
                    means,
                    yerr=[lows, highs],
                    marker=MARKERS[k % len(MARKERS)],
                    color=PALETTE[k % len(PALETTE)],
                    capsize=2.5,
                    label=_label(run),
                )
        for ax, title in zip(
            axes,
            ("pass@k: at least one of k attempts succeeds", "pass^k: all k attempts succeed"),
            strict=True,
        ):
            ax.set_title(title)
            ax.set_xlabel("k (attempts per item)")
            ax.set_ylim(-0.02, 1.02)
            ax.grid(color="#dddddd", linewidth=0.6)
            ax.xaxis.get_major_locator().set_params(integer=True)
        axes[0].set_ylabel("share of items (unbiased estimate)")
        if drawn:
            axes[1].legend(frameon=False, loc="best")
        else:
            # One epoch per item gives pass@1 only: say so instead of an empty legend.
            for ax in axes:
                ax.text(
                    0.5,
                    0.5,
                    "no pass@k estimate: needs repeated epochs",
                    ha="center",
                    va="center",
                    transform=ax.transAxes,
                    color="#555555",
                )
    return fig


def reliability_panel(runs: Sequence[dict[str, Any]]) -> Figure:
    """Variance split per run: between items, and attempt noise left in the K-epoch mean."""
    with plt.rc_context(_STYLE):
        fig, ax = plt.subplots(figsize=(7.2, 0.5 * len(runs) + 1.3))
        labels = []
        drawn = False  # the legend labels the first run drawn, whichever it is
        for k, run in enumerate(runs):
            rel = run["reliability"]
            between = rel.get("var_between", math.nan)
            within = rel.get("var_within", math.nan) / max(rel.get("epochs") or 1, 1)
            labels.append(_label(run))
            if not (_finite(between) and _finite(within)):
                # never a blank row: say why the split is undefined
                ax.text(
                    0.0,
                    k,
                    " n/a: " + str(rel.get("reason") or "variance split not estimable"),
                    va="center",
                    ha="left",
                    color="#555555",
                )
            else:
                ax.barh(
                    k,
                    between,
                    color=PALETTE[0],
                    hatch="",
                    label=None if drawn else "between items",
                )
                ax.barh(
                    k,
                    within,
                    left=between,
                    color=PALETTE[4],
                    hatch="//",
                    label=None if drawn else "attempt noise / K",
                )
                drawn = True
        ax.set_yticks(range(len(runs)), labels)
        ax.invert_yaxis()
        ax.set_xlabel("variance of an item's K-epoch mean (score units squared)")
        if drawn:  # no bar, no legend (and no matplotlib warning about an empty one)
            ax.legend(frameon=False, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=2)
        ax.grid(axis="x", color="#dddddd", linewidth=0.6)
    return fig


def comparison_forest(comparison: dict[str, Any], *, strata: bool = True) -> Figure:
    """Paired difference (candidate − baseline): weighted, overall and per stratum.

    The deployment-weighted row comes first when the suite declares weights. A difference
    whose interval is undefined is still drawn, labelled "CI n/a"; the axis is padded so a
    difference of ±1 is drawn whole (docs/design/result-model.md).
    """
    weighted = comparison.get("weighted") or {}
    rows: list[tuple[str, dict[str, Any]]] = []
    if weighted.get("weights"):
        rows.append(("deployment-weighted", weighted))
    rows.append(("unweighted" if rows else "overall", comparison))
    if strata:  # the report's first screen shows the overall rows only
        rows += [(s["stratum"], s) for s in comparison["strata"]]
    xs: list[float] = [0.0]
    with plt.rc_context(_STYLE):
        fig, ax = plt.subplots(figsize=(7.2, 0.34 * len(rows) + 1.3))
        for i, (_name, row) in enumerate(rows):
            y = len(rows) - 1 - i
            if not _finite(row.get("diff")):
                ax.text(0.0, y, "  n/a: no paired difference", va="center", color="#555555")
                continue
            low, high = row["ci"]
            xs += [row["diff"], *(v for v in (low, high) if _finite(v))]
            color = PALETTE[0] if i == 0 else "#333333"
            ax.errorbar(
                [row["diff"]],
                [y],
                xerr=[
                    [row["diff"] - low if _finite(low) else 0.0],
                    [high - row["diff"] if _finite(high) else 0.0],
                ],
                fmt="D" if i == 0 else "o",
                color=color,
                capsize=2.5,
                clip_on=False,
            )
            if not (_finite(low) and _finite(high)):
                ax.annotate(
                    "CI n/a",
                    (row["diff"], y),
                    xytext=(6, 0),
                    textcoords="offset points",
                    va="center",
                    color="#555555",
                    fontsize=8,
                )
        ax.axvline(0.0, color="#000000", linewidth=0.8)
        gate = comparison.get("gate")
        if gate:
            xs.append(-gate["margin"])
            ax.axvline(
                -gate["margin"],
                color=PALETTE[1],
                linestyle="--",
                linewidth=1.0,
                label=f"non-inferiority margin −{gate['margin']}",
            )
            ax.legend(frameon=False, loc="lower center", bbox_to_anchor=(0.5, 1.0))
        pad = max(0.05, 0.08 * (max(xs) - min(xs)))
        ax.set_xlim(min(xs) - pad, max(xs) + pad)
        ax.set_yticks(range(len(rows)), [r[0] for r in reversed(rows)])
        ax.set_xlabel(
            f"difference in score, candidate − baseline ({comparison['level']:.0%} CI"
            + ("; per stratum unadjusted, Holm p in table)" if strata else ")")
        )
        ax.grid(axis="x", color="#dddddd", linewidth=0.6)
    return fig


def validity_scatter(
    points: Sequence[dict[str, Any]], *, metric: str, fit: dict[str, Any] | None
) -> Figure:
    """Eval score against deployment outcome per model, intervals on both axes, fitted line."""
    with plt.rc_context(_STYLE):
        fig, ax = plt.subplots(figsize=(5.4, 4.0))
        for k, p in enumerate(points):
            xerr: Any = p.get("x_half_width")
            yerr: Any = p.get("y_half_width")
            ax.errorbar(
                [p["x"]],
                [p["y"]],
                xerr=[float(xerr)] if _finite(xerr) else None,
                yerr=[float(yerr)] if _finite(yerr) else None,
                fmt=MARKERS[k % len(MARKERS)],
                color=PALETTE[k % len(PALETTE)],
                capsize=2.5,
                label=p["model"],
            )
        if fit is not None and all(_finite(fit.get(k)) for k in ("slope", "intercept")):
            xs = [p["x"] for p in points]
            lo, hi = min(xs), max(xs)
            ax.plot(
                [lo, hi],
                [fit["intercept"] + fit["slope"] * lo, fit["intercept"] + fit["slope"] * hi],
                color="#000000",
                linestyle="--",
                linewidth=1.0,
                label=f"Deming fit (slope {fit['slope']:.2f})",
            )
        ax.set_xlabel("eval score (suite mean, 95% CI)")
        ax.set_ylabel(f"deployment outcome: {metric}")
        ax.grid(color="#dddddd", linewidth=0.6)
        ax.legend(frameon=False, fontsize=7, loc="best")
    return fig


def validity_over_time_plot(points: Sequence[dict[str, Any]]) -> Figure:
    """Spearman correlation (with its interval) as model versions were added."""
    with plt.rc_context(_STYLE):
        fig, ax = plt.subplots(figsize=(5.4, 2.8))
        ns = [p["n"] for p in points]
        rs = [p["spearman"] for p in points]
        lows = [p["spearman_ci"][0] for p in points]
        highs = [p["spearman_ci"][1] for p in points]
        ax.fill_between(ns, lows, highs, color=PALETTE[5], alpha=0.35, label="95% interval")
        ax.plot(ns, rs, marker="o", color=PALETTE[0], label="Spearman r_s")
        ax.axhline(0.0, color="#000000", linewidth=0.6)
        ax.set_ylim(-1.05, 1.05)
        ax.set_xlabel("model versions with an observed outcome (in order of observation)")
        ax.set_ylabel("rank correlation with outcome")
        ax.grid(color="#dddddd", linewidth=0.6)
        ax.legend(frameon=False, loc="lower right")
    return fig
