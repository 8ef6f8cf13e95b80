"""The fingerprint index: every frozen item's fingerprints as sorted numpy arrays.

The guard never opens a vault: it reads the fingerprint files written beside the manifests
(``manifests/<suite>/<version>.fingerprints.jsonl``), after checking each against the hash
its manifest records, and the derived files that `evalsuite fingerprints` writes for versions
frozen with an older text spec (``<version>.fingerprints.v3.jsonl``, checked against their
version; ``docs/design/guard-normalisation.md``). The index is plain numpy arrays, tuples and
small dicts, so it pickles cheaply to the workers of Ray or Dask (``docs/guard.md``).

Evidence. Inside one suite version, a fingerprint (n-gram, short text or exact text) that
several items share is template text (greetings, policy sentences, a common system prompt):
it is not evidence for any of them. An item counts only the fingerprints it alone has, unless
it has no n-gram or short text of its own (an item duplicated, or contained whole, in other
items), in which case all of its fingerprints count.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from evalsuite._core.hashing import sha256_bytes
from evalsuite._core.layout import Layout
from evalsuite.errors import ManifestTamperedError, NotFoundError
from evalsuite.manifest import (
    FINGERPRINT_FORMAT,
    FORMATS,
    SHORT_MIN,
    FingerprintFormat,
    Manifest,
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
    "PartIndex",
    "build_index",
    "derived_binding",
    "derived_path",
    "frozen_suites",
    "load_index",
    "read_derived",
    "read_fingerprints",
]

READABLE_FORMATS = tuple(FORMATS)
_BYTE_SLOTS = 20

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]


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
    format: str = FINGERPRINT_FORMAT
    derived: bool = False
    """True for a derived file (`evalsuite fingerprints`), False for the manifest's own."""


@dataclass(frozen=True, slots=True)
class BitFilter:
    """A Bloom filter with two probes on uniformly distributed 64-bit keys.

    A key sets two slots of one table: its top `width` bits and its bottom `width` bits
    (``width = 64 - shift``; the keys are hashes, so both are uniform). With at least 32
    slots per key, about 0.4% of absent keys pass both probes (one probe: 3%), so the exact
    binary search runs on a tiny fraction of a document's n-grams; the second probe is read
    only for the few queries that pass the first.
    """

    table: npt.NDArray[np.uint8] | npt.NDArray[np.bool_]
    """One byte per slot up to 2**20 slots (1 MB), else bits packed eight to a byte: in the
    screening loop a small packed table beats a larger byte table (fewer cache misses)."""
    shift: int

    @classmethod
    def of(cls, keys: U64) -> BitFilter:
        """A filter holding `keys`."""
        width = int(np.clip(np.ceil(np.log2(max(keys.size, 1) * 32)), 16, 32))
        shift = np.uint64(64 - width)
        table = np.zeros(1 << width, dtype=np.bool_)
        table[keys >> shift] = True
        table[(keys << shift) >> shift] = True
        if width > _BYTE_SLOTS:
            return cls(table=np.packbits(table, bitorder="little"), shift=64 - width)
        return cls(table=table, shift=64 - width)

    def _holds(self, slots: U64) -> npt.NDArray[np.bool_]:
        if self.table.dtype == np.bool_:
            return np.asarray(self.table[slots], dtype=np.bool_)
        byte = self.table[slots >> np.uint64(3)]
        hit = (byte >> (slots & np.uint64(7)).astype(np.uint8)) & np.uint8(1)
        return np.asarray(hit.view(np.bool_), dtype=np.bool_)  # 0/1 bytes

    def candidates(self, queries: U64) -> I64:
        """Positions of `queries` that may be keys (no false negatives)."""
        shift = np.uint64(self.shift)
        first = np.flatnonzero(self._holds(queries >> shift))
        kept = queries[first]
        return first[self._holds((kept << shift) >> shift)]


def _lookup(keys: U64, filt: BitFilter, queries: U64) -> tuple[I64, I64]:
    """(positions in `queries`, positions in `keys`) of the queries that are keys."""
    cand = filt.candidates(queries)
    return _confirm(keys, cand, queries[cand])


