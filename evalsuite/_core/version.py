"""evalsuite's version, read once from the installed package's metadata.

The one place the version string is looked up: `evalsuite.__version__`, the store's
``written_by`` and a report's ``evalsuite_version`` all read it from here. It is read when
this module is first imported, not when `evalsuite` is (importlib.metadata costs every
command's start-up: docs/scale.md).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

__all__ = ["__version__"]


def _lookup() -> str:
    try:
        return version("evalsuite")
    except PackageNotFoundError:  # pragma: no cover - a source tree without install
        return "0.0.0+unknown"


__version__: str = _lookup()
"""The installed evalsuite's version (``0.0.0+unknown`` in a source tree not installed)."""
