"""The `guard` use case: screen training curricula against every frozen fingerprint.

`guard_report` finds the inputs, loads the fingerprints and screens them; it returns the
guard stage's typed `GuardReport`, whose one view is `guard_view` (terminal, Markdown, HTML)
and whose JSON is `GuardReport.to_dict()` plus the view's sentences (docs/guard.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from evalsuite._core.layout import Layout
from evalsuite.guard import (
    GuardOptions,
    GuardReport,
    RayOptions,
    find_sources,
    load_index,
    screen_on_ray,
    screen_sources,
)

__all__ = ["guard_report"]


def guard_report(
    layout: Layout,
    paths: Sequence[Path],
    *,
    options: GuardOptions,
    suites: Sequence[str] = (),
    total: Callable[[int], None] | None = None,
    advance: Callable[[int], None] | None = None,
    ray: RayOptions | None = None,
) -> GuardReport:
    """Screen the curricula at `paths` against the fingerprints of `suites` (empty: every one).

    `total` is told the bytes to screen before screening starts, `advance` each step's bytes
    (a progress display; neither is needed). With `ray`, the screen runs on a Ray cluster
    (``--executor ray``: same findings, docs/guard.md "On a cluster").

    Raises:
        NotFoundError: nothing is frozen, a suite names no frozen version, or a path does
            not exist.
        UsageError: a file named explicitly has an unknown format.
        ManifestTamperedError: a manifest or fingerprint file fails its check.
    """
    index = load_index(layout, suites)
    sources, skipped = find_sources(list(paths), options.format)
    if total is not None:
        total(sum(s.size for s in sources))
    if ray is not None:
        return screen_on_ray(
            sources,
            index,
            options=options,
            ray_options=ray,
            skipped=skipped,
            advance=advance if advance is not None else lambda _: None,
        )
    return screen_sources(
        sources,
        index,
        options=options,
        skipped=skipped,
        advance=advance if advance is not None else lambda _: None,
    )
