"""Reading a results table from another harness (CSV or Parquet): the contract, and its checks.

The file is read in Arrow record batches (pyarrow's streaming CSV reader, or Parquet row
groups) and checked with vectorised kernels, so memory is bounded by a batch, not the file.
Every missing or unknown column is named at once, before any row is read; every bad row by
its line (CSV) or row (Parquet), up to `MAX_REPORTED`, then a count. Valid batches are handed
on (per model, as the store's attempt rows) only while no problem has been found; the caller
stores nothing unless the whole file passes. The columns, their meaning and an example are in
`CSV_COLUMNS`, `evalsuite ingest --help` and docs/design/ingest.md.
"""

from __future__ import annotations

import codecs
import csv
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from evalsuite.errors import ItemSourceError, NotFoundError, UsageError
from evalsuite.run._limits import LIMIT_OUTCOME
from evalsuite.store import ATTEMPT_SCHEMA, TEXT_LIMITS

__all__ = [
    "CSV_COLUMNS",
    "CSV_EXAMPLE",
    "CSV_REASON",
    "MAX_EPOCH",
    "CsvOptions",
    "ResultsTable",
]

CSV_COLUMNS: Mapping[str, str] = {
    "model": "the model's name (or leave the column out and pass --model NAME)",
    "item_id": "the item's stable id",
    "epoch": "the attempt's number at this item: 1, 2, ... (0, 1, ... with --epoch-base 0)",
    "score": "a number in [0, 1], or true/false for 1/0; empty on harness_error rows",
    "stratum": "optional: the item's stratum (empty: all)",
    "outcome": "optional: scored (the default), limit or harness_error",
    "limit_type": "optional, limit rows only: how the attempt was cut short",
}
"""The results-table contract (CSV and Parquet): column -> meaning. The first four are required."""

REQUIRED = ("model", "item_id", "epoch", "score")
OUTCOMES = ("scored", "limit", "harness_error")
LIMIT_TYPES = tuple(sorted(k for k, v in LIMIT_OUTCOME.items() if v == "limit"))
MAX_EPOCH = 1000
"""Epochs above this are refused as implausible (an id, a date or a row count, not an epoch)."""
MAX_REPORTED = 20
CSV_REASON = "ingested from CSV"
"""The reason of every attempt read from a results table (CSV or Parquet: one contract)."""
READ_BLOCK_BYTES = 4 << 20
"""CSV bytes parsed per batch (about 100,000 rows of a typical results file)."""
PARQUET_BATCH_ROWS = 100_000

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
_NUMBER = r"^[+-]?((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|inf|infinity)$"
_WHOLE = r"^\+?[0-9]+$"
_SMALL = r"^\+?0*[0-9]{1,9}$"
"""A whole number that fits an int64 after the epoch base is added (larger: too large)."""
Format = Literal["csv", "parquet"]


@dataclass(frozen=True, slots=True)
class CsvOptions:
    """How to read a results table (CSV or Parquet)."""

    columns: Mapping[str, str]
    """evalsuite column -> column in the file."""
    model: str | None = None
    epoch_base: Literal[0, 1] = 1
    error_threshold: float = 0.05
    ignore: tuple[str, ...] = field(default=())
    """Columns of the file to drop (anything else unknown is refused)."""


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


# reading the file ----------------------------------------------------------------------


