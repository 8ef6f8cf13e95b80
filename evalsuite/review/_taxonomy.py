"""A suite's failure taxonomy: versioned, named modes, each a model failure or a harness fault.

The file is ``tasks/taxonomies/<suite>.toml`` (docs/review.md)::

    suite = "support"
    version = "1"

    [[modes]]
    name = "tool_error"
    kind = "harness"          # "model" or "harness"
    definition = "An environment tool failed or timed out and the episode could not recover."
    scanner = "tool_errors"   # optional: the built-in scanner that detects this mode
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from evalsuite._core.layout import Layout
from evalsuite.errors import NotFoundError, UsageError

__all__ = [
    "MODE_KINDS",
    "Mode",
    "Taxonomy",
    "load_taxonomy",
    "suite_taxonomy",
    "taxonomy_path",
]

MODE_KINDS = ("model", "harness")
"""A mode is the model's failure, or a harness fault that only looks like one."""

_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


@dataclass(frozen=True, slots=True)
class Mode:
    """One failure mode: a short name, what it means, and whose fault it is."""

    name: str
    definition: str
    kind: Literal["model", "harness"]
    scanner: str | None = None
    """The scanner whose finding stands for this mode (precision and recall, docs/review.md)."""

    def to_dict(self) -> dict[str, Any]:
        """The mode as plain data."""
        return {
            "name": self.name,
            "definition": self.definition,
            "kind": self.kind,
            "scanner": self.scanner,
        }


@dataclass(frozen=True, slots=True)
class Taxonomy:
    """A suite's failure modes at one version."""

    suite: str
    version: str
    modes: tuple[Mode, ...]

    @property
    def names(self) -> tuple[str, ...]:
        """The modes' names, in file order."""
        return tuple(m.name for m in self.modes)

    def mode(self, name: str) -> Mode:
        """The mode called `name`.

        Raises:
            UsageError: no such mode (the message lists the modes there are).
        """
        for mode in self.modes:
            if mode.name == name:
                return mode
        raise UsageError(
            f"unknown failure mode {name!r}: taxonomy {self.suite} version {self.version} has "
            f"{', '.join(self.names)}; use one of them, or add the mode to the taxonomy file "
            "and raise its version"
        )

    def harness_modes(self) -> tuple[str, ...]:
        """Names of the modes declared harness faults."""
        return tuple(m.name for m in self.modes if m.kind == "harness")

    def to_dict(self) -> dict[str, Any]:
        """The taxonomy as plain data."""
        return {
            "suite": self.suite,
            "version": self.version,
            "modes": [m.to_dict() for m in self.modes],
        }


def _text(table: dict[str, Any], key: str, where: str, path: Path) -> str:
    value = table.get(key)
    if not isinstance(value, str) or not value.strip():
        raise UsageError(
            f"{path}: {where} needs {key} = a non-empty string (got {value!r}); see "
            "docs/review.md, 'The taxonomy file'"
        )
    return value.strip()


def _mode(raw: Any, index: int, path: Path) -> Mode:
    where = f"[[modes]] number {index + 1}"
    if not isinstance(raw, dict):
        raise UsageError(f"{path}: {where} is not a table; write it as [[modes]] with keys")
    unknown = sorted(set(raw) - {"name", "definition", "kind", "scanner"})
    if unknown:
        raise UsageError(
            f"{path}: {where} has unknown keys {unknown}; expected name, definition, kind and "
            "optionally scanner"
        )
    name = _text(raw, "name", where, path)
    if not _NAME.match(name):
        raise UsageError(
            f"{path}: {where}: mode name {name!r} is not a lower-case identifier (letters, "
            "digits, underscores, at most 64); rename it, e.g. 'tool_error'"
        )
    kind = raw.get("kind")
    if kind not in MODE_KINDS:
        raise UsageError(
            f"{path}: mode {name!r} has kind = {kind!r}; expected 'model' (the model's "
            "failure) or 'harness' (a harness fault that looks like one)"
        )
    scanner = raw.get("scanner")
    if scanner is not None and (not isinstance(scanner, str) or not scanner):
        raise UsageError(f"{path}: mode {name!r}: scanner must be a scanner's name (a string)")
    return Mode(
        name=name,
        definition=_text(raw, "definition", f"mode {name!r}", path),
        kind=kind,
        scanner=scanner,
    )


def load_taxonomy(path: Path) -> Taxonomy:
    """Read and check a taxonomy file.

    Raises:
        NotFoundError: the file does not exist.
        UsageError: not TOML, or a field missing or wrong (the message names it), no modes,
            or a mode named twice.
    """
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise NotFoundError(
            f"taxonomy file {path} not found; write one (docs/review.md, 'The taxonomy "
            "file') or name another with --taxonomy FILE"
        ) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: not a valid TOML file ({exc}); fix the syntax") from None
    unknown = sorted(set(raw) - {"suite", "version", "modes"})
    if unknown:
        raise UsageError(
            f"{path}: unknown top-level keys {unknown}; expected suite, version and [[modes]]"
        )
    suite = _text(raw, "suite", "the file", path)
    version_raw = raw.get("version")
    if isinstance(version_raw, int) and not isinstance(version_raw, bool):
        version_raw = str(version_raw)
    version = _text({"version": version_raw}, "version", "the file", path)
    modes_raw = raw.get("modes")
    if not isinstance(modes_raw, list) or not modes_raw:
        raise UsageError(
            f"{path}: no failure modes; add at least one [[modes]] table with name, "
            "definition and kind"
        )
    modes = tuple(_mode(m, i, path) for i, m in enumerate(modes_raw))
    seen: set[str] = set()
    for mode in modes:
        if mode.name in seen:
            raise UsageError(f"{path}: mode {mode.name!r} is declared twice; keep one")
        seen.add(mode.name)
    return Taxonomy(suite=suite, version=version, modes=modes)


def taxonomy_path(layout: Layout, suite: str) -> Path:
    """Where suite `suite` keeps its taxonomy: ``tasks/taxonomies/<suite>.toml``."""
    return layout.tasks / "taxonomies" / f"{suite}.toml"


def suite_taxonomy(layout: Layout, suite: str, path: Path | None = None) -> Taxonomy:
    """The taxonomy of `suite`: from `path` when given, else the suite's own file.

    Raises:
        NotFoundError: no such file.
        UsageError: the file is malformed, or it is another suite's taxonomy.
    """
    where = path or taxonomy_path(layout, suite)
    taxonomy = load_taxonomy(where)
    if taxonomy.suite != suite:
        raise UsageError(
            f"{where} is the taxonomy of suite {taxonomy.suite!r}, not of {suite!r}; name the "
            f"file of suite {suite!r} (tasks/taxonomies/{suite}.toml)"
        )
    return taxonomy
