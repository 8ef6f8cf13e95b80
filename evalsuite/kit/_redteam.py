"""A team's own red-team policies: cheap strategies the grader audit plays on a family.

A Python file given to ``evalsuite audit SUITE@X.Y.Z --graders --policies FILE`` declares
`RedTeam` objects at module level (any names, or lists/tuples of them). Each is played like
the audit's generated red-team policies: through the real runner, on the audited items of the
families it names (every family when None), seeing only the prompt, the tools and the tool
results (`evalsuite.kit.redacted`: no target, no metadata), judged at floor 0 in every stratum.
See docs/design/grader-audit.md ("Team policies").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from evalsuite.kit._policy import Policy

__all__ = ["RedTeam", "RedTeamError"]

_NAME = re.compile(r"^[a-z][a-z0-9_]{0,47}$")


class RedTeamError(ValueError):
    """A red-team declaration that cannot be played (bad name, policy or family list)."""


@dataclass(frozen=True, slots=True)
class RedTeam:
    """One team red-team policy: a cheap strategy that must score 0 in every stratum."""

    name: str
    """Lower-case letters, digits and ``_`` (the audit lists it as ``team_<name>``)."""
    policy: Policy
    """Plays an episode (``episode.call(tool, **args)``, returns the final answer); it is
    given a redacted episode: prompt, tools and tool results only."""
    description: str
    """What it tries, in a few words (shown by the audit)."""
    families: Sequence[str] | None = None
    """The families it is meant for (their suite-file names); None: every family."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise RedTeamError(
                f"red-team name {self.name!r}: use lower-case letters, digits and '_' "
                "(at most 48, starting with a letter)"
            )
        if not callable(self.policy):
            raise RedTeamError(f"red-team {self.name!r}: policy must be a function (episode)")
        if not isinstance(self.description, str) or not self.description.strip():
            raise RedTeamError(f"red-team {self.name!r}: give a description")
        if self.families is not None and (
            isinstance(self.families, str) or not all(isinstance(f, str) for f in self.families)
        ):
            raise RedTeamError(
                f"red-team {self.name!r}: families must be a list of family names or None"
            )

    def applies_to(self, family: str) -> bool:
        """True when the policy is meant for `family`."""
        return self.families is None or family in self.families
