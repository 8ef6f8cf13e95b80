"""Reusable-holdout mechanisms around a holdout run: prepare, answer, reveal, check.

``evalsuite run SUITE@X.Y.Z --split holdout --mechanism thresholdout|ladder`` runs as any
holdout run (its look reserved and counted as before), and then, instead of showing the
exact holdout score, appends the mechanism's answer to the ledger and shows that
(docs/design/reusable-holdout.md). Everything that can refuse is checked before the run
(`prepare_mechanism`), so that no look is spent on a run whose answer would be refused:
options that do not go together, the dev run Thresholdout compares with, parameters that
contradict those the ledger fixed, and a spent Thresholdout budget (exit 7).

The exact score stays in the results store; `holdout reveal RUN --reason TEXT` shows it and
records that it did (`reveal_exact`). `verify` and `holdout status` recompute every answer from
the ledger and the stored exact scores (`mechanism_problems`), so an edited answer or
mechanism state fails them (exit 3).
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

from evalsuite._core.jsonout import JsonObject
from evalsuite.errors import HoldoutAccessError, NotFoundError, UsageError

if TYPE_CHECKING:
    from evalsuite._core.layout import Layout
    from evalsuite.holdout import (
        LadderParams,
        LedgerEntry,
        MechanismName,
        ThresholdoutParams,
    )
    from evalsuite.run import RunResult
    from evalsuite.store import RunRecord, Store

__all__ = [
    "MechanismOptions",
    "PreparedMechanism",
    "Release",
    "Reveal",
    "check_sealed",
    "default_ladder_step",
    "default_thresholdout",
    "mechanism_problems",
    "mechanism_summaries",
    "prepare_mechanism",
    "release_answer",
    "reveal_exact",
    "reveal_records",
    "run_score",
    "with_suite_default",
]


@dataclass(frozen=True, slots=True)
class MechanismOptions:
    """``--mechanism`` and its parameters (None: the default, or what the ledger fixed)."""

    name: MechanismName | None = None
    dev_run: str | None = None
    """Thresholdout: the dev run whose score it compares with (default: the newest complete,
    valid dev run of the same model and suite version)."""
    threshold: float | None = None
    noise_scale: float | None = None
    budget: int | None = None
    seed: int | None = None
    step: float | None = None
    """The Ladder's step."""
    none: bool = False
    """``--mechanism none``: the exact score asked for (refused when the suite declares a
    default mechanism: `with_suite_default`)."""


@dataclass(frozen=True, slots=True)
class PreparedMechanism:
    """What was checked before the run: the mechanism, its scope and parameters, the dev input."""

    name: MechanismName
    scope: str
    params: ThresholdoutParams | LadderParams
    family: str
    dev_run: str | None = None
    dev_score: float | None = None


@dataclass(frozen=True, slots=True)
class Release:
    """The answer a run's user sees instead of the exact holdout score."""

    mechanism: MechanismName
    scope: str
    released: float | None
    """None: nothing released (Thresholdout's budget spent, or the run is not valid)."""
    meaning: str
    """One plain sentence of what `released` means."""
    record: JsonObject | None
    """The ledger entry's ``mechanism`` field (None: nothing was appended)."""
    seq: int | None
    """The ledger entry's seq (None: nothing was appended)."""

    def to_dict(self) -> JsonObject:
        """``run --json``'s ``mechanism`` field."""
        return {
            "name": self.mechanism,
            "scope": self.scope,
            "released": self.released,
            "meaning": self.meaning,
            "ledger_seq": self.seq,
            "record": self.record,
        }


@dataclass(frozen=True, slots=True)
class Reveal:
    """An exact holdout score shown through the recorded override."""

    run_id: str
    exact: float
    reason: str
    seq: int

    def to_dict(self) -> JsonObject:
        """``holdout reveal --json``."""
        return {"run_id": self.run_id, "exact": self.exact, "reason": self.reason, "seq": self.seq}


def run_score(store: Store, run_id: str) -> float:
    """A run's mean over scored and limit attempts: the number `run` reports as its mean."""
    frame = store.attempts(run_id)
    counted = frame[frame["outcome"] != "harness_error"]["score"]
    return float(counted.mean()) if len(counted) else math.nan


