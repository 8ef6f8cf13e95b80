"""evalsuite: evaluate checkpoints against frozen, versioned holdout suites.

Stages (docs/architecture.md): ``manifest`` (freeze, verify) -> ``run`` (inspect-ai) -> ``store`` ->
``analyse`` -> ``report``; ``holdout`` and ``audit`` guard the chain.
"""

from typing import TYPE_CHECKING

__all__ = ["__version__"]

if TYPE_CHECKING:
    __version__: str
else:

    def __getattr__(name: str) -> str:
        # the version is read from the installed package's metadata on first use, not at
        # import: importlib.metadata costs every command's start-up (docs/scale.md)
        if name != "__version__":
            raise AttributeError(f"module 'evalsuite' has no attribute {name!r}")
        from importlib.metadata import PackageNotFoundError, version

        try:
            value = version("evalsuite")
        except PackageNotFoundError:  # pragma: no cover - a source tree without install
            value = "0.0.0+unknown"
        globals()["__version__"] = value
        return value
