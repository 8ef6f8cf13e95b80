"""The adversarial part of the grader audit: red-team policies, shortcuts, the red-team report.

Generated and team red-team policies, the shortcut detector, every policy's score per stratum.

After the main sweep (`_sweep`), the audit builds for every dev item the generated policies of
its stratum (`_redteam.generated_policies`, from the other items' passing oracle traces) and
adds the team's own (`evalsuite.kit.RedTeam`, ``--policies FILE``); one more run plays them
all (`redteam_plan`). Each is judged like a trivial policy (check ``redteam`` or ``team``: at
or below its floor in every stratum, 0 unless the family declares the stratum prompt-only,
`evalsuite.kit.Family.prompt_only`). The shortcut detector (`_shortcut`) reads the oracle
traces' prompts and targets (check ``shortcut``). The family's reference agents
(`evalsuite.kit.Family.references`) are played on the same items for the red-team report: the
best cheap policy's mean and its margin under the weakest reference (under the oracle when the
family declares none). See docs/design/grader-audit.md.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from evalsuite.audit._checks import trivial_check
from evalsuite.audit._redteam import (
    GENERATED,
    REFERENCE_VARIANTS,
    Template,
    description_of,
    generated_policies,
    source_name,
)
from evalsuite.audit._redteam import template_of as _template_of
from evalsuite.audit._report import Check
from evalsuite.audit._shortcut import ALPHA, MIN_EFFECT, MIN_ITEMS, find_shortcuts
from evalsuite.audit._sweep import Episode, Sweep
from evalsuite.kit import Episode as PolicyEpisode
from evalsuite.kit import Family, Policy, RedTeam, Trivial, redacted

__all__ = [
    "TEAM_PREFIX",
    "RedTeamPlan",
    "policy_scores",
    "redteam_checks",
    "redteam_plan",
    "redteam_report",
    "shortcut_check",
]

TEAM_PREFIX = "team_"
REFERENCE_PREFIX = "reference:"
BUILT_IN_KINDS = {"oracle", "null", "empty_answer", "every_answer"}


@dataclass(slots=True)
class RedTeamPlan:
    """What the red-team run plays: its schedule and each item's policies."""

    schedule: tuple[str, ...]
    families: dict[str, Family]
    """Item id -> its family's kit with the item's red-team policies as its trivial ones."""
    played: dict[str, set[str]] = field(default_factory=dict)
    """Item id -> the policies that had something to play on it."""
    untemplated: dict[str, list[str]] = field(default_factory=dict)
    """Family -> strata with no other passing oracle episode to learn a template from."""


def _team_policy(team: RedTeam) -> Policy:
    def policy(episode: PolicyEpisode) -> str:
        return team.policy(redacted(episode))

    return policy


def _templates(
    sweep: Sweep, policy: str, strata: Mapping[str, str]
) -> dict[str, list[tuple[str, Template, str]]]:
    """Stratum -> (item, template, prompt) of each item's first passing episode of `policy`."""
    found: dict[str, list[tuple[str, Template, str]]] = defaultdict(list)
    firsts: dict[str, Episode] = {}
    for episode in sorted(sweep.episodes.values(), key=lambda e: (e.item_id, e.epoch)):
        passing = episode.score == 1.0 and episode.outcome != "harness_error"
        if episode.policy == policy and episode.trace is not None and passing:
            firsts.setdefault(episode.item_id, episode)
    for item, episode in sorted(firsts.items()):
        trace = episode.trace
        if trace is not None and item in strata:
            template = _template_of(trace.prompt, trace.calls, trace.answer)
            found[strata[item]].append((item, template, trace.prompt))
    return found


