"""Review of a run's transcripts: a failure taxonomy, labels, scanners and their statistics.

Usage::

    taxonomy = suite_taxonomy(layout, "support")          # tasks/taxonomies/support.toml
    save_label(store, AttemptLabel(run_id, "item-1", 1, ("tool_error",)), taxonomy=taxonomy)
    labels = load_labels(store, run_id)                     # the latest label per attempt
    app = open_review(store, layout, url, [run_id], ReviewOptions(who="me"))  # the web app

The scanners (`builtin_scanners`, `scan_run`) import Inspect Scout when first used; the
rest reads the store only. It sits above the statistics and the store, below the use cases
(docs/review.md).
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalsuite.review._agreement import (
        ScannerCheck,
        scanner_agreement,
    )
    from evalsuite.review._labels import (
        AttemptLabel,
        check_label,
        default_labeller,
        label_history,
        load_labels,
        now_utc,
        save_label,
    )
    from evalsuite.review._propose import (
        DEFAULT_PROPOSE,
        RANDOM_SHARE,
        Proposal,
        propose,
        saturation,
    )
    from evalsuite.review._scan import (
        ScanReport,
        attempt_of_transcript,
        run_log_files,
        scan_run,
    )
    from evalsuite.review._scanners import (
        BUILTIN_SCANNERS,
        builtin_scanners,
        llm_mode_scanner,
        scanners_from_file,
        signature,
    )
    from evalsuite.review._stats import (
        ModeChange,
        ModeRate,
        Reclassified,
        attempt_id,
        mode_changes,
        mode_rates,
        reclassify,
        scanner_rates,
    )
    from evalsuite.review._summary import (
        TOP_MODES,
        StatsOptions,
        review_summary,
        run_taxonomy_of,
        transcript_link,
    )
    from evalsuite.review._taxonomy import (
        MODE_KINDS,
        Mode,
        Taxonomy,
        load_taxonomy,
        suite_taxonomy,
        taxonomy_path,
    )
    from evalsuite.review._web import (
        ReviewApp,
        ReviewOptions,
        open_review,
        start_server,
        write_site,
    )
else:
    from evalsuite._core.lazy import lazy_exports

    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "._agreement": (
                "ScannerCheck",
                "scanner_agreement",
            ),
            "._propose": (
                "DEFAULT_PROPOSE",
                "RANDOM_SHARE",
                "Proposal",
                "propose",
                "saturation",
            ),
            "._scan": (
                "ScanReport",
                "attempt_of_transcript",
                "run_log_files",
                "scan_run",
            ),
            "._scanners": (
                "BUILTIN_SCANNERS",
                "builtin_scanners",
                "llm_mode_scanner",
                "scanners_from_file",
                "signature",
            ),
            "._stats": (
                "ModeChange",
                "ModeRate",
                "Reclassified",
                "attempt_id",
                "mode_changes",
                "mode_rates",
                "reclassify",
                "scanner_rates",
            ),
            "._summary": (
                "TOP_MODES",
                "StatsOptions",
                "review_summary",
                "run_taxonomy_of",
                "transcript_link",
            ),
            "._labels": (
                "AttemptLabel",
                "check_label",
                "default_labeller",
                "label_history",
                "load_labels",
                "now_utc",
                "save_label",
            ),
            "._taxonomy": (
                "MODE_KINDS",
                "Mode",
                "Taxonomy",
                "load_taxonomy",
                "suite_taxonomy",
                "taxonomy_path",
            ),
            "._web": ("ReviewApp", "ReviewOptions", "open_review", "start_server", "write_site"),
        },
    )

__all__ = [
    "BUILTIN_SCANNERS",
    "DEFAULT_PROPOSE",
    "MODE_KINDS",
    "RANDOM_SHARE",
    "TOP_MODES",
    "AttemptLabel",
    "Mode",
    "ModeChange",
    "ModeRate",
    "Proposal",
    "Reclassified",
    "ReviewApp",
    "ReviewOptions",
    "ScanReport",
    "ScannerCheck",
    "StatsOptions",
    "Taxonomy",
    "attempt_id",
    "attempt_of_transcript",
    "builtin_scanners",
    "check_label",
    "default_labeller",
    "label_history",
    "llm_mode_scanner",
    "load_labels",
    "load_taxonomy",
    "mode_changes",
    "mode_rates",
    "now_utc",
    "open_review",
    "propose",
    "reclassify",
    "review_summary",
    "run_log_files",
    "run_taxonomy_of",
    "saturation",
    "save_label",
    "scan_run",
    "scanner_agreement",
    "scanner_rates",
    "scanners_from_file",
    "signature",
    "start_server",
    "suite_taxonomy",
    "taxonomy_path",
    "transcript_link",
    "write_site",
]
