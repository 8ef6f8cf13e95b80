"""`items`: the item analysis of a suite version, its one view and its CSV form.

The use case (`items`) reads the store through `evalsuite.items` and returns a typed
`ItemsResult`; `items_view` words it once for the terminal, the Markdown and HTML report and
``--json`` (`ResultView.to_dict`: the ``items --json`` payload plus ``headline`` and
``caveats``). `item_sections` is the report's item-analysis section: the same result for each
suite version of the report that enough models ran (docs/design/items.md).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalsuite.service._format import fmt, fmt_counts
from evalsuite.service._views import Column, ResultView, TableView, dedupe

if TYPE_CHECKING:
    from evalsuite._core.jsonout import JsonObject
    from evalsuite._core.layout import Layout
    from evalsuite.items import ItemAnalysis, ItemRow, StratumWatch
    from evalsuite.store import Store

__all__ = [
    "ITEMS_CSV_COLUMNS",
    "MIN_REPORT_MODELS",
    "ItemsResult",
    "item_sections",
    "items",
    "items_csv",
    "items_view",
]

MIN_REPORT_MODELS = 3
"""The report shows the section for a suite version with stored runs of at least this many
models (fewer: no item-rest correlation can be computed)."""

ITEMS_CSV_COLUMNS = (
    "item_id", "stratum", "models", "planned", "solve_rate", "solve_ci_lo", "solve_ci_hi",
    "harness_errors", "harness_error_rate", "limits", "limit_rate", "item_rest_r",
    "item_rest_ci_lo", "item_rest_ci_hi", "irt_a", "irt_a_se", "irt_b", "flip_models",
    "multi_epoch_models", "flip_expected", "epoch_variance", "noise_variance", "flaky_q",
    "harness_error_q", "seed_flip_models", "stratum_watched", "flags", "flag_reasons",
)  # fmt: skip
"""Columns of ``items --csv`` (one row per item; lists joined by ``;``, reasons as JSON)."""


@dataclass(frozen=True, slots=True)
class ItemsResult:
    """The item analysis of one suite version, as `evalsuite items` shows it.

    Attributes:
        analysis: the statistics (`evalsuite.items.ItemAnalysis`).
        csv_file: where ``--csv`` wrote one row per item, if asked.
    """

    analysis: ItemAnalysis
    csv_file: Path | None = None

    @property
    def ref(self) -> str:
        """``suite@version``."""
        return f"{self.analysis.suite}@{self.analysis.version}"

    @property
    def flagged(self) -> list[ItemRow]:
        """The items carrying at least one flag, in item order."""
        return [i for i in self.analysis.items if i.flags]

    def to_dict(self) -> JsonObject:
        """The ``items --json`` payload (with ``csv`` when a CSV was written)."""
        payload: JsonObject = self.analysis.to_dict()
        if self.csv_file is not None:
            payload["csv"] = str(self.csv_file)
        return payload

    def section_dict(self) -> JsonObject:
        """The report's ``item_analysis`` entry: the payload and its ``flagged`` items."""
        return self.analysis.to_dict() | {"flagged": [i.to_dict() for i in self.flagged]}


def items(  # noqa: PLR0913 - the options of `items`, each named
    store: Store,
    layout: Layout,
    suite: str,
    version: str,
    *,
    level: float = 0.95,
    saturation: float | None = None,
    deterministic: Collection[str] = (),
    allow_invalid: bool = False,
) -> ItemsResult:
    """The item analysis of ``suite@version`` over its complete, valid stored runs.

    Raises:
        NotFoundError: unknown suite or version, or no run of it stored (exit 2).
        InsufficientDataError: no stored run of it is complete and valid.
    """
    from evalsuite.items import DEFAULT_SATURATION, item_analysis

    analysis = item_analysis(
        store,
        layout,
        suite,
        version,
        level=level,
        threshold=DEFAULT_SATURATION if saturation is None else saturation,
        deterministic=deterministic,
        allow_invalid=allow_invalid,
    )
    return ItemsResult(analysis)


def item_sections(
    store: Store, layout: Layout, runs: Iterable[Mapping[str, Any]], *, level: float
) -> list[ItemsResult]:
    """The item analysis of each suite version of `runs` that enough models ran, in order."""
    from evalsuite.items import analysed_runs

    sections = []
    seen: set[tuple[str, str]] = set()
    for run in runs:
        suite, version = run.get("suite"), run.get("version")
        if not suite or not version or not run.get("manifest") or (suite, version) in seen:
            continue
        seen.add((suite, version))
        # the runs `items` reads: complete and valid (docs/design/items.md, "What is read")
        read, _ = analysed_runs([r for r in store.list_runs(suite=suite) if r.version == version])
        if len({r.model for r in read}) < MIN_REPORT_MODELS:
            continue
        sections.append(items(store, layout, suite, version, level=level))
    return sections


# ----------------------------------------------------------------------------- CSV


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)  # every digit: the CSV is data, not a display
    return str(value)


