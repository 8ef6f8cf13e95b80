"""Lazy package exports (PEP 562): a public name is imported when it is first used.

A stage's ``__init__`` lists its public names and the submodule of each; importing the
package imports none of them, so ``from evalsuite.store import RunRecord`` loads only the
submodule defining `RunRecord`, not pandas and SQLAlchemy behind `Store`. Type checkers see
the same names through ``if TYPE_CHECKING:`` imports. This keeps start-up of the commands
that need little (``runs``, ``suites``, ``verify``) short (docs/scale.md, "Start-up")::

    if TYPE_CHECKING:
        from evalsuite.store._store import Store
    else:
        __getattr__, __dir__ = lazy_exports(__name__, {"._store": ("Store",)})
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, Sequence[str]]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of `package`.

    Args:
        package: The package's ``__name__``.
        exports: Submodule (relative, e.g. ``"._store"``) -> the public names it defines.

    Returns:
        ``__getattr__``, which imports a name's submodule on first use and keeps the value in
        the package (later lookups are plain attribute reads), and ``__dir__``.

    Raises:
        ValueError: a name is listed under two submodules (one would silently win).
    """
    where: dict[str, str] = {}
    for module, names in exports.items():
        for name in names:
            if where.setdefault(name, module) != module:
                raise ValueError(
                    f"{package}: {name!r} is listed under both {where[name]!r} and "
                    f"{module!r}; list it under the submodule that defines it"
                )

    def __getattr__(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(where))

    return __getattr__, __dir__
