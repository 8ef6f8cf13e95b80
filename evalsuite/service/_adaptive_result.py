"""An adaptive run's result (`run --adaptive`): its rounds, intervals and why it stopped.

`AdaptiveResult` is what `run_adaptive` returns and what the report reads back from the
store (`adaptive_result`); `adaptive_view` is its one view, which the terminal (`run`),
Markdown and HTML (the report's "Adaptive runs") and JSON (`run --json`'s ``adaptive``)
render. Its JSON form is the summary as the run keeps it in the store (`Store.adaptive`), so
`--json` keeps its field names, and a field the statistics add reaches it with no edit here
(docs/design/adaptive.md, "Output").
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from evalsuite._core.jsonout import JsonObject
from evalsuite.errors import IntegrityError
from evalsuite.service._adaptive import adaptive_file, level_text, method_name
from evalsuite.service._format import fmt, fmt_ci, fmt_g
from evalsuite.service._views import Column, ResultView, TableView, dedupe

if TYPE_CHECKING:
    from evalsuite._core.layout import Layout
    from evalsuite.store import Store

__all__ = [
    "AdaptiveResult",
    "AdaptiveRound",
    "AdaptiveVersus",
    "adaptive_result",
    "adaptive_view",
]

Interval = tuple[float | None, float | None]


def _as_float(value: object) -> float | None:
    """A finite number as float, else None (JSON's null, NaN, a missing field)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _as_int(value: object) -> int:
    number = _as_float(value)
    return int(number) if number is not None else 0


def _as_interval(value: object) -> Interval | None:
    if not isinstance(value, Sequence) or isinstance(value, str) or len(value) != 2:
        return None
    return (_as_float(value[0]), _as_float(value[1]))


def _as_text(value: object) -> str | None:
    return None if value is None else str(value)


@dataclass(frozen=True, slots=True)
class AdaptiveRound:
    """One round: what it ran and the interval after it.

    Attributes:
        index: 1 for the first round.
        attempts: attempts run in this round.
        items: distinct items among them.
        harness_errors: its attempts that ended in a harness error (no score).
        estimate: the suite score after the round.
        ci: the anytime-valid interval after the round.
        calls: attempts so far, this round included.
        difference_ci: with ``--versus``: the interval of the difference after the round.
    """

    index: int
    attempts: int
    items: int
    harness_errors: int
    estimate: float | None
    ci: Interval | None
    calls: int
    difference_ci: Interval | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, object]) -> AdaptiveRound:
        """A round from its JSON form (`AdaptiveRun.to_dict`'s ``rounds``)."""
        return cls(
            index=_as_int(d.get("round")),
            attempts=_as_int(d.get("attempts")),
            items=_as_int(d.get("items")),
            harness_errors=_as_int(d.get("harness_errors")),
            estimate=_as_float(d.get("estimate")),
            ci=_as_interval(d.get("ci")),
            calls=_as_int(d.get("calls")),
            difference_ci=_as_interval(d.get("difference_ci")),
        )


@dataclass(frozen=True, slots=True)
class AdaptiveVersus:
    """An adaptive run's verdict against the stored run it ran ``--versus``.

    Attributes:
        run_id: the stored run.
        estimate: its score, which the sequence is conditioned on.
        method: how its score enters the comparison.
        verdict: ``better``, ``worse``, ``noninferior``... or None (undecided).
        margin: the non-inferiority margin.
        alpha_sequence: the confidence sequence's α.
        final_alpha: at the budget, the full run's paired t's α (None: not reached).
    """

    run_id: str
    estimate: float | None
    method: str | None
    verdict: str | None
    margin: float | None
    alpha_sequence: float | None
    final_alpha: float | None

    @classmethod
    def from_dict(cls, d: Mapping[str, object]) -> AdaptiveVersus:
        """The ``versus`` block of the summary."""
        final = d.get("final_test")
        return cls(
            run_id=str(d.get("run_id")),
            estimate=_as_float(d.get("estimate")),
            method=_as_text(d.get("method")),
            verdict=_as_text(d.get("verdict")),
            margin=_as_float(d.get("margin")),
            alpha_sequence=_as_float(d.get("alpha_sequence")),
            final_alpha=_as_float(final.get("alpha")) if isinstance(final, Mapping) else None,
        )


