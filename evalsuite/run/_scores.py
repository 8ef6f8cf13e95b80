"""Which of a sample's scores counts, how its value maps to [0, 1], and what is kept beside it.

A family declares ``score`` (a scorer name, a key of a dict-valued score, or ``scorer/key``)
and ``score_bounds`` in its suite file; both are frozen into the manifest (docs/design/
scorers.md). Without a declaration the single scorer's single value counts, as before; several
scorers, or a dict value, without a declaration are refused before a run starts (or, when a
dict only shows up in a sample, that attempt is a harness error naming the keys): never
silently the first.

Values map to [0, 1] by inspect's ``value_to_float`` conventions (``inspect_ai.scorer``):
``C``/``I``/``P``/``N`` -> 1/0/0.5/0, booleans 1/0, ``yes``/``true``/``no``/``false``, numbers
and numeric strings. Where inspect turns anything else into 0.0 with a warning, evalsuite
records a harness error with the reason; a number outside [0, 1] (or outside the declared
``score_bounds``, mapped linearly) is a harness error too: nothing is clipped or defaulted.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inspect_ai import Task
from inspect_ai.scorer import Score
from inspect_ai.util import registry_info

from evalsuite._core.checks import SECONDARY_ERRORS_KEY, SECONDARY_KEY
from evalsuite.errors import UsageError
from evalsuite.manifest import FamilyConfig, Manifest, ManifestFamily

__all__ = [
    "SECONDARY_ERRORS_KEY",
    "SECONDARY_KEY",
    "NamedScore",
    "Picked",
    "ScoreRule",
    "ScorerInfo",
    "check_family_scoring",
    "check_task_scoring",
    "family_rules",
    "pick_scores",
    "scorer_infos",
    "to_unit",
]

_CORRECT, _INCORRECT, _PARTIAL, _NOANSWER = "C", "I", "P", "N"


@dataclass(frozen=True, slots=True)
class ScoreRule:
    """A family's score declaration (absent fields: the default, single-value rule)."""

    select: str | None = None
    """``score``: scorer name, dict key, or ``scorer/key``."""
    bounds: tuple[float, float] | None = None
    """``score_bounds``: scale of a numeric value, mapped linearly to [0, 1]."""
    where: str = "the family's entry in tasks/<suite>.toml"
    """How messages name the declaration's place (family and suite file)."""

    @classmethod
    def of_family(cls, family: ManifestFamily, suite: str) -> ScoreRule:
        """The rule frozen in a manifest's family record."""
        return cls(
            select=family.score,
            bounds=family.score_bounds,
            where=f"family {family.name!r} of tasks/{suite}.toml",
        )


@dataclass(frozen=True, slots=True)
class NamedScore:
    """One value of a sample's scores, named as a declaration selects it."""

    name: str
    scorer: str
    key: str | None
    value: Any
    score: Score


@dataclass(frozen=True, slots=True)
class Picked:
    """The score that counts, and the others (secondary metrics)."""

    primary: NamedScore
    secondary: tuple[NamedScore, ...]


def _describe(value: Any) -> str:
    """A value's kind for a reason; never a string's text (it could quote an item)."""
    if isinstance(value, str):
        return f"a string ({len(value)} characters) that is not a score value"
    if isinstance(value, Mapping):
        return f"a dict (keys: {', '.join(sorted(map(str, value)))})"
    if isinstance(value, Sequence):
        return f"a list of {len(value)} values"
    return f"a value of type {type(value).__name__}"


def _string_to_unit(value: str) -> tuple[float | None, str] | float:
    """A letter or yes/no string mapped, or the number a numeric string holds."""
    letters = {_CORRECT: 1.0, _PARTIAL: 0.5, _INCORRECT: 0.0, _NOANSWER: 0.0}
    if value in letters:
        return letters[value], ""
    lowered = value.lower()
    if lowered in ("yes", "true"):
        return 1.0, ""
    if lowered in ("no", "false"):
        return 0.0, ""
    try:
        return float(value)
    except ValueError:
        return None, f"{_describe(value)} (expected C, I, P, N, yes/no, true/false or a number)"


def _number_to_unit(number: float, bounds: tuple[float, float] | None) -> tuple[float | None, str]:
    if not math.isfinite(number):
        return None, f"the value {number!r} is not a finite number"
    if bounds is not None:
        low, high = bounds
        if not low <= number <= high:
            return None, (
                f"the value {number:g} is outside the declared score_bounds "
                f"[{low:g}, {high:g}] (never clipped)"
            )
        return (number - low) / (high - low), ""
    if not 0.0 <= number <= 1.0:
        return None, (
            f"the value {number:g} is outside [0, 1] (never clipped); if the scorer's "
            "scale is wider, declare it with score_bounds = [low, high]"
        )
    return number, ""


