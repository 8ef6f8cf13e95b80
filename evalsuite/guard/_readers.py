"""Curriculum readers: JSONL, Parquet, plain text and saved HF datasets, streamed as pieces.

Every reader yields `Batch`es lazily, so memory stays bounded by one batch whatever the size
of the input: JSONL in blocks of lines, Parquet and HF datasets in record batches, text files
in pieces (cut at white space, overlapping by ``n - 1`` words).
"""

from __future__ import annotations

import errno
import gzip
import io
import json
import logging
import os
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal, cast

from orjson import loads
from pydantic_core import from_json

from evalsuite._core.text import words_v3
from evalsuite.errors import NotFoundError, UsageError
from evalsuite.guard._batch import Batch, WordCounter, pieces_of

__all__ = ["Format", "Skipped", "Source", "Span", "find_sources", "read_source"]

Format = Literal["auto", "jsonl", "parquet", "text", "hf"]
Kind = Literal["jsonl", "parquet", "text", "hf"]

_SUFFIXES: dict[str, Kind] = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".parquet": "parquet",
    ".txt": "text",
    ".text": "text",
    ".md": "text",
    ".rst": "text",
}
_ROWS = 1024
_BLOCK = 1 << 18
"""Bytes of JSONL lines parsed per step."""
_BUFFER = 1 << 20
"""Read buffer: with Python's default of 8 KiB, ``readlines`` takes three times as long on
lines of a few KB (0.18 against 0.056 s for 200 MB, docs/guard.md "Speed")."""


@dataclass(frozen=True, slots=True)
class Source:
    """One input to screen: a file or a saved dataset directory, its kind and its size."""

    path: Path
    kind: Kind
    size: int
    """Bytes on disk (for progress)."""


def _is_hf_dir(path: Path) -> bool:
    return (path / "dataset_dict.json").is_file() or (
        (path / "state.json").is_file() and (path / "dataset_info.json").is_file()
    )


def _kind_of(path: Path) -> Kind | None:
    suffixes = path.suffixes
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    kind = _SUFFIXES.get(suffixes[-1].lower()) if suffixes else None
    return None if kind == "parquet" and path.suffix == ".gz" else kind


def _dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


@dataclass(frozen=True, slots=True)
class Span:
    """Lines ``start:stop`` (bytes) of an uncompressed JSONL file.

    A shard of a distributed screen (``_distributed.py``): `start` and `stop` are at line
    starts (or the file's end).
    """

    start: int
    stop: int
    first_line: int
    """Number of the line at `start` (1 for the first line of the file)."""


@dataclass(frozen=True, slots=True)
class Skipped:
    """A path inside a named directory that was not screened, and why."""

    path: Path
    reason: str


def _identity(path: Path) -> tuple[int, int]:
    """What makes two paths the same file or directory (symbolic or hard links)."""
    st = path.stat()
    return st.st_dev, st.st_ino


