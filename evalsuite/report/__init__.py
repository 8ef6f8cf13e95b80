"""Stage 5: reports a reviewer would trust (HTML with figures, Markdown, JSON).

Usage::

    report = build_report(store, layout, [baseline_id, candidate_id], seed=0)
    paths = write_report(report, Path("reports/demo"))
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalsuite.report._build import REPORT_FORMAT, ReportData, build_report, item_rows
    from evalsuite.report._render import (
        render_html,
        render_markdown,
        render_view_html,
        render_view_markdown,
        write_report,
    )
    from evalsuite.service import (
        AnalysisOptions,
        Completeness,
        adaptive_file,
        check_comparable,
        compare_payload,
        run_completeness,
        run_facts,
        score_payload,
    )
else:
    from evalsuite._core.lazy import lazy_exports

    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "._build": (
                "REPORT_FORMAT",
                "ReportData",
                "build_report",
                "item_rows",
            ),
            "evalsuite.service._completeness": (
                "Completeness",
                "run_completeness",
            ),
            "evalsuite.service._payloads": (
                "AnalysisOptions",
                "check_comparable",
                "run_facts",
            ),
            "evalsuite.service": ("adaptive_file", "compare_payload", "score_payload"),
            "._render": (
                "render_html",
                "render_markdown",
                "render_view_html",
                "render_view_markdown",
                "write_report",
            ),
        },
    )

__all__ = [
    "REPORT_FORMAT",
    "AnalysisOptions",
    "Completeness",
    "ReportData",
    "adaptive_file",
    "build_report",
    "check_comparable",
    "compare_payload",
    "item_rows",
    "render_html",
    "render_markdown",
    "render_view_html",
    "render_view_markdown",
    "run_completeness",
    "run_facts",
    "score_payload",
    "write_report",
]
