"""Review of a run's transcripts: a failure taxonomy, labels, scanners and their statistics.

Usage::

    taxonomy = suite_taxonomy(layout, "support")          # tasks/taxonomies/support.toml
    save_label(store, AttemptLabel(run_id, "item-1", 1, ("tool_error",)), taxonomy=taxonomy)
    labels = load_labels(store, run_id)                     # the latest label per attempt
    app = open_review(store, layout, url, [run_id], ReviewOptions(who="me"))  # the web app

It sits above the statistics and the store, below the use cases (docs/review.md).
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalsuite.review._labels import (
        AttemptLabel,
        check_label,
        default_labeller,
        label_history,
        load_labels,
        now_utc,
        save_label,
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
    "MODE_KINDS",
    "AttemptLabel",
    "Mode",
    "ReviewApp",
    "ReviewOptions",
    "Taxonomy",
    "check_label",
    "default_labeller",
    "label_history",
    "load_labels",
    "load_taxonomy",
    "now_utc",
    "open_review",
    "save_label",
    "start_server",
    "suite_taxonomy",
    "taxonomy_path",
    "write_site",
]
