"""Where a project keeps its files.

Everything is relative to one root (docs/architecture.md, "Suite files").
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["Layout"]


@dataclass(frozen=True, slots=True)
class Layout:
    """Paths of one evalsuite project; all commands work relative to `root`."""

    root: Path
    origin: Path | None = None
    """For a private staging copy of a project (the grader audit's, triage's): the project it
    was staged from. Its files, linked into the copy, count as inside the project."""

    @property
    def tasks(self) -> Path:
        """Suite files and task families."""
        return self.root / "tasks"

    @property
    def manifests(self) -> Path:
        """Frozen manifests, one folder per suite."""
        return self.root / "manifests"

    @property
    def holdout(self) -> Path:
        """Vaults and access ledgers, one folder per suite."""
        return self.root / "holdout"

    @property
    def reports(self) -> Path:
        """Generated reports."""
        return self.root / "reports"

    @property
    def state(self) -> Path:
        """Local state: the default SQLite store and inspect logs of dev runs."""
        return self.root / ".evalsuite"

    def contains(self, path: Path) -> bool:
        """True when `path`, symlinks resolved, lies inside the project (or its `origin`)."""
        where = path.resolve()
        roots = [self.root] if self.origin is None else [self.root, self.origin]
        return any(where.is_relative_to(r.resolve()) for r in roots)

    def suite_file(self, suite: str) -> Path:
        """`tasks/<suite>.toml`."""
        return self.tasks / f"{suite}.toml"

    def manifest_dir(self, suite: str) -> Path:
        """`manifests/<suite>/`."""
        return self.manifests / suite

    def manifest_file(self, suite: str, version: str) -> Path:
        """`manifests/<suite>/<version>.json`."""
        return self.manifest_dir(suite) / f"{version}.json"

    def fingerprint_file(self, suite: str, version: str) -> Path:
        """`manifests/<suite>/<version>.fingerprints.jsonl`."""
        return self.manifest_dir(suite) / f"{version}.fingerprints.jsonl"

    def dev_items_file(self, suite: str, version: str) -> Path:
        """`manifests/<suite>/<version>.items.jsonl`: dev items taken from tasks' datasets."""
        return self.manifest_dir(suite) / f"{version}.items.jsonl"

    def vault_file(self, suite: str, version: str) -> Path:
        """`holdout/<suite>/<version>.vault`."""
        return self.holdout / suite / f"{version}.vault"

    def ledger_file(self, suite: str) -> Path:
        """`holdout/<suite>/ACCESS.jsonl`."""
        return self.holdout / suite / "ACCESS.jsonl"
