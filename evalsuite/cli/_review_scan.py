"""What `review --scan` and `run --scan` share: the run's taxonomy, the scanners, the scan."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalsuite.cli._common import Context
from evalsuite.errors import UsageError

if TYPE_CHECKING:
    from evalsuite.review import Taxonomy
    from evalsuite.store import Store

__all__ = ["parse_llm_scanners", "run_taxonomy", "scan_runs"]


def run_taxonomy(ctx: Context, store: Store, run_id: str, path: Path | None) -> Taxonomy:
    """The taxonomy that labels of run `run_id` are checked against.

    Raises:
        NotFoundError: no such run, or no taxonomy file.
        UsageError: the run names no suite (an ingested run) and no ``--taxonomy`` was given.
    """
    from evalsuite.review import load_taxonomy, suite_taxonomy

    run = store.get_run(run_id)
    if run.suite is None:
        if path is None:
            raise UsageError(
                f"run {run_id} names no suite (ingested), so it has no suite taxonomy; name "
                "one with --taxonomy FILE"
            )
        return load_taxonomy(path)
    return suite_taxonomy(ctx.layout, run.suite, path)


def parse_llm_scanners(pairs: tuple[str, ...]) -> list[tuple[str, str]]:
    """``--llm-scanner MODE=MODEL`` pairs as (mode, model).

    Raises:
        UsageError: a pair without ``=``, an empty mode or model.
    """
    out = []
    for pair in pairs:
        mode, sep, model = pair.partition("=")
        if not sep or not mode.strip() or not model.strip():
            raise UsageError(
                f"--llm-scanner {pair!r}: expected MODE=MODEL, e.g. --llm-scanner "
                "tool_loop=openai/gpt-4o-mini (a mode of the taxonomy, any inspect model)"
            )
        out.append((mode.strip(), model.strip()))
    return out


def scan_runs(
    ctx: Context,
    store: Store,
    run_ids: tuple[str, ...],
    *,
    names: tuple[str, ...] = (),
    llm: tuple[str, ...] = (),
    files: tuple[str, ...] = (),
    taxonomy_file: Path | None = None,
    log_dir: Path | None = None,
    scans_dir: Path | None = None,
) -> list[dict[str, Any]]:
    """Scan each run with Inspect Scout (`review --scan`, `run --scan`); the scan reports.

    The built-in scanners run (those in `names`, else all) unless only LLM scanners (`llm`,
    ``MODE=MODEL``) or a team's scanner files (`files`) are named.

    Raises:
        UsageError: an unknown built-in scanner, a malformed ``--llm-scanner``.
    """
    from evalsuite.review import (
        BUILTIN_SCANNERS,
        builtin_scanners,
        llm_mode_scanner,
        scan_run,
        scanners_from_file,
    )

    unknown = sorted(set(names) - set(BUILTIN_SCANNERS))
    if unknown:
        raise UsageError(
            f"unknown scanner(s) {', '.join(unknown)}; the built-in scanners are "
            f"{', '.join(BUILTIN_SCANNERS)}"
        )
    llm_pairs = parse_llm_scanners(llm)
    reports = []
    for run_id in run_ids:
        builtin = names or not (llm_pairs or files)
        scanners: dict[str, Any] = dict(builtin_scanners(names or None) if builtin else {})
        for spec in files:
            scanners |= scanners_from_file(spec)
        if llm_pairs:
            taxonomy = run_taxonomy(ctx, store, run_id, taxonomy_file)
            for mode, model in llm_pairs:
                scanners[f"llm_{mode}"] = llm_mode_scanner(taxonomy.mode(mode), model)
        report = scan_run(store, ctx.layout, run_id, scanners, log_dir=log_dir, scans_dir=scans_dir)
        reports.append(report.to_dict())
    return reports
