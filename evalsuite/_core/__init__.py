"""Shared primitives every stage uses: canonical hashing, atomic files, text shingles, seeds.

Nothing here imports another evalsuite stage or `inspect_ai`.
"""

from evalsuite._core.atomic import append_line_locked, atomic_write_bytes, atomic_write_text
from evalsuite._core.hashing import canonical_json, content_hash, sha256_bytes, sha256_file
from evalsuite._core.layout import Layout
from evalsuite._core.seeds import derive_seed
from evalsuite._core.semver import SemVer

__all__ = [
    "Layout",
    "SemVer",
    "append_line_locked",
    "atomic_write_bytes",
    "atomic_write_text",
    "canonical_json",
    "content_hash",
    "derive_seed",
    "sha256_bytes",
    "sha256_file",
]
