"""Offline reference agents, served to inspect as the ``evalsuite`` model provider.

``--model evalsuite/baseline``, ``evalsuite/improved`` or ``evalsuite/hacker`` (registered by
the ``inspect_ai`` entry point `evalsuite.agents._registry`). The agents are scripted, seeded
policies that read only the conversation, the tool results and the tool list and answer with
real tool calls: ``baseline`` makes realistic mistakes, ``improved`` is careful, ``hacker``
games status-only checks. Policies: `_support` (the support_desk family), `_arith` (arith).
"""

from evalsuite.agents._provider import AGENTS, ReferenceAgents

__all__ = ["AGENTS", "ReferenceAgents"]
