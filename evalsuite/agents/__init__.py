"""Offline reference agents, served to inspect as the ``evalsuite`` model provider.

``--model evalsuite/baseline``, ``evalsuite/improved`` or ``evalsuite/hacker`` (registered by
the ``inspect_ai`` entry point `evalsuite.agents._registry`). The agents are scripted, seeded
policies that read only the conversation, the tool results and the tool list and answer with
real tool calls: ``baseline`` makes realistic mistakes, ``improved`` is careful, ``hacker``
games status-only checks. Policies: `_support` (the support_desk family), `_arith` (arith).
Asked to run a suite with any other family, they refuse before the run starts
(`ReferenceAgents.refuse_suite`): a scripted agent's 0.000 on a task it cannot read is not a
score.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalsuite.agents._provider import AGENTS, KNOWN_FAMILIES, ReferenceAgents
else:
    # lazily: inspect imports this package for the entry point (`_registry`) in every process
    # that asks for a model, and the policies are needed only when an agent is (docs/design/
    # run-speed.md, "Cold first run")
    from evalsuite._core.lazy import lazy_exports

    __getattr__, __dir__ = lazy_exports(
        __name__, {"._provider": ("AGENTS", "KNOWN_FAMILIES", "ReferenceAgents")}
    )

__all__ = ["AGENTS", "KNOWN_FAMILIES", "ReferenceAgents"]
