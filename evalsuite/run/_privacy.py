"""Keep holdout plaintext off the disk while inspect runs (INSPECT_NOTES.md, point 15).

By default inspect writes sample content in three places besides the log: the realtime
sample buffer, the trace log and temporary files of the ``.eval`` format. For a holdout run
the runner asks for ``log_format="json"``, ``log_realtime=False`` and a ``memory://`` log
directory, and this context manager adds the rest: trace level CRITICAL (also on a log
handler that an earlier run in this process already created), no control server, and
private data, cache and temporary directories that are deleted afterwards.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["INSPECT_QUIET_ENV", "private_inspect_env"]

INSPECT_QUIET_ENV = {
    "INSPECT_TRACE_LEVEL": "CRITICAL",
    "INSPECT_EVAL_CTL_SERVER": "false",
    "INSPECT_PY_LOGGER_FILE": "",
}


def _existing_trace_handler() -> object | None:
    try:
        from inspect_ai._util import logger as inspect_logger
    except ImportError:  # pragma: no cover - inspect layout changed; the marker test catches it
        return None
    holder = getattr(inspect_logger, "_logHandler", None)
    return holder.get("handler") if isinstance(holder, dict) else None


@contextlib.contextmanager
def private_inspect_env(*, holdout: bool) -> Iterator[Path | None]:
    """Environment for one inspect `eval()` call.

    Args:
        holdout: Also redirect data, cache and temporary directories into a private
            directory that is removed on exit, and silence an existing trace handler.

    Yields:
        The private directory (holdout) or None.
    """
    saved = {
        k: os.environ.get(k)
        for k in [*INSPECT_QUIET_ENV, "XDG_DATA_HOME", "XDG_CACHE_HOME", "TMPDIR"]
    }
    saved_tempdir = tempfile.tempdir
    handler = _existing_trace_handler()
    saved_level = getattr(handler, "trace_logger_level", None)
    private: Path | None = None
    try:
        for key, value in INSPECT_QUIET_ENV.items():
            if value:
                os.environ[key] = value
            else:
                os.environ.pop(key, None)
        if holdout:
            private = Path(tempfile.mkdtemp(prefix="evalsuite-private-"))
            os.chmod(private, 0o700)
            for sub, var in (
                ("data", "XDG_DATA_HOME"),
                ("cache", "XDG_CACHE_HOME"),
                ("tmp", "TMPDIR"),
            ):
                (private / sub).mkdir()
                os.environ[var] = str(private / sub)
            tempfile.tempdir = str(private / "tmp")
            if handler is not None and saved_level is not None:
                handler.trace_logger_level = logging.CRITICAL  # type: ignore[attr-defined]  # inspect's LogHandler
        yield private
    finally:
        for key, old in saved.items():
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old
        tempfile.tempdir = saved_tempdir
        if handler is not None and saved_level is not None:
            handler.trace_logger_level = saved_level  # type: ignore[attr-defined]  # restore
        if private is not None:
            shutil.rmtree(private, ignore_errors=True)
