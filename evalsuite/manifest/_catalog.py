"""Finding frozen manifests: versions of a suite, the latest one, ``suite@version`` refs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from evalsuite._core.layout import Layout
from evalsuite._core.semver import SemVer
from evalsuite.errors import NotFoundError, UsageError, VersionError

if TYPE_CHECKING:
    from evalsuite.manifest._schema import Manifest

__all__ = ["frozen_versions", "load_manifest", "manifest_path", "parse_ref"]


def parse_ref(ref: str) -> tuple[str, str | None]:
    """Split ``suite@1.2.3`` (or ``suite``) into name and optional version.

    Examples:
        >>> parse_ref("support@1.0.0")
        ('support', '1.0.0')
        >>> parse_ref("support")
        ('support', None)
    """
    name, sep, version = ref.partition("@")
    if not name or (sep and not version):
        raise UsageError(f"expected SUITE or SUITE@X.Y.Z (got {ref!r})")
    if version:
        SemVer.parse(version)
        return name, version
    return name, None


def frozen_versions(layout: Layout, suite: str) -> list[str]:
    """Frozen versions of `suite`, oldest first."""
    directory = layout.manifest_dir(suite)
    if not directory.is_dir():
        return []
    versions: list[SemVer] = []
    for path in directory.glob("*.json"):
        try:
            versions.append(SemVer.parse(path.stem))
        except VersionError:
            continue
    return [str(v) for v in sorted(versions)]


def manifest_path(layout: Layout, suite: str, version: str | None = None) -> Path:
    """The manifest file of ``suite@version`` (the latest frozen version when `version` is None).

    Raises:
        NotFoundError: the suite has no frozen version, or not this one (the message lists
            the versions that exist).
    """
    versions = frozen_versions(layout, suite)
    if not versions:
        raise NotFoundError(
            f"suite {suite!r} has no frozen version under {layout.manifest_dir(suite)}; "
            f"run `evalsuite freeze {suite} --version 1.0.0` first"
        )
    chosen = versions[-1] if version is None else version
    if chosen not in versions:
        raise NotFoundError(
            f"{suite}@{chosen} is not frozen (frozen versions: {', '.join(versions)})"
        )
    return layout.manifest_file(suite, chosen)


def load_manifest(
    layout: Layout, suite: str, version: str | None = None, *, check_hash: bool = True
) -> Manifest:
    """The manifest of ``suite@version`` (the latest frozen version when `version` is None).

    Raises:
        NotFoundError: the suite has no frozen version, or not this one (the message lists
            the versions that exist).
        ManifestTamperedError: the manifest fails its schema or hash check.
    """
    # the pydantic models only when a manifest is read in full (start-up, docs/scale.md)
    from evalsuite.manifest._schema import read_manifest

    return read_manifest(manifest_path(layout, suite, version), check_hash=check_hash)