@dataclass(slots=True)
class _Walk:
    """Directories searched recursively: every file and directory once, whatever the links.

    Entries that are not links are walked first (so files keep their own names); then each
    symbolic link is resolved: a link that dangles, loops, leaves the named directory or
    leads to a file or directory already seen is skipped with its reason; any other is
    followed, under the link's name.
    """

    fmt: Format
    sources: list[Source] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    seen: dict[tuple[int, int], Path] = field(default_factory=dict)

    def add_file(self, path: Path, kind: Kind) -> None:
        """A file to read, unless the same file was already added (named explicitly twice)."""
        identity = _identity(path)
        if identity in self.seen:
            self.skipped.append(Skipped(path, f"same file as {self.seen[identity]}"))
            return
        self.seen[identity] = path
        self.sources.append(Source(path, kind, path.stat().st_size))

    def tree(self, root: Path) -> None:
        """Search the directory `root` (the scanned tree is its real path)."""
        top = root.resolve()
        links: list[Path] = []
        self._directory(root, links)
        while links:
            self._link(links.pop(0), top, links)

    def _directory(self, directory: Path, links: list[Path]) -> None:
        identity = _identity(directory)
        if identity in self.seen:
            self.skipped.append(
                Skipped(directory, f"directory already scanned as {self.seen[identity]}")
            )
            return
        self.seen[identity] = directory
        if _is_hf_dir(directory):
            self.sources.append(Source(directory, "hf", _dir_size(directory)))
            return
        for path in sorted(directory.iterdir()):
            if path.name.startswith("."):
                continue
            if path.is_symlink():
                links.append(path)
            elif path.is_dir():
                self._directory(path, links)
            else:
                self._file(path)

    def _file(self, path: Path) -> None:
        kind = _kind_of(path) if self.fmt == "auto" else self.fmt
        if kind is None or kind == "hf":
            self.skipped.append(Skipped(path, "unknown format"))
        else:
            self.add_file(path, kind)

    def _link(self, link: Path, top: Path, links: list[Path]) -> None:
        try:
            target = link.resolve(strict=True)
        except FileNotFoundError:
            self.skipped.append(Skipped(link, f"dangling symlink (-> {os.readlink(link)})"))
            return
        except (RuntimeError, OSError) as exc:  # 3.11 raises RuntimeError on a loop
            loop = isinstance(exc, RuntimeError) or exc.errno == errno.ELOOP
            reason = "symlink loop" if loop else f"unreadable symlink ({exc})"
            self.skipped.append(Skipped(link, reason))
            return
        if not target.is_relative_to(top):
            self.skipped.append(
                Skipped(link, f"symlink leaves the scanned directory {top} (-> {target})")
            )
        elif target.is_dir():
            if link.parent.resolve().is_relative_to(target):
                self.skipped.append(Skipped(link, f"symlink loop (-> {target}, a parent)"))
            else:
                self._directory(link, links)
        else:
            self._file(link)


def find_sources(paths: Sequence[Path], fmt: Format = "auto") -> tuple[list[Source], list[Skipped]]:
    """Inputs named by `paths` (directories are searched recursively) and what was skipped.

    In a directory, saved HF datasets are read whole, hidden entries are ignored, and files
    of an unknown format are skipped; so are symbolic links that dangle, loop, lead out of
    the named directory or to something already found (every file is read once, under its
    own name when it has one). A file named explicitly must have a known format (or `fmt`
    must say it).

    Raises:
        NotFoundError: a path does not exist.
        UsageError: a file named explicitly has an unknown format.
    """
    walk = _Walk(fmt)
    for path in paths:
        if not path.exists():
            raise NotFoundError(
                f"{path} does not exist; name curriculum files or directories to screen"
            )
        if path.is_dir():
            if fmt in ("auto", "hf") and _is_hf_dir(path):
                walk.add_file(path, "hf")
            elif fmt == "hf":
                raise UsageError(
                    f"{path} is not a saved HF dataset (no dataset_info.json and state.json, "
                    "nor dataset_dict.json); save it with Dataset.save_to_disk"
                )
            else:
                walk.tree(path)
            continue
        kind = _kind_of(path) if fmt == "auto" else fmt
        if kind is None or kind == "hf":
            raise UsageError(
                f"{path}: unknown curriculum format; expected .jsonl/.ndjson/.json (one JSON "
                "object a line), .parquet, .txt/.text/.md/.rst (one document a file, .gz "
                "allowed for JSONL and text) or a saved HF dataset directory; or say "
                "--format jsonl|parquet|text"
            )
        walk.add_file(path, kind)
    return walk.sources, walk.skipped


def _open(path: Path) -> IO[bytes]:
    if path.suffix == ".gz":  # GzipFile is a binary file object
        return io.BufferedReader(cast(io.RawIOBase, gzip.open(path, "rb")), buffer_size=_BUFFER)
    return path.open("rb", buffering=_BUFFER)


