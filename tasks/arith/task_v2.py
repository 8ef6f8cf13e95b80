"""Arithmetic and multi-step word problems (evalsuite example family, version 2; arith@2.0.0).

Version 1 (`task.py`, kept unchanged for arith@1.0.0) ran on inspect's default limits. Version
2 declares its limits (time, messages, tokens per episode) and applies them, and declares the
family kit (`kit.py`) the grader audit plays. Prompt, solver and verifier are version 1's: the
model answers in free text ending with ``ANSWER: <integer>``; the verifier parses the last such
line and compares it with the target exactly. History of this family's version: tasks/README.md.
"""

import hashlib
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.solver import system_message

from evalsuite.kit import Limits
from evalsuite.run import standalone_samples

HERE = Path(__file__).resolve().parent
VERSION = 2
LIMITS = Limits(time_s=120, messages=10, tokens=20_000)


def _sibling(name: str) -> ModuleType:
    """This folder's module `name`, loaded once under a private name derived from its path."""
    key = f"_evalsuite_arith_{name}_" + hashlib.sha256(str(HERE).encode()).hexdigest()[:12]
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, HERE / f"{name}.py")
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {HERE / name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[key]
            raise
    return sys.modules[key]


v1 = _sibling("task")


@task
def arith(dataset: Sequence[Sample] | None = None) -> Task:
    """The arith family; `dataset` is given by the evalsuite runner (default: dev items)."""
    samples = list(dataset) if dataset is not None else standalone_samples(HERE / "items.jsonl")
    return Task(
        dataset=samples,
        solver=[system_message(v1.SYSTEM_PROMPT), v1.seeded_generate()],
        scorer=v1.final_answer(),
        time_limit=LIMITS.time_s,
        message_limit=LIMITS.messages,
        token_limit=LIMITS.tokens,
        version=VERSION,
    )


FAMILY = _sibling("kit").arith_kit(arith, VERSION, LIMITS)
