"""`evalsuite audit SUITE@X.Y.Z --graders`: can the suite's environments and graders be trusted?

For every family, the family's kit (`evalsuite.kit.Family`) supplies an oracle, trivial
policies, exploit probes and its limits and tools. The audit plays every policy on every
audited item through the real runner (`_sweep`), then judges (`_checks`, `_checks_env`):

* oracle: score 1 on every item, twice, with identical final states;
* null: doing nothing scores 0;
* trivial policies (the family's, plus the empty answer and every answer at once): at or
  below their floor in every stratum;
* exploit probes: never pass;
* harness: no episode of the audit ends in a harness error;
* reward bounds: raw grader values inside the declared bounds, reaching both ends, stored
  unaltered;
* limits: time, message and token limits declared and applied; every tool call bounded;
* action space: episodes offer exactly the declared tools, and those are the frozen ones;
* determinism (dev): the same seed gives the same final states and scores;
* isolation (dev): an item run alone, first, in freshly imported family code, ends as it does
  after other items ran in the same process.

A dev audit runs in a private temporary store; a holdout audit is one budgeted look through
the ledger (`run_suite` with its own purpose and model family ``evalsuite-audit``), and skips
determinism and isolation (they would need more looks). See docs/design/grader-audit.md.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from inspect_ai import Task

from evalsuite._core.layout import Layout
from evalsuite.audit._adversary import (
    REFERENCE_PREFIX,
    RedTeamPlan,
    policy_scores,
    redteam_checks,
    redteam_plan,
    redteam_report,
    shortcut_check,
)
from evalsuite.audit._checks import (
    exploit_check,
    harness_check,
    null_check,
    oracle_check,
    reward_check,
    trivial_check,
)
from evalsuite.audit._checks_env import (
    action_space_check,
    determinism_check,
    isolation_check,
    limits_check,
)
from evalsuite.audit._report import Check, FamilyAudit, GraderAudit
from evalsuite.audit._sweep import Sweep, SweepSpec, run_sweep
from evalsuite.audit._tampers import is_tamper, with_tampers
from evalsuite.errors import UsageError
from evalsuite.kit import Family, FamilyKitError, RedTeam, Trivial, family_of_task
from evalsuite.manifest import KeySpec, Manifest, ManifestFamily, ManifestItem, load_manifest
from evalsuite.run import action_space_problems, load_task_function
from evalsuite.store import Store

__all__ = ["AuditOptions", "audit_graders", "audit_manifest", "schedule_of"]

BUILT_IN = ("oracle", "oracle", "null", "empty_answer", "every_answer")


@dataclass(frozen=True, slots=True)
class AuditOptions:
    """How much to audit and where."""

    split: Literal["dev", "holdout"] = "dev"
    per_stratum: int | None = None
    """Audit only the first N items (by id) of each stratum (quick checks; the results say
    so); None: every item of the split."""
    repeat: int = 3
    """Items per family (the first of the sample, by id) whose episodes are run again with
    the same seed, for determinism."""
    seed: int = 0
    purpose: str | None = None
    """Why the holdout is looked at (recorded in the ledger)."""
    team: tuple[RedTeam, ...] = ()
    """A team's own red-team policies (``--policies FILE``), played like the generated ones."""
    redteam: bool = True
    """Play the generated red-team policies, detect shortcuts and play the reference agents
    (dev only); False: the audit as before them (benchmarks measure the difference)."""


@dataclass(slots=True)
class _Kit:
    family: ManifestFamily
    function: Callable[..., Task] | None
    kit: Family | None
    problem: str | None


def _fresh_import(layout: Layout, family: ManifestFamily) -> None:
    """Forget every module loaded from the family's folder, so the next import is fresh."""
    folder = (layout.tasks / family.task.partition("@")[0]).parent.resolve()
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if file and Path(file).resolve().is_relative_to(folder):
            del sys.modules[name]


