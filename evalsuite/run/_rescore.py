"""Re-scoring a stored inspect log with other scorers (`evalsuite regrade`, issue 33).

The service layer never imports inspect (docs/architecture.md); this is the part of a regrade
that does: read a log, re-score its samples' stored outputs with the scorers of a task
built by `build_task` (the model under test is not called), write the result.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from inspect_ai import Task

__all__ = ["rescore_log", "task_name_of_log"]


def task_name_of_log(path: Path) -> str:
    """The task name an inspect log records (``<suite>-<family>`` for `evalsuite run`)."""
    from inspect_ai.log import read_eval_log

    return str(read_eval_log(str(path), header_only=True).eval.task)


def rescore_log(source: Path, target: Path, task: Callable[[], Task] | None) -> None:
    """Write `source` to `target`, re-scored with `task()`'s scorers (None: copied as is)."""
    from inspect_ai import score
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(str(source))
    if task is not None:
        log = score(log, scorers=task().scorer or [], action="overwrite", display="none")
    write_eval_log(log, str(target))
