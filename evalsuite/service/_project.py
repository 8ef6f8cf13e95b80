"""A project and its results store, found as the `evalsuite` command finds them.

The command works on the directory given by ``--root`` (default: the current directory) and
reads the store at ``$EVALSUITE_STORE`` (any SQLAlchemy URL), else the project's
``.evalsuite/results.sqlite``. `open_project` does the same for the Python API
(`evalsuite.api`), so that a notebook and the command read the same runs. It reads one
environment variable, ``EVALSUITE_STORE``, and only when no store is given.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from evalsuite._core.layout import Layout
from evalsuite.errors import NotFoundError

if TYPE_CHECKING:  # SQLAlchemy and pandas behind it: loaded when the store is opened
    from evalsuite.store import Store

STORE_ENV = "EVALSUITE_STORE"
"""The environment variable naming the results store (a SQLAlchemy URL), as for the CLI."""

__all__ = ["STORE_ENV", "Project", "open_project"]


@dataclass(frozen=True, slots=True)
class Project:
    """A project directory and the URL of its results store.

    Attributes:
        layout: the project's directories (`tasks/`, `manifests/`, `holdout/`, `.evalsuite/`).
        store_url: the results store (``$EVALSUITE_STORE`` or the project's SQLite file).
    """

    layout: Layout
    store_url: str

    @property
    def root(self) -> Path:
        """The project directory."""
        return self.layout.root

    def store(self, *, create: bool = False) -> Store:
        """The results store; `create=False` (reading) leaves a missing SQLite file uncreated.

        A run asked of a store that does not exist is then "not found", naming the store.
        """
        from evalsuite.store import Store

        return Store(self.store_url, create=create)


def open_project(
    root: str | Path | None = None,
    *,
    store: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> Project:
    """The project at `root` (default: the current directory), as ``evalsuite --root``.

    Args:
        root: The project directory (the command's ``--root``); None: the current directory.
        store: The results store's SQLAlchemy URL; None: ``$EVALSUITE_STORE`` when set, else
            the project's ``.evalsuite/results.sqlite``.
        environ: Where ``EVALSUITE_STORE`` is read (default: `os.environ`).

    Raises:
        NotFoundError: `root` is not a directory (a usage error, exit 2 in the command).
    """
    from evalsuite.store import default_store_url

    path = Path.cwd() if root is None else Path(root).expanduser()
    if not path.is_dir():
        raise NotFoundError(
            f"project directory {str(path)!r} does not exist or is not a directory: a project "
            "is the directory holding tasks/, manifests/, holdout/ and .evalsuite/ (the "
            "command's --root). Pass root= the project directory, or run from inside it."
        )
    layout = Layout(path.resolve())
    env = os.environ if environ is None else environ
    url = store or env.get(STORE_ENV) or default_store_url(layout.state)
    return Project(layout=layout, store_url=url)