@dataclass(frozen=True, slots=True)
class AdaptiveResult:
    """What an adaptive run found: its interval, its rounds and why it stopped.

    Attributes:
        run_id: the run.
        method: the confidence sequence (``betting_cs_hedged_target``...).
        estimate: the suite score it stopped on.
        ci: its anytime-valid interval, valid at whichever round the run stopped.
        level: the interval's level.
        calls: attempts run.
        budget: attempts it could have run.
        items: items of the run.
        stop_reason: why it stopped.
        rounds: each round, in order.
        per_item: attempts per item: (min, median, max).
        versus: its verdict against a stored run (``--versus``), or None.
        summary: the JSON form (`to_dict`), as the store keeps it.
        estimand: what the interval covers: ``suite_items`` or ``item_population`` (None:
            a run recorded before estimands were named: ``suite_items``).
        estimand_text: the estimand in words.
        interval: ``anytime-valid`` (a confidence sequence) or ``repeated`` (the
            group-sequential repeated confidence interval of ``--versus``).
    """

    run_id: str
    method: str
    estimate: float | None
    ci: Interval | None
    level: float | None
    calls: int
    budget: int
    items: int
    stop_reason: str | None
    rounds: tuple[AdaptiveRound, ...]
    per_item: tuple[float | None, float | None, float | None]
    versus: AdaptiveVersus | None
    summary: JsonObject = field(repr=False, compare=False)
    estimand: str | None = None
    estimand_text: str | None = None
    interval: str = "anytime-valid"

    @classmethod
    def from_dict(cls, summary: Mapping[str, object]) -> AdaptiveResult:
        """The result of a stored summary (`Store.adaptive`, or `run --json`'s ``adaptive``)."""
        rounds = summary.get("rounds")
        per_item = summary.get("attempts_per_item")
        per = per_item if isinstance(per_item, Mapping) else {}
        versus = summary.get("versus")
        return cls(
            run_id=str(summary.get("run_id")),
            method=str(summary.get("method")),
            estimate=_as_float(summary.get("estimate")),
            ci=_as_interval(summary.get("ci")),
            level=_as_float(summary.get("level")),
            calls=_as_int(summary.get("calls")),
            budget=_as_int(summary.get("budget")),
            items=_as_int(summary.get("items")),
            stop_reason=_as_text(summary.get("stop_reason")),
            rounds=tuple(
                AdaptiveRound.from_dict(r)
                for r in (rounds if isinstance(rounds, Sequence) else ())
                if isinstance(r, Mapping)
            ),
            per_item=(
                _as_float(per.get("min")),
                _as_float(per.get("median")),
                _as_float(per.get("max")),
            ),
            versus=AdaptiveVersus.from_dict(versus) if isinstance(versus, Mapping) else None,
            summary={str(k): v for k, v in summary.items()},
            estimand=_as_text(summary.get("estimand")),
            estimand_text=_as_text(summary.get("estimand_text")),
            interval=str(summary.get("interval") or "anytime-valid"),
        )

    def to_dict(self) -> JsonObject:
        """The summary's JSON form (`run --json`'s ``adaptive``; the report's sections)."""
        return dict(self.summary)


def adaptive_result(store: Store, layout: Layout | None, run_id: str) -> AdaptiveResult:
    """The stored result of adaptive run `run_id`.

    Read from the store; a run recorded before the store kept summaries (schema version 5)
    from its `adaptive_file`, when `layout` is given.

    Raises:
        IntegrityError: the run's summary is missing or unreadable.
    """
    stored = store.adaptive(run_id)
    if stored is not None:
        return AdaptiveResult.from_dict(stored)
    where = f"its rounds summary {adaptive_file(layout, run_id)}" if layout else "its summary"
    try:
        if layout is None:
            raise OSError("no project")
        value = json.loads(adaptive_file(layout, run_id).read_text(encoding="utf-8"))
        if not isinstance(value, dict):
            raise json.JSONDecodeError("not a JSON object", "", 0)
    except (OSError, json.JSONDecodeError) as exc:
        raise IntegrityError(
            f"adaptive run {run_id}: {where} cannot be read ({type(exc).__name__}), and the "
            f"store {store.display_url} holds none; a summary is recorded when the run "
            "finishes, so the run was stopped early or the summary was removed. Re-run it "
            "adaptively, or restore the file."
        ) from None
    return AdaptiveResult.from_dict(value)