def to_unit(value: Any, bounds: tuple[float, float] | None = None) -> tuple[float | None, str]:
    """A score value as a float in [0, 1], or None and why not.

    inspect's ``value_to_float`` conventions, except that nothing unrecognised becomes 0.0:
    ``C``/``I``/``P``/``N`` map to 1/0/0.5/0, booleans to 1/0, ``yes``/``true`` and
    ``no``/``false`` (any case) to 1/0; numbers and numeric strings must lie in [0, 1], or
    in `bounds` (then mapped linearly). Bounds do not apply to the letters or booleans.

    Examples:
        >>> to_unit("P")[0], to_unit(True)[0], to_unit(7, (0, 10))[0], to_unit(1.5)[0]
        (0.5, 1.0, 0.7, None)
    """
    if value is None:
        return None, "no value"
    if isinstance(value, bool):
        return (1.0 if value else 0.0), ""
    if isinstance(value, str):
        mapped = _string_to_unit(value)
        if isinstance(mapped, tuple):
            return mapped
        value = mapped
    if isinstance(value, int | float):
        return _number_to_unit(float(value), bounds)
    return None, f"{_describe(value)}, not a score value"


def _flatten(scores: Mapping[str, Score]) -> list[NamedScore]:
    """Every (scorer, key) value of a sample, named as a declaration would select it."""
    several = len(scores) > 1
    metrics = []
    for scorer, score in scores.items():
        if isinstance(score.value, Mapping):
            for key, value in score.value.items():
                name = f"{scorer}/{key}" if several else str(key)
                metrics.append(NamedScore(name, scorer, str(key), value, score))
        else:
            metrics.append(NamedScore(scorer, scorer, None, score.value, score))
    return metrics


def _available(scores: Mapping[str, Score]) -> str:
    return ", ".join(
        f"{name} (keys: {', '.join(map(str, score.value))})"
        if isinstance(score.value, Mapping)
        else name
        for name, score in scores.items()
    )


def pick_scores(scores: Mapping[str, Score], rule: ScoreRule) -> Picked | str:
    """The sample's primary metric by `rule`, and its secondary metrics; or a harness reason.

    Without a declaration exactly one scorer with a single value is accepted.
    """
    if not scores:
        return "the grader produced no score"
    metrics = _flatten(scores)
    fix = f'declare which counts in {rule.where}: score = "<name>"'
    if rule.select is None:
        if len(scores) > 1:
            return (
                f"the task has {len(scores)} scorers ({_available(scores)}) and none is declared "
                f"as the score; {fix}"
            )
        ((name, score),) = scores.items()
        if isinstance(score.value, Mapping):
            return f"scorer {name!r} returned {_describe(score.value)}; {fix}"
        primary = metrics[0]
    else:
        chosen = [m for m in metrics if m.name == rule.select]
        if not chosen:
            chosen = [
                m
                for m in metrics
                if (m.key is None and m.scorer == rule.select)
                or (m.key is not None and f"{m.scorer}/{m.key}" == rule.select)
            ]
        if not chosen and rule.select in scores:
            return (
                f"scorer {rule.select!r} returned {_describe(scores[rule.select].value)}; "
                f'name a key in {rule.where}: score = "{rule.select}/<key>"'
            )
        if not chosen:
            return (
                f"the declared score {rule.select!r} ({rule.where}) is not among this "
                f"sample's scores: {_available(scores)}"
            )
        primary = chosen[0]
    return Picked(primary, tuple(m for m in metrics if m is not primary))


@dataclass(frozen=True, slots=True)
class ScorerInfo:
    """A task's scorer as a run sees it before any sample: its name and declared keys."""

    name: str
    """The name inspect gives its scores (unqualified registry name, made unique)."""
    keys: tuple[str, ...]
    """Keys of a dict value, from the scorer's dict metrics (``"*"`` left out)."""
    dict_valued: bool
    """The scorer's metrics are declared per key, so its value is a dict."""


def scorer_infos(task: Task) -> list[ScorerInfo]:
    """The scorers of `task`, named as inspect names their scores in a sample.

    inspect names a score by the scorer's registry name without its package prefix, with a
    number appended when two scorers share a name (``match``, ``match1``).
    """
    infos: list[ScorerInfo] = []
    used: list[str] = []
    for scorer in task.scorer or []:
        info = registry_info(scorer)
        base = info.name.split("/", 1)[1] if "/" in info.name else info.name
        name, count = base, 1
        while name in used:
            name, count = f"{base}{count}", count + 1
        used.append(name)
        metrics = info.metadata.get("metrics")
        groups: list[Mapping[str, Any]] = []
        if isinstance(metrics, Mapping):
            groups = [metrics]
        elif isinstance(metrics, Sequence):
            groups = [m for m in metrics if isinstance(m, Mapping)]
        keys = tuple(sorted({str(k) for g in groups for k in g if k != "*"}))
        infos.append(ScorerInfo(name=name, keys=keys, dict_valued=bool(groups)))
    return infos


def _listing(infos: Sequence[ScorerInfo]) -> str:
    return ", ".join(
        f"{i.name} (keys: {', '.join(i.keys) or 'decided per sample'})" if i.dict_valued else i.name
        for i in infos
    )


