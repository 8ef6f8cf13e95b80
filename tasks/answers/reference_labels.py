"""Reference labels of a dev run of the answers family, for its judge audit.

    python tasks/answers/reference_labels.py .evalsuite/logs/<run_id> > labels.csv
    evalsuite audit answers@1.0.0 --judge --labels labels.csv

A judge audit compares the judge's verdicts with labels of the same attempts that a person
gave. This family's answers can be checked exactly (an integer against the item's target),
so its reference label is that check, applied to each attempt's final answer (its last
``ANSWER: n`` line); it stands in for the person here, and only because the check is exact.
The ``judge`` column is the verdict the run stored (the judge's ``C`` or ``I``). Dev runs
only: a holdout run keeps no logs (docs/design/judge-audit.md).
"""

from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

from inspect_ai.log import list_eval_logs, read_eval_log

ANSWER = re.compile(r"^\s*ANSWER:\s*(-?\d+)\s*$", re.MULTILINE)


def labels(log_dir: Path) -> list[dict[str, object]]:
    """One row per attempt: item_id, epoch, human (exact check), judge (stored verdict)."""
    rows: list[dict[str, object]] = []
    for info in list_eval_logs(str(log_dir)):
        log = read_eval_log(info.name)
        for sample in log.samples or []:
            if not sample.scores:
                continue  # a harness error has no verdict to audit
            (score,) = sample.scores.values()
            found = ANSWER.findall(sample.output.completion or "")
            target = str(sample.target).strip()
            right = bool(found) and found[-1] == target
            # evalsuite runs each (item, epoch) as its own sample, id "<item>::<epoch>"
            item, sep, epoch = str(sample.id).rpartition("::")
            rows.append(
                {
                    "item_id": item if sep else str(sample.id),
                    "epoch": int(epoch) if sep else sample.epoch,
                    "human": "C" if right else "I",
                    "judge": str(score.value),
                }
            )
    if not rows:
        raise SystemExit(f"no scored samples in the inspect logs under {log_dir}")
    return sorted(rows, key=lambda r: (str(r["item_id"]), int(str(r["epoch"]))))


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit("usage: reference_labels.py LOG_DIR (a dev run's inspect logs)")
    writer = csv.DictWriter(sys.stdout, fieldnames=["item_id", "epoch", "human", "judge"])
    writer.writeheader()
    writer.writerows(labels(Path(sys.argv[1])))


if __name__ == "__main__":
    main()
