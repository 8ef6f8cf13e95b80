"""Shortcut detection: can an item's target be told from the surface of its prompt alone?

For each stratum and each scalar leaf of the target (each field of a JSON target, or the whole
target) whose value names an entity of the prompt (`_redteam.shape_of`), the candidates are
the prompt's distinct entities of the same shape; items with fewer than two candidates pose no
choice and are left out. A logistic regression (numpy, L2-regularised) is fitted on surface
features of each candidate and evaluated leave-one-item-out: for each item, the candidate it
scores highest is its prediction. Each feature group is fitted alone, and all of them together;
the best is compared with chance (the mean of 1 / candidates) by a one-sided exact binomial
test. A stratum has a shortcut when the best accuracy is at least `MIN_EFFECT` above chance
with p below `ALPHA` on at least `MIN_ITEMS` items: the check names the stratum, the leaf, the
feature and the items it predicts. Features a family declares harmless
(`evalsuite.kit.Family.harmless_features`, with a reason) are not fitted.

Only the items' prompts and targets are read, in memory (the audit's dev oracle traces); never
the holdout. See docs/design/grader-audit.md ("Shortcut detector").
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evalsuite.audit._redteam import entities, shape_of

__all__ = [
    "ALPHA",
    "FEATURES",
    "MIN_EFFECT",
    "MIN_ITEMS",
    "ShortcutFinding",
    "binomial_tail",
    "find_shortcuts",
]

FEATURES = (
    "ordinal",
    "first",
    "last",
    "relative_position",
    "length",
    "previous_token",
    "next_token",
)
ALPHA = 0.01
MIN_EFFECT = 0.25
MIN_ITEMS = 5
_WORD = re.compile(r"[A-Za-z]+")


@dataclass(frozen=True, slots=True)
class _Candidate:
    value: str
    index: int
    count: int
    previous: str
    following: str
    mean_length: float


@dataclass(frozen=True, slots=True)
class _Question:
    item: str
    candidates: tuple[_Candidate, ...]
    answer: int


@dataclass(slots=True)
class ShortcutFinding:
    """One (stratum, target leaf): how well the prompt's surface predicts it."""

    stratum: str
    leaf: str
    items: int
    chance: float
    feature: str
    accuracy: float
    p_value: float
    predicted: list[str] = field(default_factory=list)
    """Items whose target the feature predicts (leave one out)."""

    @property
    def shortcut(self) -> bool:
        """True when the prediction is well above chance (see the module doc)."""
        return (
            self.items >= MIN_ITEMS
            and self.p_value < ALPHA
            and self.accuracy - self.chance >= MIN_EFFECT
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (a stratum of the ``shortcut`` check)."""
        return {
            "leaf": self.leaf,
            "items": self.items,
            "chance": round(self.chance, 4),
            "feature": self.feature,
            "accuracy": round(self.accuracy, 4),
            "p_value": float(f"{self.p_value:.3g}"),
            "predicted": sorted(self.predicted),
            "failed": self.shortcut,
        }


def binomial_tail(successes: int, trials: int, p: float) -> float:
    """P(X >= successes) for X ~ Binomial(trials, p): the one-sided exact test's p-value."""
    p = min(max(p, 0.0), 1.0)
    return float(
        sum(
            math.comb(trials, k) * p**k * (1 - p) ** (trials - k)
            for k in range(successes, trials + 1)
        )
    )


def _leaves(target: str) -> list[tuple[str, str]]:
    try:
        data = json.loads(target)
    except (json.JSONDecodeError, ValueError):
        return [("target", target.strip())]
    found: list[tuple[str, str]] = []

    def walk(value: Any, path: str) -> None:
        if isinstance(value, dict):
            for key in sorted(value, key=str):
                walk(value[key], f"{path}.{key}" if path else str(key))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, f"{path}[{index}]")
        elif value is not None and not isinstance(value, bool):
            found.append((path or "target", str(value)))

    walk(data, "")
    return found


def _neighbours(prompt: str, value: str) -> tuple[str, str]:
    at = prompt.find(value)
    before = _WORD.findall(prompt[max(0, at - 40) : at])
    after = _WORD.findall(prompt[at + len(value) : at + len(value) + 40])
    return (before[-1].lower() if before else ""), (after[0].lower() if after else "")


def _question(item: str, prompt: str, value: str) -> _Question | None:
    shape = shape_of(value)
    if shape is None:
        return None
    found = entities(prompt, shape)
    if value.strip() not in found or len(found) < 2:
        return None
    mean = sum(len(v) for v in found) / len(found)
    candidates = tuple(
        _Candidate(v, i, len(found), *_neighbours(prompt, v), mean) for i, v in enumerate(found)
    )
    return _Question(item, candidates, found.index(value.strip()))


_Vocabulary = Mapping[str, Mapping[str, int]]


def _features(candidate: _Candidate, group: str, vocabulary: _Vocabulary) -> list[float]:
    i, n = candidate.index, candidate.count
    if group == "ordinal":
        return [1.0 if min(i, 4) == k else 0.0 for k in range(5)]
    if group == "first":
        return [1.0 if i == 0 else 0.0]
    if group == "last":
        return [1.0 if i == n - 1 else 0.0]
    if group == "relative_position":
        return [i / (n - 1) if n > 1 else 0.0]
    if group == "length":
        return [len(candidate.value) / candidate.mean_length - 1.0]
    words = vocabulary.get(group, {})
    word = candidate.previous if group == "previous_token" else candidate.following
    row = [0.0] * len(words)
    if word in words:
        row[words[word]] = 1.0
    return row