def check_task_scoring(task: Task, rule: ScoreRule, *, ref: str, frozen: bool = True) -> None:
    """Refuse a declaration that cannot pick one score of `task`: before a run, and at freeze.

    Refused: several scorers, or a scorer whose metrics are declared per key (a dict value),
    with no ``score`` declared; a declaration that names no scorer or key of the task.

    Args:
        task: The family's task (only its scorers are read).
        rule: The family's declaration.
        ref: The suite version (or, at freeze, the suite) for messages.
        frozen: True before a run (the version is frozen: the fix is a new version); False
            at freeze (nothing is frozen yet: the fix is the suite file).

    Raises:
        UsageError: what the task's scorers and keys are, and what to declare.
    """
    infos = scorer_infos(task)
    names = {i.name: i for i in infos}
    new_version = (
        (
            f"then freeze a new major version of the suite and run that ({ref} is frozen "
            "and never changes)"
        )
        if frozen
        else f"then freeze again (nothing of {ref} was frozen: a version whose score cannot "
        "be picked could never run)"
    )
    if rule.select is None:
        if len(infos) > 1:
            raise UsageError(
                f"{ref}: the task of {rule.where} has {len(infos)} scorers "
                f"({_listing(infos)}) and no declared score, so evalsuite cannot tell which "
                f"one counts (it never takes the first silently). Declare it in {rule.where}: "
                f'score = "{infos[0].name}" (or "scorer/key" for a dict-valued scorer); the '
                f"others are kept as secondary metrics; {new_version}."
            )
        if len(infos) == 1 and infos[0].dict_valued:
            only = infos[0]
            example = only.keys[0] if only.keys else "<key>"
            raise UsageError(
                f"{ref}: scorer {only.name!r} of {rule.where} returns a dict "
                f"(keys: {', '.join(only.keys) or 'decided per sample'}) and no declared score, "
                f"so evalsuite cannot tell which value counts. Declare it in {rule.where}: "
                f'score = "{example}"; the other keys are kept as secondary metrics; '
                f"{new_version}."
            )
        return
    select = rule.select
    problem = ""
    if not infos:
        problem = "the task has no scorer"
    elif select in names:
        if names[select].dict_valued:
            keys = names[select].keys
            problem = (
                f"scorer {select!r} returns a dict (keys: {', '.join(keys) or 'per sample'}); "
                f'name a key, e.g. score = "{select}/{keys[0] if keys else "<key>"}"'
            )
    else:
        scorer, _, key = select.rpartition("/")
        if scorer and scorer in names:
            known = names[scorer].keys
            if known and key not in known:
                problem = f"scorer {scorer!r} has no key {key!r} (keys: {', '.join(known)})"
        elif len(infos) == 1 and not scorer:
            known = infos[0].keys
            if known and select not in known:
                problem = f"scorer {infos[0].name!r} has no key {select!r}"
        else:
            problem = "it names no scorer of the task" + (
                "; with several scorers, name a key as 'scorer/key'" if len(infos) > 1 else ""
            )
    if problem:
        raise UsageError(
            f'{ref}: the declared score = "{select}" of {rule.where} does not fit its task: '
            f"{problem}. Scorers of the task: {_listing(infos) or 'none'}. Correct it in "
            f"{rule.where}; {new_version}."
        )


def check_family_scoring(
    function: Callable[..., Task], family: FamilyConfig, *, suite: str
) -> None:
    """At freeze: refuse a family whose declared (or missing) ``score`` cannot pick one score.

    The task is built on one placeholder sample, as before a run (only its scorers are read,
    no item), and checked with `check_task_scoring`; a version frozen with such a family could
    never run (docs/design/scorers.md).

    Raises:
        UsageError: the declaration does not fit the task's scorers (the message names the
            scorers and their keys), or the task fails to build.
    """
    from inspect_ai.dataset import Sample

    from evalsuite.run._tasks import build_task

    try:
        task = build_task(function, family, [Sample(id="evalsuite-scorer-check", input="")])
    except Exception as exc:
        raise UsageError(
            f"the task function {family.task} of family {family.name!r} failed to build its "
            f"task: {type(exc).__name__}: {str(exc)[:300]}. Nothing was frozen; fix the task "
            "code and freeze again."
        ) from None
    rule = ScoreRule(
        select=family.score,
        bounds=family.score_bounds,
        where=f"family {family.name!r} of tasks/{suite}.toml",
    )
    check_task_scoring(task, rule, ref=suite, frozen=False)


def family_rules(
    manifest: Manifest, task_of: Callable[[ManifestFamily], Task | None]
) -> dict[str, ScoreRule]:
    """Each family's score rule, checked against its task before a run starts.

    Args:
        manifest: The frozen manifest (its family records carry the declarations).
        task_of: The family's inspect task (only its scorers are read), or None when the run
            has no item of that family (nothing of it is scored, nothing to check).

    Raises:
        UsageError: a family's declaration cannot pick one score (`check_task_scoring`).
    """
    rules = {}
    for family in manifest.families:
        rule = ScoreRule.of_family(family, manifest.suite)
        task = task_of(family)
        if task is not None:
            check_task_scoring(task, rule, ref=manifest.ref)
        rules[family.name] = rule
    return rules
