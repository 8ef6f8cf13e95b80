"""evalsuite: evaluate checkpoints against frozen, versioned holdout suites.

Stages (docs/architecture.md): ``manifest`` (freeze, verify) -> ``run`` (inspect-ai) -> ``store`` ->
``analyse`` -> ``report``; ``holdout`` and ``audit`` guard the chain.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("evalsuite")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
