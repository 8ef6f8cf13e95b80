"""Semantic versions of frozen suites."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from evalsuite.errors import VersionError

__all__ = ["Bump", "SemVer"]

Bump = Literal["major", "minor", "patch"]
_PATTERN = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")
_RANK: dict[str, int] = {"patch": 0, "minor": 1, "major": 2}


@dataclass(frozen=True, order=True, slots=True)
class SemVer:
    """A MAJOR.MINOR.PATCH version.

    Examples:
        >>> SemVer.parse("1.2.3") < SemVer.parse("1.10.0")
        True
    """

    major: int
    minor: int
    patch: int

    @classmethod
    def parse(cls, text: str) -> SemVer:
        """Parse ``X.Y.Z``; raise `VersionError` with the expected form otherwise."""
        match = _PATTERN.match(text.strip())
        if match is None:
            raise VersionError(
                f"version must look like MAJOR.MINOR.PATCH, e.g. 1.0.0 (got {text!r})"
            )
        return cls(int(match[1]), int(match[2]), int(match[3]))

    def bump_kind(self, new: SemVer) -> Bump | None:
        """Return which component `new` bumps relative to self, or None if not greater."""
        if new <= self:
            return None
        if new.major != self.major:
            return "major"
        if new.minor != self.minor:
            return "minor"
        return "patch"

    def bumped(self, kind: Bump) -> SemVer:
        """Return the smallest version that bumps `kind`."""
        if kind == "major":
            return SemVer(self.major + 1, 0, 0)
        if kind == "minor":
            return SemVer(self.major, self.minor + 1, 0)
        return SemVer(self.major, self.minor, self.patch + 1)

    @staticmethod
    def at_least(kind: Bump | None, required: Bump) -> bool:
        """True when bump `kind` is at least as large as `required`."""
        return kind is not None and _RANK[kind] >= _RANK[required]

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"
