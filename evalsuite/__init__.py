"""evalsuite: evaluate checkpoints against frozen, versioned holdout suites.

Stages (docs/architecture.md): ``manifest`` (freeze, verify) -> ``run`` (inspect-ai) -> ``store`` ->
``analyse`` -> ``service`` -> ``report``; ``holdout`` and ``audit`` guard the chain.

The Python API (`evalsuite.api`; every name loads on first use, so ``import evalsuite`` stays
cheap) returns the same typed results the command renders::

    import evalsuite as es
    es.score("RUN").mean
    es.compare("BASELINE", "CANDIDATE", margin=0.02).gate

Catalogue:

- `score(run_id, *, root=None, store=None, ...)` -> `ScoreResult`: one stored run's estimates
  with intervals, strata, pass@k, reliability and health (``evalsuite score``).
- `compare(baseline, candidate, *, root=None, store=None, margin=None, ...)` ->
  `ComparisonResult`: the paired comparison, its verdict and gate (``evalsuite compare``).
- `make_report(run_ids, *, out=None, ...)` -> `ReportData`: the HTML, Markdown and JSON
  report (``evalsuite report``), written to `out` when given.
- `audit_suite(ref, *, root=None, graders=False, leaks=False, ...)` -> `AuditOutcome`: the leak
  audit, grader audit or canary probe of a frozen suite version, typed (``evalsuite audit``),
  with the failure the command would exit with.
- `export(run_ids, *, out, format="eee", ...)` -> list of `ExportedRun`: runs as Every Eval
  Ever records (validated by the every-eval-ever package) or CSV / Parquet tables
  (``evalsuite export``).
- `open_project(root=None, *, store=None)` -> `Project`: the project directory and its
  results store, found as the command finds them.
- `ScoreResult`, `ComparisonResult`, `AuditOutcome`, `Project`: the result types; each
  result's `to_dict()` is its ``--json`` form.
- `__version__`: the installed version.

The project is `root` (else the current directory, as ``--root``); the store is `store`,
else ``$EVALSUITE_STORE``, else ``.evalsuite/results.sqlite``: ``EVALSUITE_STORE`` is the only
environment variable the API reads. Errors are typed (`evalsuite.errors`): an unknown run
raises `evalsuite.errors.NotFoundError`.
"""

from typing import TYPE_CHECKING

__all__ = [
    "AuditOutcome",
    "ComparisonResult",
    "Project",
    "ScoreResult",
    "__version__",
    "audit_suite",
    "compare",
    "export",
    "make_report",
    "open_project",
    "score",
]

if TYPE_CHECKING:
    from evalsuite._core.version import __version__
    from evalsuite.api import (
        AuditOutcome,
        ComparisonResult,
        Project,
        ScoreResult,
        audit_suite,
        compare,
        export,
        make_report,
        open_project,
        score,
    )
else:
    # each name is imported on first use (PEP 562), not at import: the API loads the
    # analyses, and importlib.metadata (the version) costs every command's start-up
    # (docs/scale.md). Not `evalsuite._core.lazy`: `evalsuite._core`'s own imports would
    # make ``import evalsuite`` three times slower.
    _WHERE = {"__version__": "evalsuite._core.version"} | dict.fromkeys(
        (n for n in __all__ if n != "__version__"), "evalsuite.api"
    )

    def __getattr__(name: str) -> object:
        module = _WHERE.get(name)
        if module is None:
            raise AttributeError(f"module 'evalsuite' has no attribute {name!r}")
        import importlib

        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(globals()) | set(_WHERE))
