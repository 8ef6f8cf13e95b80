"""The fingerprint index: every frozen item's n-gram hashes as sorted numpy arrays.

The guard never opens a vault: it reads the fingerprint files written beside the manifests
(``manifests/<suite>/<version>.fingerprints.jsonl``), after checking each against the hash
its manifest records. The index is plain numpy arrays, tuples and small dicts, so it pickles
cheaply to the workers of Ray or Dask (``docs/guard.md``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from evalsuite._core.hashing import sha256_bytes
from evalsuite._core.layout import Layout
from evalsuite.errors import ManifestTamperedError, NotFoundError
from evalsuite.manifest import (
    NGRAM_SIZE,
    SHORT_MIN,
    Split,
    frozen_versions,
    list_suite_names,
    load_manifest,
    parse_ref,
)

__all__ = [
    "READABLE_FORMATS",
    "BitFilter",
    "FingerprintIndex",
    "FingerprintSet",
    "ItemRef",
    "build_index",
    "load_index",
    "read_fingerprints",
]

READABLE_FORMATS = ("evalsuite-fingerprints/1", "evalsuite-fingerprints/2")
_HASH_SPEC = "evalsuite-ngram/2"
_BYTE_SLOTS = 20

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class ItemRef:
    """One frozen item of one suite version (the same item in two versions is two refs)."""

    suite: str
    version: str
    split: Split
    item_id: str


@dataclass(frozen=True, slots=True)
class FingerprintSet:
    """The parsed fingerprint file of one suite version."""

    suite: str
    version: str
    canary: str
    items: list[dict[str, Any]]
    """Records: ``id``, ``split``, ``text_hashes``, ``ngrams``, optional ``short``."""


@dataclass(frozen=True, slots=True)
class BitFilter:
    """A one-hash Bloom filter on the top bits of uniformly distributed 64-bit keys.

    With at least 32 slots per key, about 3% of absent keys pass, so the exact binary search
    runs on a small fraction of a document's n-grams.
    """

    table: npt.NDArray[np.uint8] | npt.NDArray[np.bool_]
    """One byte per slot up to 2**20 slots (1 MB), else bits packed eight to a byte: in the
    screening loop a small packed table beats a larger byte table (fewer cache misses)."""
    shift: int

    @classmethod
    def of(cls, keys: U64) -> BitFilter:
        """A filter holding `keys`."""
        width = int(np.clip(np.ceil(np.log2(max(keys.size, 1) * 32)), 16, 32))
        table = np.zeros(1 << width, dtype=np.bool_)
        table[keys >> np.uint64(64 - width)] = True
        if width > _BYTE_SLOTS:
            return cls(table=np.packbits(table, bitorder="little"), shift=64 - width)
        return cls(table=table, shift=64 - width)

    def candidates(self, queries: U64) -> I64:
        """Positions of `queries` that may be keys (no false negatives)."""
        slot = queries >> np.uint64(self.shift)
        if self.table.dtype == np.bool_:
            return np.flatnonzero(self.table[slot])
        byte = self.table[slot >> np.uint64(3)]
        hit = (byte >> (slot & np.uint64(7)).astype(np.uint8)) & np.uint8(1)
        return np.flatnonzero(hit.view(np.bool_))  # 0/1 bytes; nonzero is fastest on bool


def _lookup(keys: U64, filt: BitFilter, queries: U64) -> tuple[I64, I64]:
    """(positions in `queries`, positions in `keys`) of the queries that are keys."""
    cand = filt.candidates(queries)
    if cand.size == 0 or keys.size == 0:
        return cand[:0], cand[:0]
    found = np.searchsorted(keys, queries[cand])
    found[found == keys.size] = 0
    ok = keys[found] == queries[cand]
    return cand[ok], found[ok].astype(np.int64)


@dataclass(frozen=True, eq=False)
class FingerprintIndex:
    """Every n-gram, short-text and exact-text fingerprint of a set of frozen suite versions.

    Build it with `load_index` (from a project) or `build_index` (from parsed files).
    """

    n: int
    """n-gram size (13)."""
    items: tuple[ItemRef, ...]
    item_ngrams: I64
    """Number of distinct n-grams of each item."""
    item_short: I64
    """Number of short texts of each item."""
    grams: U64
    """Sorted unique n-gram hashes of all items."""
    gram_ptr: I64
    """Items owning ``grams[g]``: ``gram_items[gram_ptr[g]:gram_ptr[g + 1]]``."""
    gram_items: npt.NDArray[np.int32]
    gram_filter: BitFilter
    short_heads: U64
    """Sorted unique hashes of the first `SHORT_MIN` words of every short text."""
    short_ptr: I64
    """Short texts with head ``short_heads[h]``: entries ``short_ptr[h]:short_ptr[h + 1]``."""
    short_len: I64
    short_whole: U64
    short_item: npt.NDArray[np.int32]
    short_filter: BitFilter
    exact: Mapping[str, tuple[int, ...]]
    """Text hash (``sha256:...`` of the normalised words) -> items."""
    canaries: Mapping[str, tuple[tuple[str, str], ...]]
    """Canary string -> (suite, version) pairs that carry it."""
    sources: tuple[str, ...] = field(default=())
    """``suite@version`` of every fingerprint file in the index."""

    @property
    def short_min(self) -> int:
        """Fewest words a short text has (`SHORT_MIN`)."""
        return SHORT_MIN

    def lookup_grams(self, queries: U64) -> tuple[I64, I64]:
        """(positions in `queries`, indices into `grams`) of the queries that are n-grams."""
        return _lookup(self.grams, self.gram_filter, queries)

    def lookup_short_heads(self, queries: U64) -> tuple[I64, I64]:
        """(positions in `queries`, indices into `short_heads`) of short-text heads."""
        return _lookup(self.short_heads, self.short_filter, queries)


def _csr(keys: U64, owners: npt.NDArray[np.int32]) -> tuple[U64, I64, npt.NDArray[np.int32]]:
    order = np.argsort(keys, kind="stable")
    keys, owners = keys[order], owners[order]
    unique, first = np.unique(keys, return_index=True)
    ptr = np.append(first, keys.size).astype(np.int64)
    return unique, ptr, owners


def build_index(sets: Iterable[FingerprintSet]) -> FingerprintIndex:
    """Index parsed fingerprint files (see `read_fingerprints`)."""
    refs: list[ItemRef] = []
    grams: list[U64] = []
    shorts: list[list[int]] = []
    short_owner: list[int] = []
    exact: dict[str, list[int]] = {}
    canaries: dict[str, list[tuple[str, str]]] = {}
    sources: list[str] = []
    for fp in sets:
        sources.append(f"{fp.suite}@{fp.version}")
        canaries.setdefault(fp.canary, []).append((fp.suite, fp.version))
        for record in fp.items:
            index = len(refs)
            refs.append(ItemRef(fp.suite, fp.version, record["split"], record["id"]))
            grams.append(np.asarray(record["ngrams"], dtype=np.uint64))
            for entry in record.get("short", []):
                shorts.append(entry)
                short_owner.append(index)
            for text_hash in record["text_hashes"]:
                exact.setdefault(text_hash, []).append(index)
    counts = np.array([g.size for g in grams], dtype=np.int64)
    all_grams = np.concatenate(grams) if grams else np.zeros(0, dtype=np.uint64)
    owners = np.repeat(np.arange(len(refs), dtype=np.int32), counts)
    keys, ptr, gram_items = _csr(all_grams, owners)
    table = np.array(shorts, dtype=np.uint64).reshape(-1, 3)
    heads, short_ptr, order = _csr(table[:, 1].copy(), np.arange(len(shorts), dtype=np.int32))
    table = table[order]
    short_item = np.array(short_owner, dtype=np.int32)[order]
    return FingerprintIndex(
        n=NGRAM_SIZE,
        items=tuple(refs),
        item_ngrams=counts,
        item_short=np.bincount(short_item, minlength=len(refs)).astype(np.int64),
        grams=keys,
        gram_ptr=ptr,
        gram_items=gram_items,
        gram_filter=BitFilter.of(keys),
        short_heads=heads,
        short_ptr=short_ptr,
        short_len=table[:, 0].astype(np.int64),
        short_whole=table[:, 2].copy(),
        short_item=short_item,
        short_filter=BitFilter.of(heads),
        exact={k: tuple(v) for k, v in exact.items()},
        canaries={k: tuple(v) for k, v in canaries.items()},
        sources=tuple(sources),
    )


def _tampered(path: str, detail: str) -> ManifestTamperedError:
    return ManifestTamperedError(
        f"{path}: {detail}. Fingerprint files are written by `evalsuite freeze` and must not be "
        "edited; restore the file from version control (`evalsuite verify` checks every file "
        "of a version)."
    )


def _parse_header(path: str, line: bytes, suite: str, version: str) -> str:
    try:
        header = json.loads(line)
    except ValueError:
        raise _tampered(path, "the header line is not valid JSON") from None
    if not isinstance(header, dict) or header.get("format") not in READABLE_FORMATS:
        raise _tampered(
            path, f"unknown fingerprint format (expected one of {list(READABLE_FORMATS)})"
        )
    expected = {"suite": suite, "version": version, "n": NGRAM_SIZE, "hash": _HASH_SPEC}
    wrong = {k: header.get(k) for k, v in expected.items() if header.get(k) != v}
    if wrong or not isinstance(header.get("canary"), str):
        raise _tampered(path, f"header fields {wrong or 'canary'} differ from {expected}")
    return str(header["canary"])


def read_fingerprints(layout: Layout, suite: str, version: str) -> FingerprintSet:
    """Read the fingerprint file of ``suite@version`` after checking it against the manifest.

    Raises:
        NotFoundError: the version is not frozen, or its fingerprint file is missing.
        ManifestTamperedError: the manifest, or the fingerprint file, fails its hash check.
    """
    manifest = load_manifest(layout, suite, version)
    path = layout.root / manifest.fingerprints.path
    if not path.is_file():
        raise NotFoundError(
            f"{manifest.ref}: fingerprint file {path} is missing; restore it from version "
            "control (it is written by `evalsuite freeze`)"
        )
    data = path.read_bytes()
    actual = sha256_bytes(data)
    if actual != manifest.fingerprints.sha256:
        raise _tampered(
            str(path),
            f"hashes to {actual} but {manifest.ref} recorded {manifest.fingerprints.sha256}",
        )
    lines = data.splitlines()
    canary = _parse_header(str(path), lines[0] if lines else b"", suite, version)
    items = [json.loads(line) for line in lines[1:] if line.strip()]
    return FingerprintSet(suite=suite, version=version, canary=canary, items=items)


def _all_suites(layout: Layout) -> list[str]:
    names = set(list_suite_names(layout))
    if layout.manifests.is_dir():
        names.update(p.name for p in layout.manifests.iterdir() if p.is_dir())
    return sorted(n for n in names if frozen_versions(layout, n))


def load_index(layout: Layout, refs: Sequence[str] = ()) -> FingerprintIndex:
    """The index of every frozen version of every suite, or only of `refs`.

    Args:
        layout: The project.
        refs: ``SUITE`` (all its frozen versions) or ``SUITE@X.Y.Z``; empty for everything.

    Raises:
        NotFoundError: nothing is frozen, or a ref names no frozen version.
        ManifestTamperedError: a manifest or fingerprint file fails its hash check.
    """
    wanted: list[tuple[str, str]] = []
    for ref in refs or _all_suites(layout):
        name, version = parse_ref(ref)
        versions = [version] if version else frozen_versions(layout, name)
        if not versions:
            load_manifest(layout, name)  # raises NotFoundError naming the suite
        wanted.extend((name, v) for v in versions)
    if not wanted:
        raise NotFoundError(
            f"no frozen manifests under {layout.manifests}: there is nothing to screen against; "
            "freeze a suite first (`evalsuite freeze SUITE --version 1.0.0`)"
        )
    unique = list(dict.fromkeys(wanted))
    return build_index(read_fingerprints(layout, s, v) for s, v in unique)
