"""The grader audit's checks over the episodes its scripted policies played.

Each function judges one property of one family from the audit's episodes (`_sweep`) and
returns a `Check`: oracle, null, trivial policies, exploit probes, harness errors and reward
bounds here; limits, action space, determinism and isolation in `_checks_env`. What each check
means and why: docs/design/grader-audit.md.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence

from evalsuite.audit._report import Check
from evalsuite.audit._sweep import Episode
from evalsuite.kit import Family, Probe, Trivial
from evalsuite.store import error_kind

__all__ = [
    "exploit_check",
    "harness_check",
    "null_check",
    "oracle_check",
    "reward_check",
    "trivial_check",
]

ORACLE, NULL = "oracle", "null"


def _counted(episodes: Iterable[Episode]) -> list[Episode]:
    """Episodes with a score (scored, or a limit counting 0); harness errors are judged apart."""
    return [e for e in episodes if e.outcome != "harness_error"]


def _by_stratum(episodes: Iterable[Episode]) -> dict[str, list[Episode]]:
    groups: dict[str, list[Episode]] = defaultdict(list)
    for episode in episodes:
        groups[episode.stratum].append(episode)
    return dict(sorted(groups.items()))


def oracle_check(episodes: Sequence[Episode]) -> Check:
    """The oracle scores 1 on every item, in each of its runs, with identical final states."""
    by_item: dict[str, list[Episode]] = defaultdict(list)
    for episode in _counted(episodes):
        by_item[episode.item_id].append(episode)
    unsolved = sorted(i for i, eps in by_item.items() if any(e.score != 1.0 for e in eps))
    unstable = sorted(
        i
        for i, eps in by_item.items()
        if len({e.state_hash for e in eps}) > 1 or any(e.state_hash is None for e in eps)
    )
    strata = {
        stratum: {
            "items": len({e.item_id for e in eps}),
            "unsolved": len({e.item_id for e in eps if e.item_id in unsolved}),
            "failed": any(e.item_id in unsolved or e.item_id in unstable for e in eps),
        }
        for stratum, eps in _by_stratum(_counted(episodes)).items()
    }
    bad = sorted(set(unsolved) | set(unstable))
    runs = max((len(eps) for eps in by_item.values()), default=0)
    summary = f"the oracle scores 1 on all {len(by_item)} items in {runs} runs each"
    if bad:
        parts = []
        if unsolved:
            parts.append(
                f"{len(unsolved)} of {len(by_item)} item(s) no oracle run solves (unsolvable "
                "or mis-specified)"
            )
        if unstable:
            parts.append(f"{len(unstable)} item(s) end in different final states in its runs")
        summary = "; ".join(parts)
    return Check(
        "oracle",
        "failed" if bad else "passed",
        summary,
        counts={"items": len(by_item), "unsolved": len(unsolved), "unstable": len(unstable)},
        strata=strata,
        items=bad,
    )


def null_check(episodes: Sequence[Episode]) -> Check:
    """Doing nothing scores 0 on every item."""
    counted = _counted(episodes)
    passing = sorted({e.item_id for e in counted if e.score > 0})
    strata = {
        stratum: {
            "items": len(eps),
            "mean": _mean(e.score for e in eps),
            "failed": any(e.score > 0 for e in eps),
        }
        for stratum, eps in _by_stratum(counted).items()
    }
    mean = _mean(e.score for e in counted)
    summary = (
        f"doing nothing scores {mean:.3g} on average and above 0 on {len(passing)} of "
        f"{len(counted)} items"
        if passing
        else f"doing nothing scores 0 on all {len(counted)} items"
    )
    return Check(
        "null",
        "failed" if passing else "passed",
        summary,
        counts={"items": len(counted), "passed": len(passing)},
        strata=strata,
        items=passing,
    )


def trivial_check(trivial: Trivial, episodes: Sequence[Episode]) -> Check:
    """A trivial policy scores at or below its floor in every stratum."""
    counted = _counted(episodes)
    strata: dict[str, dict[str, object]] = {}
    failing: list[str] = []
    for stratum, eps in _by_stratum(counted).items():
        mean, floor = _mean(e.score for e in eps), trivial.floor(stratum)
        passed = sorted(e.item_id for e in eps if e.score > 0)
        over = mean > floor
        strata[stratum] = {
            "items": len(eps),
            "mean": mean,
            "floor": floor,
            "passed": len(passed),
            "failed": over,
        }
        if over:
            failing.extend(passed)
    over_strata = [s for s, v in strata.items() if v["failed"]]
    passed_total = sum(1 for e in counted if e.score > 0)
    if over_strata:
        summary = (
            f"{trivial.description} passes {passed_total} of {len(counted)} items, above its "
            f"floor in {len(over_strata)} stratum(s)"
        )
    else:
        summary = f"{trivial.description} stays at or below its floor in every stratum"
    return Check(
        "trivial",
        "failed" if over_strata else "passed",
        summary,
        policy=trivial.name,
        counts={"items": len(counted), "passed": passed_total},
        strata=strata,
        items=sorted(failing),
    )


def exploit_check(probe: Probe, episodes: Sequence[Episode], label: str = "exploit") -> Check:
    """An exploit probe never passes on an item it applies to.

    `label` ``tamper``: a probe of the tamper library (`evalsuite.audit._tampers`), played
    against a family whose grader runs the agent's code.
    """
    applicable = [e for e in _counted(episodes) if e.applies]
    passing = sorted({e.item_id for e in applicable if e.score > 0})
    strata: dict[str, dict[str, float | int | bool]] = {
        stratum: {
            "items": len(eps),
            "passed": sum(1 for e in eps if e.score > 0),
            "failed": any(e.score > 0 for e in eps),
        }
        for stratum, eps in _by_stratum(applicable).items()
    }
    if label == "tamper":  # the tamper library lists its mean score per stratum too
        for stratum, eps in _by_stratum(applicable).items():
            strata[stratum]["score"] = sum(e.score for e in eps) / len(eps)
    kind = "tamper" if label == "tamper" else "exploit"
    summary = (
        f"the {kind} '{probe.description}' passes {len(passing)} of {len(applicable)} items"
        if passing
        else f"the {kind} '{probe.description}' never passes ({len(applicable)} items)"
    )
    return Check(
        label,
        "failed" if passing else "passed",
        summary,
        policy=probe.name,
        counts={"items": len(applicable), "passed": len(passing)},
        strata=strata,
        items=passing,
    )


def harness_check(episodes: Sequence[Episode]) -> Check:
    """No episode of the audit ended in a harness error (the audit vouches only for real runs).

    Also fails when a finished sample never reached the audit (its state could not be read).
    """
    errors = [e for e in episodes if e.outcome == "harness_error"]
    unseen = [e for e in episodes if e.outcome != "harness_error" and not e.seen]
    kinds: dict[str, int] = defaultdict(int)
    for episode in errors:
        kinds[error_kind(episode.reason)] += 1
    bad = sorted({e.item_id for e in errors + unseen})
    strata = {
        stratum: {"episodes": len(eps), "harness_errors": sum(1 for e in eps if e in errors)}
        | {"failed": any(e in errors or e in unseen for e in eps)}
        for stratum, eps in _by_stratum(episodes).items()
    }
    summary = f"no harness error in {len(episodes)} episodes"
    if errors or unseen:
        listed = ", ".join(f"{k} ×{n}" for k, n in sorted(kinds.items()))
        summary = f"{len(errors)} of {len(episodes)} episodes ended in a harness error ({listed})"
        if unseen:
            summary += f"; {len(unseen)} episode(s) could not be read back"
    return Check(
        "harness",
        "failed" if bad else "passed",
        summary,
        counts={"episodes": len(episodes), "harness_errors": len(errors), "unread": len(unseen)},
        strata=strata,
        items=bad,
    )


def reward_check(
    episodes: Sequence[Episode], bounds: tuple[float, float] | None, family: Family
) -> Check:
    """Raw grader values lie inside the declared bounds, reach both ends, and are kept whole.

    The null policy must reach the lower bound and the oracle the upper one: a reward that
    never goes below (or above) some other value is clipped or offset. The stored score must
    be the raw value mapped linearly (to [0, 1]), to the last bit: nothing rounded or clipped.
    """
    low, high = bounds if bounds is not None else (0.0, 1.0)
    numeric = [e for e in episodes if isinstance(e.raw, float) and e.outcome == "scored"]
    outside = sorted(
        {e.item_id for e in numeric if not low <= float(e.raw) <= high}  # type: ignore[arg-type]
        | {
            e.item_id
            for e in episodes
            if e.outcome == "harness_error" and e.reason and " is outside " in e.reason
        }
    )
    altered = sorted(
        e.item_id
        for e in numeric
        if low <= float(e.raw) <= high  # type: ignore[arg-type]
        and e.score != (float(e.raw) - low) / (high - low)  # type: ignore[arg-type]
    )
    problems = []
    if outside:
        problems.append(f"{len(outside)} item(s) have raw values outside [{low:g}, {high:g}]")
    if altered:
        problems.append(f"{len(altered)} stored score(s) differ from the mapped raw value")
    null_raw = [float(e.raw) for e in numeric if e.policy == NULL]  # type: ignore[arg-type]
    oracle_raw = [float(e.raw) for e in numeric if e.policy == ORACLE]  # type: ignore[arg-type]
    if null_raw and min(null_raw) > low:
        problems.append(
            f"the reward never reaches its lower bound {low:g}: doing nothing gets at least "
            f"{min(null_raw):g}, so the reward looks clipped (or offset) to "
            f"[{min(null_raw):g}, {high:g}]"
        )
    if oracle_raw and max(oracle_raw) < high:
        problems.append(
            f"the reward never reaches its upper bound {high:g}: the oracle gets at most "
            f"{max(oracle_raw):g}, so it looks clipped (or scaled) below {high:g}"
        )
    seen = [float(e.raw) for e in numeric]  # type: ignore[arg-type]
    counts: dict[str, int | float] = {
        "episodes": len(numeric),
        "outside": len(outside),
        "altered": len(altered),
    }
    if seen:
        counts |= {"raw_min": min(seen), "raw_max": max(seen)}
    summary = (
        "; ".join(problems)
        if problems
        else f"raw values stay in [{low:g}, {high:g}], reach both ends, and are stored unaltered"
    )
    if not numeric:
        summary = f"{family.name}'s grader gives no numeric values to check (categorical)"
    return Check(
        "reward_bounds",
        "failed" if problems else "passed",
        summary,
        counts=counts,
        items=sorted(set(outside) | set(altered)),
    )


def _mean(values: Iterable[float]) -> float:
    values = [v for v in values if not math.isnan(v)]
    return sum(values) / len(values) if values else 0.0
