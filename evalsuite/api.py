"""The Python API: the `evalsuite` command's use cases, for notebooks and scripts.

Each function returns the same typed result the command renders (`evalsuite score RUN`
prints `score_view` of the very `ScoreResult` that `score(RUN)` returns; ``--json`` is its
``to_dict()`` with the view's sentences)::

    import evalsuite as es

    es.score("RUN").mean                       # 0.823
    c = es.compare("BASELINE", "CANDIDATE", margin=0.02)
    c.diff, c.interval, c.verdict, c.gate.status     # +0.224, (0.133, 0.314), ...
    es.make_report(["BASELINE", "CANDIDATE"], out="reports/rc1")

The project is found as the command finds it: `root` (the command's ``--root``), else the
current directory. The results store is `store` (a `Store` or a SQLAlchemy URL), else
``$EVALSUITE_STORE``, else the project's ``.evalsuite/results.sqlite``. ``EVALSUITE_STORE`` is
the only environment variable these functions read. Errors are the command's, typed
(`evalsuite.errors`): an unknown run raises `NotFoundError`, runs that cannot be paired
`IncomparableRunsError`, an invalid run `InvalidRunError` (unless ``allow_invalid``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from evalsuite.service import (
    AnalysisOptions,
    AuditOutcome,
    ComparisonResult,
    Project,
    ScoreResult,
    open_project,
)
from evalsuite.service import audit_suite as _audit_suite
from evalsuite.service import compare as _compare
from evalsuite.service import score as _score

if TYPE_CHECKING:
    from evalsuite.interchange import ExportedRun
    from evalsuite.report import ReportData
    from evalsuite.store import Store

__all__ = [
    "AuditOutcome",
    "ComparisonResult",
    "Project",
    "ScoreResult",
    "audit_suite",
    "compare",
    "export",
    "make_report",
    "open_project",
    "score",
]


def _store_of(project: Project, store: Store | str | None) -> Store:
    """`store` as a `Store` (a URL is opened for reading), else the project's."""
    if store is None or isinstance(store, str):
        return project.store()
    return store


def _project(root: str | Path | None, store: Store | str | None) -> Project:
    return open_project(root, store=store if isinstance(store, str) else None)


def score(
    run_id: str,
    *,
    root: str | Path | None = None,
    store: Store | str | None = None,
    level: float = 0.95,
    alpha: float = 0.05,
    seed: int = 0,
    model_corr: float = 0.9,
) -> ScoreResult:
    """One stored run's estimates, strata, pass@k, reliability and health (``evalsuite score``).

    Args:
        run_id: The run (a unique prefix of its id is enough).
        root: The project directory (default: the current directory).
        store: The results store, a `Store` or a SQLAlchemy URL (default:
            ``$EVALSUITE_STORE``, else the project's ``.evalsuite/results.sqlite``).
        level: Confidence level of every interval.
        alpha: Significance level of the pilot MDE.
        seed: Seed of the bootstrap draws.
        model_corr: Assumed true-score correlation of a second model, for the pilot MDE.

    Returns:
        The `ScoreResult` the command renders: ``.mean``, ``.interval``, ``.weighted_mean``,
        ``.valid``, ``.estimates`` (strata, pass@k, reliability), ``.harness``, ``.notes``;
        ``.to_dict()`` is ``score --json`` without the view's sentences.

    Raises:
        NotFoundError: no stored run has that id.
    """
    project = _project(root, store)
    options = AnalysisOptions(level=level, alpha=alpha, seed=seed, model_corr=model_corr)
    return _score(_store_of(project, store), run_id, options, layout=project.layout)