def redteam_plan(
    kits: Mapping[str, Family],
    strata: Mapping[str, str],
    main: Sweep,
    team: Sequence[RedTeam] = (),
    references: Mapping[str, Sweep] | None = None,
) -> RedTeamPlan:
    """The generated policies of every item (leave one out within its stratum), and the team's.

    Args:
        kits: Item id -> its family's kit.
        strata: Item id -> its stratum.
        main: The main sweep (its oracle episodes carry their traces).
        team: The team's red-team policies.
        references: Reference agent -> its sweep (traces kept): its passing episodes teach
            the `REFERENCE_VARIANTS` too.
    """
    sources: dict[str, tuple[dict[str, list[tuple[str, Template, str]]], tuple[str, ...]]] = {
        "oracle": (_templates(main, "oracle", strata), GENERATED)
    }
    for model, sweep in sorted((references or {}).items()):
        sources[model] = (
            _templates(sweep, REFERENCE_PREFIX + model, strata),
            REFERENCE_VARIANTS,
        )
    prompts = {
        item: prompt
        for groups, _ in sources.values()
        for group in groups.values()
        for item, _, prompt in group
    }
    families: dict[str, Family] = {}
    played: dict[str, set[str]] = {}
    untemplated: dict[str, set[str]] = defaultdict(set)
    names = [
        *(source_name(v, s) for s, (_, variants) in sources.items() for v in variants),
        *(TEAM_PREFIX + t.name for t in team),
    ]
    described = {TEAM_PREFIX + t.name: t.description for t in team}
    for item, kit in sorted(kits.items()):
        policies: dict[str, Policy] = {}
        for source, (groups, variants) in sources.items():
            others = [t for other, t, _ in groups.get(strata[item], []) if other != item]
            if item in prompts:
                made = generated_policies(prompts[item], others, variants)
                policies.update({source_name(v, source): p for v, p in made.items()})
        if not policies:
            untemplated[kit.name].add(strata[item])
        for entry in team:
            if entry.applies_to(kit.name):
                policies[TEAM_PREFIX + entry.name] = _team_policy(entry)
        trivial = [
            Trivial(name, policy, described.get(name) or description_of(name))
            for name, policy in policies.items()
        ]
        families[item] = replace(kit, trivial=tuple(trivial), probes=())
        played[item] = set(policies)
    used = tuple(n for n in names if any(n in p for p in played.values()))
    return RedTeamPlan(
        schedule=used,
        families=families,
        played=played,
        untemplated={k: sorted(v) for k, v in untemplated.items()},
    )


def redteam_checks(
    kit: Family, sweep: Sweep, plan: RedTeamPlan, items: Iterable[str], team: Sequence[RedTeam]
) -> list[Check]:
    """One check per generated policy (``redteam``) and per team policy (``team``)."""
    ids = sorted(items)
    checks = []
    described = {TEAM_PREFIX + t.name: t.description for t in team}
    for name in plan.schedule:
        mine = [e for e in sweep.of(name, ids) if name in plan.played.get(e.item_id, set())]
        if not mine:
            continue
        floors = {e.stratum: 1.0 for e in mine if kit.prompt_only_reason(e.stratum)}
        description = described.get(name) or description_of(name)
        check = trivial_check(Trivial(name, _never, description, floors), mine)
        check.check = "team" if name.startswith(TEAM_PREFIX) else "redteam"
        for stratum, values in check.strata.items():
            reason = kit.prompt_only_reason(stratum)
            if reason:
                values["prompt_only"] = reason
        untemplated = plan.untemplated.get(kit.name, [])
        if check.check == "redteam" and untemplated:
            check.counts["untemplated_strata"] = len(untemplated)
        checks.append(check)
    return checks


def _never(episode: PolicyEpisode) -> str:
    return ""


def shortcut_check(kit: Family, main: Sweep, items: Iterable[str]) -> Check:
    """Can the target be told from the prompt's surface (position, length, neighbours)?"""
    wanted = set(items)
    seen: dict[str, tuple[str, str, str, str]] = {}
    exempt: set[str] = set()
    for episode in main.episodes.values():
        trace = episode.trace
        if episode.item_id in wanted and trace is not None and episode.item_id not in seen:
            if kit.prompt_only_reason(episode.stratum):
                exempt.add(episode.stratum)  # the prompt is the whole task: reading it is it
                continue
            seen[episode.item_id] = (episode.item_id, episode.stratum, trace.prompt, trace.target)
    findings = find_shortcuts(list(seen.values()), kit.harmless_features)
    found = [f for f in findings if f.shortcut]
    strata: dict[str, dict[str, Any]] = {}
    for finding in findings:
        key = f"{finding.stratum} :: {finding.leaf}"
        strata[key] = finding.to_dict()
    rule = (
        f"leave-one-out accuracy at least {MIN_EFFECT:g} above chance, one-sided exact "
        f"binomial p < {ALPHA:g}, at least {MIN_ITEMS} items"
    )
    if found:
        listed = "; ".join(
            f"{f.leaf} in {f.stratum} by {f.feature} ({f.accuracy:.0%} vs chance {f.chance:.0%})"
            for f in found
        )
        summary = f"the target is predicted from the prompt's surface: {listed} ({rule})"
    elif not seen and exempt:
        summary = (
            f"every audited stratum is declared prompt-only ({len(exempt)}): predicting the "
            "target from the prompt is the task there"
        )
    elif not seen:
        summary = "no dev oracle episode to read prompts and targets from"
    else:
        summary = f"no target leaf is predicted from the prompt's surface ({rule})"
    counts: dict[str, int | float] = {
        "items": len(seen),
        "tested": len(findings),
        "shortcuts": len(found),
        "prompt_only_strata": len(exempt),
    }
    check = Check(
        "shortcut",
        "failed" if found else ("skipped" if not seen else "passed"),
        summary,
        counts=counts,
        strata=strata,
        items=sorted({i for f in found for i in f.predicted}),
    )
    if kit.harmless_features:
        check.strata["(declared harmless)"] = {
            "features": dict(kit.harmless_features),
            "failed": False,
        }
    return check


