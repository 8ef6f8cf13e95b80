"""Deployment results from the command line or a file, validated row by row.

Not attempt outcomes: the names here (`make_outcome`, `OUTCOME_COLUMNS`, the ``outcomes`` table)
are older than the word and stay (docs/contributing.md, "Words").
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping
from datetime import date, datetime
from pathlib import Path
from typing import Any

from evalsuite._core.hashing import content_hash
from evalsuite.errors import ItemSourceError, NotFoundError, UsageError
from evalsuite.store._schema import OUTCOME_TEXT_LIMITS
from evalsuite.store._store import OutcomeRecord

__all__ = ["OUTCOME_COLUMNS", "make_outcome", "outcome_fingerprint", "read_outcomes_file"]

OUTCOME_COLUMNS = ("model", "metric", "value", "se", "n", "observed_at", "source")
_REQUIRED = ("model", "metric", "value")


def _number(value: Any, name: str, where: str) -> float | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ItemSourceError(f"{where}: {name} {value!r} is not a number") from None
    if not math.isfinite(number):
        raise ItemSourceError(f"{where}: {name} must be a finite number (got {value!r})")
    return number


def _date(value: Any, where: str) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    text = str(value).strip()
    try:
        parsed: date = datetime.fromisoformat(text)
    except ValueError:
        raise ItemSourceError(
            f"{where}: observed_at {text!r} is not an ISO date (expected e.g. 2026-11-30)"
        ) from None
    return parsed.isoformat()


def make_outcome(fields: Mapping[str, Any], where: str = "deployment result") -> OutcomeRecord:
    """Validate one deployment result (model, metric, value, optional se or n, observed_at, source).

    Raises:
        ItemSourceError: a missing or malformed field, named with `where` (e.g. ``row 3``).
    """
    unknown = sorted(set(fields) - set(OUTCOME_COLUMNS))
    if unknown:
        raise ItemSourceError(
            f"{where}: unknown column(s) {unknown}; expected {list(OUTCOME_COLUMNS)}"
        )
    for name in _REQUIRED:
        if fields.get(name) is None or not str(fields[name]).strip():
            raise ItemSourceError(f"{where}: missing {name} (required: model, metric, value)")
    for name in ("model", "metric", "source", "observed_at"):
        text = "" if fields.get(name) is None else str(fields[name])
        # PostgreSQL refuses both where SQLite would keep them: one answer on every backend
        if "\x00" in text:
            raise ItemSourceError(
                f"{where}: {name} holds a NUL character (\\x00), which a PostgreSQL store "
                "cannot hold; remove it"
            )
        limit = OUTCOME_TEXT_LIMITS.get(name)
        if limit is not None and len(text.strip()) > limit:
            raise ItemSourceError(
                f"{where}: {name} is {len(text.strip())} characters long; the store holds at "
                f"most {limit}: shorten it"
            )
    value = _number(fields["value"], "value", where)
    se = _number(fields.get("se"), "se", where)
    n = _number(fields.get("n"), "n", where)
    if se is not None and se < 0:
        raise ItemSourceError(f"{where}: se must be >= 0 (got {se})")
    if n is not None and (n < 1 or n != int(n)):
        raise ItemSourceError(f"{where}: n must be a whole number >= 1 (got {fields.get('n')})")
    if se is not None and n is not None:
        raise ItemSourceError(f"{where}: give se or n, not both (se is derived from n for rates)")
    if value is None:
        raise ItemSourceError(f"{where}: missing value (required: model, metric, value)")
    if n is not None and not 0.0 <= value <= 1.0:
        raise ItemSourceError(
            f"{where}: n gives the standard error of a rate (a value in [0, 1]), and {value} "
            "is not one; give se (the standard error of this value) instead, or leave both out"
        )
    return OutcomeRecord(
        model=str(fields["model"]).strip(),
        metric=str(fields["metric"]).strip(),
        value=value,
        se=se,
        n=int(n) if n is not None else None,
        observed_at=_date(fields.get("observed_at"), where),
        source=str(fields["source"]).strip() if fields.get("source") else None,
    )


def outcome_fingerprint(record: OutcomeRecord) -> str:
    """Content hash of a deployment result: importing the same observation twice adds it once."""
    return content_hash(
        {
            "model": record.model,
            "metric": record.metric,
            "value": record.value,
            "se": record.se,
            "n": record.n,
            "observed_at": record.observed_at,
            "source": record.source,
        }
    )


_EXTRA = "\x00extra"
"""`csv.DictReader`'s key for the fields of a row beyond the header's."""


def _text(path: Path) -> str:
    """The file's text: UTF-8, with or without a byte-order mark (spreadsheets write one).

    Raises:
        ItemSourceError: bytes that are not UTF-8, naming the line and how to convert.
    """
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ItemSourceError(
            f"{path}:{line}: not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start}); "
            "save the file as UTF-8 (e.g. `iconv -f LATIN1 -t UTF-8 FILE > NEW`) and import "
            "it again; nothing was imported"
        ) from None


def _rows(path: Path) -> list[tuple[str, dict[str, Any]]]:
    text = _text(path)
    if path.suffix in (".jsonl", ".ndjson", ".json"):
        rows = []
        # split at \n only: a JSON string may hold U+2028, which str.splitlines splits at
        for number, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ItemSourceError(f"{path}:{number}: not valid JSON ({exc.msg})") from None
            if not isinstance(record, dict):
                raise ItemSourceError(f"{path}:{number}: expected one JSON object per line")
            rows.append((f"{path}:{number}", record))
        return rows
    if path.suffix != ".csv":
        raise UsageError(f"{path}: expected a .csv or .jsonl file of deployment results")
    # newline="": a quoted field keeps its line breaks; str.splitlines would also have
    # split rows at form feeds and Unicode line separators inside a field
    reader = csv.DictReader(io.StringIO(text, newline=""), restkey=_EXTRA)
    rows = []
    for number, row in enumerate(reader, start=2):
        extra = row.pop(_EXTRA, None)
        if extra:
            raise ItemSourceError(
                f"{path} row {number}: {len(extra)} field(s) more than the header's "
                f"{len(reader.fieldnames or [])} ({extra!r}); a value is never dropped "
                "silently: quote a value holding a comma, or add the column to the header"
            )
        rows.append((f"{path} row {number}", {k.strip(): v for k, v in row.items()}))
    return rows


def read_outcomes_file(path: Path) -> list[OutcomeRecord]:
    """Every row of a CSV or JSONL file of deployment results, checked; names the first bad row."""
    if not path.is_file():
        raise NotFoundError(f"{path} does not exist")
    rows = _rows(path)
    if not rows:
        raise ItemSourceError(f"{path}: no deployment result rows")
    return [make_outcome(fields, where) for where, fields in rows]
