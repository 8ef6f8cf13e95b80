"""Why it failed: the review's statistics as the report's section and as terminal lines.

`why_it_failed` is the report's section after the verdict (docs/review.md): per run the top
failure modes with their rate, interval, count and example transcripts, the scanners'
findings and checks, the harness re-classification; per comparison the modes that changed.
It reads labels and findings from the store only (`evalsuite.review.review_summary`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evalsuite._core.layout import Layout
from evalsuite.service._format import fmt, fmt_ci, fmt_p, fmt_pct, fmt_signed

if TYPE_CHECKING:
    from evalsuite.store import Store

__all__ = ["review_lines", "why_it_failed"]


def why_it_failed(
    store: Store,
    layout: Layout,
    run_ids: Sequence[str],
    *,
    level: float = 0.95,
    alpha: float = 0.05,
    seed: int = 0,
) -> dict[str, Any]:
    """The report's "why it failed" section of `run_ids` (runs without a taxonomy skipped).

    A run with no label and no scanner finding is left out of ``runs`` (nothing to say);
    ``lines`` is the section as text (the Markdown report's).
    """
    from evalsuite.review import TOP_MODES, StatsOptions, review_summary

    payload = review_summary(
        store,
        layout,
        run_ids,
        options=StatsOptions(level=level, alpha=alpha, seed=seed),
        skip_missing=True,
    )
    shown = [r for r in payload["runs"] if r["labelled"] or r["scanners"]]
    for run in shown:
        run["top_modes"] = [m for m in run["modes"] if m["count"]][:TOP_MODES]
    payload["runs"] = shown
    compared = {r["run_id"] for r in shown}
    payload["comparisons"] = [
        c
        for c in payload["comparisons"]
        if c["baseline"] in compared and c["candidate"] in compared
    ]
    payload["lines"] = review_lines(payload)
    return payload


def _mode_line(mode: dict[str, Any]) -> str:
    examples = ", ".join(e["attempt"] for e in mode["examples"]) or "none"
    kind = " (harness fault)" if mode["kind"] == "harness" else ""
    return (
        f"  {mode['mode']}{kind}: {fmt_pct(mode['rate'])} of labelled attempts "
        f"{fmt_ci(mode['ci'])}, {mode['count']} attempts; e.g. {examples}"
    )


def _run_lines(run: dict[str, Any]) -> list[str]:
    lines = [
        f"{run['run_id']} ({run['model']}): {run['labelled']} of {run['attempts']} attempts "
        f"labelled (taxonomy {run['taxonomy']['suite']} v{run['taxonomy']['version']})"
    ]
    modes = run.get("top_modes", [m for m in run["modes"] if m["count"]])
    lines += [_mode_line(m) for m in modes] or ["  no failure mode labelled yet"]
    for scanner in run["scanners"]:
        lines.append(
            f"  scanner {scanner['scanner']}: {scanner['flagged']} of {scanner['attempts']} "
            f"attempts flagged ({fmt_pct(scanner['share'])})"
        )
    for check in run["scanner_checks"]:
        lines.append(
            f"  scanner {check['scanner']} against labels of {check['mode']}: precision "
            f"{fmt(check['precision'])}, recall {fmt(check['recall'])} over {check['labelled']} "
            "labelled attempts"
        )
    again = run.get("reclassified")
    if again:
        state = "valid" if again["valid_after"] else "INVALID"
        lines.append(
            f"  harness modes re-classify {len(again['reclassified'])} attempts as harness "
            f"errors (recomputed): error rate {fmt_pct(again['error_rate_before'])} -> "
            f"{fmt_pct(again['error_rate_after'])} (threshold {fmt_pct(again['threshold'])}, "
            f"{state}); score {fmt(again['score_before'])} -> {fmt(again['score_after'])}"
        )
    sat = run["saturation"]
    lines.append(
        f"  saturation: {sat['modes_seen']} modes seen in {sat['labels']} labels, "
        f"{sat['new_in_last_k']} new in the last {sat['k']}"
    )
    return lines


def review_lines(payload: dict[str, Any]) -> list[str]:
    """`review --stats` (and the report's section) as plain lines."""
    lines: list[str] = []
    for run in payload["runs"]:
        lines += _run_lines(run)
    for comparison in payload["comparisons"]:
        lines.append(
            f"{comparison['candidate']} vs {comparison['baseline']}: paired over "
            f"{comparison['paired_items']} items labelled in both (Holm over the modes)"
        )
        for change in comparison["changes"]:
            lines.append(
                f"  {change['mode']}: {fmt_pct(change['baseline_rate'])} -> "
                f"{fmt_pct(change['candidate_rate'])}, change {fmt_signed(change['difference'])} "
                f"{fmt_ci(change['ci'], signed=True)}, Holm p {fmt_p(change['p_holm'])}: "
                f"{change['direction']}"
            )
    for skipped in payload.get("skipped", []):
        lines.append(f"{skipped['run_id']}: not reviewed ({skipped['reason']})")
    return lines
