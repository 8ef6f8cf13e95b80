"""The curriculum guard: screen training data for copies of frozen eval items (docs/guard.md).

Works from a suite's fingerprints (hashed word n-grams, dev and holdout), never from the vault
or its key, so a training pipeline can run it anywhere. Usage::

    index = load_index(layout)                                      # frozen suites' fingerprints
    report = guard([Path("curriculum/")], index, options=GuardOptions())
    hits = screen_documents(documents, index)                       # one shard, any engine

The same names stay importable from `evalsuite.holdout`, where they lived before.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalsuite.guard._guard import GuardOptions, GuardReport, guard
    from evalsuite.guard._index import FingerprintIndex, load_index
    from evalsuite.guard._screen import DEFAULT_THRESHOLD, Hit, screen_documents
else:
    from evalsuite._core.lazy import lazy_exports

    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "._guard": ("GuardOptions", "GuardReport", "guard"),
            "._index": ("FingerprintIndex", "load_index"),
            "._screen": ("DEFAULT_THRESHOLD", "Hit", "screen_documents"),
        },
    )

__all__ = [
    "DEFAULT_THRESHOLD",
    "FingerprintIndex",
    "GuardOptions",
    "GuardReport",
    "Hit",
    "guard",
    "load_index",
    "screen_documents",
]
