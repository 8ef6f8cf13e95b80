"""Triage of candidate items before they are frozen: keep / fix / drop, with the reasons.

`triage(layout, "arith", Path("new.jsonl"))` stages the candidates in a private
copy of the project and runs the grader audit, the leak audit, the reference agents and the
fingerprint checks on them (docs/design/triage-and-diff.md). It sits above `evalsuite.audit`,
whose audit it runs.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalsuite.triage._triage import REASONS, TriageOptions, TriageResult, triage
else:
    from evalsuite._core.lazy import lazy_exports

    __getattr__, __dir__ = lazy_exports(
        __name__, {"._triage": ("REASONS", "TriageOptions", "TriageResult", "triage")}
    )

__all__ = ["REASONS", "TriageOptions", "TriageResult", "triage"]
