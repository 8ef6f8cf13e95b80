"""The `ingest` use case: results made elsewhere (inspect logs, tables, other tools' files).

Other tools' files are Every Eval Ever records, lm-eval samples and HELM runs, read by
`evalsuite.interchange` into the results-table contract.

`evalsuite ingest` parses its options into an `IngestRequest` and calls `ingest_results`; the
reading and storing are the run stage's (`evalsuite.run.ingest_inspect`, `ingest_table`),
which this use case calls through its front (docs/architecture.md, "Where each stage lives").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from evalsuite._core.jsonout import JsonObject
from evalsuite.errors import InvalidRunError, UsageError
from evalsuite.manifest import parse_ref

if TYPE_CHECKING:
    from evalsuite._core.layout import Layout
    from evalsuite.manifest import Manifest
    from evalsuite.run import IngestReport
    from evalsuite.store import Store

__all__ = [
    "CSV_TARGETS",
    "FOREIGN_FORMATS",
    "IngestOutcome",
    "IngestRequest",
    "StoredAggregate",
    "column_mapping",
    "ingest_results",
]

CSV_TARGETS = ("model", "item_id", "epoch", "score", "stratum", "outcome", "limit_type")
"""The columns of a results table that ``--column TARGET=NAME`` may map to a file's column."""


def column_mapping(pairs: tuple[str, ...]) -> dict[str, str]:
    """``--column TARGET=NAME`` pairs as {TARGET: NAME}.

    Raises:
        UsageError: a pair that is not TARGET=NAME with TARGET one of `CSV_TARGETS`, or a
            TARGET mapped twice.
    """
    mapping: dict[str, str] = {}
    for pair in pairs:
        target, sep, source = pair.partition("=")
        if not sep or target not in CSV_TARGETS or not source:
            raise UsageError(
                f"--column expects TARGET=NAME with TARGET one of {', '.join(CSV_TARGETS)} "
                f"and NAME a column of the file (got {pair!r}), e.g. --column item_id=task_id"
            )
        if target in mapping:
            raise UsageError(f"--column maps {target} twice ({mapping[target]}, {source})")
        mapping[target] = source
    return mapping


@dataclass(frozen=True, slots=True)
class IngestRequest:
    """What `evalsuite ingest` is asked to store."""

    path: str
    """An inspect log or a directory of logs (a path or any fsspec URL), or a local table."""
    format: Literal["inspect", "csv", "parquet", "eee", "lm-eval", "helm"]
    columns: Mapping[str, str] = field(default_factory=dict)
    """Tables: {evalsuite column: the file's column} (`column_mapping`)."""
    ignore_columns: tuple[str, ...] = ()
    """Tables: columns of the file to drop (every other unknown column is refused)."""
    model: str | None = None
    """Tables without a model column: the model's name."""
    epoch_base: Literal[0, 1] = 1
    """Tables: whether epochs count from 0 or 1."""
    error_threshold: float = 0.05
    """Harness error rate above which a run is invalid (stored, flagged, exit 5)."""
    again: bool = False
    """Store content that is already stored as a new run anyway."""
    suite: str | None = None
    """``SUITE@X.Y.Z``: attach the results to this frozen suite version."""
    split: Literal["dev"] | None = None
    """With `suite`: keep the results of this split's items only."""
    metric: str | None = None
    """eee, lm-eval, helm: the metric to ingest (default: the format's primary one)."""


@dataclass(frozen=True, slots=True)
class StoredAggregate:
    """An aggregate result (a mean with no items) that `ingest --format eee` stored."""

    model: str
    benchmark: str
    score: float
    se: float | None
    source: str
    added: bool
    """False: the same record's result was stored before (nothing added)."""

    def to_dict(self) -> JsonObject:
        """model, benchmark, score, se, source, added."""
        return {
            "model": self.model,
            "benchmark": self.benchmark,
            "score": self.score,
            "se": self.se,
            "source": self.source,
            "added": self.added,
        }


