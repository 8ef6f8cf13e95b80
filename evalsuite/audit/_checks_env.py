"""The grader audit's checks of the environment: limits, action space, determinism, isolation.

See docs/design/grader-audit.md.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence

from inspect_ai import Task
from inspect_ai.dataset import Sample

from evalsuite.audit._report import Check
from evalsuite.audit._sweep import Episode, Sweep
from evalsuite.kit import Family, action_space, action_space_changes

__all__ = ["action_space_check", "determinism_check", "isolation_check", "limits_check"]


def _task_limits(function: Callable[..., Task]) -> tuple[Task | None, str | None]:
    try:
        return function(dataset=[Sample(id="evalsuite-audit-limits", input="")]), None
    except Exception as exc:  # the family's own code: reported as a failed check
        return None, f"{type(exc).__name__}: {str(exc)[:200]}"


def _declared_limits(family: Family, task: Task) -> list[str]:
    problems = []
    declared = {
        "time_limit": family.limits.time_s,
        "message_limit": family.limits.messages,
        "token_limit": family.limits.tokens,
    }
    for name, value in declared.items():
        if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
            problems.append(f"the kit declares no {name} (got {value!r}): it relies on a default")
            continue
        applied = getattr(task, name, None)
        if applied is None:
            problems.append(
                f"the task sets no {name} (the kit declares {value:g}): episodes run on "
                "inspect's default, i.e. unbounded"
            )
        elif applied != value:
            problems.append(f"the task's {name} is {applied:g}, the kit declares {value:g}")
    return problems


def limits_check(
    family: Family, function: Callable[..., Task], episodes: Sequence[Episode]
) -> Check:
    """Explicit limits applied by the task; every tool call bounded; timeouts as declared."""
    task, error = _task_limits(function)
    problems = [f"the task could not be built ({error})"] if task is None else []
    if task is not None:
        problems += _declared_limits(family, task)
    unbounded: dict[str, set[str]] = defaultdict(set)
    mismatched: dict[str, str] = {}
    for episode in episodes:
        for tool in episode.unguarded:
            unbounded[tool].add(episode.item_id)
        for tool, outcome in episode.timeouts.items():
            declared = family.timeout_outcome(tool)
            if declared != outcome:
                mismatched[tool] = (
                    f"tool {tool!r} times out as {outcome} in its code but the kit declares "
                    f"{declared or 'nothing for it'}"
                )
    for tool, items in sorted(unbounded.items()):
        problems.append(
            f"unbounded tool call: {tool!r} ran outside evalsuite.run.guarded_call in "
            f"{len(items)} item(s), so no timeout bounds it"
        )
    problems.extend(mismatched[t] for t in sorted(mismatched))
    limits = family.limits
    summary = "; ".join(problems) or (
        f"time {limits.time_s}s, {limits.messages} messages, {limits.tokens} tokens, applied "
        "by the task; every tool call ran under the tool timeout, as declared"
    )
    return Check(
        "limits",
        "failed" if problems else "passed",
        summary,
        counts={"unbounded_tools": len(unbounded), "timeout_mismatches": len(mismatched)},
        items=sorted({i for items in unbounded.values() for i in items}),
    )


def action_space_check(
    family: Family, frozen: Mapping[str, str] | None, episodes: Sequence[Episode]
) -> Check:
    """Every episode offered exactly declared tools, and they are the ones frozen."""
    try:
        declared = action_space([d.tool for d in family.tools])
    except Exception as exc:  # the family's own tool definitions
        why = f"its tools cannot be described to a model ({type(exc).__name__}: {exc})"
        return Check("action_space", "failed", why[:300])
    problems: list[str] = []
    strays: dict[str, set[str]] = defaultdict(set)
    for episode in episodes:
        for name, digest in episode.tools.items():
            if declared.get(name) != digest:
                strays[name].add(episode.item_id)
    for name, offered in sorted(strays.items()):
        what = "another schema than declared" if name in declared else "a tool the kit omits"
        problems.append(f"{len(offered)} item(s) offered {name!r} with {what}")
    counts: dict[str, int | float] = {"declared": len(declared), "undeclared_offers": len(strays)}
    items = sorted({i for found in strays.values() for i in found})
    if frozen is None:
        if problems:
            return Check("action_space", "failed", "; ".join(problems), counts=counts, items=items)
        return Check(
            "action_space",
            "not_recorded",
            f"this version was frozen before action spaces were recorded: the {len(declared)} "
            "declared tool(s) cannot be compared with the freeze (episodes offered exactly "
            "the declared tools)",
            counts=counts,
        )
    changes = action_space_changes(frozen, declared)
    if changes:
        problems.append("the tools changed since the freeze: " + "; ".join(changes))
    summary = "; ".join(problems) or (
        f"every episode offered the {len(declared)} declared tool(s), identical to the freeze"
    )
    return Check(
        "action_space", "failed" if problems else "passed", summary, counts=counts, items=items
    )


def determinism_check(main: Sweep, repeat: Sweep) -> Check:
    """Same seed, same final state and score: the repeated episodes match the first run."""
    pairs = _pairs(main, repeat)
    compared = len(pairs)
    differing = [
        key
        for key, first, again in pairs
        if first.outcome != again.outcome
        or not _same(first.score, again.score)
        or first.state_hash != again.state_hash
        or first.raw != again.raw
    ]
    items = sorted({item for item, _ in differing})
    summary = (
        f"{len(differing)} of {compared} repeated episodes (same seed) ended in another state "
        "or score"
        if differing
        else f"{compared} repeated episodes (same seed) ended in the same state and score"
    )
    return Check(
        "determinism",
        "failed" if differing else "passed",
        summary,
        counts={"episodes": compared, "differing": len(differing)},
        items=items,
    )


def isolation_check(alone: Sweep, after: Sweep) -> Check:
    """An item run alone (first, in fresh family modules) ends as it does after other items."""
    pairs = _pairs(alone, after)
    compared = len(pairs)
    differing = [
        key
        for key, first, later in pairs
        if first.state_hash != later.state_hash or not _same(first.score, later.score)
    ]
    items = sorted({item for item, _ in differing})
    summary = (
        f"state leaks between episodes: {len(differing)} of {compared} episode(s) end "
        "differently after other items ran in the same process than when run alone"
        if differing
        else f"{compared} episode(s) end the same run alone and after other items"
    )
    return Check(
        "isolation",
        "failed" if differing else "passed",
        summary,
        counts={"episodes": compared, "differing": len(differing)},
        items=items,
    )


def _pairs(first: Sweep, second: Sweep) -> list[tuple[tuple[str, int], Episode, Episode]]:
    """The episodes of each (item, epoch) both sweeps played, in key order."""
    return [
        (key, episode, second.episodes[key])
        for key, episode in sorted(first.episodes.items())
        if key in second.episodes
    ]


def _same(a: float, b: float) -> bool:
    return a == b or (a != a and b != b)  # NaN equals NaN here: both unscored
