"""Entry point (``[project.entry-points.inspect_ai]``): the `evalsuite` model provider.

Use ``--model evalsuite/baseline``, ``evalsuite/improved`` or ``evalsuite/hacker``.
"""

from __future__ import annotations

from inspect_ai.model import ModelAPI, modelapi


@modelapi(name="evalsuite")
def evalsuite() -> type[ModelAPI]:
    """The reference agents' ModelAPI class (imported lazily)."""
    from evalsuite.agents._provider import ReferenceAgents

    return ReferenceAgents
