"""`evalsuite regrade RUN --judge MODEL`: a stored run re-scored by another judge (issue 33).

A judge upgrade is a measured change, not a silent one. The run's inspect logs (a dev run
keeps them under ``.evalsuite/logs/<run>``; holdout runs keep none) are re-scored with each
judged family's own scorer built with the new judge (`build_task`, the judge passed as
``judge``), using inspect's `score` on the stored outputs: the candidate model is not called
again. The re-scored logs are written beside the originals
(``.evalsuite/logs/<run>.regrade-<judge>``), stored as a new run linked to the same manifest
(`ingest_inspect`: the task version of a log `evalsuite run` wrote is the manifest hash), and
compared with the original, paired by item, per stratum (`compare`). Families without a
judge keep their scores.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from evalsuite._core.layout import Layout
from evalsuite.errors import NotFoundError, UsageError
from evalsuite.service._compare import ComparisonResult, compare
from evalsuite.store import Store

__all__ = ["RegradeResult", "regrade"]


@dataclass(frozen=True, slots=True)
class RegradeResult:
    """The original run, its re-scored copy, and their paired comparison."""

    original: str
    regraded: str
    judge: str
    """The new judge (inspect model name)."""
    previous_judges: dict[str, str]
    """Family -> the judge that graded the original run."""
    logs: str
    """Where the re-scored logs were written (project-relative)."""
    comparison: ComparisonResult
    """Original (baseline) against re-scored (candidate): what the new judge changes."""

    def to_dict(self) -> dict[str, object]:
        """``regrade --json``."""
        return {
            "original": self.original,
            "regraded": self.regraded,
            "judge": self.judge,
            "previous_judges": dict(self.previous_judges),
            "logs": self.logs,
            "comparison": self.comparison.to_dict(),
        }


def _placeholder() -> Any:  # an inspect Sample (service never imports inspect)
    from evalsuite.run import item_to_sample

    return item_to_sample({"id": "regrade", "input": "", "target": ""})


def _slug(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("_")[:80]


def regrade(
    layout: Layout,
    store: Store,
    run_id: str,
    judge: str,
    *,
    log_dir: Path | None = None,
) -> RegradeResult:
    """Re-score the stored run `run_id` with `judge` and compare it with the original.

    Raises:
        UnknownRunError: no stored run has that id.
        UsageError: a holdout run, a run of no frozen version, a version without a judged
            family, a judge that is not an inspect model name, or a regrade already stored.
        NotFoundError: the run's logs are not where they were written (give `log_dir`).
    """
    from evalsuite.manifest import JudgeConfig, load_manifest
    from evalsuite.run import (
        build_task,
        ingest_inspect,
        load_task_function,
        rescore_log,
        task_name_of_log,
    )

    record = store.get_run(run_id)
    if record.split == "holdout":
        raise UsageError(
            f"{run_id} is a holdout run: it keeps no logs (they would hold holdout text), so "
            "it cannot be re-scored; regrade a dev run"
        )
    if record.suite is None or record.version is None:
        raise UsageError(
            f"{run_id} is not a run of a frozen suite version: nothing declares its judge"
        )
    manifest = load_manifest(layout, record.suite, record.version)
    judged = {f.name: f for f in manifest.families if f.judge is not None}
    if not judged:
        raise UsageError(f"{manifest.ref} declares no judge: its scores are not model-graded")
    try:
        new_judge = JudgeConfig.model_validate(
            {**next(iter(judged.values())).judge.model_dump(), "model": judge}  # type: ignore[union-attr]
        )
    except ValueError:
        raise UsageError(
            f"--judge {judge!r} must be an inspect model name 'provider/model'"
        ) from None
    source = log_dir or layout.state / "logs" / run_id
    logs = sorted(p for p in source.glob("*.json") if p.is_file()) if source.is_dir() else []
    if not logs:
        raise NotFoundError(
            f"no inspect logs of {run_id} in {source}: a dev run writes them there (or where "
            "`run --log-dir` said); give that directory with --log-dir"
        )
    if len(logs) > 1:
        raise UsageError(
            f"{run_id} has {len(logs)} logs (one per family): regrade re-scores a run of one "
            "family today; the families' runs would be stored apart and not compare with the "
            "original as one (docs/design/judge-audit.md)"
        )
    target = layout.state / "logs" / f"{run_id}.regrade-{_slug(judge)}"
    if target.exists():
        raise UsageError(
            f"{run_id} was already re-scored by {judge} ({target.relative_to(layout.root)}); "
            "compare that run, or remove the directory to score again"
        )
    staging = target.with_name(target.name + ".partial")
    staging.mkdir(parents=True, exist_ok=True)
    prefix = f"{manifest.suite}-"
    for path in logs:
        family = judged.get(task_name_of_log(path).removeprefix(prefix))
        build = None
        if family is not None:
            swapped = family.model_copy(
                update={"judge": new_judge.model_copy(update={"prompt": family.judge.prompt})}  # type: ignore[union-attr]
            )
            function = load_task_function(layout, manifest.suite, swapped)
            # the task is built for its scorer only, on one placeholder sample (never run)
            build = partial(build_task, function, swapped, [_placeholder()])
        rescore_log(path, staging / path.name, build)
    staging.rename(target)
    report = ingest_inspect(target, store, root=layout.root, again=True)
    new_id = report.runs[0].run_id
    comparison = compare(store, run_id, new_id, layout=layout, allow_partial=True)
    return RegradeResult(
        original=run_id,
        regraded=new_id,
        judge=judge,
        previous_judges={n: f.judge.model for n, f in judged.items()},  # type: ignore[union-attr]
        logs=target.relative_to(layout.root).as_posix(),
        comparison=comparison,
    )
