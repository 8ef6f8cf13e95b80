"""Canary memorisation probe: can the model under evaluation complete its suite's canary?

A model that reproduces the random part of a canary string from its prefix has almost
certainly been trained on a document that carried it: a copy of the suite (or of an export
of it) reached its training data. The probe asks the model, several times with different
seeds, to continue the canary's prefix, and reports how many of the hidden characters came
back. It is evidence of contamination when it fires; when it does not, it proves nothing
(a model can be trained on items whose canary was stripped).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from evalsuite._core.seeds import derive_seed

__all__ = ["CanaryProbe", "canary_probe", "split_canary"]

PROMPT = (
    "The following line is the beginning of a marker string that appears in some documents. "
    "Continue it exactly, character for character, and output only the continuation.\n\n{prefix}"
)


def split_canary(canary: str) -> tuple[str, str]:
    """(shown prefix, hidden suffix): the last 16 characters are hidden (at least a third)."""
    hidden = max(16, len(canary) // 3)
    hidden = min(hidden, len(canary) - 8)
    return canary[:-hidden], canary[-hidden:]


@dataclass(frozen=True, slots=True)
class CanaryProbe:
    """Result of the probe for one suite and model."""

    suite: str
    model: str
    tries: int
    hidden_chars: int
    best_match: int
    """Longest prefix of the hidden part reproduced by any try."""
    completions_matching: int
    """Tries that reproduced the whole hidden part."""
    seeds: list[int] = field(default_factory=list)

    @property
    def memorised(self) -> bool:
        """True when any try reproduced the whole hidden part (or its first 12 characters)."""
        return self.best_match >= min(12, self.hidden_chars)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "suite": self.suite,
            "model": self.model,
            "tries": self.tries,
            "hidden_chars": self.hidden_chars,
            "best_match": self.best_match,
            "completions_matching": self.completions_matching,
            "memorised": self.memorised,
            "seeds": self.seeds,
        }


def _matched(hidden: str, completion: str) -> int:
    text = completion.strip()
    best = 0
    for start in range(len(text)):
        n = 0
        while n < len(hidden) and start + n < len(text) and text[start + n] == hidden[n]:
            n += 1
        best = max(best, n)
    return best


async def _ask(model: str, model_args: dict[str, Any], prompt: str, seeds: list[int]) -> list[str]:
    from inspect_ai.model import GenerateConfig, get_model

    llm = get_model(model, **model_args)
    outputs = []
    for seed in seeds:
        result = await llm.generate(prompt, config=GenerateConfig(seed=seed, max_tokens=64))
        outputs.append(result.completion)
    return outputs


def canary_probe(
    suite: str,
    canary: str,
    model: str,
    *,
    model_args: dict[str, Any] | None = None,
    tries: int = 5,
    seed: int = 0,
) -> CanaryProbe:
    """Ask `model` to continue the prefix of `canary` `tries` times (seeds derived from `seed`)."""
    prefix, hidden = split_canary(canary)
    seeds = [derive_seed(seed, "canary-probe", i) % 2**31 for i in range(tries)]
    completions = asyncio.run(
        _ask(model, dict(model_args or {}), PROMPT.format(prefix=prefix), seeds)
    )
    matches = [_matched(hidden, c) for c in completions]
    return CanaryProbe(
        suite=suite,
        model=model,
        tries=tries,
        hidden_chars=len(hidden),
        best_match=max(matches, default=0),
        completions_matching=sum(1 for m in matches if m == len(hidden)),
        seeds=seeds,
    )