@dataclass(frozen=True, slots=True)
class IngestOutcome:
    """What an ingest stored and skipped (`evalsuite.run.IngestReport`)."""

    report: IngestReport
    aggregates: tuple[StoredAggregate, ...] = ()
    """Aggregate results stored (Every Eval Ever records without samples; no runs)."""

    @property
    def invalid(self) -> InvalidRunError | None:
        """The error `ingest` exits with (5) once everything is stored, when a run is invalid."""
        invalid = self.report.invalid
        if not invalid:
            return None
        listed = "; ".join(
            f"{r.run_id} ({r.model}: {r.error_rate:.1%} harness errors > {r.error_threshold:.0%})"
            for r in invalid
        )
        return InvalidRunError(
            f"{len(invalid)} ingested run(s) are invalid: {listed}. They are stored "
            "and flagged, and comparisons refuse them. Fix the harness that produced these "
            "results and ingest its new results, or pass --error-threshold if this share "
            "of harness errors is acceptable for your purpose"
        )


def _attached_suite(layout: Layout, request: IngestRequest) -> Manifest | None:
    """The frozen manifest ``--suite`` attaches to (``--split`` needs it)."""
    from evalsuite.manifest import load_manifest

    if request.suite is None:
        if request.split is not None:
            raise UsageError("--split applies with --suite SUITE@X.Y.Z only")
        return None
    name, version = parse_ref(request.suite)
    if version is None:
        raise UsageError(f"--suite needs the exact frozen version, e.g. {name}@1.0.0")
    return load_manifest(layout, name, version)


FOREIGN_FORMATS = ("eee", "lm-eval", "helm")
"""Formats read by `evalsuite.interchange` into the results-table contract."""


def _ingest_foreign(
    request: IngestRequest,
    layout: Layout,
    suite: Manifest | None,
    store: Store | Callable[[], Store],
) -> IngestReport:
    """Read another tool's files (`evalsuite.interchange`) and store them as runs."""
    from evalsuite.interchange import ingest_foreign, read_eee, read_helm, read_lm_eval

    if request.columns or request.model or request.ignore_columns or request.epoch_base != 1:
        raise UsageError(
            "--column, --ignore-column, --model and --epoch-base apply to --format csv "
            "and --format parquet only"
        )
    path = Path(request.path)
    reader = {"eee": read_eee, "lm-eval": read_lm_eval, "helm": read_helm}[request.format]
    rows = reader(path, metric=request.metric)
    if suite is None and rows.manifest_hash is not None:
        suite = _manifest_of(layout, rows.manifest_hash)
    elif suite is not None and rows.manifest_hash not in (None, suite.manifest_hash):
        raise UsageError(
            f"{path}: the record was exported by evalsuite from a suite version whose manifest "
            f"hash is {rows.manifest_hash}, not {suite.ref}'s; drop --suite (it attaches "
            "itself when that version is frozen here) or give the suite it came from"
        )
    return ingest_foreign(
        rows,
        store() if callable(store) else store,
        root=layout.root,
        suite=suite,
        split=request.split,
        error_threshold=request.error_threshold,
        again=request.again,
    )


def _ingest_aggregates(
    request: IngestRequest, suite: Manifest | None, store: Store | Callable[[], Store]
) -> IngestOutcome | None:
    """Every Eval Ever records without samples, stored as aggregate results.

    None: the records hold samples, and are runs (`_ingest_foreign`). An aggregate is a
    mean: usable where means suffice (`validity report --aggregates`),
    never paired item by item, so it is no run and cannot attach to a suite's items.
    """
    from evalsuite.interchange import eee_aggregate_rows
    from evalsuite.run import IngestReport

    path = Path(request.path)
    if path.is_file() and path.name.endswith("_samples.jsonl"):
        return None  # read_eee names the mistake
    rows, with_samples = eee_aggregate_rows(path)
    if not rows:
        return None
    if with_samples:
        raise UsageError(
            f"{path} holds records with per-sample results ({with_samples[0].name}...) and "
            f"records without ({rows[0]['source']}...): ingest them apart, the first as runs "
            "and the second as aggregate results; nothing was stored"
        )
    if suite is not None or request.split is not None or request.again:
        raise UsageError(
            f"{path}: an Every Eval Ever record without samples is stored as an aggregate "
            "result (a mean, no items): --suite, --split and --again do not apply to it; "
            "nothing was stored"
        )
    if request.metric is not None:
        wanted = request.metric
        rows = [
            r
            for r in rows
            if wanted in (r["benchmark"], (r["detail"] or {}).get("evaluation_result_id"))
        ]
        if not rows:
            raise UsageError(f"{path}: no result named {wanted!r}; nothing was stored")
    opened = store() if callable(store) else store
    added = set(opened.add_aggregates(rows))
    return IngestOutcome(
        IngestReport(),
        tuple(
            StoredAggregate(
                model=str(r["model"]),
                benchmark=str(r["benchmark"]),
                score=float(r["score"]),
                se=r["se"],
                source=str(r["source"]),
                added=r["fingerprint"] in added,
            )
            for r in rows
        ),
    )


