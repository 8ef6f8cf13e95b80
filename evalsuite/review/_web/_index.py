"""The review index: every attempt of the reviewed runs, their transcripts, full-text search.

One SQLite file beside the store (``.evalsuite/review-index.sqlite`` for the project's own
store; beside the database file for another SQLite store; in ``.evalsuite/`` for a server
database) caches, per run, its attempt rows, each transcript (JSON) and an FTS5 table over
the transcript's messages, tool calls and tool results. A run is indexed once; it is indexed
again when its signature changes: the logs' paths, sizes and modification times, or the
store's rows of the run (item, epoch, outcome, score, reason). The file is a cache: deleting
it only costs the next start its rebuild.

Holdout runs: their transcript text is never written here (holdout plaintext stays off the
disk outside the vault). A holdout run's rows are indexed from the store alone; the server
reads a transcript of one, if any log exists, from its log into memory when it is opened, and
search does not reach it.
"""

from __future__ import annotations

import hashlib
import json
import math
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalsuite.review._web._logs import LogSource, Transcript, read_transcripts

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "INDEX_FORMAT",
    "AttemptRow",
    "IndexedRun",
    "ReviewIndex",
    "RunFacts",
    "fts_query",
]

INDEX_FORMAT = "1"
"""Bumped when the index's tables change: an index of another format is rebuilt."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, signature TEXT NOT NULL, n_attempts INTEGER NOT NULL,
    n_transcripts INTEGER NOT NULL, built_at TEXT NOT NULL, build_s REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS attempts (
    id INTEGER PRIMARY KEY, run_id TEXT NOT NULL, item_id TEXT NOT NULL, epoch INTEGER NOT NULL,
    stratum TEXT, outcome TEXT NOT NULL, limit_type TEXT, score REAL, reason TEXT,
    tokens INTEGER, duration_s REAL, transcript TEXT,
    UNIQUE (run_id, item_id, epoch)
);
CREATE VIRTUAL TABLE IF NOT EXISTS search USING fts5(messages, tool_calls, tool_results);
"""


@dataclass(frozen=True, slots=True)
class RunFacts:
    """What the index needs of a stored run."""

    run_id: str
    holdout: bool
    attempts: pd.DataFrame
    """The store's attempts of the run (`Store.attempts`)."""
    logs: LogSource


@dataclass(slots=True)
class AttemptRow:
    """One attempt as the list shows it."""

    id: int
    run_id: str
    item_id: str
    epoch: int
    stratum: str
    outcome: str
    limit_type: str | None
    score: float | None
    reason: str | None
    tokens: int
    duration_s: float
    has_transcript: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (a NaN score is null)."""
        return {
            "id": self.id,
            "run_id": self.run_id,
            "item_id": self.item_id,
            "epoch": self.epoch,
            "stratum": self.stratum,
            "outcome": self.outcome,
            "limit_type": self.limit_type,
            "score": self.score,
            "reason": self.reason,
            "tokens": self.tokens,
            "duration_s": self.duration_s,
            "has_transcript": self.has_transcript,
        }


@dataclass(slots=True)
class IndexedRun:
    """A run as the index holds it: built now or reused, and how long that took."""

    run_id: str
    holdout: bool
    rows: list[AttemptRow]
    reused: bool
    build_s: float
    n_transcripts: int
    logs: LogSource
    keys: dict[tuple[str, int], AttemptRow] = field(default_factory=dict)


def _number(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return None if math.isnan(number) else number


_SIGNED = ["item_id", "epoch", "outcome", "score", "reason"]


def _store_signature(attempts: pd.DataFrame) -> str:
    """A digest of the store's rows of the run (what the list shows of each attempt)."""
    import pandas as pd

    hashed = pd.util.hash_pandas_object(attempts[_SIGNED].astype(str), index=False)
    return f"{len(attempts)}:" + hashlib.sha256(hashed.to_numpy().tobytes()).hexdigest()


def fts_query(text: str) -> str:
    """`text` as an FTS5 query: every word must occur (each quoted, so no syntax applies)."""
    words = [w.replace('"', '""') for w in text.split() if w.strip()]
    return " ".join(f'"{w}"' for w in words)