def _load_kit(layout: Layout, manifest: Manifest, family: ManifestFamily) -> _Kit:
    _fresh_import(layout, family)
    try:
        function = load_task_function(layout, manifest.suite, family)
        kit = family_of_task(function)
    except (UsageError, FamilyKitError) as exc:
        return _Kit(family, None, None, str(exc))
    if kit is None:
        return _Kit(
            family,
            function,
            None,
            f"{family.task} declares no family kit (an evalsuite.kit.Family): its oracle, "
            "policies, limits and tools are unknown, so it cannot be audited (tasks/README.md)",
        )
    if kit.name != family.name or kit.version != family.version:
        return _Kit(
            family,
            function,
            None,
            f"the kit in {family.task} is family {kit.name!r} version {kit.version}, but "
            f"{manifest.ref} froze family {family.name!r} version {family.version}",
        )
    return _Kit(family, function, with_tampers(kit), None)


def schedule_of(kits: Sequence[Family]) -> tuple[str, ...]:
    """The policies of an audit run, one per epoch: the built-in ones, then each family's."""
    names: list[str] = list(BUILT_IN)
    for kit in kits:
        for name in [t.name for t in kit.trivial] + [p.name for p in kit.probes]:
            if name not in names:
                names.append(name)
    return tuple(names)


def _sample(items: Sequence[ManifestItem], per_stratum: int | None) -> list[ManifestItem]:
    ordered = sorted(items, key=lambda i: i.id)
    if per_stratum is None:
        return ordered
    taken: dict[str, int] = defaultdict(int)
    chosen = []
    for item in ordered:
        if taken[item.stratum] < per_stratum:
            taken[item.stratum] += 1
            chosen.append(item)
    return chosen


def _family_checks(
    entry: _Kit, manifest: Manifest, main: Sweep, item_ids: set[str], extra: list[Check]
) -> FamilyAudit:
    kit, function = entry.kit, entry.function
    if kit is None or function is None:
        raise ValueError(f"family {entry.family.name!r} has no loaded kit to check")
    mine = [e for e in main.episodes.values() if e.item_id in item_ids]
    trivials = [
        Trivial("empty_answer", kit.empty_answer, "the empty answer"),
        Trivial("every_answer", kit.every_answer, "every answer at once"),
        *kit.trivial,
    ]
    checks = [
        oracle_check(main.of("oracle", sorted(item_ids))),
        null_check(main.of("null", sorted(item_ids))),
        *(trivial_check(t, main.of(t.name, sorted(item_ids))) for t in trivials),
        *(
            exploit_check(p, main.of(p.name, sorted(item_ids)))
            for p in kit.probes
            if not is_tamper(p.name)
        ),
        *(
            exploit_check(p, main.of(p.name, sorted(item_ids)), label="tamper")
            for p in kit.probes
            if is_tamper(p.name)
        ),
        harness_check(mine),
        reward_check(mine, entry.family.score_bounds, kit),
        limits_check(kit, function, mine),
        action_space_check(kit, entry.family.tools, mine),
        *extra,
    ]
    return FamilyAudit(entry.family.name, entry.family.version, checks)


