"""Scan a run's transcripts with Inspect Scout and tie the findings to the run's attempts.

`scan_run` hands the run's inspect logs and the scanners (built-in, LLM, a team's own) to
`inspect_scout.scan`, which writes its results where Scout writes them (``scans/`` beside
the logs: ``.evalsuite/scans/``, or ``--scans DIR``); the flagged transcripts are then
matched to the run's (item, epoch) attempts and recorded in the store (`scan_findings`), so
the statistics and the report read them without Scout (docs/review.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalsuite._core.layout import Layout
from evalsuite.errors import EvalsuiteError, NotFoundError, UsageError
from evalsuite.review._labels import now_utc

if TYPE_CHECKING:
    from inspect_scout import Scanner, Transcript

    from evalsuite.store import Store

__all__ = ["ScanReport", "attempt_of_transcript", "run_log_files", "scan_run"]

_EPOCH_SUFFIX = re.compile(r"^(?P<item>.+)::(?P<epoch>\d+)$")


@dataclass(frozen=True, slots=True)
class ScanReport:
    """What one scan of a run found."""

    run_id: str
    location: str
    """The Scout scan (a directory under the scans location)."""
    scanners: tuple[str, ...]
    transcripts: int
    """Transcripts Scout scanned."""
    flagged: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    """Scanner -> the (item_id, epoch) attempts it flagged."""
    unmatched: int = 0
    """Flagged transcripts that are no attempt of the run (another run's log in the folder)."""

    def to_dict(self) -> dict[str, Any]:
        """The report as plain data."""
        return {
            "run_id": self.run_id,
            "location": self.location,
            "scanners": list(self.scanners),
            "transcripts": self.transcripts,
            "flagged": {
                name: [{"item_id": i, "epoch": e} for i, e in keys]
                for name, keys in self.flagged.items()
            },
            "counts": {name: len(keys) for name, keys in self.flagged.items()},
            "unmatched": self.unmatched,
        }


def run_log_files(
    store: Store, layout: Layout, run_id: str, log_dir: Path | None = None
) -> list[str]:
    """The inspect logs of run `run_id`: in `log_dir`, else where the run wrote them.

    Raises:
        UsageError: a holdout run (it keeps no logs: they would hold holdout text).
        NotFoundError: no logs there.
    """
    from evalsuite.run import find_inspect_logs

    run = store.get_run(run_id)
    if run.split == "holdout":
        raise UsageError(
            f"{run_id} is a holdout run: it keeps no transcripts (they would hold holdout "
            "text), so there is nothing to scan; scan a dev run"
        )
    where = (
        str(log_dir) if log_dir else run.spec.get("log_dir") or str(layout.state / "logs" / run_id)
    )
    files = find_inspect_logs(str(where))
    if not files:
        raise NotFoundError(
            f"no inspect logs of run {run_id} in {where}: a dev run writes them there; a run "
            "ingested from logs, or run with --log-dir, needs --log-dir DIR"
        )
    return files


def attempt_of_transcript(task_id: Any, task_repeat: Any) -> tuple[str, int]:
    """The (item_id, epoch) of a transcript.

    evalsuite's runs name samples ``<item>::<epoch>``; other inspect logs give the sample id
    and its epoch.
    """
    text = str(task_id)
    match = _EPOCH_SUFFIX.match(text)
    if match is not None:
        return match["item"], int(match["epoch"])
    return text, int(task_repeat or 1)


def _flagged(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "1")
    return bool(value) if value is not None and value == value else False  # NaN: not flagged


def scan_run(
    store: Store,
    layout: Layout,
    run_id: str,
    scanners: Mapping[str, Scanner[Transcript]],
    *,
    log_dir: Path | None = None,
    scans_dir: Path | None = None,
    model: str | None = None,
) -> ScanReport:
    """Run `scanners` over the transcripts of run `run_id` through Inspect Scout.

    Each scanner's findings replace its earlier findings in the run (`scan_findings`).
    `model` is Scout's default model (for LLM scanners that name none).

    Raises:
        UsageError: no scanners, or a holdout run.
        NotFoundError: the run or its logs are not found.
        EvalsuiteError: Scout reported scanner errors (the first is named).
    """
    from inspect_scout import scan, scan_results_df

    # `inspect_scout.transcripts_from` reads a directory as eval logs only when it holds
    # `.eval` files (its own note): the runner writes JSON logs, so they are named one by one
    from inspect_scout._transcript.eval_log import transcripts_from_logs

    if not scanners:
        raise UsageError("no scanners to run; name built-in scanners or declare an LLM scanner")
    files = run_log_files(store, layout, run_id, log_dir)
    target = scans_dir or layout.state / "scans"
    target.mkdir(parents=True, exist_ok=True)
    status = scan(
        dict(scanners),
        transcripts=transcripts_from_logs(files),
        scans=str(target),
        model=model,
        max_processes=1,
        display="none",
        tags=["evalsuite", f"run:{run_id}"],
        metadata={"evalsuite_run_id": run_id},
    )
    if status.errors:
        first = status.errors[0]
        raise EvalsuiteError(
            f"Scout scan of run {run_id} had {len(status.errors)} scanner error(s); the first, "
            f"in scanner {first.scanner!r}: {first.error.splitlines()[0][:300]}. The partial "
            f"scan is in {status.location}"
        )
    results = scan_results_df(status.location)
    keys = store.attempt_keys(run_id)
    now = now_utc()
    flagged: dict[str, list[tuple[str, int]]] = {}
    unmatched = 0
    transcripts = 0
    for name in scanners:
        frame = results.scanners.get(name)
        found: dict[tuple[str, int], dict[str, Any]] = {}
        if frame is not None:
            for found_row in frame.to_dict("records"):
                if not _flagged(found_row.get("value")):
                    continue
                key = attempt_of_transcript(
                    found_row.get("transcript_task_id"), found_row.get("transcript_task_repeat")
                )
                if key not in keys:
                    unmatched += 1
                    continue
                found[key] = {
                    "item_id": key[0],
                    "epoch": key[1],
                    "value": json.dumps(found_row.get("value"), default=str),
                    "explanation": str(found_row.get("explanation") or "")[:2000],
                    "scan_location": str(status.location),
                    "scanned_at": now,
                }
        read = 0 if frame is None else int(frame["transcript_id"].nunique())
        record: dict[str, Any] = {
            "scan_location": str(status.location),
            "scanned_at": now,
            "transcripts": read,
        }
        store.replace_findings(
            run_id,
            name,
            [found[k] for k in sorted(found)],
            scan=record,
        )
        flagged[name] = sorted(found)
        transcripts = max(transcripts, read)
    return ScanReport(
        run_id=run_id,
        location=str(status.location),
        scanners=tuple(scanners),
        transcripts=transcripts,
        flagged=flagged,
        unmatched=unmatched,
    )
