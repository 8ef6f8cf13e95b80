from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalsuite.errors import ItemSourceError
from evalsuite.manifest import split_salt, stratified_split

strata_st = st.dictionaries(
    keys=st.text(alphabet="abcdefghijklmnop0123456789-", min_size=1, max_size=12),
    values=st.sampled_from(["s1", "s2", "s3"]),
    min_size=0,
    max_size=80,
)


def _valid(strata: dict[str, str], fraction: float) -> bool:
    counts = Counter(strata.values())
    return bool(counts) and all(0 < round(fraction * n) < n for n in counts.values())


@settings(max_examples=150, deadline=None)
@given(strata=strata_st, fraction=st.sampled_from([0.3, 0.5, 0.6]), seed=st.integers(0, 10**6))
def test_split_ignores_input_order_and_respects_fraction(
    strata: dict[str, str], fraction: float, seed: int
) -> None:
    if not _valid(strata, fraction):
        return
    salt = split_salt("canary", "1.0.0")
    first = stratified_split(strata, salt=salt, fraction=fraction)
    shuffled = list(strata.items())
    random.Random(seed).shuffle(shuffled)
    second = stratified_split(dict(shuffled), salt=salt, fraction=fraction)
    assert first == second
    for stratum, n in Counter(strata.values()).items():
        held = sum(1 for i, s in strata.items() if s == stratum and first[i] == "holdout")
        assert abs(held - fraction * n) <= 1


def test_previous_sides_are_kept_and_new_items_fill_the_gap() -> None:
    old = {f"a{i}": "s" for i in range(10)}
    salt1 = split_salt("c", "1.0.0")
    first = stratified_split(old, salt=salt1, fraction=0.5)
    grown = dict(old) | {f"b{i}": "s" for i in range(10)}
    second = stratified_split(grown, salt=split_salt("c", "1.1.0"), fraction=0.5, previous=first)
    assert all(second[i] == first[i] for i in old)
    assert sum(1 for v in second.values() if v == "holdout") == 10


def test_salt_changes_the_choice() -> None:
    strata = {f"i{i}": "s" for i in range(40)}
    a = stratified_split(strata, salt=split_salt("c", "1.0.0"), fraction=0.5)
    b = stratified_split(strata, salt=split_salt("c", "2.0.0"), fraction=0.5)
    assert a != b


def test_a_stratum_too_small_to_split_is_named() -> None:
    with pytest.raises(ItemSourceError, match=r"stratum 'tiny' has 1 item\(s\), too few"):
        stratified_split({"x": "tiny", "y": "big", "z": "big"}, salt="s", fraction=0.5)
