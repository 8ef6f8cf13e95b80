"""What changed between two frozen versions of a suite (`evalsuite diff SUITE@A SUITE@B`).

Reads the two manifests only (ids, content hashes, strata, splits, weights, family versions,
audit stamps): never an item's text, so a diff of holdout items shows nothing of them but
their ids. Design: docs/design/triage-and-diff.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from evalsuite._core.layout import Layout
from evalsuite.errors import UsageError
from evalsuite.manifest._audit_record import audit_status
from evalsuite.manifest._catalog import load_manifest, parse_ref
from evalsuite.manifest._schema import Manifest

__all__ = ["VersionDiff", "common_items", "diff_versions", "version_diff"]


@dataclass(slots=True)
class VersionDiff:
    """The difference from version `a` to version `b` of one suite."""

    suite: str
    a: str
    b: str
    manifest_hashes: dict[str, str]
    added: list[dict[str, str]] = field(default_factory=list)
    retired: list[dict[str, str]] = field(default_factory=list)
    changed: list[dict[str, str]] = field(default_factory=list)
    """Items in both whose content hash differs (their scores are not comparable), each with
    its ``cause``: ``family_version`` when its family's version differs between the two (the
    version is part of every item's content hash, so the hash changes whether or not the item
    itself did; the manifests cannot tell which), else ``content`` (the item itself changed)."""
    moved: list[dict[str, str]] = field(default_factory=list)
    """Items in both whose stratum differs."""
    split_changed: list[dict[str, str]] = field(default_factory=list)
    weights: dict[str, dict[str, float | None]] = field(default_factory=dict)
    """Stratum -> {"a", "b"} for every stratum whose deployment weight differs (None: absent)."""
    families: dict[str, dict[str, int | None]] = field(default_factory=dict)
    """Family -> {"a", "b"} versions, for every family whose version differs (None: absent)."""
    audit: dict[str, dict[str, Any]] = field(default_factory=dict)
    """{"a": status, "b": status, "changed": bool}."""
    notes: dict[str, str | None] = field(default_factory=dict)
    """Each version's freeze note (why it exists; retirement reasons)."""
    n_items: dict[str, int] = field(default_factory=dict)
    n_common: int = 0
    """Items in both with the same content hash (the items a cross-version comparison uses)."""

    @property
    def identical(self) -> bool:
        """True when the two versions hold the same items, strata, weights and families."""
        return not (
            self.added
            or self.retired
            or self.changed
            or self.moved
            or self.split_changed
            or self.weights
            or self.families
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (`diff --json`)."""
        return {
            "suite": self.suite,
            "a": self.a,
            "b": self.b,
            "manifest_hashes": dict(self.manifest_hashes),
            "identical": self.identical,
            "n_items": dict(self.n_items),
            "n_common": self.n_common,
            "added": list(self.added),
            "retired": list(self.retired),
            "changed": list(self.changed),
            "moved": list(self.moved),
            "split_changed": list(self.split_changed),
            "weights": {k: dict(v) for k, v in self.weights.items()},
            "families": {k: dict(v) for k, v in self.families.items()},
            "audit": dict(self.audit),
            "notes": dict(self.notes),
        }


def common_items(a: Manifest, b: Manifest, split: str | None = None) -> dict[str, str]:
    """Item id -> content hash of the items both versions hold with identical content.

    `split`: only items on that side in both versions (None: every item).
    """
    old = {i.id: i for i in a.items if split is None or i.split == split}
    return {
        i.id: i.hash
        for i in b.items
        if (split is None or i.split == split) and i.id in old and old[i.id].hash == i.hash
    }


def _entry(item: Any) -> dict[str, str]:
    return {"item_id": item.id, "stratum": item.stratum, "split": item.split}


def _weight(weights: dict[str, float], stratum: str) -> float | None:
    return weights.get(stratum)


def version_diff(layout: Layout, a: Manifest, b: Manifest) -> VersionDiff:
    """The difference from manifest `a` to manifest `b` (two versions of one suite)."""
    if a.suite != b.suite:
        raise UsageError(
            f"diff compares two versions of one suite (got {a.suite}@{a.version} and "
            f"{b.suite}@{b.version}); give SUITE@A SUITE@B with the same SUITE"
        )
    old = {i.id: i for i in a.items}
    new = {i.id: i for i in b.items}
    out = VersionDiff(
        suite=a.suite,
        a=a.version,
        b=b.version,
        manifest_hashes={"a": a.manifest_hash, "b": b.manifest_hash},
        n_items={"a": len(old), "b": len(new)},
    )
    out.added = [_entry(new[i]) for i in sorted(new.keys() - old.keys())]
    out.retired = [_entry(old[i]) for i in sorted(old.keys() - new.keys())]
    fa = {f.name: f.version for f in a.families}
    fb = {f.name: f.version for f in b.families}
    for item_id in sorted(old.keys() & new.keys()):
        before, after = old[item_id], new[item_id]
        if before.hash != after.hash:
            rescored = before.family != after.family or fa.get(before.family) != fb.get(
                after.family
            )
            out.changed.append(
                _entry(after)
                | {
                    "hash_a": before.hash,
                    "hash_b": after.hash,
                    "cause": "family_version" if rescored else "content",
                }
            )
        else:
            out.n_common += 1
        if before.stratum != after.stratum:
            out.moved.append({"item_id": item_id, "from": before.stratum, "to": after.stratum})
        if before.split != after.split:
            out.split_changed.append({"item_id": item_id, "from": before.split, "to": after.split})
    for stratum in sorted(set(a.weights) | set(b.weights)):
        wa, wb = _weight(a.weights, stratum), _weight(b.weights, stratum)
        if wa is None or wb is None or not math.isclose(wa, wb, rel_tol=0.0, abs_tol=1e-12):
            out.weights[stratum] = {"a": wa, "b": wb}
    for name in sorted(set(fa) | set(fb)):
        if fa.get(name) != fb.get(name):
            out.families[name] = {"a": fa.get(name), "b": fb.get(name)}
    sa, sb = audit_status(layout, a).to_dict(), audit_status(layout, b).to_dict()
    out.audit = {"a": sa, "b": sb, "changed": sa["status"] != sb["status"]}
    out.notes = {"a": a.note, "b": b.note}
    return out


def diff_versions(layout: Layout, ref_a: str, ref_b: str) -> VersionDiff:
    """`version_diff` of two refs ``SUITE@A`` and ``SUITE@B`` (B may be ``SUITE``: the latest).

    Raises:
        UsageError: a ref without a version where one is needed, or two suites.
        NotFoundError: a version that is not frozen (exit 2).
        ManifestTamperedError: a manifest fails its hash check (exit 3).
    """
    suite_a, version_a = parse_ref(ref_a)
    suite_b, version_b = parse_ref(ref_b)
    if version_a is None:
        raise UsageError(f"give the first version explicitly: SUITE@X.Y.Z (got {ref_a!r})")
    if suite_a != suite_b:
        raise UsageError(
            f"diff compares two versions of one suite (got {suite_a!r} and {suite_b!r}); "
            f"give {suite_a}@A {suite_a}@B"
        )
    a = load_manifest(layout, suite_a, version_a)
    b = load_manifest(layout, suite_b, version_b)
    return version_diff(layout, a, b)
