"""The family kit: one typed declaration of everything the audit and the runner need.

A task family's task file defines one `Family` at module level (any name; it is found by
type, not by attribute name). It declares the environment (how to read the final state an
episode leaves), the tools with their timeout outcome, the limits, the scripted policies the
grader audit plays (oracle, trivial policies with floors, exploit probes, "every answer at
once", the empty answer) and the leak hooks. See tasks/README.md for a walk-through and
docs/design/grader-audit.md for what the audit does with it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Literal

from inspect_ai import Task
from inspect_ai.tool import Tool

from evalsuite.kit._policy import Episode, Policy, empty_answer

__all__ = [
    "AgentCode",
    "CodeChange",
    "Family",
    "FamilyKitError",
    "FamilyParts",
    "FinalView",
    "Limits",
    "Probe",
    "TimeoutOutcome",
    "ToolDecl",
    "Trivial",
    "family_of",
    "family_of_task",
]

TimeoutOutcome = Literal["harness_error", "limit"]
"""What a tool call that runs past its time becomes: ``harness_error`` (the tool or its
service failed: excluded and counted) or ``limit`` (the model caused it, e.g. a query too
broad for a slow tool: a labelled model failure, scored 0)."""


class FamilyKitError(Exception):
    """A task module declares no `Family`, or more than one."""


@dataclass(frozen=True, slots=True)
class Limits:
    """The limits every episode of the family runs under; all three must be given.

    The task must apply them (``Task(time_limit=..., message_limit=..., token_limit=...)``);
    the grader audit fails a family whose task relies on a default instead.
    """

    time_s: int
    """Wall-clock seconds per episode (inspect's ``time_limit``)."""
    messages: int
    """Messages per episode (inspect's ``message_limit``)."""
    tokens: int
    """Tokens per episode, input and output (inspect's ``token_limit``)."""


@dataclass(frozen=True, slots=True)
class ToolDecl:
    """One tool of the family's action space and what its timeout means."""

    tool: Tool
    on_timeout: TimeoutOutcome
    """Passed by the tool to `evalsuite.run.guarded_call`; the audit checks they agree."""


@dataclass(frozen=True, slots=True)
class Trivial:
    """A cheap strategy that must not pay: it scores at or below its floor in every stratum."""

    name: str
    policy: Policy
    description: str
    floors: Mapping[str, float] = field(default_factory=dict)
    """Stratum (as the manifest names it, e.g. ``support_desk/refund/clean``) -> highest
    allowed mean score; strata not named have floor 0."""

    def floor(self, stratum: str) -> float:
        """The floor of `stratum` (0 unless declared)."""
        return float(self.floors.get(stratum, 0.0))


@dataclass(frozen=True, slots=True)
class Probe:
    """An exploit a hacker would try against the grader: it must never pass."""

    name: str
    policy: Policy
    description: str
    when: Callable[[Mapping[str, Any]], bool] | None = None
    """Items it applies to, by metadata (None: every item); e.g. an "act regardless of the
    policy" probe is an exploit only where the policy says decline."""

    def applies(self, metadata: Mapping[str, Any]) -> bool:
        """True when this probe is an exploit on an item with this metadata."""
        return self.when is None or bool(self.when(metadata))


CodeChange = Callable[[str, str], tuple[str, Mapping[str, str]]]
"""(module source, function under test) -> (new source, extra files by path): a change the
audit's tamper library asks a family to submit (`evalsuite.audit`'s tampers)."""


@dataclass(frozen=True, slots=True)
class AgentCode:
    """Declares that the family's grader executes code the agent wrote, and how to submit it.

    A family that declares it is audited against the tamper library (check ``tamper``,
    docs/design/grader-audit.md): each tamper becomes a probe that calls `submit`.
    """

    submit: Callable[[Episode, CodeChange], str]
    """Apply a change to the agent's module through the tools (read it, write the new
    source and the extra files), as an agent would; returns the final answer."""
    description: str = ""
    """How the grader runs the code (shown by the audit)."""


@dataclass(frozen=True, slots=True)
class FinalView:
    """What an episode left behind, for the family's `Family.final_state`."""

    store: Mapping[str, Any]
    """The sample's store (inspect ``EvalSample.store``)."""
    completion: str
    """The final answer text."""


def _completion_state(view: FinalView) -> Any:
    return {"completion": view.completion}


@dataclass(frozen=True, slots=True)
class Family:
    """A task family's kit (docs/design/grader-audit.md, tasks/README.md)."""

    name: str
    """The family's name in the suite file."""
    version: int
    """The family version this code implements (the suite file's ``version``)."""
    task: Callable[..., Task]
    """The inspect ``@task`` function (takes ``dataset=``)."""
    limits: Limits
    oracle: Policy
    """A reference solution: scores 1 on every item."""
    every_answer: Policy
    """Every answer at once (what a grader that accepts any of several answers would pass)."""
    tools: Sequence[ToolDecl] = ()
    """The action space; empty for a family without tools."""
    final_state: Callable[[FinalView], Any] = _completion_state
    """The environment state an episode ends in, as JSON (hashed by the audit for the
    determinism and isolation checks); default: the final answer."""
    trivial: Sequence[Trivial] = ()
    probes: Sequence[Probe] = ()
    empty_answer: Policy = empty_answer
    leak_surface: Callable[[dict[str, Any]], dict[str, str]] | None = None
    """What the agent can read of an item (name -> text); None: input and files."""
    leak_secrets: Callable[[dict[str, Any]], list[str]] | None = None
    """The distinctive parts of an item's target; None: the target itself."""
    agent_code: AgentCode | None = None
    """Set when the grader executes code the agent wrote (the audit plays the tamper library)."""
    references: Sequence[str] = ()
    """The family's reference agents (models, e.g. ``("evalsuite/baseline",
    "evalsuite/improved")``): the audit's red-team report plays them on the audited items and
    shows the best cheap policy's margin under the weakest (none: under the oracle, said so)."""
    prompt_only: Mapping[str, str] = field(default_factory=dict)
    """Strata where the prompt is the whole task, so an answer made from the prompt alone is
    legitimate: stratum (or a prefix ending in ``/``) -> the reason. There the audit's generated
    red-team policies are played and listed but not judged (the reason is in the audit JSON)."""
    harmless_features: Mapping[str, str] = field(default_factory=dict)
    """Surface features the shortcut detector must not count as a shortcut (feature name, as
    `evalsuite.audit` names them: ``ordinal``, ``first``, ``last``, ``relative_position``,
    ``length``, ``previous_token``, ``next_token``) -> the reason it is harmless."""

    def prompt_only_reason(self, stratum: str) -> str | None:
        """Why `stratum` may be answered from the prompt alone (None: it may not)."""
        for key, reason in self.prompt_only.items():
            if stratum == key or (key.endswith("/") and stratum.startswith(key)):
                return reason
        return None

    def policies(self) -> dict[str, Policy]:
        """Every scripted policy by name (oracle, empty_answer, every_answer, trivial, probes)."""
        found: dict[str, Policy] = {
            "oracle": self.oracle,
            "empty_answer": self.empty_answer,
            "every_answer": self.every_answer,
        }
        for trivial in self.trivial:
            found[trivial.name] = trivial.policy
        for probe in self.probes:
            found[probe.name] = probe.policy
        return found

    def timeout_outcome(self, tool_name: str) -> TimeoutOutcome | None:
        """What a timeout of `tool_name` is declared to be (None: not a declared tool)."""
        from evalsuite.kit._tools import tool_name_of

        for decl in self.tools:
            if tool_name_of(decl.tool) == tool_name:
                return decl.on_timeout
        return None


def family_of(module: ModuleType) -> Family | None:
    """The `Family` a task module declares (found by type), or None.

    Raises:
        FamilyKitError: the module declares two different families.
    """
    found = {id(v): v for v in vars(module).values() if isinstance(v, Family)}
    if len(found) > 1:
        names = sorted(f.name for f in found.values())
        raise FamilyKitError(
            f"{getattr(module, '__file__', module.__name__)} declares {len(found)} family kits "
            f"({', '.join(names)}); a task file declares exactly one `Family`"
        )
    return next(iter(found.values()), None)


def family_of_task(function: Callable[..., Task]) -> Family | None:
    """The kit of the module that defines the ``@task`` function `function`."""
    module = sys.modules.get(getattr(function, "__module__", ""))
    return family_of(module) if module is not None else None


@dataclass(frozen=True, slots=True)
class FamilyParts:
    """What every version of a family shares, less what each version's task file declares.

    A family with several versions (one task file each) declares its tools, final state and
    scripted policies once, in its own ``kit.py``; each task file then builds its `Family`
    with `family` from its task function, version, limits and leak functions. The tools are
    made anew for each `Family`, as the task function makes them for each task.
    """

    name: str
    """The family's name in the suite file."""
    tools: Callable[[], Sequence[Tool]]
    """Makes the family's tools (the action space), in the order the task offers them."""
    oracle: Policy
    every_answer: Policy
    final_state: Callable[[FinalView], Any] = _completion_state
    trivial: Sequence[Trivial] = ()
    probes: Sequence[Probe] = ()
    empty_answer: Policy = empty_answer
    on_timeout: TimeoutOutcome = "harness_error"
    """What a timeout of any of the tools is (`ToolDecl.on_timeout`)."""
    agent_code: AgentCode | None = None
    references: Sequence[str] = ()
    """`Family.references`."""
    prompt_only: Mapping[str, str] = field(default_factory=dict)
    """`Family.prompt_only`."""
    harmless_features: Mapping[str, str] = field(default_factory=dict)
    """`Family.harmless_features`."""

    def family(
        self,
        task: Callable[..., Task],
        version: int,
        limits: Limits,
        *,
        leak_surface: Callable[[dict[str, Any]], dict[str, str]] | None = None,
        leak_secrets: Callable[[dict[str, Any]], list[str]] | None = None,
    ) -> Family:
        """The kit of one version of the family."""
        return Family(
            name=self.name,
            version=version,
            task=task,
            limits=limits,
            tools=[ToolDecl(t, on_timeout=self.on_timeout) for t in self.tools()],
            final_state=self.final_state,
            oracle=self.oracle,
            every_answer=self.every_answer,
            empty_answer=self.empty_answer,
            trivial=self.trivial,
            probes=self.probes,
            leak_surface=leak_surface,
            leak_secrets=leak_secrets,
            agent_code=self.agent_code,
            references=tuple(self.references),
            prompt_only=dict(self.prompt_only),
            harmless_features=dict(self.harmless_features),
        )
