"""Items: the records a suite is made of, read from JSONL, Parquet or a saved HF dataset.

JSONL is read directly as UTF-8, one record per line (only LF, CRLF and CR end a line;
U+2028 and U+0085 may stand raw inside JSON strings), so that every error names the file
and line, and a byte that is not UTF-8 its offset. Parquet files and saved datasets are read
through `datasets`, with a private temporary cache that is deleted afterwards, so that no
copy of an item (holdout items before their first freeze included) is left in a shared cache
directory. A source that cannot be read is an `ItemSourceError` (exit 2) naming it.
"""

from __future__ import annotations

import json
import logging
import re
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from evalsuite._core.hashing import content_hash
from evalsuite._core.layout import Layout
from evalsuite._core.validation import describe_validation_error
from evalsuite.errors import ItemSourceError, NotFoundError
from evalsuite.manifest._files import (
    FileValue,
    ResolvedFiles,
    check_file_keys,
    check_file_values,
    file_text,
    resolve_source_files,
)
from evalsuite.manifest._suite import FamilyConfig, SuiteConfig

__all__ = [
    "Item",
    "LoadedItem",
    "item_cluster",
    "item_hash",
    "item_stratum",
    "load_family_items",
    "load_suite_items",
    "read_item_source",
    "source_kind",
]

_COMPLEX_FIELDS = ("input", "target", "metadata", "files")


class Item(BaseModel):
    """One evaluation item (docs/architecture.md, "Data model")."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    """Stable id, unique within the suite; never re-numbered."""
    input: str | list[dict[str, Any]]
    """Prompt text, or chat messages (``{"role": ..., "content": ...}``)."""
    target: str | list[str]
    """What the verifier checks against; never shown to the agent."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Stratum fields and anything the environment or verifier needs."""
    files: dict[str, FileValue] | None = None
    """Files given to the agent: sandbox path -> content (text, or the base64 form for
    bytes), never a host path; see `evalsuite.manifest._files`."""
    setup: str | None = None
    """Setup script run in the sandbox before the episode."""
    canary: str | None = None
    """The suite's canary string (not part of the content hash)."""

    @field_validator("id", mode="before")
    @classmethod
    def _id_is_string(cls, value: object) -> object:
        if not isinstance(value, str):
            raise ValueError(
                f"id must be a string (got {type(value).__name__} {value!r}); quote it, "
                "because 1 and '1' would clash"
            )
        return value

    @field_validator("files", mode="after")
    @classmethod
    def _safe_files(cls, value: dict[str, FileValue] | None) -> dict[str, FileValue] | None:
        if value is not None:
            problems = check_file_keys(value) + check_file_values(value)
            if problems:
                raise ValueError("; ".join(problems))
        return value

    def text_files(self) -> dict[str, str]:
        """The files given as text (files of bytes left out)."""
        return {
            k: text for k, v in (self.files or {}).items() if (text := file_text(v)) is not None
        }

    def payload(self) -> dict[str, Any]:
        """The record as a JSON-ready dict (None fields left out)."""
        return self.model_dump(exclude_none=True)


@dataclass(frozen=True, slots=True)
class LoadedItem:
    """An item with where it came from."""

    item: Item
    family: str
    location: str
    """``path:line`` for JSONL, ``path#row`` for Parquet and HF datasets."""
    sources: Mapping[str, Path] = field(default_factory=dict)
    """Files key -> the file beside the item source whose content it holds (``{"path"}``)."""
    missing_files: Mapping[str, Path] = field(default_factory=dict)
    """Files key -> the file it names, which is gone (left out of the item; ``missing_ok``)."""


def source_kind(path: Path) -> str:
    """``"jsonl"``, ``"parquet"`` or ``"hf"`` (a saved dataset directory) for `path`."""
    if path.is_dir():
        return "hf"
    if path.suffix in {".jsonl", ".json", ".ndjson"}:
        return "jsonl"
    if path.suffix == ".parquet":
        return "parquet"
    raise ItemSourceError(
        f"{path}: unsupported item source; expected a .jsonl file, a .parquet file or a "
        "directory written by datasets.Dataset.save_to_disk"
    )