def _confirm(keys: U64, positions: I64, values: U64) -> tuple[I64, I64]:
    """(positions, indices into `keys`) of the candidate `values` that are keys."""
    if positions.size == 0 or keys.size == 0:
        return positions[:0], positions[:0]
    found = np.searchsorted(keys, values)
    found[found == keys.size] = 0
    ok = keys[found] == values
    return positions[ok], found[ok].astype(np.int64)


@dataclass(frozen=True, eq=False)
class PartIndex:
    """The fingerprints made with one text spec and n-gram size (screened in one pass)."""

    spec: str
    """Text spec (``evalsuite-ngram/2`` or ``/3``)."""
    n: int
    """N-gram size."""
    long_min: int
    """Texts of fewer words have no n-grams (short texts and exact hashes only)."""
    items: tuple[ItemRef, ...]
    item_ngrams: I64
    """Number of evidence n-grams of each item (the denominator of its overlap)."""
    item_short: I64
    """Number of evidence short texts of each item."""
    grams: U64
    """Sorted unique n-gram hashes of all items (evidence or not: an exact copy of a long
    text has all of its n-grams here, which is how exact-match candidates are found)."""
    gram_ptr: I64
    """Items with ``grams[g]`` as evidence: ``gram_items[gram_ptr[g]:gram_ptr[g + 1]]``."""
    gram_items: I32
    gram_filter: BitFilter
    short_heads: U64
    """Sorted unique hashes of the first `SHORT_MIN` words of every evidence short text."""
    short_ptr: I64
    """Short texts with head ``short_heads[h]``: entries ``short_ptr[h]:short_ptr[h + 1]``."""
    short_len: I64
    short_whole: U64
    short_item: I32
    short_filter: BitFilter
    exact: Mapping[str, tuple[int, ...]]
    """Text hash (``sha256:...`` of the normalised words) -> items it is evidence for."""

    @property
    def short_min(self) -> int:
        """Fewest words a short text has (`SHORT_MIN`)."""
        return SHORT_MIN

    @property
    def window(self) -> int:
        """Most consecutive words one fingerprint spans (an n-gram or a short text)."""
        return max(self.n, self.long_min - 1)

    def lookup_grams(self, queries: U64) -> tuple[I64, I64]:
        """(positions in `queries`, indices into `grams`) of the queries that are n-grams."""
        return _lookup(self.grams, self.gram_filter, queries)

    def lookup_short_heads(self, queries: U64) -> tuple[I64, I64]:
        """(positions in `queries`, indices into `short_heads`) of short-text heads."""
        return _lookup(self.short_heads, self.short_filter, queries)

    def confirm_grams(self, positions: I64, values: U64) -> tuple[I64, I64]:
        """`lookup_grams` of candidates that passed `gram_filter` already (the kernel's)."""
        return _confirm(self.grams, positions, values)

    def confirm_short_heads(self, positions: I64, values: U64) -> tuple[I64, I64]:
        """`lookup_short_heads` of candidates that passed `short_filter` already."""
        return _confirm(self.short_heads, positions, values)


@dataclass(frozen=True, eq=False)
class FingerprintIndex:
    """Every fingerprint of a set of frozen suite versions, one part per text spec.

    Build it with `load_index` (from a project) or `build_index` (from parsed files).
    """

    parts: tuple[PartIndex, ...]
    canaries: Mapping[str, tuple[tuple[str, str], ...]]
    """Canary string -> (suite, version) pairs that carry it."""
    sources: tuple[str, ...] = field(default=())
    """``suite@version`` of every suite version in the index."""
    files: tuple[tuple[str, str, bool], ...] = field(default=())
    """(``suite@version``, format, derived) of every fingerprint file read."""

    @property
    def window(self) -> int:
        """Most consecutive words any fingerprint spans (pieces overlap by one less)."""
        return max((p.window for p in self.parts), default=1)

    @property
    def specs(self) -> tuple[str, ...]:
        """The text specs of the parts."""
        return tuple(p.spec for p in self.parts)

    @property
    def legacy_only(self) -> tuple[str, ...]:
        """``suite@version`` screened only with fingerprints of an older format."""
        current = {ref for ref, fmt, _ in self.files if fmt == FINGERPRINT_FORMAT}
        return tuple(ref for ref in self.sources if ref not in current)


