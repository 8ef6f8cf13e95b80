"""Reading a results CSV from another harness: the contract, and every way a file can break it.

The file is checked as a whole before anything is stored: every missing or unknown column is
named at once, and every bad row by its line (up to `MAX_REPORTED`, then a count). The columns,
their meaning and an example are in `CSV_COLUMNS`, `evalsuite ingest --help` and
docs/design/ingest.md.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv

from evalsuite.errors import ItemSourceError, NotFoundError, UsageError
from evalsuite.run._outcomes import LIMIT_OUTCOME
from evalsuite.store import AttemptRecord

Outcome = Literal["scored", "limit", "harness_error"]

__all__ = ["CSV_COLUMNS", "CSV_EXAMPLE", "MAX_EPOCH", "CsvOptions", "read_results_csv"]

CSV_COLUMNS: Mapping[str, str] = {
    "model": "the model's name (or leave the column out and pass --model NAME)",
    "item_id": "the item's stable id",
    "epoch": "the attempt's number at this item: 1, 2, ... (0, 1, ... with --epoch-base 0)",
    "score": "a number in [0, 1], or true/false for 1/0; empty on harness_error rows",
    "stratum": "optional: the item's stratum (empty: all)",
    "outcome": "optional: scored (the default), limit or harness_error",
    "limit_type": "optional, limit rows only: how the attempt was cut short",
}
"""The results-CSV contract: column -> meaning. The first four are required."""

REQUIRED = ("model", "item_id", "epoch", "score")
OUTCOMES = ("scored", "limit", "harness_error")
LIMIT_TYPES = tuple(sorted(k for k, v in LIMIT_OUTCOME.items() if v == "limit"))
MAX_EPOCH = 1000
"""Epochs above this are refused as implausible (an id, a date or a row count, not an epoch)."""
MAX_REPORTED = 20

CSV_EXAMPLE = (
    "model,item_id,epoch,score,stratum,outcome,limit_type\n"
    "gpt-4o,task-001,1,1,billing,,\n"
    "gpt-4o,task-001,2,0,billing,limit,time\n"
    "gpt-4o,task-002,1,,refunds,harness_error,\n"
)

_CONTRACT = (
    "a results CSV has the columns model, item_id, epoch, score and optionally stratum, "
    "outcome, limit_type (evalsuite ingest --help shows their meaning and an example)"
)


@dataclass(frozen=True, slots=True)
class CsvOptions:
    """How to read a results CSV."""

    columns: Mapping[str, str]
    """evalsuite column -> column in the file."""
    model: str | None = None
    epoch_base: Literal[0, 1] = 1
    error_threshold: float = 0.05
    ignore: tuple[str, ...] = field(default=())
    """Columns of the file to drop (anything else unknown is refused)."""


def _decode(path: Path, data: bytes) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ItemSourceError(
            f"{path} is UTF-16 text; evalsuite reads CSV files as UTF-8. Save it as UTF-8 "
            "(e.g. iconv -f UTF-16 -t UTF-8) and ingest it again"
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ItemSourceError(
            f"{path}: line {line} is not UTF-8 (byte 0x{data[exc.start]:02x}); evalsuite reads "
            "CSV files as UTF-8. Save the file as UTF-8 (e.g. iconv -f LATIN1 -t UTF-8) and "
            "ingest it again"
        ) from None


def _record_lines(text: str) -> list[int]:
    """Line on which each CSV record ends (header first), skipping blank lines as the reader."""
    reader = csv.reader(io.StringIO(text, newline=""))
    return [reader.line_num for record in reader if record]


def _header(path: Path, text: str) -> list[str]:
    for record in csv.reader(io.StringIO(text, newline="")):
        if record:
            return [name.strip() for name in record]
    raise ItemSourceError(  # pragma: no cover - _read refuses blank files first
        f"{path} has no header line; {_CONTRACT}"
    )


def _parse(path: Path, text: str, header: list[str]) -> pa.Table:
    bad: list[tuple[int | None, int, int]] = []

    def invalid(row: Any) -> str:
        bad.append((row.number, row.expected_columns, row.actual_columns))
        return "skip"

    try:
        table = pa_csv.read_csv(
            io.BytesIO(text.encode("utf-8")),
            read_options=pa_csv.ReadOptions(use_threads=False, column_names=header, skip_rows=0),
            parse_options=pa_csv.ParseOptions(newlines_in_values=True, invalid_row_handler=invalid),
            convert_options=pa_csv.ConvertOptions(
                column_types=dict.fromkeys(header, pa.string()),
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except pa.ArrowInvalid as exc:
        raise ItemSourceError(f"{path}: not a readable CSV ({exc}); {_CONTRACT}") from None
    if bad:
        lines = _record_lines(text)
        messages = []
        for number, expected, actual in bad[:MAX_REPORTED]:
            where = _line(lines, number - 1) if number is not None else "a row"
            fix = (
                "extra fields are refused: quote a value that contains a comma"
                if actual > expected
                else "keep every comma, leaving optional cells empty"
            )
            messages.append(f"{where}: {actual} field(s), the header has {expected}; {fix}")
        raise ItemSourceError(_listing(path, messages, len(bad)))
    return table.slice(1)  # the header, read as a row because its names were given


def _line(lines: list[int], record: int) -> str:
    return f"line {lines[record]}" if 0 <= record < len(lines) else f"row {record + 1}"


def _listing(path: Path, messages: list[str], total: int) -> str:
    more = f"\n  ... and {total - len(messages)} more" if total > len(messages) else ""
    return (
        f"{path}: {total} problem(s); nothing was stored. Fix these rows and ingest again:\n  "
        + "\n  ".join(messages)
        + more
    )


def _columns(path: Path, header: list[str], options: CsvOptions) -> dict[str, str]:
    """Map each evalsuite column to the file's, after checking the file has what it needs."""
    twice = sorted(name for name, count in Counter(header).items() if count > 1)
    if twice:
        raise ItemSourceError(f"{path}: column(s) {twice} appear more than once in the header")
    for source in [*options.columns.values(), *options.ignore]:
        if source not in header:
            raise UsageError(
                f"{path}: --column/--ignore-column name {source!r}, which is not a column of "
                f"the file (its columns: {header})"
            )
    mapped = {target: source for target, source in options.columns.items()}
    for name in header:
        if name in CSV_COLUMNS and name not in mapped and name not in mapped.values():
            mapped[name] = name
    clash = sorted(t for t, s in options.columns.items() if t in header and s != t)
    unknown = [
        n for n in header if n not in mapped.values() and n not in options.ignore and n not in clash
    ]
    if "model" in mapped and options.model is not None:
        raise UsageError(f"{path} has a model column; do not pass --model as well")
    missing = [c for c in REQUIRED if c not in mapped and not (c == "model" and options.model)]
    problems = []
    if missing:
        hint = " (or pass --model NAME when the file holds one model)" if "model" in missing else ""
        problems.append(f"missing column(s) {missing}{hint}")
    if clash:
        problems.append(
            f"column(s) {clash} are in the file and also mapped from another column by --column"
        )
    if unknown:
        problems.append(
            f"unknown column(s) {unknown} (refused: a misspelt optional column would be "
            "silently lost; drop one with --ignore-column NAME)"
        )
    if problems:
        raise ItemSourceError(
            f"{path}: " + "; ".join(problems) + f". The file's columns: {header}; {_CONTRACT}. "
            "Map a column of yours with --column TARGET=NAME, e.g. --column item_id=task_id"
        )
    return mapped


