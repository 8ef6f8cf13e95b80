"""The grader audit's runs: scripted policies through `run_suite`, one record per episode.

Every policy is played by the ``evalsuite/audit`` model in a real run (same task, tools,
limits, grader, outcome classification and store as any run); epoch k of a sweep plays the
k-th policy of the schedule. A sample sink collects, beside what the runner stores, what only
the finished sample shows: the final environment state (hashed), the grader's raw value, the
tools the episode offered, and which tool calls ran under `guarded_call`. Holdout samples are
reduced to hashes and numbers in memory: no text is kept.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from inspect_ai.log import EvalSample
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser

from evalsuite._core.hashing import content_hash
from evalsuite._core.layout import Layout
from evalsuite.errors import EvalsuiteError
from evalsuite.kit import (
    APPLIES_KEY,
    POLICY_KEY,
    TOOLS_KEY,
    Family,
    FinalView,
    ToolResult,
    policy_plan,
)
from evalsuite.manifest import KeySpec, Manifest
from evalsuite.run import (
    GUARDED_KEY,
    RunSpec,
    ScoreRule,
    active_sink,
    pick_scores,
    run_suite,
)
from evalsuite.store import Store

__all__ = [
    "AUDIT_MODEL",
    "AUDIT_MODEL_FAMILY",
    "Episode",
    "Sweep",
    "SweepSpec",
    "Trace",
    "run_sweep",
]

AUDIT_MODEL = "evalsuite/audit"
AUDIT_MODEL_FAMILY = "evalsuite-audit"
"""The holdout budget the audit's looks count against (never a real model's)."""


@dataclass(frozen=True, slots=True)
class Trace:
    """What a dev episode did, kept in memory only (the red-team templates read the oracle's)."""

    prompt: str
    calls: tuple[ToolResult, ...]
    """Tool calls in order, with their results."""
    answer: str
    target: str = ""
    """The item's target as text (the shortcut detector reads it; dev only, in memory)."""


@dataclass(slots=True)
class Episode:
    """One audited episode: what the runner stored and what the sample showed."""

    item_id: str
    epoch: int
    policy: str
    stratum: str
    outcome: str = "harness_error"
    score: float = math.nan
    reason: str | None = None
    limit_type: str | None = None
    raw: float | str | None = None
    """The grader's value as it gave it (before any mapping to [0, 1])."""
    state_hash: str | None = None
    state_error: str | None = None
    tools: dict[str, str] = field(default_factory=dict)
    """Tool name -> schema hash of every tool the episode offered."""
    unguarded: list[str] = field(default_factory=list)
    """Tools called that did not run under `guarded_call` (no time bound)."""
    timeouts: dict[str, str] = field(default_factory=dict)
    """Tool name -> the timeout outcome `guarded_call` applied to it."""
    seen: bool = False
    """True when the sample itself reached the audit (not only the stored attempt)."""
    applies: bool = True
    """For an exploit probe: whether it is an exploit on this item (`Probe.when`)."""
    trace: Trace | None = field(default=None, repr=False)
    """The episode's prompt, calls and answer (dev episodes of `SweepSpec.traces` policies
    only; in memory, never stored or hashed)."""

    @property
    def passed(self) -> bool:
        """True when the episode earned any score."""
        return self.outcome != "harness_error" and self.score > 0


@dataclass(frozen=True, slots=True)
class SweepSpec:
    """One audit run: which split and items, which policies, which seed."""

    schedule: tuple[str, ...]
    split: Literal["dev", "holdout"] = "dev"
    items: tuple[str, ...] | None = None
    seed: int = 0
    purpose: str | None = None
    traces: frozenset[str] = frozenset()
    """Policies whose episodes' traces are kept in memory (dev only; never for the holdout)."""
    model: str | None = None
    """A real model (a family's reference agent) instead of the audit's scripted policies:
    one epoch, its episodes named ``schedule[0]``; None: the audit model plays the schedule."""


@dataclass(slots=True)
class Sweep:
    """The episodes of one audit run, by (item, epoch)."""

    run_id: str
    episodes: dict[tuple[str, int], Episode]

    def of(self, policy: str, items: Sequence[str] | None = None) -> list[Episode]:
        """The episodes a policy played (on `items` when given), by item id."""
        wanted = set(items) if items is not None else None
        return sorted(
            (
                e
                for e in self.episodes.values()
                if e.policy == policy and (wanted is None or e.item_id in wanted)
            ),
            key=lambda e: (e.item_id, e.epoch),
        )


def _raw_value(sample: EvalSample, rule: ScoreRule) -> float | str | None:
    picked = pick_scores(sample.scores or {}, rule)
    if isinstance(picked, str):
        return None
    value = picked.primary.value
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    return str(value)[:20] if isinstance(value, str) else None


def _unguarded(sample: EvalSample, guarded: Sequence[str]) -> list[str]:
    made = Counter(
        m.function
        for m in sample.messages
        if isinstance(m, ChatMessageTool) and m.function and m.error is None
    )
    ran = Counter(entry.rpartition(":")[0] for entry in guarded)
    return sorted(name for name, count in made.items() if count > ran.get(name, 0))


def _trace(sample: EvalSample) -> Trace:
    """The sample's prompt, tool calls with their results, and final answer."""
    users = [m for m in sample.messages if isinstance(m, ChatMessageUser)]
    answers = {m.tool_call_id: m for m in sample.messages if isinstance(m, ChatMessageTool)}
    calls: list[ToolResult] = []
    for message in sample.messages:
        if not isinstance(message, ChatMessageAssistant):
            continue
        for call in message.tool_calls or []:
            answer = answers.get(call.id)
            if answer is None:
                continue
            error = answer.error.message if answer.error is not None else None
            calls.append(ToolResult(call.function, dict(call.arguments), answer.text, error))
    prompt = users[0].text if users else ""
    target = sample.target if isinstance(sample.target, str) else "\n".join(sample.target)
    completion = sample.output.completion or ""
    return Trace(prompt=prompt, calls=tuple(calls), answer=completion, target=target)


class _Collector:
    """Reduces every finished sample of an audit run to hashes and numbers."""

    def __init__(
        self,
        families: Mapping[str, Family],
        rules: Mapping[str, ScoreRule],
        traces: frozenset[str] = frozenset(),
    ) -> None:
        self.families = families
        self.rules = rules
        self.traces = traces
        self.found: dict[tuple[str, int], dict[str, Any]] = {}

    def accept(self, sample: EvalSample) -> None:
        item_id, _, epoch = str(sample.id).rpartition("::")
        family = self.families.get(item_id)
        if family is None or not epoch.isdigit():
            return
        store: dict[str, Any] = dict(sample.store or {})
        guarded = [str(g) for g in store.get(GUARDED_KEY, [])]
        record: dict[str, Any] = {
            "raw": _raw_value(sample, self.rules.get(item_id, ScoreRule())),
            "tools": dict(store.get(TOOLS_KEY, {})),
            "unguarded": _unguarded(sample, guarded),
            "timeouts": {g.rpartition(":")[0]: g.rpartition(":")[2] for g in guarded},
            "policy": store.get(POLICY_KEY),
            "applies": bool(store.get(APPLIES_KEY, True)),
        }
        try:
            view = FinalView(store=store, completion=sample.output.completion or "")
            record["state_hash"] = content_hash(family.final_state(view))
        except Exception as exc:  # the family's own code: reported, never fatal
            record["state_error"] = f"{type(exc).__name__}"
        if record["policy"] in self.traces or "*" in self.traces:
            record["trace"] = _trace(sample)
        self.found[(item_id, int(epoch))] = record


def run_sweep(
    layout: Layout,
    manifest: Manifest,
    families: Mapping[str, Family],
    sweep: SweepSpec,
    *,
    keys: KeySpec,
    store: Store,
) -> Sweep:
    """Play `sweep.schedule` on the items of `sweep.split` through `run_suite`.

    Args:
        layout: The project (or a freeze's staging copy of it).
        manifest: The version audited.
        families: Item id -> its family's kit (every item of the run).
        sweep: Split, items, schedule, seed and (holdout) purpose.
        keys: Vault key locations (holdout).
        store: Where the run is stored.

    Raises:
        EvalsuiteError: the run was refused (verification, budget, model) or failed.
    """
    rules = {
        item.id: ScoreRule.of_family(family, manifest.suite)
        for family in manifest.families
        for item in manifest.items
        if item.family == family.name
    }
    traces = sweep.traces if sweep.split == "dev" else frozenset()
    collector = _Collector(families, rules, traces)
    with policy_plan(sweep.schedule, families) as token, active_sink(collector):
        spec = RunSpec(
            suite=manifest.suite,
            version=manifest.version,
            model=sweep.model or AUDIT_MODEL,
            model_args={} if sweep.model else {"plan": token},
            split=sweep.split,
            epochs=1 if sweep.model else len(sweep.schedule),
            seed=sweep.seed,
            max_retries=0,
            log_samples=False,
            items=list(sweep.items) if sweep.items is not None else None,
            model_family=None if sweep.model else AUDIT_MODEL_FAMILY,
            purpose=sweep.purpose,
        )
        result = run_suite(layout, spec, keys=keys, store=store, progress=False)
    frame = store.attempts(result.run.run_id)
    episodes: dict[tuple[str, int], Episode] = {}
    for row in frame.to_dict("records"):
        key = (str(row["item_id"]), int(row["epoch"]))
        episode = Episode(
            item_id=key[0],
            epoch=key[1],
            policy=sweep.schedule[key[1] - 1],
            stratum=str(row["stratum"]),
            outcome=str(row["outcome"]),
            score=float(row["score"]),
            reason=row["reason"] if isinstance(row["reason"], str) else None,
            limit_type=row["limit_type"] if isinstance(row["limit_type"], str) else None,
        )
        found = collector.found.get(key)
        if found is not None:
            episode.seen = True
            episode.raw = found["raw"]
            episode.state_hash = found.get("state_hash")
            episode.state_error = found.get("state_error")
            episode.tools = found["tools"]
            episode.unguarded = found["unguarded"]
            episode.timeouts = found["timeouts"]
            episode.applies = found["applies"]
            episode.trace = found.get("trace")
        episodes[key] = episode
    if not episodes:
        raise EvalsuiteError(f"the audit run {result.run.run_id} stored no attempt")
    return Sweep(run_id=result.run.run_id, episodes=episodes)