def _csr(keys: U64, owners: I32) -> tuple[U64, I64, I32]:
    order = np.argsort(keys, kind="stable")
    keys, owners = keys[order], owners[order]
    unique, first = np.unique(keys, return_index=True)
    ptr = np.append(first, keys.size).astype(np.int64)
    return unique, ptr, owners


@dataclass(slots=True)
class _Evidence:
    """One item's fingerprints, split into evidence and the rest."""

    grams: U64
    evidence_grams: U64
    shorts: list[tuple[int, int, int]]
    exact: list[str]


def _evidence(records: Sequence[dict[str, Any]]) -> list[_Evidence]:
    """Per item of one suite version: what counts as evidence (see the module docstring)."""
    grams = [np.unique(np.asarray(r["ngrams"], dtype=np.uint64)) for r in records]
    shorts = [sorted({(int(a), int(b), int(c)) for a, b, c in r.get("short", [])}) for r in records]
    exact = [sorted(set(r["text_hashes"])) for r in records]
    every = np.concatenate(grams) if grams else np.zeros(0, dtype=np.uint64)
    keys, counts = np.unique(every, return_counts=True)
    shared_grams = keys[counts > 1]
    short_df = Counter(s for item in shorts for s in item)
    exact_df = Counter(h for item in exact for h in item)
    out: list[_Evidence] = []
    for g, s, e in zip(grams, shorts, exact, strict=True):
        own_grams = g[~np.isin(g, shared_grams)]
        own_shorts = [x for x in s if short_df[x] == 1]
        if own_grams.size or own_shorts:
            out.append(_Evidence(g, own_grams, own_shorts, [h for h in e if exact_df[h] == 1]))
        else:  # nothing of its own: duplicated or contained whole in other items
            out.append(_Evidence(g, g, s, e))
    return out


def _part(fmt: FingerprintFormat, sets: Sequence[FingerprintSet]) -> PartIndex:
    refs: list[ItemRef] = []
    all_grams: list[U64] = []
    evidence: list[U64] = []
    shorts: list[tuple[int, int, int]] = []
    short_owner: list[int] = []
    exact: dict[str, list[int]] = {}
    for fp in sets:
        for record, ev in zip(fp.items, _evidence(fp.items), strict=True):
            index = len(refs)
            refs.append(ItemRef(fp.suite, fp.version, record["split"], record["id"]))
            all_grams.append(ev.grams)
            evidence.append(ev.evidence_grams)
            shorts.extend(ev.shorts)
            short_owner.extend([index] * len(ev.shorts))
            for text_hash in ev.exact:
                exact.setdefault(text_hash, []).append(index)
    counts = np.array([g.size for g in evidence], dtype=np.int64)
    owned = np.concatenate(evidence) if evidence else np.zeros(0, dtype=np.uint64)
    owners = np.repeat(np.arange(len(refs), dtype=np.int32), counts)
    every = np.unique(np.concatenate(all_grams)) if all_grams else np.zeros(0, dtype=np.uint64)
    # every n-gram is a key; only evidence (gram, item) pairs are in the owner table
    order = np.argsort(owned, kind="stable")
    owned, owners = owned[order], owners[order]
    ptr = np.searchsorted(owned, every, side="left").astype(np.int64)
    ptr = np.append(ptr, owned.size).astype(np.int64)
    table = np.array(shorts, dtype=np.uint64).reshape(-1, 3)
    heads, short_ptr, order32 = _csr(table[:, 1].copy(), np.arange(len(shorts), dtype=np.int32))
    table = table[order32]
    short_item = np.array(short_owner, dtype=np.int32)[order32]
    return PartIndex(
        spec=fmt.hash,
        n=fmt.n,
        long_min=fmt.long_min,
        items=tuple(refs),
        item_ngrams=counts,
        item_short=np.bincount(short_item, minlength=len(refs)).astype(np.int64),
        grams=every,
        gram_ptr=ptr,
        gram_items=owners,
        gram_filter=BitFilter.of(every),
        short_heads=heads,
        short_ptr=short_ptr,
        short_len=table[:, 0].astype(np.int64),
        short_whole=table[:, 2].copy(),
        short_item=short_item,
        short_filter=BitFilter.of(heads),
        exact={k: tuple(v) for k, v in exact.items()},
    )


