"""Each scanner's precision and recall against the human labels (docs/review.md).

A scanner stands for a mode: the mode's ``scanner`` in the taxonomy, and an LLM scanner
``llm_<mode>``. Over the labelled attempts of runs the scanner has scanned, a finding on an
attempt labelled with the mode is a true positive, a finding on a labelled attempt without
it a false positive, and a labelled attempt with the mode the scanner missed a false
negative. So nobody trusts an unchecked scanner: without labels both are undefined (null).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalsuite.review._labels import AttemptLabel
from evalsuite.review._taxonomy import Taxonomy

__all__ = ["ScannerCheck", "scanner_agreement"]


@dataclass(frozen=True, slots=True)
class ScannerCheck:
    """One scanner checked against the labels of its mode."""

    scanner: str
    mode: str
    labelled: int
    """Labelled attempts in runs this scanner scanned."""
    true_positives: int
    false_positives: int
    false_negatives: int

    @property
    def precision(self) -> float:
        """TP / (TP + FP); NaN when the scanner flagged no labelled attempt."""
        flagged = self.true_positives + self.false_positives
        return self.true_positives / flagged if flagged else math.nan

    @property
    def recall(self) -> float:
        """TP / (TP + FN); NaN when no labelled attempt carries the mode."""
        carrying = self.true_positives + self.false_negatives
        return self.true_positives / carrying if carrying else math.nan

    def to_dict(self) -> dict[str, Any]:
        """As plain data (undefined figures as null)."""
        return {
            "scanner": self.scanner,
            "mode": self.mode,
            "labelled": self.labelled,
            "true_positives": self.true_positives,
            "false_positives": self.false_positives,
            "false_negatives": self.false_negatives,
            "precision": None if math.isnan(self.precision) else self.precision,
            "recall": None if math.isnan(self.recall) else self.recall,
        }


def scanner_agreement(
    labels: Mapping[str, Sequence[AttemptLabel]],
    findings: Mapping[str, Sequence[Mapping[str, Any]]],
    scanned: Mapping[str, set[str]],
    taxonomy: Taxonomy,
) -> list[ScannerCheck]:
    """Precision and recall of every scanner that stands for a mode of `taxonomy`.

    Args:
        labels: run id -> the run's current labels.
        findings: run id -> the run's finding rows (`Store.finding_rows`).
        scanned: run id -> the scanners that scanned the run (`Store.scan_records`); a
            run a scanner never scanned does not count against it.
        taxonomy: the modes, and the scanner each names.
    """
    pairs: list[tuple[str, str]] = []
    for declared in taxonomy.modes:
        if declared.scanner:
            pairs.append((declared.scanner, declared.name))
        pairs.append((f"llm_{declared.name}", declared.name))
    out = []
    for scanner, mode in pairs:
        runs = [r for r in labels if scanner in scanned.get(r, set())]
        if not runs:
            continue
        tp = fp = fn = n = 0
        for run_id in runs:
            flagged = {
                (str(f["item_id"]), int(f["epoch"]))
                for f in findings.get(run_id, ())
                if f["scanner"] == scanner
            }
            for label in labels[run_id]:
                n += 1
                has, hit = mode in label.modes, label.key in flagged
                tp += int(has and hit)
                fp += int(hit and not has)
                fn += int(has and not hit)
        out.append(ScannerCheck(scanner, mode, n, tp, fp, fn))
    return out
