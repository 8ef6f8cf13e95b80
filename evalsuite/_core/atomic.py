"""Atomic file writes: a reader sees the old file or the new one, never half of either."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

__all__ = ["append_line_locked", "atomic_replace_dir", "atomic_write_bytes", "atomic_write_text"]


def atomic_write_bytes(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Write `data` to `path` through a temporary file in the same directory and a rename.

    The temporary file is fsynced before the rename, so a crash leaves either the old content
    or the new content. `mode` sets the permission bits before any byte is written (0o644 by
    default; use 0o600 for keys).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str, *, mode: int = 0o644) -> None:
    """Write UTF-8 `text` atomically (see `atomic_write_bytes`)."""
    atomic_write_bytes(path, text.encode("utf-8"), mode=mode)


def atomic_replace_dir(target: Path, staged: Path) -> None:
    """Replace directory `target` by the fully written directory `staged` (same parent).

    POSIX cannot rename over a non-empty directory, so the old directory is first moved
    aside; if the second rename fails the old directory is moved back.
    """
    aside = target.with_name(f".{target.name}.old")
    if aside.exists():
        shutil.rmtree(aside)
    had_old = target.exists()
    if had_old:
        os.replace(target, aside)
    try:
        os.replace(staged, target)
    except BaseException:
        if had_old:
            os.replace(aside, target)
        raise
    if had_old:
        shutil.rmtree(aside)
    _fsync_dir(target.parent)


def append_line_locked(path: Path, line: str) -> None:
    """Append one line to `path` under an inter-process lock, fsynced.

    Appends of a single short line under the lock are all-or-nothing in practice; readers
    that find a torn last line (power loss) can detect it because every line ends in a
    newline.
    """
    if "\n" in line:
        raise ValueError("append_line_locked takes exactly one line without a newline")
    from filelock import FileLock  # here: importing filelock costs every command's start-up

    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock"), path.open("a", encoding="utf-8") as handle:
        handle.write(line + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