def _manifest_of(layout: Layout, manifest_hash: str) -> Manifest | None:
    """The frozen manifest of this project with `manifest_hash` (None: not frozen here)."""
    from evalsuite.manifest import frozen_versions, list_suite_names, load_manifest

    for name in list_suite_names(layout):
        for version in frozen_versions(layout, name):
            manifest = load_manifest(layout, name, version)
            if manifest.manifest_hash == manifest_hash:
                return manifest
    return None


def ingest_results(
    request: IngestRequest, *, layout: Layout, store: Store | Callable[[], Store]
) -> IngestOutcome:
    """Store the results `request` names as runs (one per log, or per model of a table).

    Args:
        request: What to read and how.
        layout: The project (``--suite`` is read from it; paths in the runs are relative to
            its root).
        store: The results store, or a function that opens it: called once the request is
            checked, so that a refused request makes no store.

    Raises:
        UsageError: options of a table with ``--format inspect``, a table named by URL,
            ``--split`` without ``--suite``, a suite without its exact version, and every
            refusal of the run stage's readers (bad rows, unknown items).
    """
    from evalsuite.run import CsvOptions, ingest_inspect, ingest_table, is_url

    suite = _attached_suite(layout, request)
    if request.format != "inspect" and is_url(request.path):
        raise UsageError(
            f"--format {request.format} reads a local file, not a URL ({request.path}); copy "
            "the file to this machine first (inspect logs, --format inspect, may be read from "
            "any fsspec URL)"
        )
    unknown = sorted(set(request.columns) - set(CSV_TARGETS))
    if unknown:
        raise UsageError(
            f"--column maps {unknown[0]!r}, not a column evalsuite reads (one of "
            f"{', '.join(CSV_TARGETS)})"
        )
    if request.format == "eee":
        stored = _ingest_aggregates(request, suite, store)
        if stored is not None:
            return stored
    if request.format in FOREIGN_FORMATS:
        return IngestOutcome(_ingest_foreign(request, layout, suite, store))
    if request.metric is not None:
        raise UsageError("--metric applies to --format eee, lm-eval and helm only")
    if request.format == "inspect":
        if request.columns or request.model or request.ignore_columns or request.epoch_base != 1:
            raise UsageError(
                "--column, --ignore-column, --model and --epoch-base apply to --format csv "
                "and --format parquet only"
            )
        report = ingest_inspect(
            request.path,
            store() if callable(store) else store,
            root=layout.root,
            error_threshold=request.error_threshold,
            again=request.again,
            suite=suite,
            split=request.split,
        )
        return IngestOutcome(report)
    options = CsvOptions(
        columns=dict(request.columns),
        model=request.model,
        epoch_base=request.epoch_base,
        error_threshold=request.error_threshold,
        ignore=request.ignore_columns,
    )
    report = ingest_table(
        Path(request.path),
        store() if callable(store) else store,
        root=layout.root,
        options=options,
        fmt="parquet" if request.format == "parquet" else "csv",
        again=request.again,
        suite=suite,
        split=request.split,
    )
    return IngestOutcome(report)