def items_csv(result: ItemsResult) -> str:
    """The ``--csv`` file's text: one row per item, `ITEMS_CSV_COLUMNS`."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(ITEMS_CSV_COLUMNS)
    for i in result.analysis.items:
        row = i.to_dict()
        row["solve_ci_lo"], row["solve_ci_hi"] = i.solve_ci
        row["item_rest_ci_lo"], row["item_rest_ci_hi"] = i.item_rest_ci
        row["seed_flip_models"] = ";".join(i.seed_flip_models)
        row["flags"] = ";".join(i.flags)
        row["flag_reasons"] = json.dumps(i.flag_reasons, sort_keys=True) if i.flags else ""
        writer.writerow([_cell(row[c]) for c in ITEMS_CSV_COLUMNS])
    return out.getvalue()


# ----------------------------------------------------------------------------- view


def _models_table(analysis: ItemAnalysis) -> TableView:
    return TableView(
        "models",
        (
            Column("model", numeric=False),
            Column("mean"),
            Column("items"),
            Column("ability"),
            Column("ability sd", essential=False),
            Column("deterministic", numeric=False),
        ),
        tuple(
            (
                m.model,
                fmt(m.mean),
                fmt(m.items),
                fmt(m.ability, 2),
                fmt(m.ability_sd, 2),
                "yes" if m.deterministic else "no",
            )
            for m in analysis.models
        ),
    )


def _watch_verdict(stratum: StratumWatch) -> str:
    return "WATCH: " + "; ".join(stratum.reasons) if stratum.watch else "ok"


def _watch_table(analysis: ItemAnalysis) -> TableView:
    def p_value(s: StratumWatch) -> str:
        return fmt(s.separation.p_value) if s.separation is not None else "n/a"

    return TableView(
        "saturation watch",
        (
            Column("stratum", numeric=False),
            Column("best model", numeric=False),
            Column("best score"),
            Column("spread"),
            Column("noise floor"),
            Column("equal-scores p", essential=False),
            Column("verdict", numeric=False),
        ),
        tuple(
            (
                s.stratum,
                s.best_model,
                fmt(s.best_score),
                fmt(s.spread, 4),
                fmt(s.noise_floor, 4) if s.noise_floor is not None else "unknown",
                p_value(s),
                "WATCH" if s.watch else "ok",
            )
            for s in analysis.strata
        ),
    )


def _flagged_table(result: ItemsResult) -> TableView:
    return TableView(
        "flagged items",
        (
            Column("item", numeric=False),
            Column("stratum", numeric=False),
            Column("solve rate"),
            Column("item-rest r"),
            Column("flags", numeric=False),
            Column("reasons", numeric=False),
        ),
        tuple(
            (
                i.item_id,
                i.stratum,
                fmt(i.solve_rate),
                fmt(i.item_rest_r, 2),
                ", ".join(i.flags),
                "; ".join(f"{f}: {i.flag_reasons[f]}" for f in i.flags),
            )
            for i in result.flagged
        ),
    )


def _irt_fact(irt: Mapping[str, Any]) -> str:
    if not irt["fitted"]:
        return f"2PL IRT: not fitted: {irt['reason']}"
    state = "converged" if irt["converged"] else "NOT converged"
    versus = ", ".join(f"{k} {fmt(v)}" for k, v in (irt.get("ability_vs_raw_score") or {}).items())
    return f"2PL IRT: {state} in {irt['iterations']} iterations ({irt['quadrature']})" + (
        f"; abilities vs raw scores: {versus}" if versus else ""
    )


def items_view(result: ItemsResult) -> ResultView:
    """What `evalsuite items`, the report's item section and ``--json`` show of `result`."""
    a = result.analysis
    left_out = f" ({len(a.left_out)} run(s) left out, see the caveats)" if a.left_out else ""
    flags = fmt_counts(a.flag_counts)
    headline = (
        f"{result.ref}: {len(a.items)} items, {len(a.models)} model(s), {len(a.runs)} "
        f"stored run(s){left_out}. Flags: {flags}."
    )
    watched = a.watched_strata
    alerts = [
        f"{s.stratum}: best {s.best_model} {fmt(s.best_score)}: {_watch_verdict(s)}"
        for s in watched
    ]
    # the notes restate each watched stratum's reasons, which its alert already gives
    restated = {f"stratum {s.stratum}: {reason}" for s in watched for reason in s.reasons}
    tables = [_models_table(a), _watch_table(a)]
    if result.flagged:
        tables.append(_flagged_table(result))
    facts = [_irt_fact(a.irt)]
    if not watched:
        facts.append(
            f"No stratum is saturated (best model above {fmt(a.threshold, 2)}) or below its "
            "noise floor."
        )
    if a.leak_audit.get("status") == "stored":
        facts.append(f"leak audit: {a.leak_audit['findings']} finding(s) in {a.leak_audit['file']}")
    if result.csv_file is not None:
        facts.append(f"wrote {result.csv_file}")
    return ResultView(
        kind="items",
        title=f"Item analysis: {result.ref}",
        headline=headline,
        alerts=tuple(alerts),
        gate_line=None,
        tables=tuple(tables),
        facts=tuple(facts),
        caveats=dedupe(n for n in a.notes if n not in restated),
        payload=result.to_dict(),
    )