def compare(  # noqa: PLR0913 - the options of `evalsuite compare`, one each
    baseline: str,
    candidate: str,
    *,
    root: str | Path | None = None,
    store: Store | str | None = None,
    margin: float | None = None,
    level: float = 0.95,
    alpha: float = 0.05,
    seed: int = 0,
    allow_invalid: bool = False,
    allow_partial: bool = False,
    min_common_share: float = 0.8,
) -> ComparisonResult:
    """The paired comparison of CANDIDATE against BASELINE (``evalsuite compare``).

    Args:
        baseline: The baseline run (a unique prefix of its id is enough).
        candidate: The candidate run.
        root: The project directory (default: the current directory).
        store: The results store, as for `score`.
        margin: A non-inferiority gate with this margin (``--gate noninferior --margin``);
            its result is ``.gate`` (not recorded in the store, unlike the command's).
        level: Confidence level of every interval.
        alpha: Significance level of the test, the MDE and the gate.
        seed: Seed of the permutation draws.
        allow_invalid: Compare invalid runs too (marked in the result's notes).
        allow_partial: Compare partial or unfinished runs too (marked).
        min_common_share: Runs of two versions of one suite: the share of common items
            required.

    Returns:
        The `ComparisonResult` the command renders: ``.diff``, ``.interval``, ``.p_value``,
        ``.verdict``, ``.gate``, ``.weighted``, ``.comparison`` (strata, MDE), ``.notes``.

    Raises:
        NotFoundError: a run id no stored run has.
        IncomparableRunsError: runs of different suite versions or splits, or the same run.
        InvalidRunError: an invalid run without `allow_invalid`.
        UsageError: a partial or unfinished run without `allow_partial`.
    """
    project = _project(root, store)
    options = AnalysisOptions(level=level, alpha=alpha, seed=seed, margin=margin)
    return _compare(
        _store_of(project, store),
        baseline,
        candidate,
        options,
        allow_invalid=allow_invalid,
        allow_partial=allow_partial,
        layout=project.layout,
        min_common_share=min_common_share,
    )


def make_report(  # noqa: PLR0913 - the options of `evalsuite report`, one each
    run_ids: Sequence[str],
    *,
    out: str | Path | None = None,
    root: str | Path | None = None,
    store: Store | str | None = None,
    margin: float | None = None,
    level: float = 0.95,
    alpha: float = 0.05,
    seed: int = 0,
    model_corr: float = 0.9,
    allow_partial: bool = False,
) -> ReportData:
    """The report of `run_ids` (``evalsuite report``), written to `out` when given.

    Each run is compared with the first named run of its suite. With `out`, ``index.html``,
    ``report.md``, ``report.json`` and the figures are written there atomically.

    Returns:
        The `ReportData`: ``.payload`` (report.json), ``.figures``, and the typed
        ``.scores`` and ``.comparisons`` behind them.

    Raises:
        NotFoundError: a run id no stored run has.
        UsageError: no run, or a run named twice.
    """
    from evalsuite.report import build_report, write_report

    project = _project(root, store)
    options = AnalysisOptions(
        level=level, alpha=alpha, seed=seed, margin=margin, model_corr=model_corr
    )
    report = build_report(
        _store_of(project, store),
        project.layout,
        list(run_ids),
        options,
        allow_partial=allow_partial,
    )
    if out is not None:
        write_report(report, Path(out))
    return report