class ReviewIndex:
    """The index file, opened for reading and indexing (one connection, used under a lock)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        found = self._format()
        if found is not None and found != INDEX_FORMAT:
            self._db.executescript(
                "DROP TABLE IF EXISTS runs; DROP TABLE IF EXISTS attempts; "
                "DROP TABLE IF EXISTS search; DROP TABLE IF EXISTS meta;"
            )
        self._db.executescript(_SCHEMA)
        self._db.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('format', ?)", (INDEX_FORMAT,)
        )

    def _format(self) -> str | None:
        try:
            row = self._db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
        except sqlite3.OperationalError:
            return None
        return None if row is None else str(row[0])

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._db.close()

    def open_run(self, facts: RunFacts) -> IndexedRun:
        """The run's rows from the index, indexing it first when its signature changed.

        Raises:
            ValueError: one of its logs is not a readable inspect log.
        """
        signature = _store_signature(facts.attempts) + "\n" + facts.logs.signature()
        with self._lock:
            found = self._db.execute(
                "SELECT signature, n_transcripts, build_s FROM runs WHERE run_id = ?",
                (facts.run_id,),
            ).fetchone()
        if found is not None and found[0] == signature:
            rows = self._rows(facts.run_id)
            return self._indexed(facts, rows, reused=True, build_s=found[2], n=found[1])
        started = time.perf_counter()
        transcripts = {} if facts.holdout else read_transcripts(facts.logs)
        self._write(facts, signature, transcripts, started)
        build_s = time.perf_counter() - started
        with self._lock:
            self._db.execute(
                "UPDATE runs SET build_s = ? WHERE run_id = ?", (build_s, facts.run_id)
            )
        rows = self._rows(facts.run_id)
        return self._indexed(facts, rows, reused=False, build_s=build_s, n=len(transcripts))

    def _indexed(
        self, facts: RunFacts, rows: list[AttemptRow], *, reused: bool, build_s: float, n: int
    ) -> IndexedRun:
        run = IndexedRun(
            run_id=facts.run_id,
            holdout=facts.holdout,
            rows=rows,
            reused=reused,
            build_s=build_s,
            n_transcripts=n,
            logs=facts.logs,
        )
        run.keys = {(r.item_id, r.epoch): r for r in rows}
        return run

    def _write(
        self,
        facts: RunFacts,
        signature: str,
        transcripts: Mapping[tuple[str, int], Transcript],
        started: float,
    ) -> None:
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                old = [r[0] for r in db.execute(
                    "SELECT id FROM attempts WHERE run_id = ?", (facts.run_id,)
                )]  # fmt: skip
                db.executemany("DELETE FROM search WHERE rowid = ?", ((i,) for i in old))
                db.execute("DELETE FROM attempts WHERE run_id = ?", (facts.run_id,))
                for row in facts.attempts.to_dict("records"):
                    key = (str(row["item_id"]), int(row["epoch"]))
                    transcript = transcripts.get(key)
                    cursor = db.execute(
                        "INSERT INTO attempts (run_id, item_id, epoch, stratum, outcome, "
                        "limit_type, score, reason, tokens, duration_s, transcript) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (
                            facts.run_id,
                            key[0],
                            key[1],
                            str(row.get("stratum") or ""),
                            str(row["outcome"]),
                            row.get("limit_type"),
                            _number(row.get("score")),
                            row.get("reason"),
                            int(row.get("tokens") or 0),
                            float(row.get("duration_s") or 0.0),
                            None if transcript is None else json.dumps(transcript.to_dict()),
                        ),
                    )
                    if transcript is not None:
                        db.execute(
                            "INSERT INTO search (rowid, messages, tool_calls, tool_results) "
                            "VALUES (?, ?, ?, ?)",
                            (cursor.lastrowid, *transcript.search_text()),
                        )
                db.execute(
                    "INSERT OR REPLACE INTO runs (run_id, signature, n_attempts, n_transcripts, "
                    "built_at, build_s) VALUES (?, ?, ?, ?, datetime('now'), ?)",
                    (
                        facts.run_id,
                        signature,
                        len(facts.attempts),
                        len(transcripts),
                        time.perf_counter() - started,
                    ),
                )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    def _rows(self, run_id: str) -> list[AttemptRow]:
        with self._lock:
            found = self._db.execute(
                "SELECT id, run_id, item_id, epoch, stratum, outcome, limit_type, score, reason, "
                "tokens, duration_s, transcript IS NOT NULL FROM attempts WHERE run_id = ? "
                "ORDER BY item_id, epoch",
                (run_id,),
            ).fetchall()
        return [
            AttemptRow(
                id=r[0],
                run_id=r[1],
                item_id=r[2],
                epoch=r[3],
                stratum=r[4] or "",
                outcome=r[5],
                limit_type=r[6],
                score=r[7],
                reason=r[8],
                tokens=r[9] or 0,
                duration_s=r[10] or 0.0,
                has_transcript=bool(r[11]),
            )
            for r in found
        ]

    def transcript(self, row_id: int) -> dict[str, Any] | None:
        """The stored transcript of an attempt (None: none indexed)."""
        with self._lock:
            found = self._db.execute(
                "SELECT transcript FROM attempts WHERE id = ?", (row_id,)
            ).fetchone()
        if found is None or found[0] is None:
            return None
        value: dict[str, Any] = json.loads(found[0])
        return value

    def search(self, text: str, row_ids: Iterable[int] | None = None) -> set[int]:
        """The attempts whose messages, tool calls or tool results hold every word of `text`.

        Raises:
            ValueError: `text` is not a query the index can run (the message says why).
        """
        query = fts_query(text)
        if not query:
            return set() if row_ids is None else set(row_ids)
        with self._lock:
            try:
                found = {r[0] for r in self._db.execute(
                    "SELECT rowid FROM search WHERE search MATCH ?", (query,)
                )}  # fmt: skip
            except sqlite3.OperationalError as exc:
                raise ValueError(f"search {text!r} cannot run: {exc}") from None
        return found if row_ids is None else found & set(row_ids)
