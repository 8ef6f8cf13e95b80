"""An adaptive run's anytime-valid interval, first in `score`, `compare` and the report.

An adaptive run (`evalsuite run --adaptive`, docs/design/adaptive.md) planned its attempts
from the data and stopped when its confidence sequence was narrow enough or decided. A
fixed-sample interval of its attempts (Wilson with the effective n, a paired t) assumes a
sample size fixed in advance, which the run did not have: it is not valid under the stopping
rule. The interval that is valid is the one the run stopped on, kept with the run in the
store (`Store.adaptive`, schema version 5; earlier runs in the project's `adaptive_file`).
This module reads it and words it for the views (docs/design/adaptive.md, "Output").
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalsuite._core.jsonout import JsonObject
from evalsuite.service._format import fmt, fmt_ci, is_number

if TYPE_CHECKING:  # the views import this module: `suites` and `runs` load no store here
    from evalsuite._core.layout import Layout
    from evalsuite.store import RunRecord, Store

__all__ = [
    "adaptive_block",
    "adaptive_file",
    "adaptive_summary",
    "anytime_phrase",
    "fixed_interval_note",
    "level_text",
    "method_name",
    "versus_phrase",
]

_NAMES = {
    "betting_cs_hedged_target": "hedged betting confidence sequence aimed at the target "
    "half-width (Waudby-Smith & Ramdas 2024)",
    "betting_cs_hedged_wor": "hedged betting confidence sequence over the full run's slots, "
    "sampled without replacement (Waudby-Smith & Ramdas 2020, 2024)",
    "group_sequential_lan_demets_pocock": "group-sequential repeated confidence intervals, "
    "Lan-DeMets Pocock-type alpha spending for better/worse (Jennison & Turnbull 2000, ch. 9)",
    "group_sequential_lan_demets_obrien_fleming": "group-sequential repeated confidence "
    "intervals, Lan-DeMets O'Brien-Fleming-type alpha spending",
    "margin_group_sequential_lan_demets_obrien_fleming": "the margin claims by two one-sided "
    "tests with Lan-DeMets O'Brien-Fleming-type spending",
    "paired_t": "paired t on item differences (the full fixed run's claim)",
    "stein_few_stage_equal_epochs": "few-stage design: a 2-epoch pilot, then equal epochs on "
    "every item planned from the variance so far (Stein 1945), until the interval is +-H",
    "stein_two_stage_equal_epochs": "two-stage design: a 2-epoch pilot, then equal epochs on "
    "every item planned from the pilot's variances (Stein 1945), until the interval is +-H",
    "pilot_variance_satterthwaite_t": "Stein's interval of the suite's item mean: the pilot's "
    "item variances at the epochs run, t on their Welch-Satterthwaite degrees of freedom "
    "(0.9 of alpha)",
    "item_means_t": "weighted t interval of the item means (the item population), never "
    "narrower than the pilot's spreads give (0.9 of alpha)",
}


def adaptive_file(layout: Layout, run_id: str) -> Path:
    """Where adaptive runs recorded before store schema version 5 kept their summaries."""
    return layout.state / "adaptive" / f"{run_id}.json"


def method_name(method: str) -> str:
    """The confidence sequence a method string names, in words (``a+b``: each part)."""
    parts = []
    for part in method.split("+"):
        if part in _NAMES:
            parts.append(_NAMES[part])
        elif part == "paired_t_final":
            parts.append("at the budget, the full run's paired t")
        elif part.startswith("two_stage_epochs_"):
            first, full = part.removeprefix("two_stage_epochs_").split("_", 1)
            parts.append(
                f"{first} epochs on every item, {full} on items with mixed outcomes "
                "(unbiased two-stage estimate)"
            )
        else:
            parts.append(part)
    return "; ".join(parts)


def adaptive_summary(store: Store, layout: Layout | None, run: RunRecord) -> JsonObject | None:
    """The adaptive summary of `run`, or None (not an adaptive run, or none can be read).

    Read from the store, else (runs recorded before store schema version 5) from the
    project's `adaptive_file` when `layout` is given.
    """
    if not (run.spec or {}).get("adaptive"):
        return None
    stored = store.adaptive(run.run_id)
    if stored is not None or layout is None:
        return stored
    try:
        value = json.loads(adaptive_file(layout, run.run_id).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return value if isinstance(value, dict) else None


def adaptive_block(summary: Mapping[str, Any]) -> JsonObject:
    """The ``adaptive`` block of `score --json`: the stored summary, its sequence named.

    Adds ``name`` (the method in words), ``interval`` (``anytime-valid``: valid at the round
    the run stopped, whichever it was) and, with ``--versus``, ``versus.difference_ci`` (the
    last round's anytime-valid interval of the difference, at the sequence's level).
    """
    out = dict(summary)
    out["name"] = method_name(str(summary.get("method", "")))
    out["interval"] = summary.get("interval", "anytime-valid")
    versus = summary.get("versus")
    rounds = summary.get("rounds") or []
    if isinstance(versus, dict) and rounds:
        last = versus.get("difference_ci") or rounds[-1].get("difference_ci")
        out["versus"] = versus | {"difference_ci": last}
    return out


def level_text(level: Any) -> str:
    """``95%``, ``99.5%``: a level as few digits as it needs."""
    return f"{float(level) * 100:g}%" if is_number(level) else "n/a"


def anytime_phrase(block: Mapping[str, Any]) -> str:
    """``anytime-valid 95% interval [0.402, 0.731] (betting_cs_hedged_target: ...)``."""
    return (
        f"{block.get('interval') or 'anytime-valid'} {level_text(block.get('level'))} interval "
        f"{fmt_ci(block.get('ci'))} "
        f"({block.get('method')}: {block.get('name')})"
        + (f" of {block.get('estimand_text')}" if block.get("estimand_text") else "")
    )


def versus_phrase(block: Mapping[str, Any] | None, baseline: str) -> str | None:
    """The adaptive run's own verdict against `baseline`, when it ran ``--versus`` it."""
    versus = (block or {}).get("versus")
    if not isinstance(versus, Mapping) or versus.get("run_id") != baseline:
        return None
    alpha: Any = versus.get("alpha_sequence")
    level = level_text(1 - float(alpha)) if is_number(alpha) else "n/a"
    final = versus.get("final_test")
    decided = (
        f"decided at the budget by the full run's paired t at α {final.get('alpha')}"
        if isinstance(final, Mapping)
        else "valid under its stopping rule"
    )
    return (
        f"adaptive run against this baseline: {versus.get('verdict')} "
        f"({(block or {}).get('interval') or 'anytime-valid'} {level} "
        f"interval of the difference {fmt_ci(versus.get('difference_ci'), signed=True)}, "
        f"{(block or {}).get('method')}; {decided})"
    )


def fixed_interval_note(block: Mapping[str, Any], fixed_method: str) -> str:
    """The caveat that the fixed-sample interval is secondary for an adaptive run."""
    return (
        f"adaptive run: its attempts were planned from the data and it stopped by its rule "
        f"({block.get('stop_reason') or 'see the run'}); the fixed-sample intervals "
        f"({fixed_method}) assume a sample size fixed in advance and are not valid under that "
        f"stopping rule. Its valid interval is the {anytime_phrase(block)}, of the "
        + (
            f"score {fmt(block.get('estimate'))} (docs/design/sequential.md)"
            if block.get("estimand") == "item_population"
            else f"suite score {fmt(block.get('estimate'))} over these frozen items "
            "(docs/design/adaptive.md)"
        )
    )
