"""The stratified, salted split: reproducible, order-independent, fixed before any run."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Mapping
from typing import Literal

from evalsuite.errors import ItemSourceError

__all__ = ["Split", "split_salt", "stratified_split"]

Split = Literal["dev", "holdout"]


def split_salt(canary: str, version: str) -> str:
    """The salt of a version's split, derived from the suite's canary and the version."""
    return hashlib.sha256(f"evalsuite-split\x1f{canary}\x1f{version}".encode()).hexdigest()[:32]


def _rank(salt: str, item_id: str) -> str:
    return hashlib.sha256(f"{salt}:{item_id}".encode()).hexdigest()


def stratified_split(
    strata: Mapping[str, str],
    *,
    salt: str,
    fraction: float,
    previous: Mapping[str, Split] | None = None,
) -> dict[str, Split]:
    """Assign each item to ``dev`` or ``holdout``, stratum by stratum.

    Within a stratum of ``n`` items the holdout's target size is ``round(fraction * n)``.
    Items in `previous` (a parent version's split) keep their side; the remaining places
    are filled from the new items with the smallest salted hash, so that the holdout share
    of every stratum stays within one item of `fraction` whenever the carried-over items
    allow it.

    Args:
        strata: item id -> stratum.
        salt: the version's split salt (`split_salt`).
        fraction: holdout share, strictly between 0 and 1.
        previous: item id -> side in the parent version (ids no longer present are ignored).

    Raises:
        ItemSourceError: a stratum gets no dev or no holdout item (too few items to split).
    """
    by_stratum: dict[str, list[str]] = defaultdict(list)
    for item_id, stratum in strata.items():
        by_stratum[stratum].append(item_id)
    carried = dict(previous or {})
    result: dict[str, Split] = {}
    for stratum, ids in sorted(by_stratum.items()):
        old = [i for i in ids if i in carried]
        new = sorted((i for i in ids if i not in carried), key=lambda i: _rank(salt, i))
        target = round(fraction * len(ids))
        have = sum(1 for i in old if carried[i] == "holdout")
        take = min(max(target - have, 0), len(new))
        for i in old:
            result[i] = carried[i]
        for position, i in enumerate(new):
            result[i] = "holdout" if position < take else "dev"
        holdout = sum(1 for i in ids if result[i] == "holdout")
        if holdout == 0 or holdout == len(ids):
            side = "holdout" if holdout == 0 else "dev"
            raise ItemSourceError(
                f"stratum {stratum!r} has {len(ids)} item(s), too few to split at "
                f"holdout_fraction={fraction}: it would get no {side} item. Add items to "
                "this stratum or merge it with another (change stratify_by)."
            )
    return result
