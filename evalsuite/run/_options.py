"""Run options passed through to inspect's ``eval()``: which are allowed, and how they are used.

`evalsuite run` takes every ``eval()`` option that does not change what is measured
(docs/design/foreign-tasks.md, "Run options"): generation settings of the model under test
(``--temperature``, ``--max-tokens``, ``-G KEY=VALUE`` for the rest of inspect's
``GenerateConfig``), concurrency (``--max-connections``, ``--max-samples``,
``--max-subprocesses``, ``--max-sandboxes``, ``--max-tasks``), where code runs
(``--sandbox``), where logs go (``--log-dir``, dev runs only) and the model's server
(``--model-base-url``). Everything used is recorded in the run's spec. Options that would
change what is measured, or that evalsuite decides itself, are refused with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from pydantic import ValidationError

__all__ = [
    "REFUSED_GENERATE",
    "check_generate_config",
    "parse_sandbox",
]

REFUSED_GENERATE: Final[dict[str, str]] = {
    "seed": "evalsuite gives every (item, epoch) its own seed, derived from --seed",
    "cache": "cached outputs would repeat one answer across epochs and runs",
    "system_message": "it changes the prompt the suite froze",
    "num_choices": "the task's scorer reads one output per call",
    "best_of": "choosing the best of several outputs changes what is measured",
    "fallback_models": "another model could answer for the one being measured",
    "response_schema": "it changes what the task asks the model for",
    "max_tool_output": "it changes what the agent sees of its tools (the task decides)",
    "fail_on_refusal": "a refusal is the model's answer and is scored, not a harness error",
}
"""GenerateConfig fields `run` refuses, with the reason shown to the user."""


def check_generate_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """Validate generation settings for the model under test (``-G``, ``--temperature``, ...).

    Raises:
        ValueError: a key is not a field of inspect's ``GenerateConfig``, is refused (the
            reason is given), or has a value of the wrong type.
    """
    from inspect_ai.model import GenerateConfig

    fields = set(GenerateConfig.model_fields)
    for key in config:
        if key in REFUSED_GENERATE:
            raise ValueError(
                f"generation setting {key!r} is not allowed in a run: {REFUSED_GENERATE[key]}"
            )
        if key not in fields:
            allowed = ", ".join(sorted(fields - set(REFUSED_GENERATE)))
            raise ValueError(f"{key!r} is not a generation setting of inspect (one of {allowed})")
    try:
        GenerateConfig.model_validate(dict(config))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise ValueError(f"generation settings are not valid: {problems}") from None
    return dict(config)


def parse_sandbox(value: str | None) -> str | tuple[str, str] | None:
    """``--sandbox TYPE`` or ``TYPE:CONFIG`` (inspect's command-line form) for ``eval()``."""
    if value is None:
        return None
    kind, sep, config = value.partition(":")
    return (kind, config) if sep and config else kind