def _quiet_datasets() -> None:
    import datasets

    datasets.disable_progress_bars()
    logging.getLogger("datasets").setLevel(logging.ERROR)


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def _split_lines(text: str) -> list[str]:
    """The lines of a JSONL text, each with its line ending (what ends a line: see above)."""
    return [match.group() for match in _LINE.finditer(text)]


def _read_source_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ItemSourceError(
            f"{path}: the item source cannot be read ({exc.strerror or type(exc).__name__}); "
            "check that it is a regular file you may read"
        ) from None


def _jsonl_text(path: Path) -> str:
    data = _read_source_bytes(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = data[: exc.start]
        line = len(re.findall(rb"\r\n|\r|\n", before)) + 1
        line_start = max(before.rfind(b"\n"), before.rfind(b"\r")) + 1
        raise ItemSourceError(
            f"{path}:{line}: not valid UTF-8 at byte offset {exc.start} of the file (byte "
            f"{exc.start - line_start + 1} of the line is 0x{data[exc.start]:02x}: {exc.reason}); "
            "item files must be UTF-8, so re-save the file as UTF-8"
        ) from None


def _load_with_datasets(path: Path, kind: str, cache: str) -> Any:
    import datasets
    import pyarrow

    try:
        if kind == "parquet":
            return datasets.load_dataset(
                "parquet", data_files=str(path), split="train", cache_dir=cache, keep_in_memory=True
            )
        return datasets.load_from_disk(str(path), keep_in_memory=True)
    except (
        OSError,
        ValueError,
        pyarrow.ArrowException,
        datasets.exceptions.DatasetGenerationError,
    ) as exc:
        what = "Parquet file" if kind == "parquet" else "saved HF dataset directory"
        cause = exc.__cause__ if exc.__cause__ is not None else exc
        raise ItemSourceError(
            f"{path}: not a readable {what} ({type(cause).__name__}: {cause}); write it with "
            + (
                "pandas/pyarrow `to_parquet`"
                if kind == "parquet"
                else "datasets.Dataset.save_to_disk"
            )
        ) from None


def _rows(path: Path, kind: str) -> Iterator[tuple[str, dict[str, Any] | str]]:
    """Yield (location, record-or-raw-line) for every row of an item source."""
    if kind == "jsonl":
        for number, line in enumerate(_split_lines(_jsonl_text(path)), start=1):
            yield f"{path}:{number}", line.rstrip("\r\n")
        return
    import datasets

    _quiet_datasets()
    with tempfile.TemporaryDirectory(prefix="evalsuite-ds-") as cache:
        ds = _load_with_datasets(path, kind, cache)
        if isinstance(ds, datasets.DatasetDict):
            raise ItemSourceError(
                f"{path}: holds a DatasetDict with splits {list(ds)}; save a single "
                "Dataset (one split) as the item source"
            )
        for number, row in enumerate(ds):
            yield f"{path}#{number}", dict(row)


def _decode_record(location: str, raw: dict[str, Any] | str) -> dict[str, Any] | None:
    if isinstance(raw, str):
        if not raw.strip():
            return None
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ItemSourceError(
                f"{location}: not valid JSON ({exc.msg} at column {exc.colno}); "
                "each line must be one JSON object"
            ) from None
        if not isinstance(record, dict):
            raise ItemSourceError(
                f"{location}: expected a JSON object per line (got {type(record).__name__})"
            )
        return record
    record = {k: v for k, v in raw.items() if v is not None}
    for key in _COMPLEX_FIELDS:
        value = record.get(key)
        if isinstance(value, str) and key != "input" and key != "target":
            try:
                record[key] = json.loads(value)
            except json.JSONDecodeError:
                raise ItemSourceError(
                    f"{location}: column {key!r} must hold a JSON object (as a string or a struct)"
                ) from None
    return record


def _parse_item(
    location: str, record: dict[str, Any], base: Path, *, missing_ok: bool = False
) -> tuple[Item, ResolvedFiles | None]:
    ident = record.get("id")
    who = f" (item {ident!r})" if isinstance(ident, str) else ""
    try:
        json.dumps(record, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ItemSourceError(
            f"{location}{who}: contains a lone surrogate (an invalid \\ud800-\\udfff escape); "
            "item text must be valid Unicode"
        ) from None
    resolved: ResolvedFiles | None = None
    if record.get("files") is not None:
        try:
            resolved = resolve_source_files(record["files"], base, missing_ok=missing_ok)
        except ValueError as exc:
            raise ItemSourceError(f"{location}{who}: {exc}") from None
        record = {**record, "files": resolved.files}
    try:
        return Item.model_validate(record), resolved
    except ValidationError as exc:
        problems = describe_validation_error(exc, allowed=list(Item.model_fields))
        raise ItemSourceError(f"{location}{who}: " + "; ".join(problems)) from None


def load_family_items(
    layout: Layout, family: FamilyConfig, *, missing_ok: bool = False
) -> list[LoadedItem]:
    """Read and validate every item of one family's source.

    With `missing_ok`, a file an item reads (``{"path"}``) that does not exist is left out
    of the item and listed in `LoadedItem.missing_files` instead of raising.

    Raises:
        NotFoundError: the source does not exist.
        ItemSourceError: a record is not JSON, misses a field, has an unknown field, or an
            id repeats; the message names the file and line (or row) and the item id.
    """
    path = layout.tasks / family.items
    if not path.exists():
        raise NotFoundError(
            f"item source of family {family.name!r} not found: {path} "
            f"(declared as items = {family.items!r})"
        )
    return _read_source(path, family.name, missing_ok=missing_ok)


def _read_source(path: Path, family: str, *, missing_ok: bool = False) -> list[LoadedItem]:
    kind = source_kind(path)
    loaded: list[LoadedItem] = []
    seen: dict[str, str] = {}
    for location, raw in _rows(path, kind):
        record = _decode_record(location, raw)
        if record is None:
            continue
        item, files = _parse_item(location, record, path.parent, missing_ok=missing_ok)
        if item.id in seen:
            raise ItemSourceError(
                f"{location}: duplicate item id {item.id!r} (first at {seen[item.id]}); "
                "ids must be unique within a suite"
            )
        seen[item.id] = location
        loaded.append(
            LoadedItem(
                item=item,
                family=family,
                location=location,
                sources=files.sources if files else {},
                missing_files=files.missing if files else {},
            )
        )
    return loaded


def read_item_source(path: Path) -> list[Item]:
    """The items of one item source file, validated, with file references read in.

    For tools that use an item file outside a suite (``inspect eval`` on a task file).

    Raises:
        NotFoundError: `path` does not exist.
        ItemSourceError: the source or one of its records is malformed.
    """
    if not path.exists():
        raise NotFoundError(f"item source not found: {path}")
    return [entry.item for entry in _read_source(path, family="")]


def load_suite_items(
    layout: Layout, suite: SuiteConfig, *, missing_ok: bool = False
) -> list[LoadedItem]:
    """Items of every family of `suite`, with ids checked for uniqueness across families.

    Args:
        layout: The project.
        suite: The suite.
        missing_ok: Skip families whose item source does not exist, and leave out of an
            item a file it reads that does not exist (`LoadedItem.missing_files`), instead
            of raising: `verify` reports what is gone.
    """
    loaded: list[LoadedItem] = []
    seen: dict[str, str] = {}
    for family in suite.families:
        if missing_ok and not (layout.tasks / family.items).exists():
            continue
        for entry in load_family_items(layout, family, missing_ok=missing_ok):
            if entry.item.id in seen:
                raise ItemSourceError(
                    f"{entry.location}: duplicate item id {entry.item.id!r} (also at "
                    f"{seen[entry.item.id]}); ids must be unique within a suite"
                )
            seen[entry.item.id] = entry.location
            loaded.append(entry)
    for entry in loaded:
        item_stratum(suite, entry)
        item_cluster(suite, entry)
    return loaded


def item_hash(item: Item, family: str, family_version: int) -> str:
    """Content hash of everything that can move the item's score.

    Covers input, target, metadata, files, setup and the family's name and version; not the
    id (a rename is not a content change) and not the canary.
    """
    return content_hash(
        {
            "family": family,
            "family_version": family_version,
            "input": item.input,
            "target": item.target,
            "metadata": item.metadata,
            "files": item.files,
            "setup": item.setup,
        }
    )


def _key_value(entry: LoadedItem, key: str, role: str, suite: SuiteConfig) -> str:
    if key == "family":
        return entry.family
    if key not in entry.item.metadata:
        raise ItemSourceError(
            f"{entry.location} (item {entry.item.id!r}): metadata has no key {key!r}, which "
            f"{suite.path_hint} names in {role}; add it to the item's metadata"
        )
    value = entry.item.metadata[key]
    if isinstance(value, bool | int | str) and str(value):
        return str(value)
    raise ItemSourceError(
        f"{entry.location} (item {entry.item.id!r}): metadata[{key!r}] must be a non-empty "
        f"string, integer or boolean to be used in {role} (got {type(value).__name__})"
    )


def item_stratum(suite: SuiteConfig, entry: LoadedItem) -> str:
    """The item's stratum: its `stratify_by` values joined by '/'."""
    return "/".join(_key_value(entry, key, "stratify_by", suite) for key in suite.stratify_by)


def item_cluster(suite: SuiteConfig, entry: LoadedItem) -> str | None:
    """The item's cluster (value of `cluster_by`), or None when the suite does not cluster."""
    if suite.cluster_by is None:
        return None
    return _key_value(entry, suite.cluster_by, "cluster_by", suite)


def _with_canary(line: str, canary: str) -> str:
    record = json.loads(line)
    if record.get("canary") == canary:
        return line if line.endswith("\n") else line + "\n"
    record["canary"] = canary
    return json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"


def write_family_items(path: Path, keep_ids: Sequence[str], *, canary: str) -> None:
    """Rewrite an item source atomically, keeping only the items whose id is in `keep_ids`.

    Every kept record carries the suite's `canary` afterwards. JSONL lines that already carry
    it are kept byte for byte; Parquet files and HF dataset directories are filtered through
    `datasets` into a staged copy that replaces the original.
    """
    from evalsuite._core.atomic import atomic_replace_dir, atomic_write_text

    keep = set(keep_ids)
    kind = source_kind(path)
    if kind == "jsonl":
        lines = _split_lines(_jsonl_text(path))
        kept = [
            _with_canary(line, canary)
            for line in lines
            if line.strip() and json.loads(line).get("id") in keep
        ]
        atomic_write_text(path, "".join(kept))
        return
    import datasets

    _quiet_datasets()
    with tempfile.TemporaryDirectory(prefix="evalsuite-ds-") as cache:
        if kind == "parquet":
            ds = datasets.load_dataset(
                "parquet", data_files=str(path), split="train", cache_dir=cache, keep_in_memory=True
            )
        else:
            ds = datasets.load_from_disk(str(path), keep_in_memory=True)
        filtered = ds.filter(lambda row: row["id"] in keep, keep_in_memory=True)
        if "canary" in filtered.column_names:
            filtered = filtered.remove_columns("canary")
        filtered = filtered.add_column("canary", [canary] * len(filtered))
        if kind == "parquet":
            staged = path.with_name(f".{path.name}.staged")
            filtered.to_parquet(str(staged))
            staged.replace(path)
        else:
            staged_dir = path.with_name(f".{path.name}.staged")
            filtered.save_to_disk(str(staged_dir))
            atomic_replace_dir(path, staged_dir)
