"""The curriculum guard: screen training data for copies of frozen eval items (docs/guard.md).

Works from a suite's fingerprints (hashed word n-grams, dev and holdout), never from the vault
or its key, so a training pipeline can run it anywhere. Usage::

    index = load_index(layout)                                      # frozen suites' fingerprints
    report = guard([Path("curriculum/")], index, options=GuardOptions())
    hits = screen_documents(documents, index)                       # one shard, any engine
    report = screen_on_ray(sources, index, options=GuardOptions())  # on a Ray cluster

The same names stay importable from `evalsuite.holdout`, where they lived before.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalsuite.guard._derived import BeforeDecrypt, DerivedResult, derive_fingerprints
    from evalsuite.guard._distributed import (
        DEFAULT_SHARD_BYTES,
        RayOptions,
        plan_shards,
        screen_on_ray,
        screen_shard,
    )
    from evalsuite.guard._guard import GuardOptions, GuardReport, guard, screen_sources
    from evalsuite.guard._index import (
        FingerprintIndex,
        frozen_suites,
        load_index,
        read_fingerprints,
    )
    from evalsuite.guard._overlap import FrozenOverlap, new_item_overlaps
    from evalsuite.guard._readers import Format, find_sources
    from evalsuite.guard._screen import (
        DEFAULT_BATCH_BYTES,
        DEFAULT_THRESHOLD,
        Hit,
        screen_documents,
    )
else:
    from evalsuite._core.lazy import lazy_exports

    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "._guard": (
                "GuardOptions",
                "GuardReport",
                "guard",
                "screen_sources",
            ),
            "._index": (
                "FingerprintIndex",
                "load_index",
                "frozen_suites",
                "read_fingerprints",
            ),
            "._screen": (
                "DEFAULT_THRESHOLD",
                "Hit",
                "screen_documents",
                "DEFAULT_BATCH_BYTES",
            ),
            "._distributed": (
                "DEFAULT_SHARD_BYTES",
                "RayOptions",
                "plan_shards",
                "screen_on_ray",
                "screen_shard",
            ),
            "._derived": (
                "BeforeDecrypt",
                "DerivedResult",
                "derive_fingerprints",
            ),
            "._overlap": (
                "FrozenOverlap",
                "new_item_overlaps",
            ),
            "._readers": (
                "Format",
                "find_sources",
            ),
        },
    )

__all__ = [
    "DEFAULT_BATCH_BYTES",
    "DEFAULT_SHARD_BYTES",
    "DEFAULT_THRESHOLD",
    "BeforeDecrypt",
    "DerivedResult",
    "FingerprintIndex",
    "Format",
    "FrozenOverlap",
    "GuardOptions",
    "GuardReport",
    "Hit",
    "RayOptions",
    "derive_fingerprints",
    "find_sources",
    "frozen_suites",
    "guard",
    "load_index",
    "new_item_overlaps",
    "plan_shards",
    "read_fingerprints",
    "screen_documents",
    "screen_on_ray",
    "screen_shard",
    "screen_sources",
]
