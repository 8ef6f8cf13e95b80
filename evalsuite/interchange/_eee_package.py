"""The `every-eval-ever` package: its schema, types and validator, imported when first used.

The package declares Python >= 3.12 and heavy dependencies (duckdb, huggingface-hub, ...)
that its validator does not use; evalsuite runs on 3.11, so it is installed without them
(docs/interchange.md, "Installing the Every Eval Ever package"). Imported lazily: a command
that does not read or write the format pays nothing for it.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from evalsuite.errors import UsageError

__all__ = ["EEE_INSTALL", "eee_schema_version", "eee_validator", "repo_file_path"]

EEE_INSTALL = "pip install --no-deps --ignore-requires-python every-eval-ever==0.3.0"
"""How to install the package (`make install` runs it)."""


def _missing(exc: ImportError) -> UsageError:
    return UsageError(
        "--format eee needs the every-eval-ever package (its schema, types and validator), "
        f"which is not installed ({exc}). Install it with `{EEE_INSTALL}` (make install does "
        "this; docs/interchange.md says why --no-deps)"
    )


def eee_validator() -> ModuleType:
    """``every_eval_ever.validator.validation_core``.

    Raises:
        UsageError: the package is not installed (naming the install command).
    """
    try:
        from every_eval_ever.validator import validation_core
    except ImportError as exc:
        raise _missing(exc) from None
    module: ModuleType = validation_core
    return module


def eee_schema_version() -> str:
    """The schema version the installed package writes and validates (e.g. ``0.3.0``)."""
    try:
        from every_eval_ever.converters import SCHEMA_VERSION
    except ImportError as exc:
        raise _missing(exc) from None
    return str(SCHEMA_VERSION)


def repo_file_path(collection: str, model_id: str, developer: str | None, name: str) -> str:
    """The datastore path ``data/<collection>/<developer>/<model>/<name>`` the package uses."""
    try:
        from every_eval_ever.helpers.io import datastore_repo_file_path
    except ImportError as exc:
        raise _missing(exc) from None
    path: Any = datastore_repo_file_path(collection, model_id, developer, name)
    return str(path)
