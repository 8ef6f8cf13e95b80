"""The report's "Adaptive runs" section: rounds, where attempts went, intervals, why it stopped.

An adaptive run (`evalsuite run --adaptive`, docs/design/adaptive.md) keeps its summary with
the run in the results store (`Store.adaptive`, schema version 5); runs recorded before that
kept it in the project's `adaptive_file`, which is still read for them. This module reads it
for the report and renders it as Markdown (the HTML is the template include
``_adaptive.html.j2``). Self-contained: the report's layout only includes it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from evalsuite._core.layout import Layout
from evalsuite.errors import IntegrityError
from evalsuite.service import (
    adaptive_file,  # defined once, where score reads it too
    fmt,
)
from evalsuite.store import Store

__all__ = ["adaptive_file", "adaptive_sections", "md_adaptive"]


def adaptive_sections(
    layout: Layout, runs: Sequence[dict[str, Any]], store: Store
) -> list[dict[str, Any]]:
    """The summaries of the adaptive runs among `runs` (payloads with ``spec``), in order.

    Each is read from the store; a run recorded before the store kept summaries (schema
    version 5) is read from its `adaptive_file`.

    Raises:
        IntegrityError: an adaptive run's summary is missing or unreadable.
    """
    sections = []
    for run in runs:
        if not (run.get("spec") or {}).get("adaptive"):
            continue
        stored = store.adaptive(run["run_id"])
        if stored is not None:
            sections.append(stored)
            continue
        path = adaptive_file(layout, run["run_id"])
        try:
            sections.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, json.JSONDecodeError) as exc:
            raise IntegrityError(
                f"adaptive run {run['run_id']}: its rounds summary {path} cannot be read "
                f"({type(exc).__name__}), and the store {store.display_url} holds none; a "
                "summary is recorded when the run finishes, so the run was stopped early or "
                "the summary was removed. Re-run it adaptively, or restore the file."
            ) from None
    return sections


def md_adaptive(sections: Sequence[dict[str, Any]]) -> list[str]:
    """Markdown lines of the section (none without adaptive runs)."""
    if not sections:
        return []
    lines = ["## Adaptive runs", ""]
    for s in sections:
        per_item = s["attempts_per_item"]
        lines += [
            f"### {s['run_id']}",
            "",
            f"Method `{s['method']}` at {s['level']:.0%}: suite score {fmt(s['estimate'])} "
            f"[{fmt(s['ci'][0])}, {fmt(s['ci'][1])}]; {s['calls']} of {s['budget']} "
            f"attempts on {s['items']} items (per item: min {per_item['min']}, median "
            f"{per_item['median']:g}, max {per_item['max']}).",
            "",
            f"Stopped: {s['stop_reason']}.",
            "",
            "| round | attempts | items | harness errors | estimate | interval | calls |",
            "|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {r['round']} | {r['attempts']} | {r['items']} | {r['harness_errors']} | "
            f"{fmt(r['estimate'])} | [{fmt(r['ci'][0])}, {fmt(r['ci'][1])}] | {r['calls']} |"
            for r in s["rounds"]
        ]
        lines.append("")
        if s.get("versus"):
            v = s["versus"]
            lines += [
                f"Against run {v['run_id']} ({v['method']}: {fmt(v['estimate'])} "
                f"[{fmt(v['ci'][0])}, {fmt(v['ci'][1])}]): verdict **{v['verdict']}** "
                f"(margin {v['margin']:g}).",
                "",
            ]
    return lines