def audit_manifest(
    layout: Layout,
    manifest: Manifest,
    *,
    keys: KeySpec,
    store: Store,
    options: AuditOptions = AuditOptions(),
) -> GraderAudit:
    """Audit the graders of a frozen (or about to be frozen) manifest; see the module doc."""
    started = time.perf_counter()
    kits = [_load_kit(layout, manifest, f) for f in manifest.families]
    usable = {k.family.name: k for k in kits if k.kit is not None}
    items = _sample(
        [i for i in manifest.items_by_split(options.split) if i.family in usable],
        options.per_stratum,
    )
    families = {i.id: usable[i.family].kit for i in items}
    plan = {i: k for i, k in families.items() if k is not None}
    schedule = schedule_of([k.kit for k in usable.values() if k.kit is not None])
    audit = GraderAudit(
        suite=manifest.suite,
        version=manifest.version,
        manifest_hash=manifest.audited_hash(),
        split=options.split,
        schedule=list(schedule),
        seed=options.seed,
        sample={
            "items": len(items),
            "of": len(manifest.items_by_split(options.split)),
            "per_stratum": options.per_stratum,
        },
    )
    functions = {k.family.name: k.function for k in kits if k.function is not None}
    drift = {
        name: action_space_problems(manifest, {name: function})
        for name, function in functions.items()
    }
    if any(drift.values()):
        audit.families = [_drifted(k, drift.get(k.family.name, [])) for k in kits]
        audit.seconds = time.perf_counter() - started
        return audit
    sweeps: dict[str, Sweep] = {}
    red: RedTeamPlan | None = None
    if items:
        where = _Where(layout, manifest, keys, store, options)
        sweeps = _run_sweeps(where, plan, items, schedule)
        if options.split == "dev" and options.redteam:
            red = _run_redteam(where, plan, items, sweeps)
            audit.redteam_schedule = list(red.schedule)
            audit.references = sorted({r for k in plan.values() for r in k.references})
    audit.runs = [s.run_id for s in sweeps.values()]
    if options.split == "dev":
        audit.logs = [
            (layout.state / "logs" / rid).relative_to(layout.root).as_posix() for rid in audit.runs
        ]
    for entry in kits:
        if entry.kit is None:
            problem = entry.problem or "no kit"
            audit.families.append(
                FamilyAudit(
                    entry.family.name, entry.family.version, [Check("kit", "failed", problem)]
                )
            )
            continue
        ids = {i.id for i in items if i.family == entry.family.name}
        extra = _repeat_checks(sweeps, ids, options)
        extra += _adversarial_checks(entry.kit, sweeps, red, ids, options)
        audited = _family_checks(entry, manifest, sweeps["main"], ids, extra)
        if sweeps and options.redteam:  # numbers only: a holdout audit lists them too
            played = [s for k, s in sweeps.items() if k == "main" or k.startswith("red")]
            audited.policies = policy_scores(entry.kit, played, ids, red)
            audited.redteam = redteam_report(entry.kit, audited.policies)
        audit.families.append(audited)
    audit.seconds = time.perf_counter() - started
    return audit


@dataclass(frozen=True, slots=True)
class _Where:
    layout: Layout
    manifest: Manifest
    keys: KeySpec
    store: Store
    options: AuditOptions


def _first_per_family(items: Sequence[ManifestItem], count: int) -> list[str]:
    taken: dict[str, int] = defaultdict(int)
    chosen = []
    for item in sorted(items, key=lambda i: i.id):
        if taken[item.family] < count:
            taken[item.family] += 1
            chosen.append(item.id)
    return chosen


def _drifted(entry: _Kit, problems: list[str]) -> FamilyAudit:
    """A family of a version whose tools drifted: the runner refuses it, so nothing is played."""
    why = "not run: the runner refuses a version whose tools changed after freezing"
    if entry.kit is None:
        checks = [Check("kit", "failed", entry.problem or "no kit")]
    elif problems:
        checks = [
            Check("action_space", "failed", "; ".join(problems)),
            Check("policies", "skipped", why),
        ]
    else:
        checks = [Check("policies", "skipped", why)]
    return FamilyAudit(entry.family.name, entry.family.version, checks)


def _run_sweeps(
    where: _Where,
    plan: dict[str, Family],
    items: Sequence[ManifestItem],
    schedule: tuple[str, ...],
) -> dict[str, Sweep]:
    options = where.options

    def sweep(chosen: Sequence[str], policies: tuple[str, ...], traces: bool = False) -> Sweep:
        spec = SweepSpec(
            schedule=policies,
            split=options.split,
            items=tuple(chosen),
            seed=options.seed,
            purpose=options.purpose or "grader audit",
            traces=frozenset({"oracle"}) if traces and options.redteam else frozenset(),
        )
        return run_sweep(
            where.layout, where.manifest, plan, spec, keys=where.keys, store=where.store
        )

    ids = [i.id for i in items]
    if options.split == "holdout":
        return {"main": sweep(ids, schedule)}
    # isolation first: each family's first item alone (families run as separate tasks with
    # their own modules), in family code imported fresh by `_load_kit`
    alone = sweep(_first_per_family(items, 1), schedule[:1])
    main = sweep(ids, schedule, traces=True)
    repeat = sweep(_first_per_family(items, max(options.repeat, 1)), schedule)
    return {"alone": alone, "main": main, "repeat": repeat}


