"""Tables of the results store, and its schema version."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from evalsuite.store._version import SCHEMA_VERSION

__all__ = [
    "OUTCOME_TEXT_LIMITS",
    "SCHEMA_VERSION",
    "TEXT_LIMITS",
    "attempt_column_cache",
    "attempt_labels",
    "attempt_revs",
    "attempts",
    "gates",
    "ingest_claims",
    "meta",
    "metadata",
    "outcomes",
    "run_adaptive",
    "run_shards",
    "runs",
    "scan_findings",
    "scan_runs",
]

metadata = MetaData()

TEXT_LIMITS: dict[str, int] = {
    "model": 256,
    "item_id": 256,
    "item_hash": 80,
    "stratum": 256,
    "cluster": 256,
    "limit_type": 16,
}
"""Characters the store holds in each text field of a run's model and its attempts.

PostgreSQL refuses a longer value (``VARCHAR(n)``) where SQLite would keep it, so every
writer checks these first (`_bulk.check_batch`, the CSV and Parquet reader) and a file is
accepted or refused the same way on both backends."""

OUTCOME_TEXT_LIMITS: dict[str, int] = {"model": 256, "metric": 128}
"""Characters the store holds in a deployment result's model and metric (`make_outcome`)."""

meta = Table(
    "meta",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

runs = Table(
    "runs",
    metadata,
    Column("run_id", String(64), primary_key=True),
    Column("suite", String(128)),
    Column("version", String(32)),
    Column("manifest_hash", String(80)),
    Column("split", String(16)),
    Column("model", String(TEXT_LIMITS["model"]), nullable=False),
    Column("model_args", Text, nullable=False, default="{}"),
    Column("epochs", Integer, nullable=False),
    Column("seed", BigInteger),
    Column("planned", Integer, nullable=False),
    Column("status", String(16), nullable=False),
    Column("valid", Boolean),
    Column("error_rate", Float),
    Column("error_threshold", Float, nullable=False),
    Column("weights", Text, nullable=False, default="{}"),
    Column("source", String(16), nullable=False),
    Column("spec", Text, nullable=False, default="{}"),
    Column("provenance", Text, nullable=False, default="{}"),
    Column("started_at", String(40), nullable=False),
    Column("finished_at", String(40)),
    Column("content_hash", String(80), index=True),
)

attempts = Table(
    "attempts",
    metadata,
    Column("run_id", String(64), nullable=False),
    Column("item_id", String(TEXT_LIMITS["item_id"]), nullable=False),
    Column("epoch", Integer, nullable=False),
    Column("item_hash", String(TEXT_LIMITS["item_hash"])),
    Column("stratum", String(TEXT_LIMITS["stratum"]), nullable=False),
    Column("cluster", String(TEXT_LIMITS["cluster"])),
    Column("seed", BigInteger),
    Column("outcome", String(16), nullable=False),
    Column("limit_type", String(TEXT_LIMITS["limit_type"])),
    Column("score", Float),
    Column("reason", Text),
    Column("retries", Integer, nullable=False, default=0),
    Column("duration_s", Float, nullable=False, default=0.0),
    Column("tokens", Integer, nullable=False, default=0),
    Column("checks", Text),
    Column("recorded_at", String(40), nullable=False),
    UniqueConstraint("run_id", "item_id", "epoch", name="uq_attempt"),
)

outcomes = Table(
    "outcomes",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("model", String(OUTCOME_TEXT_LIMITS["model"]), nullable=False, index=True),
    Column("metric", String(OUTCOME_TEXT_LIMITS["metric"]), nullable=False),
    Column("value", Float, nullable=False),
    Column("se", Float),
    Column("n", Integer),
    Column("observed_at", String(40)),
    Column("source", Text),
    Column("fingerprint", String(80), nullable=False, unique=True),
    Column("recorded_at", String(40), nullable=False),
)

ingest_claims = Table(
    "ingest_claims",
    metadata,
    Column("content_hash", String(80), primary_key=True),
    Column("claimed_at", String(40), nullable=False),
)
"""One row per ingest fingerprint ever seen: the row an ingest locks (by writing it) before it
looks for runs with the same content, so two concurrent ingests of one file store one run."""

run_shards = Table(
    "run_shards",
    metadata,
    Column("run_id", String(64), primary_key=True),
    Column("shard", Integer, primary_key=True),
    Column("shards", Integer, nullable=False),
    Column("status", String(16), nullable=False),
    Column("host", String(256)),
    Column("started_at", String(40), nullable=False),
    Column("finished_at", String(40)),
)
"""One row per (run, shard) of a sharded run: ``running``, ``interrupted`` or ``complete``;
the run is complete when all ``shards`` rows are (docs/design/sharded-runs.md)."""

run_adaptive = Table(
    "run_adaptive",
    metadata,
    Column("run_id", String(64), primary_key=True),
    Column("summary", Text, nullable=False),
    Column("recorded_at", String(40), nullable=False),
)
"""One row per adaptive run (``run --adaptive``): its summary as JSON, the rounds, intervals,
stop reason and verdict the report shows (docs/design/adaptive.md)."""

gates = Table(
    "gates",
    metadata,
    Column("baseline", String(64), primary_key=True),
    Column("candidate", String(64), primary_key=True),
    Column("kind", String(32), nullable=False),
    Column("margin", Float, nullable=False),
    Column("alpha", Float, nullable=False),
    Column("asked_at", String(40), nullable=False),
)
"""The gate last asked for in `compare` of each (baseline, candidate) pair, so that every
report of the pair, from any machine sharing the store, judges the same gate
(docs/design/result-model.md)."""

attempt_column_cache = Table(
    "attempt_column_cache",
    metadata,
    Column("run_id", String(64), primary_key=True),
    Column("rev", BigInteger, nullable=False),
    Column("format", Integer, nullable=False),
    Column("n_rows", BigInteger, nullable=False),
    Column("data", LargeBinary, nullable=False),
    Column("written_at", String(40), nullable=False),
)
"""A run's analysis columns as one compressed blob (`Store.attempt_columns`), valid only while
``rev`` is the run's revision in `attempt_revs` (0 when it has none) and dropped by any write
to the run's attempts (triggers; docs/design/analysis-scale.md, "Fifth pass")."""

attempt_revs = Table(
    "attempt_revs",
    metadata,
    Column("run_id", String(64), primary_key=True),
    Column("rev", BigInteger, nullable=False),
)
"""A run's attempts revision: raised by every statement that writes the run's attempts
(PostgreSQL triggers), so a cached blob read in an older snapshot is never taken for current."""

attempt_labels = Table(
    "attempt_labels",
    metadata,
    Column("label_id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(64), nullable=False),
    Column("item_id", String(256), nullable=False),
    Column("epoch", Integer, nullable=False),
    Column("modes", Text, nullable=False),
    Column("note", Text, nullable=False),
    Column("who", String(256), nullable=False),
    Column("at", String(40), nullable=False),
    Column("taxonomy_version", String(64), nullable=False),
    Index("ix_attempt_labels_run", "run_id", "item_id", "epoch"),
)
"""Every label saved on an attempt (review, docs/review.md): the failure modes (a JSON list of
names), a note, who and when, against which taxonomy version. Rows are never updated: a
later save of the same attempt is its current label, the earlier ones its history."""

scan_findings = Table(
    "scan_findings",
    metadata,
    Column("run_id", String(64), primary_key=True),
    Column("item_id", String(256), primary_key=True),
    Column("epoch", Integer, primary_key=True),
    Column("scanner", String(128), primary_key=True),
    Column("value", Text, nullable=False),
    Column("explanation", Text, nullable=False),
    Column("scan_location", Text, nullable=False),
    Column("scanned_at", String(40), nullable=False),
)
"""What the Inspect Scout scanners found in a run's transcripts, one row per (attempt,
scanner) that flagged it; a later scan of the run by a scanner replaces that scanner's rows
(review --scan, docs/review.md). ``scan_location`` is the Scout scan the finding came from."""

scan_runs = Table(
    "scan_runs",
    metadata,
    Column("run_id", String(64), primary_key=True),
    Column("scanner", String(128), primary_key=True),
    Column("scan_location", Text, nullable=False),
    Column("scanned_at", String(40), nullable=False),
    Column("transcripts", Integer, nullable=False),
    Column("flagged", Integer, nullable=False),
)
"""The last scan of each run by each scanner: where Scout wrote it, how many transcripts it
read and flagged; a scanner with a row here and no `scan_findings` flagged nothing."""