class _Checks:
    """Bad rows found by vectorised checks, reported together by line."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.found: list[tuple[int, str]] = []
        self.total = 0
        self._lines: list[int] | None = None

    def line(self, row: int) -> str:
        """Where data row `row` (0-based) is in the file, e.g. ``line 7``."""
        if self._lines is None:
            self._lines = _record_lines(self.text)
        return _line(self._lines, row + 1)

    def flag(self, mask: Any, message: Callable[[int], str]) -> None:
        rows = np.flatnonzero(np.asarray(mask, dtype=bool))
        self.total += len(rows)
        self.found.extend((int(i), message(int(i))) for i in rows[:MAX_REPORTED])

    def raise_if_any(self, path: Path) -> None:
        if not self.total:
            return
        first = sorted(self.found)[:MAX_REPORTED]
        messages = [f"{self.line(i)}: {message}" for i, message in first]
        raise ItemSourceError(_listing(path, messages, self.total))


def _read(path: Path) -> str:
    if not path.is_file():
        raise NotFoundError(f"{path} does not exist (expected a results CSV file)")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ItemSourceError(f"{path}: cannot read it ({exc.strerror})") from None
    text = _decode(path, data)
    if not text.strip():
        raise ItemSourceError(
            f"{path} is empty; {_CONTRACT}: a header line, then one row per attempt, e.g.\n"
            + CSV_EXAMPLE
        )
    return text


def read_results_csv(path: Path, options: CsvOptions) -> dict[str, list[AttemptRecord]]:
    """The attempts of a results CSV, per model (sorted by model), in file order.

    Raises:
        NotFoundError: no such file.
        ItemSourceError: empty, not UTF-8, missing or unknown columns, or bad rows (every
            one named by line; nothing is returned unless every row is valid).
        UsageError: ``--column``/``--ignore-column``/``--model`` do not fit the file.
    """
    if options.model is not None and not options.model.strip():
        raise UsageError("--model is empty; give the model's name, e.g. --model gpt-4o")
    text = _read(path)
    header = _header(path, text)
    mapped = _columns(path, header, options)
    raw = _parse(path, text, header).to_pandas()
    if not len(raw):
        raise ItemSourceError(
            f"{path}: no data rows after the header; expected one row per attempt, e.g.\n"
            + CSV_EXAMPLE
        )
    frame = pd.DataFrame({t: raw[s].astype(object).str.strip() for t, s in mapped.items()})
    checks = _Checks(text)
    if options.model is not None:
        frame["model"] = options.model.strip()
    _check_names(frame, checks)
    epochs = _check_epochs(frame, checks, options.epoch_base)
    outcome = frame["outcome"].replace("", "scored") if "outcome" in frame else "scored"
    frame["outcome"] = outcome
    checks.flag(
        ~frame["outcome"].isin(OUTCOMES),
        lambda i: f"outcome {frame['outcome'].iat[i]!r} is not one of {list(OUTCOMES)}",
    )
    scores = _check_scores(frame, checks)
    limit_types = _check_limit_types(frame, checks)
    frame["epoch_n"] = epochs
    _check_duplicates(frame, checks)
    checks.raise_if_any(path)
    stratum = frame["stratum"].replace("", "all") if "stratum" in frame else "all"
    frame["stratum"] = stratum
    records = [
        AttemptRecord(
            item_id=item,
            epoch=epoch,
            stratum=stratum_,
            outcome=cast(Outcome, outcome_),
            score=score,
            limit_type=limit_type,
            reason="ingested from CSV",
        )
        for item, epoch, stratum_, outcome_, score, limit_type in zip(
            frame["item_id"].tolist(),
            epochs.tolist(),
            frame["stratum"].tolist(),
            frame["outcome"].tolist(),
            scores.tolist(),
            limit_types,
            strict=True,
        )
    ]
    by_model: dict[str, list[AttemptRecord]] = {}
    for model, record in zip(frame["model"].tolist(), records, strict=True):
        by_model.setdefault(model, []).append(record)
    return dict(sorted(by_model.items()))


def _check_names(frame: pd.DataFrame, checks: _Checks) -> None:
    checks.flag(
        frame["model"] == "",
        lambda _: (
            "model is empty; every row names its model (or drop the column and pass "
            "--model NAME for a file of one model)"
        ),
    )
    checks.flag(frame["item_id"] == "", lambda _: "item_id is empty; every row names its item")


def _check_epochs(
    frame: pd.DataFrame, checks: _Checks, base: Literal[0, 1]
) -> np.ndarray[Any, Any]:
    text = frame["epoch"]
    whole = text.str.fullmatch(r"\+?[0-9]{1,9}").eq(True)
    checks.flag(
        ~whole,
        lambda i: (
            f"epoch {text.iat[i]!r} is not a whole number; expected the attempt's "
            f"number at this item ({base}, {base + 1}, ...)"
        ),
    )
    values = pd.to_numeric(text.where(whole, str(base))).astype("int64").to_numpy()
    epochs = values + (1 - base)
    checks.flag(
        epochs < 1,
        lambda i: (
            f"epoch {text.iat[i]} is below {base}; epochs count from {base}"
            + (" (pass --epoch-base 0 if this file counts from 0)" if base == 1 else "")
        ),
    )
    checks.flag(
        epochs > MAX_EPOCH,
        lambda i: (
            f"epoch {text.iat[i]} is implausibly large (at most {MAX_EPOCH} epochs per "
            "item); check that this column holds the attempt number, not an id or a date"
        ),
    )
    return np.where(whole.to_numpy(), epochs, 0)


def _check_scores(frame: pd.DataFrame, checks: _Checks) -> np.ndarray[Any, Any]:
    text, outcome = frame["score"], frame["outcome"]
    lowered = text.str.lower()
    boolean = lowered.isin(("true", "false"))
    parsed = pd.to_numeric(text.where(~boolean, None), errors="coerce").astype(float)
    numbers = parsed.where(~boolean, (lowered == "true").astype(float)).to_numpy()
    error = (outcome == "harness_error").to_numpy()
    empty = (text == "").to_numpy()
    checks.flag(
        error & ~empty,
        lambda i: (
            f"a harness_error row leaves score empty (got {text.iat[i]!r}): harness "
            "errors are excluded from the score, never scored"
        ),
    )
    checks.flag(
        ~error & empty,
        lambda i: (
            f"score is empty on a {outcome.iat[i]} row; only harness_error rows have no score"
        ),
    )
    unreadable = ~error & ~empty & np.isnan(numbers)
    checks.flag(
        unreadable,
        lambda i: (
            f"score {text.iat[i]!r} is not a number; expected a number in [0, 1] or true/false"
        ),
    )
    with np.errstate(invalid="ignore"):
        outside = ~error & ~np.isnan(numbers) & ~((numbers >= 0.0) & (numbers <= 1.0))
        checks.flag(
            outside,
            lambda i: (
                f"score {text.iat[i]} is outside [0, 1]; rescale it first (evalsuite never clips)"
            ),
        )
        limit = (outcome == "limit").to_numpy()
        checks.flag(
            limit & ~np.isnan(numbers) & (numbers != 0.0) & ~outside,
            lambda i: f"a limit row scores 0 (got {text.iat[i]}): a limit is a model failure",
        )
    return np.where(error, np.nan, numbers)


def _check_limit_types(frame: pd.DataFrame, checks: _Checks) -> list[str | None]:
    if "limit_type" not in frame:
        return [None] * len(frame)
    kind, outcome = frame["limit_type"], frame["outcome"]
    limit = outcome == "limit"
    checks.flag(
        ~limit & (kind != ""),
        lambda i: (
            f"limit_type {kind.iat[i]!r} on a {outcome.iat[i]} row; only limit rows "
            "have a limit type"
        ),
    )
    checks.flag(
        limit & (kind != "") & ~kind.isin(LIMIT_TYPES),
        lambda i: (
            f"limit_type {kind.iat[i]!r} is not one of {list(LIMIT_TYPES)}"
            + (
                " (an operator interrupt is a harness error: write outcome harness_error)"
                if kind.iat[i] == "operator"
                else ""
            )
        ),
    )
    return [k if (k and is_limit) else None for k, is_limit in zip(kind, limit, strict=True)]


def _check_duplicates(frame: pd.DataFrame, checks: _Checks) -> None:
    keys = ["model", "item_id", "epoch_n"]
    duplicated = frame.duplicated(subset=keys, keep="first").to_numpy()
    if not duplicated.any():
        return
    group = frame.reset_index(drop=True).groupby(keys, sort=False).ngroup().to_numpy()
    first_row = pd.Series(np.arange(len(frame))).groupby(group).transform("min").to_numpy()
    checks.flag(
        duplicated,
        lambda i: (
            f"duplicate (model, item_id, epoch) ({frame['model'].iat[i]!r}, "
            f"{frame['item_id'].iat[i]!r}, {frame['epoch'].iat[i]}), first at "
            f"{checks.line(int(first_row[i]))}; one row per attempt"
        ),
    )