def _kind(name: str, kit: Family, plan: RedTeamPlan | None) -> str:
    if name in BUILT_IN_KINDS:
        return "built_in"
    if name.startswith(REFERENCE_PREFIX):
        return "reference"
    if name.startswith(TEAM_PREFIX):
        return "team"
    if name.partition("@")[0] in GENERATED:
        return "generated"
    if name.startswith("tamper_"):
        return "tamper"
    if any(p.name == name for p in kit.probes):
        return "probe"
    return "trivial"


def _mean(values: Iterable[float]) -> float:
    kept = [v for v in values if not math.isnan(v)]
    return sum(kept) / len(kept) if kept else 0.0


def _family_mean(episodes: Sequence[Episode], ids: set[str]) -> float:
    """The mean over every audited item of the family.

    Each item's episodes are averaged; an item the policy had nothing to play on counts 0.
    """
    per_item: dict[str, list[float]] = defaultdict(list)
    for episode in episodes:
        if not math.isnan(episode.score):
            per_item[episode.item_id].append(episode.score)
    total = sum(sum(v) / len(v) for v in per_item.values() if v)
    return total / len(ids) if ids else 0.0


def policy_scores(
    kit: Family,
    sweeps: Sequence[Sweep],
    items: Iterable[str],
    plan: RedTeamPlan | None = None,
) -> list[dict[str, Any]]:
    """Every policy played on the family's items, with its mean and passes per stratum."""
    ids = set(items)
    played: dict[str, list[Episode]] = defaultdict(list)
    for sweep in sweeps:
        for episode in sweep.episodes.values():
            if episode.item_id not in ids or episode.outcome == "harness_error":
                continue
            name = episode.policy
            if (
                plan is not None
                and name in plan.schedule
                and name not in plan.played.get(episode.item_id, set())
            ):
                continue
            played[name].append(episode)
    listing = []
    for name in sorted(played):
        episodes = played[name]
        by_stratum: dict[str, list[Episode]] = defaultdict(list)
        for episode in episodes:
            by_stratum[episode.stratum].append(episode)
        listing.append(
            {
                "policy": name,
                "kind": _kind(name, kit, plan),
                "mean": round(_family_mean(episodes, ids), 6),
                "strata": {
                    stratum: {
                        "mean": round(_mean(e.score for e in eps), 6),
                        "passed": sum(1 for e in eps if e.score > 0),
                        "items": len({e.item_id for e in eps}),
                    }
                    for stratum, eps in sorted(by_stratum.items())
                },
            }
        )
    return listing


CHEAP_KINDS = ("generated", "trivial", "team", "built_in")


def redteam_report(kit: Family, policies: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The best-scoring cheap policy and its margin under the weakest reference agent."""
    cheap = [p for p in policies if p["kind"] in CHEAP_KINDS and p["policy"] not in ("oracle",)]
    best = max(cheap, key=lambda p: (p["mean"], p["policy"]), default=None)
    references = {
        p["policy"].removeprefix(REFERENCE_PREFIX): p["mean"]
        for p in policies
        if p["kind"] == "reference"
    }
    report: dict[str, Any] = {
        "best": None
        if best is None
        else {"policy": best["policy"], "kind": best["kind"], "mean": best["mean"]},
        "references": dict(sorted(references.items())),
    }
    if references:
        weakest = min(references, key=lambda r: (references[r], r))
        report |= {"under": "reference", "weakest": weakest, "weakest_mean": references[weakest]}
    else:
        oracle = next((p["mean"] for p in policies if p["policy"] == "oracle"), 1.0)
        declared = "no reference agent declared" if not kit.references else "not played"
        report |= {"under": "oracle", "weakest": "oracle", "weakest_mean": oracle}
        report["note"] = f"{declared}: the margin is under the oracle"
    if best is not None:
        report["margin"] = round(float(report["weakest_mean"]) - float(best["mean"]), 6)
    return report
