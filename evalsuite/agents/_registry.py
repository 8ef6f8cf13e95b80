"""Entry point (``[project.entry-points.inspect_ai]``): the `evalsuite` model provider.

Use ``--model evalsuite/baseline``, ``evalsuite/improved`` or ``evalsuite/hacker`` (the
offline reference agents), ``evalsuite/replay -M log=PATH`` (the outputs recorded in an
earlier inspect log, see `evalsuite.agents._replay`), ``evalsuite/audit`` (the grader
audit's scripted policies, only inside ``evalsuite audit --graders``), or ``evalsuite/judge``
(the offline rubric judge of the example suite `answers`, `evalsuite.agents._judge`).
"""

from __future__ import annotations

from typing import Any, cast

from inspect_ai.model import ModelAPI, modelapi


def create_model(model_name: str, *args: Any, **kwargs: Any) -> ModelAPI:
    """The ModelAPI behind ``evalsuite/<model_name>`` (imported lazily)."""
    if model_name == "replay":
        from evalsuite.agents._replay import ReplayModel

        return ReplayModel(model_name, *args, **kwargs)
    if model_name == "judge":
        from evalsuite.agents._judge import RubricJudge

        return RubricJudge(model_name, *args, **kwargs)
    if model_name == "audit":
        from evalsuite.agents._audit import AuditModel

        return AuditModel(model_name, *args, **kwargs)
    from evalsuite.agents._provider import ReferenceAgents

    return ReferenceAgents(model_name, *args, **kwargs)


@modelapi(name="evalsuite")
def evalsuite() -> type[ModelAPI]:
    """What inspect instantiates for ``evalsuite/<name>`` with the model's arguments.

    inspect calls the returned object with the model name and arguments, like a ModelAPI
    class; a factory picks the reference agents or the replay model by name.
    """
    return cast(type[ModelAPI], create_model)