def _matrix(
    questions: Sequence[_Question], groups: Sequence[str], vocabulary: _Vocabulary
) -> tuple[np.ndarray, np.ndarray]:
    rows, labels = [], []
    for question in questions:
        for candidate in question.candidates:
            row = [1.0]
            for group in groups:
                row += _features(candidate, group, vocabulary)
            rows.append(row)
            labels.append(1.0 if candidate.index == question.answer else 0.0)
    return np.asarray(rows, dtype=float), np.asarray(labels, dtype=float)


def _fit(x: np.ndarray, y: np.ndarray, l2: float = 1.0) -> np.ndarray:
    """L2-regularised logistic regression by Newton's method (the intercept unpenalised)."""
    weights = np.zeros(x.shape[1])
    penalty = np.eye(x.shape[1]) * l2
    penalty[0, 0] = 0.0
    for _ in range(25):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ weights, -30, 30)))
        gradient = x.T @ (p - y) + penalty @ weights
        hessian = x.T @ (x * (p * (1 - p))[:, None]) + penalty + np.eye(x.shape[1]) * 1e-6
        step = np.linalg.solve(hessian, gradient)
        weights -= step
        if float(np.abs(step).max()) < 1e-6:
            break
    return weights


def _vocabulary(questions: Sequence[_Question]) -> dict[str, dict[str, int]]:
    vocabulary: dict[str, dict[str, int]] = {"previous_token": {}, "next_token": {}}
    for question in questions:
        for candidate in question.candidates:
            for group, word in (
                ("previous_token", candidate.previous),
                ("next_token", candidate.following),
            ):
                if word and word not in vocabulary[group]:
                    vocabulary[group][word] = len(vocabulary[group])
    return vocabulary


def _leave_one_out(questions: Sequence[_Question], groups: Sequence[str]) -> list[bool]:
    correct = []
    for held in range(len(questions)):
        train = [q for i, q in enumerate(questions) if i != held]
        vocabulary = _vocabulary(train)
        x, y = _matrix(train, groups, vocabulary)
        weights = _fit(x, y)
        test, _ = _matrix([questions[held]], groups, vocabulary)
        scores = test @ weights
        best = np.flatnonzero(scores >= scores.max() - 1e-9)
        # a tie is no prediction: the first of the tied candidates, as chance would pick
        correct.append(len(best) == 1 and int(best[0]) == questions[held].answer)
    return correct


def find_shortcuts(
    items: Sequence[tuple[str, str, str, str]],
    harmless: Mapping[str, str] | None = None,
    *,
    progress: Callable[[str], None] | None = None,
) -> list[ShortcutFinding]:
    """Per (stratum, target leaf), the surface feature that best predicts the target.

    Strata of three or more levels are also pooled with their siblings (``family/intent/*``):
    a pattern shared by a few items in each of several strata is found where each stratum
    alone is too small to test.

    Args:
        items: (item id, stratum, prompt, target) of the audited items.
        harmless: Features not to fit, or target leaves not to examine (name -> reason).
        progress: Called with each stratum as it is examined (tests, benchmarks).
    """
    skip = set(harmless or {})
    groups = [g for g in FEATURES if g not in skip]
    by_stratum: dict[str, list[tuple[str, str, str]]] = {}
    for item, stratum, prompt, target in sorted(items):
        by_stratum.setdefault(stratum, []).append((item, prompt, target))
        parts = stratum.split("/")
        if len(parts) > 2:  # strata pooled with their siblings (``family/intent/*``)
            by_stratum.setdefault("/".join(parts[:-1]) + "/*", []).append((item, prompt, target))
    findings: list[ShortcutFinding] = []
    for stratum, members in sorted(by_stratum.items()):
        if progress is not None:
            progress(stratum)
        leaves: dict[str, list[_Question]] = {}
        for item, prompt, target in members:
            for leaf, value in _leaves(target):
                question = _question(item, prompt, value)
                if question is not None and leaf not in skip:
                    leaves.setdefault(leaf, []).append(question)
        for leaf, questions in sorted(leaves.items()):
            if len(questions) >= MIN_ITEMS and groups:
                findings.append(_best(stratum, leaf, questions, groups))
    return findings


def _best(
    stratum: str, leaf: str, questions: Sequence[_Question], groups: Sequence[str]
) -> ShortcutFinding:
    """The feature group (or all together) that predicts the leaf best, leave one out."""
    chance = sum(1 / len(q.candidates) for q in questions) / len(questions)
    best: ShortcutFinding | None = None
    for name, chosen in [(g, [g]) for g in groups] + [("combined", list(groups))]:
        hits = _leave_one_out(questions, chosen)
        accuracy = sum(hits) / len(hits)
        finding = ShortcutFinding(
            stratum=stratum,
            leaf=leaf,
            items=len(questions),
            chance=chance,
            feature=name,
            accuracy=accuracy,
            p_value=binomial_tail(sum(hits), len(hits), chance),
            predicted=[q.item for q, hit in zip(questions, hits, strict=True) if hit],
        )
        if best is None or finding.accuracy > best.accuracy:
            best = finding
    if best is None:
        raise ValueError("no feature group to fit")
    return best