def build_index(sets: Iterable[FingerprintSet]) -> FingerprintIndex:
    """Index parsed fingerprint files (see `read_fingerprints`), one part per text spec."""
    by_kind: dict[tuple[str, int, int], list[FingerprintSet]] = {}
    kinds: dict[tuple[str, int, int], FingerprintFormat] = {}
    canaries: dict[str, list[tuple[str, str]]] = {}
    sources: list[str] = []
    files: list[tuple[str, str, bool]] = []
    for fp in sets:
        fmt = FORMATS[fp.format]
        kind = (fmt.hash, fmt.n, fmt.long_min)
        kinds.setdefault(kind, fmt)
        by_kind.setdefault(kind, []).append(fp)
        ref = f"{fp.suite}@{fp.version}"
        files.append((ref, fp.format, fp.derived))
        if ref not in sources:
            sources.append(ref)
            canaries.setdefault(fp.canary, []).append((fp.suite, fp.version))
    # the current spec first: its hits are kept when two parts report the same item
    order = sorted(by_kind, key=lambda k: kinds[k].name != FINGERPRINT_FORMAT)
    return FingerprintIndex(
        parts=tuple(_part(kinds[k], by_kind[k]) for k in order),
        canaries={k: tuple(v) for k, v in canaries.items()},
        sources=tuple(sources),
        files=tuple(files),
    )


def _tampered(path: str, detail: str) -> ManifestTamperedError:
    return ManifestTamperedError(
        f"{path}: {detail}. Fingerprint files are written by `evalsuite freeze` (and derived "
        "ones by `evalsuite fingerprints`) and must not be edited; restore the file from "
        "version control (`evalsuite verify` checks every file of a version)."
    )


def _parse_header(path: str, line: bytes, suite: str, version: str) -> dict[str, Any]:
    try:
        header = json.loads(line)
    except ValueError:
        raise _tampered(path, "the header line is not valid JSON") from None
    if not isinstance(header, dict) or header.get("format") not in FORMATS:
        raise _tampered(
            path, f"unknown fingerprint format (expected one of {list(READABLE_FORMATS)})"
        )
    fmt = FORMATS[header["format"]]
    expected = {"suite": suite, "version": version, **fmt.header()}
    wrong = {k: header.get(k) for k, v in expected.items() if header.get(k) != v}
    if wrong or not isinstance(header.get("canary"), str):
        raise _tampered(path, f"header fields {wrong or 'canary'} differ from {expected}")
    return header


def _records(path: str, lines: list[bytes]) -> list[dict[str, Any]]:
    try:
        items = [json.loads(line) for line in lines[1:] if line.strip()]
    except ValueError:
        raise _tampered(path, "an item record is not valid JSON") from None
    if not all(isinstance(r, dict) for r in items):
        raise _tampered(path, "an item record is not a JSON object")
    return items


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
    header = _parse_header(str(path), lines[0] if lines else b"", suite, version)
    return FingerprintSet(
        suite=suite,
        version=version,
        canary=str(header["canary"]),
        items=_records(str(path), lines),
        format=str(header["format"]),
    )


