"""What the review app answers, independent of how it is served (live server or static site).

`ReviewApp` opens the runs (each through the index, `_index.py`), reads their labels and
the suite's taxonomy, and answers the four requests the page makes: the app's facts
(`meta`), a page of the attempt list under filters and a search (`attempts`), one attempt's
transcript with its neighbours (`attempt`), and a label to save (`label`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalsuite.errors import NotFoundError, UsageError
from evalsuite.review._web._index import AttemptRow, IndexedRun, ReviewIndex, RunFacts
from evalsuite.review._web._logs import log_source, read_transcripts

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "PAGE_SIZE",
    "AppSetup",
    "Filters",
    "ModeInfo",
    "ReviewApp",
    "RunView",
]

PAGE_SIZE = 50
"""Attempts per page of the list."""

_MAX_PAGE = 500


@dataclass(frozen=True, slots=True)
class ModeInfo:
    """A failure mode of the taxonomy, as the page shows it."""

    name: str
    definition: str
    kind: str
    """``model`` or ``harness`` (a harness fault: the failure was not the model's)."""

    def to_dict(self) -> dict[str, str]:
        """JSON-ready form."""
        return {"name": self.name, "definition": self.definition, "kind": self.kind}


@dataclass(frozen=True, slots=True)
class RunView:
    """A reviewed run: its record's facts and what the index did."""

    run_id: str
    model: str
    suite: str
    version: str
    split: str
    holdout: bool
    n_attempts: int
    n_transcripts: int
    index_reused: bool
    index_build_s: float
    logs: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "run_id": self.run_id,
            "model": self.model,
            "suite": self.suite,
            "version": self.version,
            "split": self.split,
            "holdout": self.holdout,
            "n_attempts": self.n_attempts,
            "n_transcripts": self.n_transcripts,
            "index_reused": self.index_reused,
            "index_build_s": self.index_build_s,
            "logs": self.logs,
        }


@dataclass(frozen=True, slots=True)
class Filters:
    """What the list is narrowed to (None or empty: no narrowing)."""

    run: str | None = None
    outcome: str | None = None
    stratum: str | None = None
    score_min: float | None = None
    score_max: float | None = None
    limit_type: str | None = None
    mode: str | None = None
    """A mode name; ``-`` for attempts with no label, ``*`` for labelled ones."""
    finding: str | None = None
    """A scanner's name; ``*`` for attempts with any finding."""
    epoch: int | None = None
    q: str = ""
    offset: int = 0
    limit: int = PAGE_SIZE

    @classmethod
    def parse(cls, query: Mapping[str, str]) -> Filters:
        """Filters from a request's query parameters.

        Raises:
            UsageError: a parameter that is not a number where one is expected, or unknown.
        """
        known = {f for f in cls.__dataclass_fields__}
        unknown = sorted(set(query) - known)
        if unknown:
            raise UsageError(f"unknown filter(s) {unknown}; expected some of {sorted(known)}")

        def number(name: str, kind: Callable[[str], Any]) -> Any:
            value = query.get(name, "").strip()
            if not value:
                return None
            try:
                return kind(value)
            except ValueError:
                raise UsageError(f"{name}={value!r}: expected a number") from None

        def text(name: str) -> str | None:
            value = query.get(name, "").strip()
            return value or None

        offset = number("offset", int) or 0
        limit = number("limit", int) or PAGE_SIZE
        if offset < 0 or not 1 <= limit <= _MAX_PAGE:
            raise UsageError(
                f"offset {offset}, limit {limit}: expected offset >= 0 and limit 1-{_MAX_PAGE}"
            )
        return cls(
            run=text("run"),
            outcome=text("outcome"),
            stratum=text("stratum"),
            score_min=number("score_min", float),
            score_max=number("score_max", float),
            limit_type=text("limit_type"),
            mode=text("mode"),
            finding=text("finding"),
            epoch=number("epoch", int),
            q=query.get("q", "").strip(),
            offset=offset,
            limit=limit,
        )


Labeller = Callable[[str, str, int, Sequence[str], str], dict[str, Any]]
"""Saves a label: (run id, item id, epoch, modes, note) -> the saved label as JSON."""


@dataclass(frozen=True, slots=True)
class AppSetup:
    """What the app shows besides the runs: taxonomy, labeller, labels, findings."""

    modes: Sequence[ModeInfo] = ()
    taxonomy_version: str = ""
    who: str = ""
    labels: Mapping[tuple[str, str, int], Mapping[str, Any]] = field(default_factory=dict)
    findings: Mapping[tuple[str, str, int], Sequence[str]] = field(default_factory=dict)
    saver: Labeller | None = None
    notes: Sequence[str] = ()