def _not_utf8(path: Path) -> ItemSourceError:
    """The exact line and byte where `path` stops being UTF-8 (read in chunks)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    line, offset = 1, 0
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                start = max(exc.start, 0)
                line += chunk[:start].count(b"\n")
                bad = chunk[start] if start < len(chunk) else 0
                return ItemSourceError(
                    f"{path}: line {line} is not UTF-8 (byte 0x{bad:02x}); evalsuite reads CSV "
                    "files as UTF-8. Save the file as UTF-8 (e.g. iconv -f LATIN1 -t UTF-8) and "
                    "ingest it again"
                )
            line += chunk.count(b"\n")
            offset += len(chunk)
    return ItemSourceError(f"{path}: not UTF-8 text; save it as UTF-8 and ingest it again")


def _check_readable(path: Path, kind: str) -> None:
    if not path.is_file():
        raise NotFoundError(f"{path} does not exist (expected a results {kind} file)")
    try:
        with path.open("rb"):
            pass
    except OSError as exc:
        raise ItemSourceError(f"{path}: cannot read it ({exc.strerror})") from None


def _csv_header(path: Path) -> list[str]:
    """The header record, after refusing UTF-16, blank and non-UTF-8 files."""
    with path.open("rb") as handle:
        start = handle.read(4)
        if start == b"PAR1":  # Parquet's magic number
            raise ItemSourceError(
                f"{path} is a Parquet file, not CSV text: ingest it with --format parquet"
            )
        if start.startswith((b"\xff\xfe", b"\xfe\xff")):
            raise ItemSourceError(
                f"{path} is UTF-16 text; evalsuite reads CSV files as UTF-8. Save it as UTF-8 "
                "(e.g. iconv -f UTF-16 -t UTF-8) and ingest it again"
            )
        handle.seek(0)
        blank = True
        while chunk := handle.read(1 << 16):
            if chunk.replace(b"\xef\xbb\xbf", b"").strip():
                blank = False
                break
    if blank:
        raise ItemSourceError(
            f"{path} is empty; {_CONTRACT}: a header line, then one row per attempt, e.g.\n"
            + CSV_EXAMPLE
        )
    try:
        with path.open(encoding="utf-8-sig", newline="") as text:
            for record in csv.reader(text):
                if record:
                    return [name.strip() for name in record]
    except UnicodeDecodeError:
        raise _not_utf8(path) from None
    except csv.Error as exc:
        raise ItemSourceError(f"{path}: not a readable CSV ({exc}); {_CONTRACT}") from None
    raise AssertionError("unreachable")  # pragma: no cover - a non-blank file has a record


def _record_lines(path: Path, records: set[int]) -> dict[int, int]:
    """Line on which each wanted CSV record ends (record 0 is the header), read streaming."""
    found: dict[int, int] = {}
    if not records:
        return found
    last = max(records)
    # a value longer than csv's default field limit (128 KiB) is a problem to name by its
    # line, not a crash: the reader already read it, within `READ_BLOCK_BYTES`
    limit = csv.field_size_limit(max(csv.field_size_limit(), READ_BLOCK_BYTES))
    try:
        with path.open(encoding="utf-8-sig", newline="") as text:
            reader = csv.reader(text)
            index = 0
            for record in reader:
                if not record:
                    continue
                if index in records:
                    found[index] = reader.line_num
                if index >= last:
                    break
                index += 1
    finally:
        csv.field_size_limit(limit)
    return found


def _as_text(column: pa.Array | pa.ChunkedArray, name: str, path: Path) -> pa.Array:
    """A Parquet column as the text a CSV cell would hold (missing values empty)."""
    kind = column.type
    if pa.types.is_dictionary(kind):
        column = pc.cast(column, kind.value_type)
        kind = kind.value_type
    if pa.types.is_floating(kind):
        column = pc.if_else(pc.is_nan(column), None, column)  # pandas writes missing as NaN
    if not (
        pa.types.is_string(kind)
        or pa.types.is_large_string(kind)
        or pa.types.is_integer(kind)
        or pa.types.is_floating(kind)
        or pa.types.is_boolean(kind)
        or pa.types.is_null(kind)
    ):
        raise ItemSourceError(
            f"{path}: column {name!r} has Parquet type {kind}; the results-table columns hold "
            "text, numbers or booleans (see evalsuite ingest --help)"
        )
    return pc.fill_null(pc.cast(column, pa.string()), "")


# checking batches ----------------------------------------------------------------------


@dataclass(slots=True)
class _Problems:
    """Bad rows found so far: the first `MAX_REPORTED` by row, and how many in all."""

    found: list[tuple[int, str]] = field(default_factory=list)
    total: int = 0
    shape: list[tuple[int | None, int, int]] = field(default_factory=list)
    """CSV records with too many or too few fields: (record number, expected, actual)."""

    def flag(self, offset: int, mask: pa.Array, message: Callable[[int], str]) -> None:
        rows = pc.indices_nonzero(mask).to_numpy()
        if not len(rows):
            return
        self.total += len(rows)
        self.found.extend((offset + int(i), message(int(i))) for i in rows[:MAX_REPORTED])
        self.found = sorted(self.found)[:MAX_REPORTED]


def _has_nul(name: str) -> Callable[[int], str]:
    """The problem of a value holding NUL, which PostgreSQL's text types cannot store."""
    return lambda _: f"{name} holds a NUL character (\\x00), which a PostgreSQL store cannot hold"


