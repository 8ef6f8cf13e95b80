"""Environment health: can the suites behind a report's numbers be trusted?

Before any model score, a report shows per suite version and family: the grader audit's
status and checks (`evalsuite.audit.audit_status`), and from the reported runs the harness
error rate and limit hits by type. A run of an unaudited, skipped or failing suite version is
marked wherever its numbers appear (`audit_fields`). See docs/design/grader-audit.md.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from evalsuite._core.layout import Layout
from evalsuite.errors import EvalsuiteError
from evalsuite.manifest import load_manifest, suite_audit_status
from evalsuite.service import audit_fields

__all__ = ["audit_fields", "environment_health"]

# the `audit` field of each run is built by the service layer; re-exported for old callers


def _families(layout: Layout, suite: str, version: str) -> dict[str, str]:
    """Item id -> family of a frozen version (empty when it cannot be read)."""
    try:
        manifest = load_manifest(layout, suite, version)
    except EvalsuiteError:
        return {}
    return {i.id: i.family for i in manifest.items}


def _checks(results: Mapping[str, Any] | None, family: str) -> list[dict[str, Any]]:
    for entry in (results or {}).get("families", []):
        if entry.get("family") == family:
            return [
                {k: c.get(k) for k in ("check", "policy", "status", "summary", "items")}
                for c in entry.get("checks", [])
            ]
    return []


def _run_health(run: Mapping[str, Any], frame: pd.DataFrame) -> dict[str, Any]:
    outcomes = frame["outcome"] if len(frame) else pd.Series(dtype=str)
    limits = Counter(
        str(t) for t in frame.loc[outcomes == "limit", "limit_type"].fillna("unspecified")
    )
    errors = int((outcomes == "harness_error").sum())
    return {
        "run_id": run["run_id"],
        "model": run["model"],
        "split": run.get("split"),
        "attempts": len(frame),
        "harness_errors": errors,
        "harness_error_rate": errors / len(frame) if len(frame) else None,
        "limits_by_type": dict(sorted(limits.items())),
    }


def environment_health(
    layout: Layout, runs: Sequence[Mapping[str, Any]], frames: Mapping[str, pd.DataFrame]
) -> list[dict[str, Any]]:
    """One entry per (suite version, family) of the reported runs, in run order."""
    sections: dict[tuple[str, str, str], dict[str, Any]] = {}
    for run in runs:
        suite, version = run.get("suite"), run.get("version")
        if not suite or not version:
            continue
        status = suite_audit_status(layout, suite, version)
        families = _families(layout, suite, version)
        frame = frames[run["run_id"]]
        codes, ids = pd.factorize(frame["item_id"])  # one lookup per item, not per attempt
        by_id = np.array([families.get(str(i), "–") for i in ids] + ["–"], dtype=object)
        family_of = pd.Series(by_id[codes], index=frame.index)
        for family in sorted(set(family_of)):
            key = (suite, version, family)
            section = sections.setdefault(
                key,
                {
                    "suite": suite,
                    "version": version,
                    "family": family,
                    "audit": status.to_dict() | {"marker": status.marker()},
                    "checks": _checks(status.results, family),
                    "runs": [],
                },
            )
            section["runs"].append(_run_health(run, frame[family_of == family]))
    return list(sections.values())
