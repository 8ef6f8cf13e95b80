"""Read every stored run of a suite version, and its leak audit, for the item analysis.

Runs are found as `evalsuite runs` lists them: by the suite and version recorded with each
run, which includes results ingested with ``ingest --suite SUITE@X.Y.Z`` (attached to the
frozen manifest, docs/design/ingest.md). The statistics (`evalsuite.items._analysis`) get
plain DataFrames; this module alone touches the store.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import pandas as pd

from evalsuite._core.layout import Layout
from evalsuite.errors import InsufficientDataError, NotFoundError
from evalsuite.items._analysis import ItemAnalysis, analyse_items
from evalsuite.items._saturation import DEFAULT_SATURATION
from evalsuite.items._stats import ITEM_COLUMNS
from evalsuite.manifest import leak_audit_path, load_manifest_summary, read_leak_audit
from evalsuite.store import RunRecord, Store

__all__ = [
    "REFERENCE_PREFIX",
    "analysed_runs",
    "item_analysis",
    "leak_status",
    "version_runs",
]

REFERENCE_PREFIX = "evalsuite/"
"""Models named so are evalsuite's reference agents: deterministic at a given seed."""

_READ = tuple(c for c in ITEM_COLUMNS if c != "model")


def version_runs(store: Store, suite: str, version: str, manifest_hash: str) -> list[RunRecord]:
    """The stored runs of ``suite@version`` (on its manifest), oldest first.

    Raises:
        NotFoundError: no run of that version is stored.
    """
    every = store.list_runs(suite=suite)
    runs = [r for r in every if r.version == version and r.manifest_hash in (None, manifest_hash)]
    if not runs:
        others = sorted({str(r.version) for r in every if r.version})
        hint = (
            f"; stored runs of {suite} are of version(s) {', '.join(others)}"
            if others
            else f"; no run of {suite} is stored at all"
        )
        raise NotFoundError(
            f"no stored run of {suite}@{version} in {store.display_url}{hint}. Run models on "
            f"it (`evalsuite run {suite}@{version} --model MODEL`) or attach results with "
            f"`evalsuite ingest ... --suite {suite}@{version}`"
        )
    return runs


def _left_out_reason(run: RunRecord, *, allow_invalid: bool) -> str | None:
    """Why `run` is not analysed (None: it is).

    A run not complete (still running, or interrupted) is always left out: its attempts are
    those that happened to finish first and its planned attempts not run would count as
    harness errors. An invalid run is left out unless `allow_invalid`, as in `compare`.
    """
    if run.status != "complete":
        return (
            f"not complete ({run.status}): its attempts so far are not the run, and its "
            "attempts not run would count as harness errors; complete it (`evalsuite run "
            f"--resume {run.run_id}`; a sharded run: its unfinished shards) to include it"
        )
    if run.valid is False and not allow_invalid:
        rate = f" ({run.error_rate:.1%} harness errors)" if run.error_rate is not None else ""
        return (
            f"invalid{rate}: its scores measure the harness, not the model; pass "
            "--allow-invalid to read it (to see which items a broken harness fails on)"
        )
    return None


def analysed_runs(
    runs: list[RunRecord], *, allow_invalid: bool = False
) -> tuple[list[RunRecord], list[dict[str, str]]]:
    """(the runs the item analysis reads, the runs left out with the reason of each).

    Only complete runs are read, and only valid ones unless `allow_invalid`
    (docs/design/items.md, "What is read").
    """
    kept: list[RunRecord] = []
    left_out: list[dict[str, str]] = []
    for run in runs:
        reason = _left_out_reason(run, allow_invalid=allow_invalid)
        if reason is None:
            kept.append(run)
        else:
            left_out.append(
                {"run_id": run.run_id, "model": run.model, "status": run.status, "reason": reason}
            )
    return kept, left_out


