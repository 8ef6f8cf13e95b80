"""Derived fingerprints: a frozen version's items fingerprinted again in the current format.

A frozen version never changes, so a version frozen with an older fingerprint format (its
text spec missed copies with their punctuation stripped, for example) gets a second file
beside its manifest, outside the manifest hash: ``<version>.fingerprints.v3.jsonl``. Writing
it needs the vault key (it is made from every item, dev and holdout); the items are checked
against the manifest first, so the file is a function of the frozen content alone, and the
header ties it to the version (``docs/design/guard-normalisation.md``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from evalsuite._core.atomic import atomic_write_text
from evalsuite._core.hashing import sha256_bytes
from evalsuite._core.layout import Layout
from evalsuite.errors import ManifestTamperedError, NotFoundError, UsageError
from evalsuite.guard._index import derived_binding, derived_path, read_fingerprints
from evalsuite.manifest import (
    FINGERPRINT_FORMAT,
    Item,
    KeySpec,
    Manifest,
    describe_difference,
    fingerprint_item,
    item_hash,
    load_holdout_items,
    load_manifest,
    load_suite,
    load_suite_items,
    render_fingerprints,
    resolve_key,
)

__all__ = ["BeforeDecrypt", "DerivedResult", "derive_fingerprints", "derived_text"]


@dataclass(frozen=True, slots=True)
class DerivedResult:
    """What `derive_fingerprints` did for one version."""

    ref: str
    path: Path
    status: Literal["written", "unchanged", "current", "checked"]
    """``written``: new or rewritten; ``unchanged``: already identical; ``current``: the
    version's own fingerprints are in the current format (nothing to derive); ``checked``:
    ``--check`` found the file identical to a fresh derivation."""
    sha256: str | None


BeforeDecrypt = Callable[[Manifest], None]
"""Called with the version just before its vault is decrypted (the CLI records a ``decrypt``
entry in the suite's access ledger there: docs/design/holdout-governance.md, section 2)."""


def _frozen_items(
    layout: Layout, manifest: Manifest, keys: KeySpec, before_decrypt: BeforeDecrypt | None
) -> dict[str, Item]:
    """Every item of the version, each checked against the hash the manifest records.

    Dev items come from `tasks/`, holdout items from the vault (`before_decrypt` is called
    first, after the key was found).

    Raises:
        ManifestTamperedError: an item is missing or differs from the frozen one.
    """
    families = {f.name: f.version for f in manifest.families}
    frozen = {i.id: i for i in manifest.items}
    found: dict[str, Item] = {}
    key = resolve_key(manifest.suite, manifest.key, manifest.canary, keys, create=False)
    if before_decrypt is not None:
        before_decrypt(manifest)
    held = [(family, item, "holdout") for family, item in load_holdout_items(layout, manifest, key)]
    dev = [
        (e.family, e.item, "dev")
        for e in load_suite_items(layout, load_suite(layout, manifest.suite))
    ]
    for family, item, split in held + dev:
        entry = frozen.get(item.id)
        if entry is None or entry.split != split or entry.family != family:
            continue
        if item_hash(item, family, families.get(family, 0)) == entry.hash:
            found[item.id] = item
    missing = sorted(set(frozen) - set(found))
    if missing:
        raise ManifestTamperedError(
            f"{manifest.ref}: {len(missing)} item(s) are missing from tasks/ or the vault, or "
            f"differ from the frozen ones ({missing[:5]}): the fingerprints of a version are "
            "made from its frozen items only. `evalsuite verify` names what drifted; restore "
            "the items from version control."
        )
    return found


def derived_text(
    layout: Layout,
    manifest: Manifest,
    keys: KeySpec,
    *,
    before_decrypt: BeforeDecrypt | None = None,
) -> str:
    """The derived fingerprint file of `manifest` in the current format (deterministic).

    `before_decrypt` is called just before the vault is decrypted.
    """
    items = _frozen_items(layout, manifest, keys, before_decrypt)
    records = (
        fingerprint_item(items[i.id], split=i.split, stratum=i.stratum) for i in manifest.items
    )
    return render_fingerprints(
        records,
        suite=manifest.suite,
        version=manifest.version,
        canary=manifest.canary,
        format=FINGERPRINT_FORMAT,
        extra=derived_binding(manifest),
    )


def derive_fingerprints(
    layout: Layout,
    suite: str,
    version: str,
    *,
    keys: KeySpec,
    check: bool = False,
    before_decrypt: BeforeDecrypt | None = None,
) -> DerivedResult:
    """Write (or with `check`, verify) the derived fingerprint file of ``suite@version``.

    Raises:
        NotFoundError: the version is not frozen, the key is missing, or (`check`) the
            derived file does not exist.
        ManifestTamperedError: the manifest or an item fails its check, or (`check`) the
            derived file differs from a fresh derivation.
    """
    manifest = load_manifest(layout, suite, version)
    primary = read_fingerprints(layout, suite, manifest.version)
    path = derived_path(layout, manifest)
    if primary.format == FINGERPRINT_FORMAT:
        if check and path.exists():
            raise UsageError(
                f"{manifest.ref} is frozen with the current fingerprint format; {path} is "
                "not used and can be deleted"
            )
        return DerivedResult(manifest.ref, path, "current", manifest.fingerprints.sha256)
    text = derived_text(layout, manifest, keys, before_decrypt=before_decrypt)
    sha = sha256_bytes(text.encode("utf-8"))
    old = path.read_text(encoding="utf-8") if path.is_file() else None
    if check:
        if old is None:
            raise NotFoundError(
                f"{manifest.ref}: no derived fingerprint file {path}; write it with "
                f"`evalsuite fingerprints {manifest.ref}`"
            )
        if old != text:
            raise ManifestTamperedError(
                f"{path} differs from the fingerprints of {manifest.ref}'s frozen items "
                f"({describe_difference(old, text)}): it was edited or made by another "
                f"version of evalsuite. Write it again with `evalsuite fingerprints "
                f"{manifest.ref}`."
            )
        return DerivedResult(manifest.ref, path, "checked", sha)
    if old == text:
        return DerivedResult(manifest.ref, path, "unchanged", sha)
    atomic_write_text(path, text)
    return DerivedResult(manifest.ref, path, "written", sha)