def _field_text(value: Any) -> str | None:
    """The text of a field: a string, or a list of strings or chat messages (joined)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [_field_text(v.get("content") if isinstance(v, dict) else v) for v in value]
        if all(p is not None for p in parts):
            return "\n".join(p for p in parts if p is not None)
    return None


def _require_text(where: str, record: Any, field: str) -> str:
    if not isinstance(record, dict):
        raise UsageError(f"{where}: expected a JSON object, got {type(record).__name__}")
    if field not in record:
        raise UsageError(
            f"{where}: no field {field!r} (fields: {sorted(record)}); choose the text field "
            "with --field"
        )
    text = _field_text(record[field])
    if text is None:
        raise UsageError(
            f"{where}: field {field!r} holds {type(record[field]).__name__}, expected text "
            "(a string, or a list of strings or chat messages with 'content')"
        )
    return text


def _loads(line: bytes) -> Any:
    """Parse one JSON line: pydantic-core's parser (3x faster), the standard one as fallback.

    The fallback accepts what only the standard library does (lone surrogates, NaN).
    """
    try:
        return from_json(line)
    except ValueError:
        return json.loads(line)


def _jsonl_lines(path: Path, field: str, first: int, lines: list[bytes]) -> Batch:
    """The careful path: line by line, skipping blank lines, naming the line of any error."""
    batch = Batch()
    for number, line in enumerate(lines, start=first):
        if not line.strip():
            continue
        try:
            record = _loads(line)
        except ValueError as exc:
            raise UsageError(
                f"{path}:{number}: not valid JSON ({exc}); expected one JSON object a line"
            ) from None
        text = _require_text(f"{path}:{number}", record, field)
        batch.names.append(f"{path}:{number}")
        batch.texts.append(text)
        batch.chars += len(text)
    return batch


def _lines_in(handle: IO[bytes], span: Span | None) -> Iterator[list[bytes]]:
    """Blocks of lines of `handle`, all of them or those of `span` (which starts a line)."""
    if span is None:
        while lines := handle.readlines(_BLOCK):
            yield lines
        return
    handle.seek(span.start)
    left = span.stop - span.start
    while left > 0 and (lines := handle.readlines(min(_BLOCK, left))):
        size = sum(map(len, lines))
        while size > left:  # `stop` starts a line: drop the lines past it
            size -= len(lines.pop())
        left -= size
        yield lines


def _jsonl(
    path: Path, field: str, advance: Callable[[int], None], span: Span | None = None
) -> Iterator[Batch]:
    prefix = f"{path}:"
    first = 1 if span is None else span.first_line
    with _open(path) as handle:
        for lines in _lines_in(handle, span):
            advance(sum(map(len, lines)))
            try:  # the fast path: every line an object with a string field
                texts = [loads(line)[field] for line in lines]
                if not {*map(type, texts)} <= {str}:
                    raise TypeError
            except (ValueError, KeyError, TypeError, IndexError):  # orjson's errors included
                yield _jsonl_lines(path, field, first, lines)
            else:
                names = [f"{prefix}{n}" for n in range(first, first + len(lines))]
                yield Batch(names, texts, {}, sum(map(len, texts)))
            first += len(lines)


def _column(where: Path, values: list[Any], field: str, first: int) -> Batch:
    texts: list[str] = []
    for offset, value in enumerate(values):
        text = value if type(value) is str else _field_text(value)
        if text is None:
            raise UsageError(
                f"{where}#{first + offset}: field {field!r} holds {type(value).__name__}, "
                "expected text; choose the text field with --field"
            )
        texts.append(text)
    names = [f"{where}#{n}" for n in range(first, first + len(values))]
    return Batch(names, texts, {}, sum(map(len, texts)))


def _parquet(path: Path, field: str, advance: Callable[[int], None]) -> Iterator[Batch]:
    import pyarrow.parquet as pq

    try:
        handle = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises its own ArrowInvalid, OSError...
        raise UsageError(f"{path}: not a readable Parquet file ({exc})") from None
    names = handle.schema_arrow.names
    if field not in names:
        raise UsageError(
            f"{path}: no column {field!r} (columns: {names}); choose the text field with --field"
        )
    row, per_row = 0, path.stat().st_size / max(handle.metadata.num_rows, 1)
    for batch in handle.iter_batches(batch_size=_ROWS, columns=[field]):
        values = batch.column(0).to_pylist()
        yield _column(path, values, field, row)
        row += len(values)
        advance(int(len(values) * per_row))


def _hf(path: Path, field: str, advance: Callable[[int], None]) -> Iterator[Batch]:
    import datasets

    datasets.disable_progress_bars()
    logging.getLogger("datasets").setLevel(logging.ERROR)
    try:
        loaded = datasets.load_from_disk(str(path))
    except (FileNotFoundError, ValueError) as exc:
        raise UsageError(f"{path}: not a saved HF dataset directory ({exc})") from None
    splits = (
        {name: loaded[name] for name in loaded}
        if isinstance(loaded, datasets.DatasetDict)
        else {"": loaded}
    )
    total = sum(len(ds) for ds in splits.values())
    per_row = _dir_size(path) / max(total, 1)
    for split, ds in splits.items():
        where = path / split if split else path
        if field not in ds.column_names:
            raise UsageError(
                f"{where}: no column {field!r} (columns: {ds.column_names}); choose the text "
                "field with --field"
            )
        row = 0
        for batch in ds.select_columns([field]).iter(batch_size=_ROWS):
            values = batch[field]
            yield _column(where, values, field, row)
            row += len(values)
            advance(int(len(values) * per_row))


def _text(
    path: Path, *, size: int, overlap_words: int, overlap_chars: int, count_words: WordCounter
) -> Iterator[Batch]:
    with io.TextIOWrapper(_open(path), encoding="utf-8", errors="replace", newline="") as handle:
        blocks = iter(lambda: handle.read(size), "")
        for piece in pieces_of(
            str(path),
            blocks,
            size=size,
            overlap_words=overlap_words,
            overlap_chars=overlap_chars,
            count_words=count_words,
        ):
            yield Batch.of_piece(piece)


def read_source(  # noqa: PLR0913 - keyword-only settings of one reader
    source: Source,
    *,
    field: str,
    piece_size: int,
    overlap_words: int,
    overlap_chars: int,
    advance: Callable[[int], None] = lambda _: None,
    count_words: WordCounter = lambda text: len(words_v3(text)),
    span: Span | None = None,
) -> Iterator[Batch]:
    """Batches of documents of one source, read lazily; text files as pieces.

    Args:
        source: What to read.
        field: Text field of JSONL records and column of Parquet files and HF datasets.
        piece_size: Characters per piece of a text file.
        overlap_words: Normalised words repeated across a cut (``n - 1``).
        overlap_chars: Characters repeated across a cut (the longest canary).
        advance: Called with the number of input bytes consumed, for progress.
        count_words: Normalised words of a text, to size the overlap of text pieces.
        span: Only these lines of an uncompressed JSONL source (default: all of it).

    Text files are decoded as UTF-8, invalid bytes becoming U+FFFD (a word separator).

    Raises:
        UsageError: a record lacks `field`, holds no text there, or the file is malformed
            or unreadable.
    """
    if span is not None and (source.kind != "jsonl" or source.path.suffix == ".gz"):
        raise UsageError(f"{source.path}: only uncompressed JSONL is read by byte ranges")
    try:
        if span is not None:
            yield from _jsonl(source.path, field, advance, span)
            return
        if source.kind == "text":
            for batch in _text(
                source.path,
                size=piece_size,
                overlap_words=overlap_words,
                overlap_chars=overlap_chars,
                count_words=count_words,
            ):
                advance(batch.chars - batch.pieces[0].overlap)
                yield batch
            return
        readers = {"jsonl": _jsonl, "parquet": _parquet, "hf": _hf}
        yield from readers[source.kind](source.path, field, advance)
    except (OSError, EOFError, zlib.error) as exc:  # unreadable file, truncated or bad gzip
        raise UsageError(f"{source.path}: cannot be read as {source.kind} ({exc})") from None