def leak_status(layout: Layout, suite: str, version: str) -> tuple[dict[str, str], dict[str, Any]]:
    """Leaky items (id -> reason) and the stored leak audit's status."""
    data = read_leak_audit(layout, suite, version)
    path = leak_audit_path(layout, suite, version)
    if data is None:
        return {}, {
            "status": "not stored",
            "detail": f"no leak audit is stored for {suite}@{version}: the leaky flag is not "
            f"checked (run `evalsuite audit {suite}@{version} --leaks`)",
        }
    leaks: dict[str, str] = {}
    for f in data["findings"]:
        how = f"its target shows in {f.get('split', '?')} surface {f.get('surface', '?')}"
        how += f" ({f['how']})" if f.get("how") else ""
        leaks[str(f["item_id"])] = (
            leaks[str(f["item_id"])] + "; " + how if str(f["item_id"]) in leaks else how
        )
    checked = data.get("checked") or {}
    return leaks, {
        "status": "stored",
        "file": str(path.relative_to(layout.root))
        if path.is_relative_to(layout.root)
        else str(path),
        "checked": checked,
        "holdout_checked": bool(data.get("holdout_checked", "holdout" in checked)),
        "findings": len(data["findings"]),
    }


def item_analysis(  # noqa: PLR0913 - the options of `items`, each named
    store: Store,
    layout: Layout,
    suite: str,
    version: str,
    *,
    level: float = 0.95,
    threshold: float = DEFAULT_SATURATION,
    deterministic: Collection[str] = (),
    allow_invalid: bool = False,
) -> ItemAnalysis:
    """The item analysis of ``suite@version`` over every stored run of it.

    Args:
        store: The results store.
        layout: The project (its manifests and stored leak audit).
        suite: Suite name.
        version: Frozen version.
        level: Confidence level of every interval.
        threshold: Saturation threshold of the best model's stratum score.
        deterministic: Models deterministic at a given seed, besides the reference agents
            (models named ``evalsuite/...``).
        allow_invalid: Read invalid runs too (runs not complete are never read).

    Raises:
        NotFoundError: unknown suite or version, or no run of it stored.
        InsufficientDataError: no stored run of it is complete and valid.
    """
    manifest = load_manifest_summary(layout, suite, version)
    stored = version_runs(store, suite, manifest.version, manifest.manifest_hash)
    runs, left_out = analysed_runs(stored, allow_invalid=allow_invalid)
    if not runs:
        raise InsufficientDataError(
            f"no complete, valid run of {suite}@{manifest.version} is stored: "
            + "; ".join(f"run {r['run_id']} ({r['model']}) is {r['reason']}" for r in left_out)
        )
    frames = []
    for run in runs:
        frame = store.attempt_columns(run.run_id, _READ)
        frames.append(frame.assign(model=run.model))
    attempts = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    models = {r.model for r in runs}
    det = {m for m in models if m.startswith(REFERENCE_PREFIX)} | (set(deterministic) & models)
    leaks, status = leak_status(layout, suite, manifest.version)
    analysis = analyse_items(
        attempts,
        suite=suite,
        version=manifest.version,
        runs=[
            {
                "run_id": r.run_id,
                "model": r.model,
                "split": r.split,
                "source": r.source,
                "epochs": r.epochs,
                "valid": bool(r.valid),
                "status": r.status,
            }
            for r in runs
        ],
        deterministic=det,
        leaks=leaks,
        leak_audit=status,
        level=level,
        threshold=threshold,
    )
    analysis.left_out = left_out
    if left_out:
        analysis.notes.append(
            f"{len(left_out)} run(s) left out: "
            + "; ".join(f"{r['run_id']} ({r['model']}): {r['reason']}" for r in left_out)
        )
    invalid = [r.run_id for r in runs if r.valid is False]
    if invalid:
        analysis.notes.append(
            f"read with --allow-invalid: {len(invalid)} invalid run(s) (too many harness "
            "errors): " + ", ".join(invalid) + "; their scored attempts count, their harness "
            "errors show in each item's rate"
        )
    if status["status"] != "stored":
        analysis.notes.append(status["detail"])
    unknown = sorted(set(deterministic) - models)
    if unknown:
        analysis.notes.append(
            "--deterministic named model(s) with no run of this version: " + ", ".join(unknown)
        )
    return analysis