def _versus_phrase(v: AdaptiveVersus) -> str:
    verdict = v.verdict or "undecided"
    return f"against run {v.run_id}: {verdict} (margin {fmt_g(v.margin)})"


def adaptive_view(result: AdaptiveResult) -> ResultView:
    """The one view of an adaptive run: the terminal, Markdown, HTML and JSON lay it out."""
    level = level_text(result.level)
    versus = result.versus
    headline = (
        f"suite score {fmt(result.estimate)}, {result.interval} {level} interval "
        f"{fmt_ci(result.ci)}: {result.calls} of {result.budget} attempts on {result.items} "
        f"items in {len(result.rounds)} round(s)"
        + (f"; {_versus_phrase(versus)}" if versus is not None else "")
        + "."
    )
    with_difference = any(r.difference_ci is not None for r in result.rounds)
    columns = (
        Column("round"),
        Column("attempts"),
        Column("items"),
        Column("harness errors"),
        Column("estimate"),
        Column("interval", numeric=False),
        Column("calls"),
        *((Column("difference interval", numeric=False),) if with_difference else ()),
    )
    rows = tuple(
        (
            str(r.index),
            str(r.attempts),
            str(r.items),
            str(r.harness_errors),
            fmt(r.estimate),
            fmt_ci(r.ci),
            str(r.calls),
            *((fmt_ci(r.difference_ci, signed=True),) if with_difference else ()),
        )
        for r in result.rounds
    )
    low, median, high = result.per_item
    facts = [
        f"method {result.method} at {level}: {method_name(result.method)}",
        *(
            [f"estimand ({result.estimand}): {result.estimand_text}"]
            if result.estimand and result.estimand_text
            else []
        ),
        f"attempts per item: min {fmt_g(low)}, median {fmt_g(median)}, max {fmt_g(high)}",
        f"Stopped: {result.stop_reason or 'n/a'}.",
    ]
    if versus is not None:
        final = (
            f"; decided at the budget by the full run's paired t at α {fmt_g(versus.final_alpha)}"
            if versus.final_alpha is not None
            else ""
        )
        alpha_name = "α" if result.interval == "repeated" else "sequence α"
        facts.append(
            f"Against run {versus.run_id} ({versus.method}: {fmt(versus.estimate)}): verdict "
            f"{versus.verdict or 'undecided'} (margin {fmt_g(versus.margin)}, {alpha_name} "
            f"{fmt_g(versus.alpha_sequence)}){final}."
        )
    errors = sum(r.harness_errors for r in result.rounds)
    caveats = (
        [f"{errors} attempt(s) ended in a harness error: no score (docs/design/outcomes.md)"]
        if errors
        else []
    )
    target = result.summary.get("target")
    if isinstance(target, Mapping) and not target.get("reached"):
        caveats.append(
            f"the interval did not reach the target ±{fmt_g(_as_float(target.get('halfwidth')))}"
            f": {result.stop_reason or 'see the run'}"
        )
    with_ci = [r.difference_ci for r in result.rounds if r.difference_ci is not None]
    last = with_ci[-1] if with_ci else None
    if versus is not None and last is not None:
        facts.append(f"difference after the last round: {fmt_ci(last, signed=True)}")
    return ResultView(
        kind="adaptive",
        title=f"adaptive ({result.method}): run {result.run_id}",
        headline=headline,
        alerts=(),
        gate_line=None,
        tables=(TableView("rounds", columns, rows),),
        facts=tuple(facts),
        caveats=dedupe(caveats),
        payload=result.to_dict(),
    )