def _too_long(name: str, length: pa.Array) -> Callable[[int], str]:
    """The problem of a value longer than the store's column (`TEXT_LIMITS`)."""
    return lambda i: (
        f"{name} is {length[i].as_py()} characters long; the store holds at most "
        f"{TEXT_LIMITS[name]}: shorten it (or map long ids to short ones)"
    )


def _row_too_large(path: Path) -> ItemSourceError:
    """A CSV row longer than `READ_BLOCK_BYTES`: far longer than any field the store holds."""
    limits = ", ".join(f"{name} {TEXT_LIMITS[name]}" for name in ("model", "item_id", "stratum"))
    return ItemSourceError(
        f"{path}: a row is too large: longer than {READ_BLOCK_BYTES:,} bytes, the most one row "
        f"of a results CSV may hold; nothing was stored. The store holds at most {limits} "
        "characters (model, item_id, stratum): a value this long is not an id. Check the "
        "column mapping and the quoting (an unclosed quote joins the rest of the file into "
        f"one value), or shorten the value; {_CONTRACT}"
    )


class ResultsTable:
    """A results file read batch by batch: the header checked at once, the rows as they come.

    Iterate `batches` (pairs of model and a batch of `ATTEMPT_SCHEMA` rows), then call
    `raise_problems`; batches stop coming at the first bad row (the rest is only checked).
    """

    def __init__(
        self,
        path: Path,
        options: CsvOptions,
        fmt: Format = "csv",
        *,
        table: pa.Table | None = None,
        where: Callable[[int], str] | None = None,
        reason: str = CSV_REASON,
    ) -> None:
        """Open `path` and check its columns against the contract and `options`.

        `table`: the rows already read into memory by another format's reader
        (`evalsuite.interchange`), in this contract's columns; `path` then only names the
        source in messages, `where` names a data row's place in the original files, and
        `reason` is the attempts' reason.
        """
        if options.model is not None and not options.model.strip():
            raise UsageError("--model is empty; give the model's name, e.g. --model gpt-4o")
        self.path, self.options, self.fmt = path, options, fmt
        self._table, self._where, self.reason = table, where, reason
        if table is not None:
            self.header = list(table.column_names)
        elif fmt == "csv":
            _check_readable(path, "CSV")
            self.header = _csv_header(path)
        else:
            _check_readable(path, "Parquet")
            try:
                self._parquet = pq.ParquetFile(path)
            except (pa.ArrowInvalid, OSError) as exc:
                raise ItemSourceError(
                    f"{path}: not a readable Parquet file ({exc}); write the results table "
                    "with pandas.DataFrame.to_parquet or pyarrow.parquet.write_table"
                ) from None
            self.header = [name.strip() for name in self._parquet.schema_arrow.names]
        self.mapped = _columns(path, self.header, options)
        self.problems = _Problems()
        self.rows = 0

    # raw batches: every mapped column as stripped text, keyed by evalsuite name

    def _raw_batches(self) -> Iterator[dict[str, pa.Array]]:
        if self._table is not None:
            yield from self._memory_batches(self._table)
        elif self.fmt == "parquet":
            yield from self._parquet_batches()
        else:
            yield from self._csv_batches()

    def _parquet_batches(self) -> Iterator[dict[str, pa.Array]]:
        names = dict(zip(self.header, self._parquet.schema_arrow.names, strict=True))
        wanted = sorted({names[s] for s in self.mapped.values()})
        for batch in self._parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=wanted):
            yield {
                target: pc.utf8_trim_whitespace(
                    _as_text(batch.column(names[source]), source, self.path)
                )
                for target, source in self.mapped.items()
            }

    def _memory_batches(self, table: pa.Table) -> Iterator[dict[str, pa.Array]]:
        for batch in table.to_batches(max_chunksize=PARQUET_BATCH_ROWS):
            yield {
                target: pc.utf8_trim_whitespace(_as_text(batch.column(source), source, self.path))
                for target, source in self.mapped.items()
            }

    def _csv_batches(self) -> Iterator[dict[str, pa.Array]]:
        shape = self.problems.shape

        def invalid(row: Any) -> str:
            shape.append((row.number, row.expected_columns, row.actual_columns))
            return "skip"

        try:
            reader = pa_csv.open_csv(
                self.path,
                read_options=pa_csv.ReadOptions(
                    use_threads=False, column_names=self.header, block_size=READ_BLOCK_BYTES
                ),
                parse_options=pa_csv.ParseOptions(
                    newlines_in_values=True, invalid_row_handler=invalid
                ),
                convert_options=pa_csv.ConvertOptions(
                    column_types=dict.fromkeys(self.header, pa.string()),
                    include_columns=sorted(set(self.mapped.values())),
                    strings_can_be_null=False,
                    quoted_strings_can_be_null=False,
                ),
            )
            first = True
            for batch in reader:
                if first:  # the header, read as a row because its names were given
                    batch, first = batch.slice(1), False
                yield {
                    target: pc.utf8_trim_whitespace(batch.column(source))
                    for target, source in self.mapped.items()
                }
        except pa.ArrowInvalid as exc:
            if "UTF8" in str(exc) or "utf8" in str(exc).lower():
                raise _not_utf8(self.path) from None
            if "straddl" in str(exc):  # a row longer than a read block
                raise _row_too_large(self.path) from None
            raise ItemSourceError(f"{self.path}: not a readable CSV ({exc}); {_CONTRACT}") from None

    def batches(self) -> Iterator[tuple[str, pa.RecordBatch]]:
        """(model, attempt rows) for every batch of the file, while every row so far is valid."""
        for raw in self._raw_batches():
            count = len(raw["item_id"])
            offset, self.rows = self.rows, self.rows + count
            if self.problems.shape:  # row numbers no longer match batch positions
                continue
            if not count:
                continue
            checked = self._check(raw, offset)
            if self.problems.total or self.problems.shape:
                continue
            models = checked.pop("model")
            batch = pa.RecordBatch.from_pydict(checked, schema=ATTEMPT_SCHEMA)
            unique = pc.unique(models)
            if len(unique) == 1:
                yield unique[0].as_py(), batch
                continue
            for model in sorted(unique.to_pylist()):
                yield model, batch.filter(pc.equal(models, model))

    def _check_lengths(self, columns: Mapping[str, pa.Array | None], offset: int) -> None:
        """Flag values longer than the store holds (`TEXT_LIMITS`), or holding a NUL.

        PostgreSQL would refuse them in the middle of the write, where SQLite keeps them.
        """
        for name, column in columns.items():
            if column is not None:
                self.problems.flag(offset, pc.match_substring(column, "\x00"), _has_nul(name))
                length = pc.utf8_length(column)
                self.problems.flag(
                    offset, pc.greater(length, TEXT_LIMITS[name]), _too_long(name, length)
                )

    def _check(self, raw: dict[str, pa.Array], offset: int) -> dict[str, pa.Array]:
        """Flag every bad row of a batch; return its columns as the store writes them."""
        problems, count = self.problems, len(raw["item_id"])
        model = (
            pa.array([self.options.model.strip()] * count)
            if self.options.model is not None
            else raw["model"]
        )
        problems.flag(
            offset,
            pc.equal(model, ""),
            lambda _: (
                "model is empty; every row names its model (or drop the column and pass "
                "--model NAME for a file of one model)"
            ),
        )
        item = raw["item_id"]
        problems.flag(
            offset, pc.equal(item, ""), lambda _: "item_id is empty; every row names its item"
        )
        self._check_lengths(
            {"model": model, "item_id": item, "stratum": raw.get("stratum")}, offset
        )
        epochs = self._check_epochs(raw["epoch"], offset)
        outcome = raw.get("outcome")
        outcome = (
            pa.array(["scored"] * count)
            if outcome is None
            else pc.if_else(pc.equal(outcome, ""), "scored", outcome)
        )
        problems.flag(
            offset,
            pc.invert(pc.is_in(outcome, pa.array(OUTCOMES))),
            lambda i: f"outcome {outcome[i].as_py()!r} is not one of {list(OUTCOMES)}",
        )
        score = self._check_scores(raw["score"], outcome, offset)
        limit_type = self._check_limit_types(raw.get("limit_type"), outcome, offset)
        stratum = raw.get("stratum")
        stratum = (
            pa.array(["all"] * count)
            if stratum is None
            else pc.if_else(pc.equal(stratum, ""), "all", stratum)
        )
        nothing = pa.nulls(count, pa.string())
        zeros = pa.array(np.zeros(count, dtype=np.int64))
        return {
            "model": model,
            "item_id": item,
            "item_hash": nothing,
            "stratum": stratum,
            "cluster": nothing,
            "outcome": outcome,
            "limit_type": limit_type,
            "reason": pa.array([self.reason] * count, pa.string()),
            "checks": nothing,
            "epoch": epochs,
            "seed": pa.nulls(count, pa.int64()),
            "retries": zeros,
            "tokens": zeros,
            "score": score,
            "duration_s": pa.array(np.zeros(count)),
        }

    def _epoch_numbers(self, text: pa.Array) -> tuple[pa.Array, pa.Array]:
        """(whole, epoch numbers counted from 1; 0 where the text is not a whole number).

        A whole number of more than 9 digits is not cast (it could overflow): it reads as
        ``MAX_EPOCH + 1``, refused as too large.
        """
        base = self.options.epoch_base
        whole = pc.match_substring_regex(text, _WHOLE)
        small = pc.match_substring_regex(text, _SMALL)
        digits = pc.if_else(small, pc.replace_substring_regex(text, r"^\+", ""), str(base))
        values = pc.add(pc.cast(digits, pa.int64()), 1 - base)
        return whole, pc.if_else(small, values, pc.if_else(whole, MAX_EPOCH + 1, 0))

    def _check_epochs(self, text: pa.Array, offset: int) -> pa.Array:
        base, problems = self.options.epoch_base, self.problems
        whole, epochs = self._epoch_numbers(text)
        problems.flag(
            offset,
            pc.invert(whole),
            lambda i: (
                f"epoch {text[i].as_py()!r} is not a whole number; expected the attempt's "
                f"number at this item ({base}, {base + 1}, ...)"
            ),
        )
        problems.flag(
            offset,
            pc.and_(whole, pc.less(epochs, 1)),
            lambda i: (
                f"epoch {text[i].as_py()} is below {base}; epochs count from {base}"
                + (" (pass --epoch-base 0 if this file counts from 0)" if base == 1 else "")
            ),
        )
        problems.flag(
            offset,
            pc.greater(epochs, MAX_EPOCH),
            lambda i: (
                f"epoch {text[i].as_py()} is too large: at most {MAX_EPOCH} epochs per item; "
                "check that this column holds the attempt number, not an id or a date"
            ),
        )
        return epochs

    def _check_scores(self, text: pa.Array, outcome: pa.Array, offset: int) -> pa.Array:
        problems = self.problems
        lowered = pc.utf8_lower(text)
        boolean = pc.is_in(lowered, pa.array(["true", "false"]))
        numeric = pc.match_substring_regex(text, _NUMBER, ignore_case=True)
        parsed = pc.cast(pc.if_else(numeric, text, "nan"), pa.float64())
        numbers = pc.if_else(boolean, pc.cast(pc.equal(lowered, "true"), pa.float64()), parsed)
        error = pc.equal(outcome, "harness_error")
        empty = pc.equal(text, "")
        problems.flag(
            offset,
            pc.and_(error, pc.invert(empty)),
            lambda i: (
                f"a harness_error row leaves score empty (got {text[i].as_py()!r}): harness "
                "errors are excluded from the score, never scored"
            ),
        )
        problems.flag(
            offset,
            pc.and_(pc.invert(error), empty),
            lambda i: (
                f"score is empty on a {outcome[i].as_py()} row; only harness_error rows have "
                "no score"
            ),
        )
        nan = pc.is_nan(numbers)
        problems.flag(
            offset,
            pc.and_(pc.and_(pc.invert(error), pc.invert(empty)), nan),
            lambda i: (
                f"score {text[i].as_py()!r} is not a number; expected a number in [0, 1] or "
                "true/false"
            ),
        )
        inside = pc.and_(pc.greater_equal(numbers, 0.0), pc.less_equal(numbers, 1.0))
        outside = pc.and_(pc.and_(pc.invert(error), pc.invert(nan)), pc.invert(inside))
        problems.flag(
            offset,
            outside,
            lambda i: (
                f"score {text[i].as_py()} is outside [0, 1]; rescale it first (evalsuite never "
                "clips)"
            ),
        )
        limit = pc.equal(outcome, "limit")
        problems.flag(
            offset,
            pc.and_(pc.and_(limit, pc.invert(nan)), pc.and_(pc.not_equal(numbers, 0.0), inside)),
            lambda i: f"a limit row scores 0 (got {text[i].as_py()}): a limit is a model failure",
        )
        return pc.if_else(pc.or_(error, nan), None, numbers)

    def _check_limit_types(self, kind: pa.Array | None, outcome: pa.Array, offset: int) -> pa.Array:
        count = len(outcome)
        if kind is None:
            return pa.nulls(count, pa.string())
        limit = pc.equal(outcome, "limit")
        given = pc.not_equal(kind, "")
        self.problems.flag(
            offset,
            pc.and_(pc.invert(limit), given),
            lambda i: (
                f"limit_type {kind[i].as_py()!r} on a {outcome[i].as_py()} row; only limit rows "
                "have a limit type"
            ),
        )
        self.problems.flag(
            offset,
            pc.and_(pc.and_(limit, given), pc.invert(pc.is_in(kind, pa.array(LIMIT_TYPES)))),
            lambda i: (
                f"limit_type {kind[i].as_py()!r} is not one of {list(LIMIT_TYPES)}"
                + (
                    " (an operator interrupt is a harness error: write outcome harness_error)"
                    if kind[i].as_py() == "operator"
                    else ""
                )
            ),
        )
        return pc.if_else(pc.and_(limit, given), kind, pa.scalar(None, pa.string()))

    # reporting -------------------------------------------------------------------------

    def where(self, rows: set[int]) -> dict[int, str]:
        """``line N`` (CSV, as an editor shows it) or ``row N`` (Parquet) of data rows."""
        if self._where is not None:
            return {row: self._where(row) for row in rows}
        if self.fmt == "parquet":
            return {row: f"row {row + 1}" for row in rows}
        lines = _record_lines(self.path, {row + 1 for row in rows})
        return {
            row: f"line {lines[row + 1]}" if row + 1 in lines else f"row {row + 1}" for row in rows
        }

    def raise_problems(self, duplicates: bool) -> None:
        """Raise one `ItemSourceError` naming every problem found, if there is any.

        Args:
            duplicates: the store saw a repeated (model, item_id, epoch); with any other
                problem they are looked for again over the whole file, so all are named.
        """
        if self.problems.shape:
            self._raise_shape()
        if not self.rows:
            raise ItemSourceError(
                f"{self.path}: no data rows after the header; expected one row per attempt, "
                "e.g.\n" + CSV_EXAMPLE
            )
        if not (duplicates or self.problems.total):
            return
        duplicates_found = self._duplicates()
        entries: list[tuple[int, str, int | None]] = [(r, m, None) for r, m in self.problems.found]
        entries += [
            (row, f"duplicate {key}, first at ", first) for row, first, key in duplicates_found
        ]
        entries = sorted(entries, key=lambda e: (e[0], e[1]))[:MAX_REPORTED]
        places = self.where({e[0] for e in entries} | {e[2] for e in entries if e[2] is not None})
        messages = [
            f"{places[row]}: {message}"
            + (f"{places[first]}; one row per attempt" if first is not None else "")
            for row, message, first in entries
        ]
        total = self.problems.total + len(duplicates_found)
        raise ItemSourceError(_listing(self.path, messages, total))

    def _raise_shape(self) -> None:
        shape = self.problems.shape
        lines = _record_lines(self.path, {n - 1 for n, _, _ in shape[:MAX_REPORTED] if n})
        messages = []
        for number, expected, actual in shape[:MAX_REPORTED]:
            record = number - 1 if number is not None else -1
            where = f"line {lines[record]}" if record in lines else "a row"
            fix = (
                "extra fields are refused: quote a value that contains a comma"
                if actual > expected
                else "keep every comma, leaving optional cells empty"
            )
            messages.append(f"{where}: {actual} field(s), the header has {expected}; {fix}")
        raise ItemSourceError(_listing(self.path, messages, len(shape)))

    def _keys(self) -> Iterator[tuple[int, pd.DataFrame]]:
        """(offset, model/item_id/epoch of each row) over the whole file again."""
        offset = 0
        for raw in self._raw_batches():
            count = len(raw["item_id"])
            model = (
                [self.options.model.strip()] * count
                if self.options.model is not None
                else raw["model"].to_pandas()
            )
            _, epochs = self._epoch_numbers(raw["epoch"])
            yield (
                offset,
                pd.DataFrame(
                    {
                        "model": model,
                        "item_id": raw["item_id"].to_pandas(),
                        "epoch_n": epochs.to_numpy(),
                        "epoch": raw["epoch"].to_pandas(),
                    }
                ),
            )
            offset += count

    def _duplicates(self) -> list[tuple[int, int, str]]:
        """(row, row of its first occurrence, key text) of every repeated key in the file.

        Two passes, memory 8 bytes a row: hash every key, then read the keys of the rows whose
        hash repeats and compare them exactly.
        """
        parts = []
        for _, keys in self._keys():
            hashed = pd.util.hash_pandas_object(keys[["model", "item_id", "epoch_n"]], index=False)
            parts.append(hashed.to_numpy())
        hashes = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)
        _, inverse, counts = np.unique(hashes, return_inverse=True, return_counts=True)
        candidates = set(np.flatnonzero(counts[inverse] > 1).tolist())
        if not candidates:
            return []
        first: dict[tuple[str, str, int], int] = {}
        found = []
        for offset, keys in self._keys():
            rows = [i for i in range(len(keys)) if offset + i in candidates]
            for i in rows:
                model, item, epoch_n, epoch = keys.iloc[i]
                key = (str(model), str(item), int(epoch_n))
                if key in first:
                    text = f"(model, item_id, epoch) ({model!r}, {item!r}, {epoch})"
                    found.append((offset + i, first[key], text))
                else:
                    first[key] = offset + i
        return found
