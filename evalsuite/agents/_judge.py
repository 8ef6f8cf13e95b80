"""``evalsuite/judge``: an offline rubric judge for model-graded families (issue 33).

A real judge is a remote model; the example suite `answers` needs one that runs offline, in
CI and in `make demo`, so that the judge audit, the judge marks and `regrade` run end to end
on a shipped family. This judge reads the prompt of inspect's `model_graded_qa` (its default
template: ``[Submission]: ...`` and ``[Criterion]: ...``) and applies the family's rubric:

* the submission's final answer is its last ``ANSWER: <integer>`` line, or the whole
  submission when it is a bare integer;
* ``GRADE: C`` when that integer equals the criterion's, else ``GRADE: I``.

Its output states the rule it applied (the raw judge output a run keeps), so a verdict can be
read. It follows no instruction in the submission and takes no claim of correctness for one;
the judge audit's probes check exactly that (docs/design/judge-audit.md).
"""

from __future__ import annotations

import re
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput
from inspect_ai.model._model_output import ModelUsage
from inspect_ai.tool import ToolChoice, ToolInfo

__all__ = ["RubricJudge", "final_integer", "rubric_verdict"]

_FIELDS = re.compile(r"\[Submission\]: (.*?)\n\*\*\*\n\[Criterion\]: (.*?)\n\*\*\*", re.S)
_ANSWER = re.compile(r"^\s*ANSWER:\s*(-?\d+)\s*$", re.MULTILINE)
_BARE = re.compile(r"^\s*(-?\d+)\s*$")


def final_integer(submission: str) -> int | None:
    """The submission's final answer: its last ``ANSWER: n`` line, or a bare integer."""
    lines = _ANSWER.findall(submission)
    if lines:
        return int(lines[-1])
    bare = _BARE.match(submission)
    return int(bare.group(1)) if bare else None


def rubric_verdict(submission: str, criterion: str) -> tuple[str, str]:
    """(``C`` or ``I``, the reasoning the judge writes) for `submission` against `criterion`."""
    expected = final_integer(criterion)
    if expected is None:
        return "I", "The criterion holds no integer answer, so nothing can be graded correct."
    given = final_integer(submission)
    if given is None:
        return "I", "The submission gives no final integer answer (no 'ANSWER: n' line)."
    if given == expected:
        return "C", f"The submission's final answer {given} equals the criterion's {expected}."
    return "I", f"The submission's final answer {given} differs from the criterion's {expected}."


class RubricJudge(ModelAPI):
    """``evalsuite/judge``: grades `model_graded_qa` prompts by the rubric above."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008 (inspect's own signature)
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)

    def max_connections(self) -> int:
        """No remote service: allow plenty of concurrent verdicts."""
        return 256

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        """One verdict: the reasoning, then ``GRADE: C`` or ``GRADE: I``."""
        found = _FIELDS.search(input[-1].text if input else "")
        if found is None:
            grade, why = "I", "The prompt is not a model_graded_qa grading prompt."
        else:
            grade, why = rubric_verdict(*found.groups())
        output = ModelOutput.from_content(model=self.model_name, content=f"{why}\nGRADE: {grade}")
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output
