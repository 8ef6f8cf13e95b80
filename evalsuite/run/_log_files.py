"""Where inspect logs are: a local path, or any fsspec URL (``s3://``, ``gs://``, ``file://``).

`evalsuite run --log-dir` hands its location to inspect, which writes through fsspec; the
shards of a sharded run share one such location (docs/design/sharded-runs.md). The readers
of logs (`ingest --format inspect`, the ``evalsuite/replay`` model) find them through
`find_inspect_logs`, so whatever a run could write, they can read back.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

__all__ = ["find_inspect_logs", "is_url"]

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def is_url(location: str) -> bool:
    """Whether `location` is a URL with a scheme (``s3://...``, ``file:///...``), not a path."""
    return _SCHEME.match(location) is not None


def find_inspect_logs(location: str) -> list[str] | None:
    """The inspect logs at `location`, sorted: the file itself, or a directory's logs.

    A directory is searched recursively for ``.eval`` and ``.json`` logs (an empty list when
    it holds none). A local path is returned as a path, a URL's logs as URLs of the same
    scheme, which inspect's readers open.

    Returns:
        The log files, or None when nothing exists at `location`.
    """
    from inspect_ai.log import list_eval_logs

    if location.startswith("file://"):
        # a local file as a URL: inspect writes ``file:///a%20b`` into the directory "a b"
        location = unquote(location.removeprefix("file://"))
    if is_url(location):
        from fsspec.core import url_to_fs

        fs, root = url_to_fs(location)
        fs.invalidate_cache()  # another process (a shard) may have written since a listing
        if fs.isfile(root):
            return [location]
        if fs.isdir(root):
            return sorted(info.name for info in list_eval_logs(location, recursive=True))
        return None
    path = Path(location)
    if path.is_file():
        return [str(path)]
    if path.is_dir():
        return sorted(
            info.name.removeprefix("file://") for info in list_eval_logs(str(path), recursive=True)
        )
    return None