@dataclass
class ReviewApp:
    """The reviewed runs, their labels and findings, and the answers the page asks for."""

    index: ReviewIndex
    runs: list[RunView]
    indexed: dict[str, IndexedRun]
    modes: list[ModeInfo]
    taxonomy_version: str
    who: str
    labels: dict[tuple[str, str, int], dict[str, Any]] = field(default_factory=dict)
    """(run, item, epoch) -> the attempt's current label (``modes``, ``note``, ``who``, ``at``)."""
    findings: dict[tuple[str, str, int], list[str]] = field(default_factory=dict)
    """(run, item, epoch) -> the scanners that flagged the attempt."""
    saver: Labeller | None = None
    """None: labels cannot be saved (a static site)."""
    notes: list[str] = field(default_factory=list)
    """What the page should say about the runs (taxonomy missing, holdout rule...)."""
    open_s: float = 0.0

    @staticmethod
    def open(
        index: ReviewIndex,
        records: Sequence[Any],
        attempts: Mapping[str, pd.DataFrame],
        state_dir: Path,
        setup: AppSetup,
    ) -> ReviewApp:
        """Open `records` (stored `RunRecord`s) with their `attempts` through `index`.

        Raises:
            ValueError: a log of a run is not a readable inspect log.
        """
        started = time.perf_counter()
        indexed: dict[str, IndexedRun] = {}
        views = []
        for record in records:
            holdout = record.split == "holdout"
            logs = log_source(record.run_id, record.spec, state_dir)
            run = index.open_run(
                RunFacts(
                    run_id=record.run_id,
                    holdout=holdout,
                    attempts=attempts[record.run_id],
                    logs=logs,
                )
            )
            indexed[record.run_id] = run
            views.append(
                RunView(
                    run_id=record.run_id,
                    model=record.model,
                    suite=record.suite or "",
                    version=record.version or "",
                    split=record.split or "",
                    holdout=holdout,
                    n_attempts=len(run.rows),
                    n_transcripts=run.n_transcripts,
                    index_reused=run.reused,
                    index_build_s=run.build_s,
                    logs=logs.where,
                )
            )
        return ReviewApp(
            index=index,
            runs=views,
            indexed=indexed,
            modes=list(setup.modes),
            taxonomy_version=setup.taxonomy_version,
            who=setup.who,
            labels={k: dict(v) for k, v in setup.labels.items()},
            findings={k: list(v) for k, v in setup.findings.items()},
            saver=setup.saver,
            notes=list(setup.notes),
            open_s=time.perf_counter() - started,
        )

    # -- the page's requests ---------------------------------------------------------------

    def meta(self) -> dict[str, Any]:
        """The runs, the filters' choices, the taxonomy, who labels, whether labels save."""
        rows = [r for run in self.indexed.values() for r in run.rows]
        return {
            "runs": [r.to_dict() for r in self.runs],
            "outcomes": sorted({r.outcome for r in rows}),
            "strata": sorted({r.stratum for r in rows}),
            "limit_types": sorted({r.limit_type for r in rows if r.limit_type}),
            "epochs": sorted({r.epoch for r in rows}),
            "scanners": sorted({s for found in self.findings.values() for s in found}),
            "modes": [m.to_dict() for m in self.modes],
            "taxonomy_version": self.taxonomy_version,
            "who": self.who,
            "can_label": self.saver is not None,
            "page_size": PAGE_SIZE,
            "notes": self.notes,
        }

    def _row(self, row: AttemptRow) -> dict[str, Any]:
        key = (row.run_id, row.item_id, row.epoch)
        label = self.labels.get(key)
        return row.to_dict() | {
            "modes": list(label["modes"]) if label else [],
            "labelled": label is not None,
            "findings": self.findings.get(key, []),
        }

    @staticmethod
    def _score_in(row: AttemptRow, f: Filters) -> bool:
        if f.score_min is None and f.score_max is None:
            return True
        if row.score is None or math.isnan(row.score):
            return False
        low = f.score_min if f.score_min is not None else -math.inf
        high = f.score_max if f.score_max is not None else math.inf
        return low <= row.score <= high

    def _labelled_as(self, key: tuple[str, str, int], mode: str | None) -> bool:
        if not mode:
            return True
        label = self.labels.get(key)
        if mode == "-":
            return label is None
        if mode == "*":
            return label is not None
        return label is not None and mode in label["modes"]

    def _found_by(self, key: tuple[str, str, int], finding: str | None) -> bool:
        if not finding:
            return True
        found = self.findings.get(key, [])
        return bool(found) and (finding == "*" or finding in found)

    def _matches(self, row: AttemptRow, f: Filters) -> bool:
        wanted = (
            (f.run, row.run_id),
            (f.outcome, row.outcome),
            (f.stratum, row.stratum),
            (f.limit_type, row.limit_type),
            (f.epoch, row.epoch),
        )
        if any(want is not None and want != value for want, value in wanted):
            return False
        key = (row.run_id, row.item_id, row.epoch)
        return (
            self._score_in(row, f)
            and self._labelled_as(key, f.mode)
            and self._found_by(key, f.finding)
        )

    def attempts(self, f: Filters) -> dict[str, Any]:
        """One page of the attempts that pass `f`, and how many pass.

        Raises:
            UsageError: `f.run` is not a reviewed run, or the search cannot run.
        """
        if f.run and f.run not in self.indexed:
            raise UsageError(
                f"run {f.run} is not reviewed here; expected one of {sorted(self.indexed)}"
            )
        found: set[int] | None = None
        if f.q:
            try:
                found = self.index.search(f.q)
            except ValueError as exc:
                raise UsageError(str(exc)) from None
        passing = [
            row
            for run in self.indexed.values()
            for row in run.rows
            if (found is None or row.id in found) and self._matches(row, f)
        ]
        page = passing[f.offset : f.offset + f.limit]
        return {
            "total": len(passing),
            "offset": f.offset,
            "limit": f.limit,
            "rows": [self._row(r) for r in page],
            "searched_holdout": False if f.q else None,
        }

    def _find(self, run_id: str, item_id: str, epoch: int) -> AttemptRow:
        run = self.indexed.get(run_id)
        row = run.keys.get((item_id, epoch)) if run is not None else None
        if row is None:
            raise NotFoundError(
                f"no attempt of item {item_id!r} at epoch {epoch} in the reviewed run {run_id}"
            )
        return row

    def transcript(self, row: AttemptRow) -> dict[str, Any] | None:
        """The attempt's transcript: from the index, or for a holdout run read into memory."""
        run = self.indexed[row.run_id]
        if not run.holdout:
            return self.index.transcript(row.id)
        found = read_transcripts(run.logs).get((row.item_id, row.epoch))  # memory only
        return None if found is None else found.to_dict()

    def attempt(self, run_id: str, item_id: str, epoch: int) -> dict[str, Any]:
        """One attempt: its row, label, transcript, and its item's other attempts.

        Raises:
            NotFoundError: no such attempt among the reviewed runs.
        """
        row = self._find(run_id, item_id, epoch)
        others = []
        for run in self.indexed.values():
            for other_epoch in sorted({r.epoch for r in run.rows}):
                other = run.keys.get((item_id, other_epoch))
                if other is not None and other is not row:
                    others.append(self._row(other))
        label = self.labels.get((run_id, item_id, epoch))
        why = None
        if not row.has_transcript:
            run = self.indexed[run_id]
            why = (
                "a holdout run keeps no transcript on disk (its logs live in memory during the run)"
                if run.holdout
                else f"no sample of this attempt in the run's logs ({run.logs.where})"
            )
        transcript = self.transcript(row)
        return {
            "row": self._row(row),
            "label": label,
            "transcript": transcript,
            "missing": why if transcript is None else None,
            "others": others,
        }

    def label(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """Save a label (run_id, item_id, epoch, modes, note) at once; the saved label.

        Raises:
            UsageError: labels cannot be saved here, or a field is malformed or unknown.
            NotFoundError: no such attempt.
        """
        if self.saver is None:
            raise UsageError(
                "this is a static copy of the review: labels are saved only by the live app "
                "(`evalsuite review RUN`)"
            )
        try:
            run_id, item_id = str(payload["run_id"]), str(payload["item_id"])
            epoch = int(payload["epoch"])
            modes = [str(m) for m in payload.get("modes", [])]
            note = str(payload.get("note", ""))
        except (KeyError, TypeError, ValueError) as exc:
            raise UsageError(
                f"a label needs run_id, item_id, epoch (an integer), modes (a list) and note: {exc}"
            ) from None
        known = {m.name for m in self.modes}
        unknown = [m for m in modes if m not in known]
        if unknown:
            raise UsageError(f"unknown mode(s) {unknown}; the taxonomy has {sorted(known)}")
        self._find(run_id, item_id, epoch)
        saved = self.saver(run_id, item_id, epoch, modes, note)
        self.labels[(run_id, item_id, epoch)] = saved
        return saved
