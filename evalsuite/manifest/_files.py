"""Item files: what an item puts in the agent's sandbox, held as content, never as a host path.

An item's ``files`` maps a sandbox path (the key) to the file's content (the value). Design
and reasons: docs/design/item-files.md. In short:

* Keys are plain relative POSIX paths: not empty, not absolute, no ``..``, ``.`` or empty
  segment, no backslash, drive letter or control character, and no two keys naming the same
  file on a case-insensitive or Unicode-normalising file system (nor a file that is also
  another key's directory). Anything else could write outside the sandbox's working
  directory, or write different files on different sandboxes.
* A frozen value is content: a string is the UTF-8 text of the file;
  ``{"encoding": "base64", "content": "..."}`` holds bytes. Both are covered by the item's
  content hash, and sealed in the vault for holdout items.
* In an item source, a value may also be ``{"path": "rel/file"}``: the file, relative to the
  directory holding the item source (and inside it), is read when the items are loaded, so
  its content is what is hashed and frozen; or ``{"text": "..."}``, literal text. A plain
  string that inspect would have read as a path or URL is refused as ambiguous.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "BINARY_ENCODING",
    "FileValue",
    "ResolvedFiles",
    "check_file_keys",
    "check_file_values",
    "file_bytes",
    "file_data_uri",
    "file_text",
    "resolve_source_files",
]

BINARY_ENCODING = "base64"
FileValue = str | dict[str, str]
"""Text, or ``{"encoding": "base64", "content": <base64>}``."""

_DRIVE = re.compile(r"^[A-Za-z]:")
_URI = re.compile(r"^(?:data:[^,]*;base64,|[A-Za-z][A-Za-z0-9+.-]*://)")
_HOST_PATH = re.compile(r"^(?:/|~|[A-Za-z]:[\\/]|\\\\)\S+$")
_FORMS = (
    'a string (the file\'s UTF-8 text), {"text": "..."}, {"path": "file relative to the item '
    'source"} or {"encoding": "base64", "content": "..."} for bytes'
)


def _key_problem(key: str) -> str | None:
    if not key:
        return "is empty"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in key):
        return "contains a control character (NUL, tab, newline, ...)"
    if "\\" in key:
        return "contains a backslash; separate directories with '/'"
    if key.startswith("/"):
        return "is absolute; give a path relative to the sandbox's working directory"
    if key.startswith("~"):
        return "starts with '~' (a home directory); give a relative path"
    if _DRIVE.match(key):
        return "starts with a drive letter; give a relative path"
    parts = key.split("/")
    if ".." in parts:
        return "contains '..', which leaves the sandbox's working directory"
    if any(part in ("", ".") for part in parts):
        return "has an empty or '.' segment; write it in normal form, as 'dir/file'"
    return None


def _fold(key: str) -> str:
    return unicodedata.normalize("NFC", key).casefold()


def check_file_keys(keys: Iterable[str]) -> list[str]:
    """Problems with a ``files`` mapping's keys (empty when every key is a safe sandbox path).

    Each problem names the key (``repr``); callers that handle holdout items leave the
    messages out of anything they print.
    """
    keys = list(keys)
    problems = [f"key {k!r} {p}" for k in keys if (p := _key_problem(k)) is not None]
    if problems:
        return problems
    folded: dict[str, str] = {}
    for key in sorted(keys):
        other = folded.setdefault(_fold(key), key)
        if other != key:
            problems.append(
                f"keys {other!r} and {key!r} name the same file on case-insensitive or "
                "Unicode-normalising file systems; rename one"
            )
    names = set(folded)
    for folded_key, key in sorted(folded.items()):
        parts = folded_key.split("/")
        for depth in range(1, len(parts)):
            parent = "/".join(parts[:depth])
            if parent in names:
                problems.append(
                    f"key {folded[parent]!r} is a file but also a directory of key {key!r}"
                )
    return problems


def _binary_problem(value: Mapping[str, Any]) -> str | None:
    if set(value) != {"encoding", "content"} or value.get("encoding") != BINARY_ENCODING:
        return f"must be {_FORMS}"
    content = value["content"]
    if not isinstance(content, str):
        return "content of a base64 file must be a string"
    try:
        base64.b64decode(content, validate=True)
    except (binascii.Error, ValueError):
        return "content is not valid base64 (standard alphabet, with padding)"
    return None


def check_file_values(files: Mapping[str, Any]) -> list[str]:
    """Problems with frozen ``files`` values: each must be text or the base64 form."""
    problems: list[str] = []
    for key, value in files.items():
        if isinstance(value, str):
            continue
        problem = _binary_problem(value) if isinstance(value, Mapping) else f"must be {_FORMS}"
        if problem is not None:
            problems.append(f"files[{key!r}] {problem}")
    return problems


def file_bytes(value: FileValue) -> bytes:
    """The bytes of a frozen file value."""
    if isinstance(value, str):
        return value.encode("utf-8")
    return base64.b64decode(value["content"], validate=True)


def file_text(value: FileValue) -> str | None:
    """The text of a frozen file value; None for bytes (the base64 form)."""
    return value if isinstance(value, str) else None


def file_data_uri(value: FileValue) -> str:
    """The value as a ``data:`` URI: what inspect is given, so it never reads a host path.

    inspect reads a `Sample.files` (and `setup`) value as a path or URL when one exists by
    that name, and as inline text otherwise; a base64 ``data:`` URI is always decoded.
    """
    encoded = base64.b64encode(file_bytes(value)).decode("ascii")
    return f"data:application/octet-stream;base64,{encoded}"


def _content(data: bytes) -> FileValue:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return {"encoding": BINARY_ENCODING, "content": base64.b64encode(data).decode("ascii")}


@dataclass(frozen=True, slots=True)
class ResolvedFiles:
    """An item source's ``files``, with every reference replaced by the file's content."""

    files: dict[str, FileValue]
    sources: dict[str, Path]
    """Key -> the (resolved) file whose content it holds, for keys given as ``{"path"}``."""
    missing: dict[str, Path]
    """Key -> the file it names, which does not exist (only with ``missing_ok``)."""


class _Missing(Exception):
    """A referenced file does not exist."""

    def __init__(self, message: str, path: Path) -> None:
        super().__init__(message)
        self.path = path


def _read_reference(reference: Any, base: Path) -> tuple[FileValue, Path]:
    if not isinstance(reference, str) or not reference:
        raise ValueError('"path" must be a non-empty string')
    if Path(reference).is_absolute() or _DRIVE.match(reference) or reference.startswith("~"):
        raise ValueError(
            f"path {reference!r} is absolute; put the file beside the item source and give "
            f"its path relative to {base}"
        )
    target = (base / reference).resolve()
    if not target.is_relative_to(base.resolve()):
        raise ValueError(
            f"path {reference!r} leaves {base} (the directory of the item source); files "
            "must live in it"
        )
    if target.is_dir():
        raise ValueError(f"path {reference!r} is a directory; give each file its own key")
    try:
        data = target.read_bytes()
    except FileNotFoundError:
        raise _Missing(f"path {reference!r}: no such file in {base}", target) from None
    except OSError as exc:
        raise ValueError(
            f"path {reference!r} cannot be read ({exc.strerror or type(exc).__name__})"
        ) from None
    return _content(data), target


def _check_plain_text(value: str, base: Path) -> None:
    """Refuse a plain string that inspect would have read as a URL or a host path."""
    if "\n" in value or len(value) > 4096 or "\x00" in value:
        return
    if _URI.match(value):
        raise ValueError(
            "is a URL or data: URI, which inspect would fetch or decode at run time, outside "
            f"the item's hash; give the content instead: {_FORMS}"
        )
    stripped = value.strip()
    if _HOST_PATH.match(stripped):
        raise ValueError(
            "looks like a host path, but a plain string is the file's text; put the file "
            'beside the item source and write {"path": "file"}, or write {"text": ...} if '
            "you mean this literal text"
        )
    try:
        beside = bool(stripped) and (base / stripped).is_file()
    except OSError:  # a name too long for the file system is text
        beside = False
    if beside:
        raise ValueError(
            f"names the file {stripped!r} beside the item source, but a plain string is the "
            f"file's text. Write {{\"path\": {stripped!r}}} to give that file's content, or "
            '{"text": ...} if you mean this literal text'
        )


def resolve_source_files(files: Any, base: Path, *, missing_ok: bool = False) -> ResolvedFiles:
    """Turn an item source's ``files`` into frozen content (see the module docstring).

    Args:
        files: The record's ``files`` value.
        base: The directory holding the item source; ``{"path"}`` references are read from
            it and may not leave it.
        missing_ok: Leave out (and list in `ResolvedFiles.missing`) a referenced file that
            does not exist, instead of raising: `verify` reports the item as changed.

    Raises:
        ValueError: a key is unsafe, a value has an unknown form or is ambiguous, or a
            referenced file is missing, unreadable, a directory or outside `base`. The
            message names the key.
    """
    if not isinstance(files, Mapping):
        raise ValueError(
            "files must be an object mapping sandbox paths to content, not " + type(files).__name__
        )
    if not all(isinstance(k, str) for k in files):
        raise ValueError("files keys must be strings (sandbox paths)")
    problems = check_file_keys(files)
    if problems:
        raise ValueError("files " + "; ".join(problems))
    resolved = ResolvedFiles(files={}, sources={}, missing={})
    for key, value in files.items():
        try:
            _resolve_value(key, value, base, missing_ok, resolved)
        except ValueError as exc:
            raise ValueError(f"files[{key!r}] {exc}") from None
    return resolved


def _resolve_value(key: str, value: Any, base: Path, missing_ok: bool, into: ResolvedFiles) -> None:
    """Put the frozen content of one source value into `into` (or note it missing)."""
    if isinstance(value, str):
        _check_plain_text(value, base)
        into.files[key] = value
    elif isinstance(value, Mapping) and set(value) == {"path"}:
        try:
            into.files[key], into.sources[key] = _read_reference(value["path"], base)
        except _Missing as gone:
            if not missing_ok:
                raise ValueError(str(gone)) from None
            into.missing[key] = gone.path
    elif isinstance(value, Mapping) and set(value) == {"text"}:
        if not isinstance(value["text"], str):
            raise ValueError('"text" must be a string')
        into.files[key] = value["text"]
    elif isinstance(value, Mapping) and "encoding" in value:
        problem = _binary_problem(value)
        if problem is not None:
            raise ValueError(problem)
        into.files[key] = {"encoding": BINARY_ENCODING, "content": value["content"]}
    else:
        raise ValueError(f"must be {_FORMS}")