def default_thresholdout(holdout_items: int, dev_items: int, budget: int) -> dict[str, float]:
    """Default Thresholdout parameters for a holdout of `holdout_items` (scores 0-1).

    With ``s`` the standard error of a score of 0.5 on the holdout (the largest), ``T`` is the
    standard deviation of dev minus holdout for one run, ``sigma`` is ``s / 4``: the setting of
    the simulation in docs/design/reusable-holdout.md. ``B`` is the suite's holdout budget.
    """
    s_hold = math.sqrt(0.25 / max(holdout_items, 1))
    s_dev = math.sqrt(0.25 / max(dev_items, 1))
    return {"threshold": math.hypot(s_hold, s_dev), "noise_scale": s_hold / 4, "budget": budget}


def default_ladder_step(holdout_items: int, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """The MDE of two independent holdout runs at a score of 0.5 (the largest variance).

    An upper bound of the paired comparison's MDE (pairing only shrinks it), known before any
    run: ``(z_{1-alpha/2} + z_power) sqrt(2 x 0.25 / n)``.
    """
    z = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(power)
    return z * math.sqrt(2 * 0.25 / max(holdout_items, 1))


def with_suite_default(
    options: MechanismOptions | None, declared: Mapping[str, Any] | None, *, ref: str
) -> MechanismOptions | None:
    """The mechanism a holdout run of `ref` uses: ``--mechanism``, or the suite's default.

    `declared` is the manifest's ``holdout_mechanism`` (None: the suite declares none; then
    `options` is used as given, and ``--mechanism none`` is a plain exact run). When the suite
    declares one, its holdout's exact scores are sealed behind it: no ``--mechanism`` uses it
    with its frozen parameters; ``--mechanism`` of the same name may add what the suite left
    open (a seed, a dev run, an undeclared parameter) but not contradict it.

    Raises:
        HoldoutAccessError: ``--mechanism none`` on a suite that declares a default (exit 7):
            the exact score is reached only through the recorded ``holdout reveal``.
        UsageError: another mechanism than the declared one, or a parameter that contradicts
            a declared one (exit 2).
    """
    if declared is None:
        return None if options is None or options.none else options
    name = declared["name"]
    shown = f"[holdout_mechanism] name = {name!r}"
    if options is not None and options.none:
        raise HoldoutAccessError(
            f"{ref} declares {shown}: its holdout scores are answered by {name}, and the "
            "exact score stays sealed. `--mechanism none` is refused and no look was spent. "
            "Run without --mechanism; `evalsuite holdout reveal RUN --reason TEXT` shows a "
            "run's exact score and records why (docs/design/reusable-holdout.md)."
        )
    if options is None:
        options = MechanismOptions()
    if options.name is not None and options.name != name:
        raise UsageError(
            f"--mechanism {options.name} contradicts {ref}'s {shown}: a suite version's holdout "
            f"is answered by one mechanism. Drop --mechanism (or give {name}); another default "
            "needs a new major version of the suite (`evalsuite freeze`). No look was spent."
        )
    merged: dict[str, Any] = {}
    clash = []
    for key in ("threshold", "noise_scale", "budget", "step"):
        given, frozen = getattr(options, key), declared.get(key)
        if given is not None and frozen is not None and given != frozen:
            clash.append(f"{key} {given} (declared: {frozen})")
        merged[key] = given if given is not None else frozen
    if clash:
        raise UsageError(
            f"{', '.join(clash)}: {ref}'s {shown} fixes these in its manifest; drop the "
            "options to use the declared values. No look was spent."
        )
    return MechanismOptions(name=name, dev_run=options.dev_run, seed=options.seed, **merged)


def _dev_run(store: Store, suite: str, version: str, model: str, named: str | None) -> str:
    if named is not None:
        record = store.find_run(named)
        if record is None:
            raise NotFoundError(f"--dev-run {named}: no such run in the results store")
        if (record.suite, record.version, record.split) != (suite, version, "dev"):
            raise UsageError(
                f"--dev-run {named} is a {record.split} run of {record.suite}@{record.version}; "
                f"Thresholdout compares with a dev run of {suite}@{version}"
            )
        if record.status != "complete" or record.valid is not True:
            raise UsageError(f"--dev-run {named} is not a complete, valid run: name another")
        return named
    candidates = [
        r
        for r in store.list_runs(suite=suite)
        if (r.version, r.split, r.model, r.status, r.valid)
        == (version, "dev", model, "complete", True)
    ]
    if not candidates:
        raise UsageError(
            f"Thresholdout answers with the dev-split score of the same model when the holdout "
            f"agrees with it, and no complete, valid dev run of {model} on {suite}@{version} is "
            f"stored. Run `evalsuite run {suite}@{version} --model {model}` first, or name one "
            "with --dev-run RUN. No holdout look was spent."
        )
    return max(candidates, key=lambda r: r.started_at).run_id


def _fixed_params(
    name: MechanismName, fixed: Mapping[str, Any], options: MechanismOptions, scope: str
) -> None:
    given = {
        "threshold": options.threshold,
        "noise_scale": options.noise_scale,
        "budget": options.budget,
        "seed": options.seed,
        "step": options.step,
    }
    clash = [
        f"{k}={v} (fixed: {fixed[k]})"
        for k, v in given.items()
        if v is not None and k in fixed and fixed[k] != v
    ]
    if clash:
        raise UsageError(
            f"{name} on {scope} answered before with other parameters: {', '.join(clash)}. A "
            "mechanism's parameters are fixed by its first answer (changing them would restart "
            "its guarantee); drop these options to use the recorded ones."
        )


def prepare_mechanism(
    layout: Layout,
    store: Store,
    *,
    suite: str,
    version: str,
    model: str,
    model_family: str | None,
    options: MechanismOptions,
) -> PreparedMechanism:
    """Check a ``--mechanism`` run before it spends its look.

    Raises:
        UsageError: a missing dev run (Thresholdout), parameters that contradict those fixed
            by the scope's first answer, parameters out of range.
        HoldoutAccessError: Thresholdout's budget for this holdout is spent (exit 7).
        IntegrityError: the ledger is damaged (exit 3).
    """
    from evalsuite.holdout import (
        LadderParams,
        ThresholdoutParams,
        mechanism_scope,
        mechanism_state,
        read_ledger,
        resolve_family,
    )
    from evalsuite.manifest import load_manifest

    name = options.name
    if name is None:
        raise UsageError("no mechanism given")
    manifest = load_manifest(layout, suite, version)
    entries = read_ledger(layout.ledger_file(suite))
    family = resolve_family(entries, model, model_family)
    scope = mechanism_scope(name, suite, version, family)
    state = mechanism_state(entries, name, scope)
    holdout_n = sum(item.split == "holdout" for item in manifest.items)
    dev_n = len(manifest.items) - holdout_n
    try:
        if name == "thresholdout":
            if state.params is not None:
                _fixed_params(name, state.params, options, scope)
                params: ThresholdoutParams | LadderParams = ThresholdoutParams(**state.params)
            else:
                default = default_thresholdout(holdout_n, dev_n, manifest.holdout_budget)
                params = ThresholdoutParams(
                    threshold=options.threshold
                    if options.threshold is not None
                    else default["threshold"],
                    noise_scale=options.noise_scale
                    if options.noise_scale is not None
                    else default["noise_scale"],
                    budget=options.budget if options.budget is not None else int(default["budget"]),
                    seed=options.seed if options.seed is not None else secrets.randbits(62),
                )
        elif state.params is not None:
            _fixed_params(name, state.params, options, scope)
            params = LadderParams(**state.params)
        else:
            params = LadderParams(
                step=options.step if options.step is not None else default_ladder_step(holdout_n)
            )
    except ValueError as exc:
        raise UsageError(f"--mechanism {name}: {exc}") from None
    if isinstance(params, ThresholdoutParams) and state.spent >= params.budget:
        raise HoldoutAccessError(
            f"Thresholdout's budget of {params.budget} holdout answers on {scope} is spent: a "
            "run now would release nothing, so it is refused and no look was spent. Freeze a "
            "new suite version with fresh holdout items to measure again."
        )
    if name == "thresholdout":
        dev_run = _dev_run(store, suite, version, model, options.dev_run)
        dev_score = run_score(store, dev_run)
        if math.isnan(dev_score):
            raise UsageError(
                f"dev run {dev_run} has no scored attempt: name another with --dev-run"
            )
        return PreparedMechanism(name, scope, params, family, dev_run, dev_score)
    return PreparedMechanism(name, scope, params, family)


def _access(entries: list[LedgerEntry], run_id: str) -> LedgerEntry:
    for entry in reversed(entries):
        if entry.kind == "access" and entry.run_id == run_id:
            return entry
    raise NotFoundError(f"run {run_id} has no holdout access in the ledger")


def release_answer(
    layout: Layout, key_dir: Path, store: Store, prepared: PreparedMechanism, result: RunResult
) -> Release:
    """Answer a finished holdout run and append the answer to the ledger (under its lock).

    A run that is not complete (a shard) or not valid gets no answer: nothing is appended.
    """
    from evalsuite.holdout import (
        ThresholdoutParams,
        anchor_file,
        answer_record,
        ladder_answer,
        mechanism_state,
        open_ledger,
        thresholdout_answer,
        who,
    )

    run = result.run
    if not result.run_complete or result.health.valid is not True:
        return Release(
            prepared.name,
            prepared.scope,
            None,
            "the run is not complete and valid, so the mechanism released nothing and spent "
            "nothing for it",
            None,
            None,
        )
    exact = run_score(store, run.run_id)
    suite = run.suite or prepared.scope.split("@")[0]
    anchor = anchor_file(key_dir, layout.root, suite)
    with open_ledger(layout.ledger_file(suite), anchor=anchor) as ledger:
        if any(e.kind == "answer" and e.run_id == run.run_id for e in ledger.entries):
            raise UsageError(f"run {run.run_id} was answered already: see `holdout status`")
        state = mechanism_state(ledger.entries, prepared.name, prepared.scope)
        params = prepared.params
        inputs: dict[str, Any]
        if isinstance(params, ThresholdoutParams):
            answer: Any = thresholdout_answer(
                params,
                dev=prepared.dev_score or 0.0,
                holdout=exact,
                index=state.answers,
                spent=state.spent,
            )
            inputs = {"dev_run": prepared.dev_run, "dev_score": prepared.dev_score}
        else:
            answer = ladder_answer(params, score=exact, best=state.best, index=state.answers)
            inputs = {}
        record = answer_record(prepared.scope, params, answer, inputs)
        access = _access(ledger.entries, run.run_id)
        user, host = who()
        entry = ledger.append(
            {
                "run_id": run.run_id,
                "suite": access.suite,
                "version": access.version,
                "manifest_hash": access.manifest_hash,
                "model": access.model,
                "model_family": access.model_family,
                "user": user,
                "host": host,
                "at": datetime.now(UTC).isoformat(),
                "purpose": None,
                "override_reason": None,
                "resumed": False,
                "kind": "answer",
                "mechanism": record,
            }
        )
    return Release(
        prepared.name, prepared.scope, answer.released, answer.meaning(), record, entry.seq
    )


def reveal_exact(layout: Layout, key_dir: Path, store: Store, run_id: str, reason: str) -> Reveal:
    """Show the exact holdout score of a run a mechanism answered, recorded in the ledger.

    Raises:
        UsageError: an empty reason, or a run no mechanism answered (its score is not sealed).
        NotFoundError: no such run.
        LedgerError: the ledger is damaged (nothing is shown).
    """
    from evalsuite.holdout import anchor_file, open_ledger, who

    if not reason.strip():
        raise UsageError("--reason must say why the exact holdout score is needed (recorded)")
    record = store.find_run(run_id)
    if record is None or record.suite is None:
        raise NotFoundError(f"run {run_id} is not in the results store")
    anchor = anchor_file(key_dir, layout.root, record.suite)
    with open_ledger(layout.ledger_file(record.suite), anchor=anchor) as ledger:
        if not any(e.kind == "answer" and e.run_id == run_id for e in ledger.entries):
            raise UsageError(
                f"run {run_id} was not answered by a reusable-holdout mechanism: its score is "
                "not sealed (`evalsuite score` shows it)"
            )
        access = _access(ledger.entries, run_id)
        user, host = who()
        entry = ledger.append(
            {
                "run_id": run_id,
                "suite": access.suite,
                "version": access.version,
                "manifest_hash": access.manifest_hash,
                "model": access.model,
                "model_family": access.model_family,
                "user": user,
                "host": host,
                "at": datetime.now(UTC).isoformat(),
                "purpose": None,
                "override_reason": None,
                "resumed": False,
                "kind": "reveal",
                "reason": reason.strip(),
            }
        )
    return Reveal(run_id, run_score(store, run_id), reason.strip(), entry.seq)


def mechanism_problems(
    entries: list[LedgerEntry], store_url: str, *, suite: str, ledger: str
) -> list[str]:
    """Recompute every answer of `suite`'s ledger from it and the store (`verify`, `status`)."""
    from evalsuite.holdout import answer_problems

    answers = [e for e in entries if e.kind == "answer" and e.suite == suite]
    if not answers:
        return []
    from evalsuite.errors import StoreError
    from evalsuite.store import Store

    try:
        store = Store(store_url, create=False)
    except StoreError:
        return answer_problems(entries, {}, None, ledger=ledger)
    exact: dict[str, float] = {}
    dev: dict[str, float] = {}
    for entry in answers:
        if store.find_run(entry.run_id) is not None:
            exact[entry.run_id] = run_score(store, entry.run_id)
        dev_run = ((entry.mechanism or {}).get("inputs") or {}).get("dev_run")
        if dev_run and store.find_run(str(dev_run)) is not None:
            dev[str(dev_run)] = run_score(store, str(dev_run))
    return answer_problems(entries, exact, dev, ledger=ledger)


def mechanism_summaries(
    entries: list[LedgerEntry], *, suite: str, version: str
) -> list[JsonObject]:
    """Per mechanism scope of ``suite@version``: which mechanism, answers, budget, meaning."""
    from evalsuite.holdout import LadderAnswer, ThresholdoutAnswer

    summaries: dict[str, MutableMapping[str, Any]] = {}
    for entry in entries:
        if entry.kind != "answer" or entry.suite != suite or entry.version != version:
            continue
        record = entry.mechanism or {}
        answer = record.get("answer") or {}
        if record.get("name") == "thresholdout":
            meaning = ThresholdoutAnswer(**answer).meaning()
        else:
            meaning = LadderAnswer(**answer).meaning()
        summary = summaries.setdefault(
            str(record.get("scope")),
            {"mechanism": record.get("name"), "scope": record.get("scope"), "answers": 0},
        )
        summary["answers"] += 1
        summary["params"] = record.get("params")
        summary["last_run"] = entry.run_id
        summary["released"] = answer.get("released")
        summary["meaning"] = meaning
        if record.get("name") == "thresholdout":
            summary["budget_spent"] = answer.get("spent_after")
            summary["budget"] = answer.get("budget")
    return [dict(s) for s in summaries.values()]


def reveal_records(entries: list[LedgerEntry], *, suite: str, version: str) -> list[JsonObject]:
    """Every recorded reveal of a sealed exact score of ``suite@version`` (never the score)."""
    return [
        {"run_id": e.run_id, "user": e.user, "at": e.at, "reason": e.reason}
        for e in entries
        if e.kind == "reveal" and e.suite == suite and e.version == version
    ]


def check_sealed(layout: Layout, record: RunRecord) -> None:
    """Refuse to show a score sealed behind a mechanism's answer, unless a reveal is recorded.

    Raises:
        HoldoutAccessError: `record` is a holdout run a mechanism answered, and no ``reveal`` of
            it is in the ledger (exit 7); the message names the recorded way to see it.
    """
    if record.split != "holdout" or not record.suite:
        return
    path = layout.ledger_file(record.suite)
    if not path.is_file():
        return
    from evalsuite.holdout import read_ledger

    kinds = {e.kind for e in read_ledger(path) if e.run_id == record.run_id}
    if "answer" in kinds and "reveal" not in kinds:
        raise HoldoutAccessError(
            f"run {record.run_id}'s exact holdout score is sealed: a reusable-holdout mechanism "
            "answered for it (`evalsuite holdout status` shows the released number and what it "
            f'means). `evalsuite holdout reveal {record.run_id} --reason "..."` shows it and '
            "records that it did; afterwards this command shows it too."
        )
