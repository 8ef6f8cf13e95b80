"""`suites`: the suites in tasks/ with their frozen versions and item counts; one view.

Read through the manifests' and suite files' strict summaries, not their models, so that
`suites` starts at once (no pydantic, no cryptography: docs/design/startup.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from evalsuite.service._format import fmt
from evalsuite.service._views import Column, ResultView, TableView

if TYPE_CHECKING:
    from evalsuite._core.jsonout import JsonObject
    from evalsuite._core.layout import Layout

__all__ = ["SuiteSummary", "SuiteVersion", "list_suites", "suites_view"]


@dataclass(frozen=True, slots=True)
class SuiteVersion:
    """One frozen version: its hash, its items per split and per stratum, its weights."""

    version: str
    manifest_hash: str
    frozen_at: str
    n_items: int
    n_dev: int
    n_holdout: int
    strata: dict[str, dict[str, int]] = field(default_factory=dict)
    """stratum -> {"dev": n, "holdout": n}."""
    weights: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> JsonObject:
        """One entry of a suite's ``versions`` in ``suites --json``."""
        return {
            "version": self.version,
            "manifest_hash": self.manifest_hash,
            "frozen_at": self.frozen_at,
            "n_items": self.n_items,
            "n_dev": self.n_dev,
            "n_holdout": self.n_holdout,
            "strata": self.strata,
            "weights": self.weights,
        }


@dataclass(frozen=True, slots=True)
class SuiteSummary:
    """A suite of tasks/ and its frozen versions, oldest first."""

    suite: str
    description: str
    families: tuple[str, ...]
    versions: tuple[SuiteVersion, ...]

    def to_dict(self) -> JsonObject:
        """One entry of ``suites --json``."""
        return {
            "suite": self.suite,
            "description": self.description,
            "families": list(self.families),
            "versions": [v.to_dict() for v in self.versions],
        }


def list_suites(layout: Layout) -> tuple[SuiteSummary, ...]:
    """Every suite in the project's tasks/, with its frozen versions."""
    from evalsuite.manifest import (
        frozen_versions,
        list_suite_names,
        load_manifest_summary,
        load_suite_summary,
    )

    out = []
    for name in list_suite_names(layout):
        suite = load_suite_summary(layout, name)
        versions = []
        for version in frozen_versions(layout, name):
            m = load_manifest_summary(layout, name, version, check_hash=False)
            versions.append(
                SuiteVersion(
                    version=m.version,
                    manifest_hash=m.manifest_hash,
                    frozen_at=m.frozen_at,
                    n_items=m.n_items,
                    n_dev=m.count("dev"),
                    n_holdout=m.count("holdout"),
                    strata=m.strata(),
                    weights=m.weights,
                )
            )
        out.append(SuiteSummary(name, suite.description, tuple(suite.families), tuple(versions)))
    return tuple(out)


def _table(summary: SuiteSummary) -> TableView:
    rows: list[tuple[str, ...]] = []
    for v in summary.versions:
        short = v.manifest_hash[:19]
        rows += [
            (
                v.version,
                stratum,
                str(counts["dev"]),
                str(counts["holdout"]),
                fmt(v.weights.get(stratum)),
                short,
            )
            for stratum, counts in v.strata.items()
        ]
        rows.append((v.version, "all", str(v.n_dev), str(v.n_holdout), fmt(1.0), short))
    return TableView(
        f"{summary.suite}: {summary.description}",
        (
            Column("version", numeric=False),
            Column("stratum", numeric=False),
            Column("dev"),
            Column("holdout"),
            Column("weight"),
            Column("manifest", numeric=False),
        ),
        tuple(rows),
    )


def suites_view(suites: tuple[SuiteSummary, ...], tasks: str = "tasks/") -> ResultView:
    """What `evalsuite suites` prints and writes as ``--json`` (``{"suites": [...]}``)."""
    frozen = [s for s in suites if s.versions]
    if not suites:
        headline = f"no suites in {tasks} (add tasks/<suite>.toml)"
    else:
        headline = (
            f"{len(suites)} suite(s) in {tasks}, {len(frozen)} frozen "
            f"({sum(len(s.versions) for s in suites)} version(s))"
        )
    return ResultView(
        kind="suites",
        title="suites",
        headline=headline,
        alerts=(),
        gate_line=None,
        tables=tuple(_table(s) for s in frozen),
        facts=tuple(
            f"{s.suite}: {s.description}: not frozen yet" for s in suites if not s.versions
        ),
        caveats=(),
        payload={"suites": [s.to_dict() for s in suites]},
    )
