"""The store's schema version, apart from the tables: readers check it without SQLAlchemy."""

__all__ = ["SCHEMA_VERSION"]

SCHEMA_VERSION = 8
"""Bump with a migration in `_migrations.MIGRATIONS` whenever a table changes.

1. runs, attempts, outcomes, meta.
2. ``runs.content_hash`` (fingerprint of an ingested run's stored content) and
   ``ingest_claims`` (docs/design/ingest.md).
3. Content fingerprints of scheme 2 (computed batch by batch); the index on
   ``attempts.run_id`` dropped, because the unique key (run_id, item_id, epoch) serves every
   query by run (docs/design/store-scale.md); ``seed`` columns 64-bit (per-attempt seeds are
   63-bit: PostgreSQL's 32-bit ``INTEGER`` refused them). ``meta.written_by`` names the
   evalsuite version that created or last upgraded the store.
4. ``run_shards``: one row per shard of a sharded run, with its status
   (docs/design/sharded-runs.md).
5. ``run_adaptive``: an adaptive run's summary (rounds, intervals, stop reason, verdict),
   kept with the run (docs/design/adaptive.md).
6. ``gates``: the gate asked for in `compare`, one row per (baseline, candidate) pair
   (docs/design/result-model.md).
7. ``attempt_column_cache`` and ``attempt_revs``: a run's analysis columns cached as one
   blob, and the triggers on ``attempts`` that drop it (and, on PostgreSQL, raise the run's
   revision) at any write to the run's attempts (docs/design/analysis-scale.md).
8. ``attempt_labels`` (failure-mode labels of attempts, every save kept),
   ``scan_findings`` (what the transcript scanners flagged) and ``scan_runs`` (the last
   scan of a run by each scanner), docs/review.md.
"""
