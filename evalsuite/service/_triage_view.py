"""The view of `evalsuite triage`: candidates sorted into keep / fix / drop, with reasons.

The triage runs in `evalsuite.triage`, which sits beside the service layer (neither imports
the other); its typed `TriageResult` reaches this view through its JSON form (`to_dict`), the
``triage --json`` payload, which the view carries unchanged with its sentences added.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from evalsuite.service._views import Column, ResultView, TableView, dedupe

__all__ = ["triage_view"]


class _Triaged(Protocol):
    """A triage result (`evalsuite.triage.TriageResult`): its JSON form."""

    def to_dict(self) -> Mapping[str, Any]: ...


def triage_view(
    result: _Triaged | Mapping[str, Any], *, kept_file: str | None = None
) -> ResultView:
    """The view of a triage (`TriageResult`, or its ``triage --json`` payload).

    `kept_file`: where ``--keep-only`` wrote the kept candidates (the payload's
    ``kept_file``; None: nothing written).
    """
    source = result if isinstance(result, Mapping) else result.to_dict()
    p: Mapping[str, Any] = (
        dict(source) if "kept_file" in source else {**source, "kept_file": kept_file}
    )
    funnel = p["funnel"]
    against = p.get("against") or "no frozen version"
    headline = (
        f"triage of {funnel['candidates']} candidate(s) for {p['suite']} (against {against}): "
        f"{funnel['keep']} keep, {funnel['fix']} fix, {funnel['drop']} drop."
    )
    table = TableView(
        "candidates",
        (
            Column("item", numeric=False),
            Column("family", numeric=False),
            Column("stratum", numeric=False),
            Column("verdict", numeric=False),
            Column("reasons", numeric=False),
        ),
        tuple(
            (
                str(row["item_id"]),
                str(row["family"]),
                str(row["stratum"]),
                str(row["verdict"]),
                "; ".join(f"{r['reason']}: {r['detail']}" for r in row["reasons"]) or "-",
            )
            for row in p["items"]
        ),
    )
    facts = [f"funnel: {funnel['candidates']} candidates -> {funnel['keep']} kept"]
    facts += [f"{reason}: {count}" for reason, count in (p.get("reasons") or {}).items()]
    facts += [f"{source}: {detail}" for source, detail in (p.get("sources") or {}).items()]
    if p.get("kept_file"):
        facts.append(f"wrote {funnel['keep']} kept item(s) to {p['kept_file']}")
    return ResultView(
        kind="triage",
        title=f"triage for {p['suite']}",
        headline=headline,
        alerts=(),
        gate_line=None,
        tables=(table,),
        facts=tuple(facts),
        caveats=dedupe(()),
        payload=dict(p),
    )