def _run_redteam(
    where: _Where, plan: dict[str, Family], items: Sequence[ManifestItem], sweeps: dict[str, Sweep]
) -> RedTeamPlan:
    """Play the reference agents, then the generated and team red-team policies (dev only)."""
    strata = {i.id: i.stratum for i in items}
    ids = [i.id for i in items]
    references: dict[str, Sweep] = {}
    for model in sorted({r for kit in plan.values() for r in kit.references}):
        spec = SweepSpec(
            schedule=(REFERENCE_PREFIX + model,),
            items=tuple(i for i in ids if model in plan[i].references),
            seed=where.options.seed,
            model=model,
            traces=frozenset({"*"}),
        )
        references[model] = run_sweep(
            where.layout, where.manifest, plan, spec, keys=where.keys, store=where.store
        )
        sweeps[f"red:{model}"] = references[model]
    red = redteam_plan(plan, strata, sweeps["main"], where.options.team, references)
    if red.schedule:
        spec = SweepSpec(schedule=red.schedule, items=tuple(ids), seed=where.options.seed)
        sweeps["redteam"] = run_sweep(
            where.layout, where.manifest, red.families, spec, keys=where.keys, store=where.store
        )
    return red


def _adversarial_checks(
    kit: Family,
    sweeps: dict[str, Sweep],
    red: RedTeamPlan | None,
    ids: set[str],
    options: AuditOptions,
) -> list[Check]:
    if not options.redteam:
        return []
    if options.split == "holdout":
        why = (
            "not run on the holdout (the generated policies learn from dev oracle episodes, "
            "and another run would be another look); run the dev audit"
        )
        return [Check("redteam", "skipped", why), Check("shortcut", "skipped", why)]
    if not ids or "main" not in sweeps:
        return []
    checks: list[Check] = []
    if red is not None and "redteam" in sweeps:
        checks += redteam_checks(kit, sweeps["redteam"], red, ids, options.team)
    untemplated = red.untemplated.get(kit.name, []) if red is not None else []
    if untemplated and not any(c.check == "redteam" for c in checks):
        checks.append(
            Check(
                "redteam",
                "skipped",
                "no stratum has two passing oracle episodes to learn a template from "
                f"({len(untemplated)} strata; audit more items per stratum)",
            )
        )
    checks.append(shortcut_check(kit, sweeps["main"], ids))
    return checks


def _repeat_checks(sweeps: dict[str, Sweep], ids: set[str], options: AuditOptions) -> list[Check]:
    if options.split == "holdout":
        why = "not run on the holdout (it would take more looks); run the dev audit"
        return [Check("determinism", "skipped", why), Check("isolation", "skipped", why)]
    if not ids or "repeat" not in sweeps:
        return []

    def only(sweep: Sweep) -> Sweep:
        return Sweep(sweep.run_id, {k: v for k, v in sweep.episodes.items() if k[0] in ids})

    checks = [determinism_check(only(sweeps["main"]), only(sweeps["repeat"]))]
    alone = only(sweeps["alone"])
    if alone.episodes:
        checks.append(isolation_check(alone, only(sweeps["repeat"])))
    return checks


def audit_graders(
    layout: Layout,
    suite: str,
    version: str | None,
    *,
    keys: KeySpec,
    store: Store | None = None,
    options: AuditOptions = AuditOptions(),
) -> GraderAudit:
    """Audit ``suite@version`` (latest when None); see the module doc.

    Args:
        layout: The project.
        suite: Suite name.
        version: Frozen version (latest when None).
        keys: Vault key locations (holdout audits).
        store: The results store; required for a holdout audit (the look is ledgered and
            its run stored there). A dev audit without one runs in a private temporary store.
        options: Split, sample, seed, purpose.

    Raises:
        UsageError: a holdout audit without a store.
        IntegrityError, HoldoutAccessError: the runner refused (verification, budget).
    """
    manifest = load_manifest(layout, suite, version)
    if store is not None:
        return audit_manifest(layout, manifest, keys=keys, store=store, options=options)
    if options.split == "holdout":
        raise UsageError("a holdout audit is a ledgered look: give the results store")
    with tempfile.TemporaryDirectory(prefix="evalsuite-audit-") as scratch:
        private = Store(f"sqlite:///{Path(scratch) / 'audit.sqlite'}")
        try:
            return audit_manifest(layout, manifest, keys=keys, store=private, options=options)
        finally:
            private.engine.dispose()