def audit_suite(  # noqa: PLR0913 - the options of `evalsuite audit`, one each
    ref: str,
    *,
    root: str | Path | None = None,
    store: Store | str | None = None,
    graders: bool = False,
    leaks: bool = False,
    split: str = "dev",
    purpose: str | None = None,
    per_stratum: int | None = None,
    canary_probe: bool = False,
    model: str | None = None,
    tries: int = 5,
    seed: int = 0,
    skip_holdout: bool = False,
    key_dir: str | Path | None = None,
    key_file: str | Path | None = None,
) -> AuditOutcome:
    """Audit a frozen suite version (``evalsuite audit REF``); with no part asked, the leaks.

    A complete dev grader audit is stored with the version and the leak audit always, as the
    command does. Unlike the command, nothing exits: the failure it would exit with is
    returned beside the results.

    Args:
        ref: ``SUITE`` or ``SUITE@X.Y.Z`` (default: the latest frozen version).
        root: The project directory (default: the current directory).
        store: The results store, as for `score` (a holdout grader audit records its look).
        graders: Run the grader audit (``--graders``; plays every family's policies).
        leaks: Run the leak audit (also when nothing else is asked for).
        split: The grader audit's split, ``dev`` or ``holdout`` (a budgeted, ledgered look).
        purpose: A holdout grader audit: why (the ledger).
        per_stratum: Audit only the first N items of each stratum (partial: not stored).
        canary_probe: Ask `model` to complete the suite's canary (``--canary-probe``).
        model: The model of the canary probe.
        tries: The canary probe's tries.
        seed: Seed of the grader audit and the probe.
        skip_holdout: Audit dev items only for leaks (no key needed).
        key_dir: Where the vault keys are (default: ``~/.config/evalsuite/keys``; the
            command's ``$EVALSUITE_KEY_DIR`` is not read here: pass it).
        key_file: The vault key's file, instead of `key_dir`.

    Returns:
        The `AuditOutcome`: ``.result`` (`AuditResult`: ``.graders``, ``.leaks``,
        ``.canary_probe``, typed; ``.to_dict()`` is ``audit --json`` without the view's
        sentences) and ``.failure`` (the error the command exits with, or None).

    Raises:
        NotFoundError: unknown suite or version.
        UsageError: an inconsistent request (a probe without a model, a holdout grader
            audit without a purpose).
    """
    from evalsuite.manifest import KeySpec, parse_ref
    from evalsuite.service import AuditRequest

    project = _project(root, store)
    suite, version = parse_ref(ref)
    keys = KeySpec(
        key_dir=Path(key_dir).expanduser()
        if key_dir is not None
        else Path.home() / ".config" / "evalsuite" / "keys",
        key_file=Path(key_file) if key_file is not None else None,
        project=project.root,
    )
    request = AuditRequest(
        suite=suite,
        version=version,
        graders=graders,
        split=split,
        purpose=purpose,
        per_stratum=per_stratum,
        leaks=leaks,
        canary_probe=canary_probe,
        model=model,
        tries=tries,
        seed=seed,
        skip_holdout=skip_holdout,
    )
    return _audit_suite(project.layout, request, keys=keys, store=lambda: _store_of(project, store))


def export(  # noqa: PLR0913 - the options of `evalsuite export`, one each
    run_ids: Sequence[str],
    *,
    out: str | Path,
    format: Literal["eee", "csv", "parquet"] = "eee",
    root: str | Path | None = None,
    store: Store | str | None = None,
    include_holdout_samples: bool = False,
    key_dir: str | Path | None = None,
    level: float = 0.95,
    seed: int = 0,
) -> list[ExportedRun]:
    """Write `run_ids` as Every Eval Ever records or results tables (``evalsuite export``).

    Args:
        run_ids: The runs (unique prefixes of their ids are enough).
        out: The directory to write into.
        format: ``eee`` (records validated by the every-eval-ever package), ``csv`` or
            ``parquet`` (the columns `evalsuite ingest` reads).
        root: The project directory (default: the current directory).
        store: The results store (as in `score`).
        include_holdout_samples: Export holdout runs' per-item results too (ledgered).
        key_dir: The key directory anchoring the holdout ledger (the command's
            ``EVALSUITE_KEY_DIR``); needed with `include_holdout_samples` only.
        level: Confidence level of the exported intervals.
        seed: Seed of the bootstrap draws.

    Returns:
        One `ExportedRun` per run: ``.files``, ``.samples``, ``.ledgered``.

    Raises:
        NotFoundError: a run id no stored run has; UsageError: a holdout run as a table
            without `include_holdout_samples`, or every-eval-ever not installed.
    """
    from evalsuite.interchange import ExportRequest
    from evalsuite.service import export_results

    project = _project(root, store)
    request = ExportRequest(
        run_ids=tuple(run_ids),
        format=format,
        out=Path(out),
        include_holdout_samples=include_holdout_samples,
        level=level,
        seed=seed,
    )
    return export_results(
        request,
        layout=project.layout,
        store=_store_of(project, store),
        key_dir=Path(key_dir) if key_dir is not None else None,
    )