def derived_path(layout: Layout, manifest: Manifest, fmt: str = FINGERPRINT_FORMAT) -> Path:
    """Where the derived fingerprints of `manifest` in format `fmt` are kept.

    ``<version>.fingerprints.v<N>.jsonl`` beside the manifest (only for a version frozen
    with an older format).
    """
    number = fmt.rsplit("/", 1)[-1]
    return layout.manifest_dir(manifest.suite) / f"{manifest.version}.fingerprints.v{number}.jsonl"


def derived_binding(manifest: Manifest) -> dict[str, Any]:
    """The header field that ties a derived fingerprint file to its frozen version."""
    return {
        "derived_from": {
            "manifest_hash": manifest.manifest_hash,
            "fingerprints": manifest.fingerprints.sha256,
        }
    }


def read_derived(
    layout: Layout, manifest: Manifest, primary: FingerprintSet
) -> FingerprintSet | None:
    """The derived fingerprint file of a version frozen with an older format, if present.

    It is outside the manifest hash (a frozen version never changes), so it is checked
    against its version instead: the header names the version's manifest hash and the hash
    of its own fingerprint file, and it holds exactly the version's items with their splits
    and strata. Only a key holder can recompute its n-grams (`evalsuite fingerprints
    --check`); the guard screens the version's own file too, so a doctored derived file can
    never hide what the frozen fingerprints find.

    Raises:
        ManifestTamperedError: the file exists but does not belong to this version.
    """
    if primary.format == FINGERPRINT_FORMAT:
        return None
    path = derived_path(layout, manifest)
    if not path.is_file():
        return None
    lines = path.read_bytes().splitlines()
    header = _parse_header(str(path), lines[0] if lines else b"", manifest.suite, manifest.version)
    if header["format"] != FINGERPRINT_FORMAT:
        raise _tampered(str(path), f"format {header['format']} is not {FINGERPRINT_FORMAT}")
    binding = derived_binding(manifest)["derived_from"]
    if header.get("derived_from") != binding or header["canary"] != manifest.canary:
        raise _tampered(
            str(path),
            f"derived from {header.get('derived_from')}, not from {manifest.ref} ({binding}); "
            f"run `evalsuite fingerprints {manifest.ref}` to write it again",
        )
    items = _records(str(path), lines)
    expected = {i.id: (i.split, i.stratum) for i in manifest.items}
    found = {r.get("id"): (r.get("split"), r.get("stratum")) for r in items}
    if found != expected or len(items) != len(expected):
        raise _tampered(
            str(path),
            f"its items, splits or strata differ from {manifest.ref}'s; run "
            f"`evalsuite fingerprints {manifest.ref}` to write it again",
        )
    return FingerprintSet(
        suite=manifest.suite,
        version=manifest.version,
        canary=manifest.canary,
        items=items,
        format=FINGERPRINT_FORMAT,
        derived=True,
    )


def frozen_suites(layout: Layout) -> list[str]:
    """Every suite with a frozen version (named in `tasks/` or only in `manifests/`)."""
    names = set(list_suite_names(layout))
    if layout.manifests.is_dir():
        names.update(p.name for p in layout.manifests.iterdir() if p.is_dir())
    return sorted(n for n in names if frozen_versions(layout, n))


def load_index(layout: Layout, refs: Sequence[str] = ()) -> FingerprintIndex:
    """The index of every frozen version of every suite, or only of `refs`.

    Each version contributes its own fingerprint file and, when that file is in an older
    format, the derived file in the current format if there is one.

    Args:
        layout: The project.
        refs: ``SUITE`` (all its frozen versions) or ``SUITE@X.Y.Z``; empty for everything.

    Raises:
        NotFoundError: nothing is frozen, or a ref names no frozen version.
        ManifestTamperedError: a manifest or fingerprint file fails its check.
    """
    wanted: list[tuple[str, str]] = []
    for ref in refs or frozen_suites(layout):
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
    sets: list[FingerprintSet] = []
    for suite, version in dict.fromkeys(wanted):
        primary = read_fingerprints(layout, suite, version)
        sets.append(primary)
        derived = read_derived(layout, load_manifest(layout, suite, version), primary)
        if derived is not None:
            sets.append(derived)
    return build_index(sets)
