"""`evalsuite audit SUITE@X.Y.Z --judge --labels FILE`: a declared judge against human labels.

Each model-graded family declares its judge in the suite file (`JudgeConfig`, frozen with the
family). Humans label a sample of judged attempts; this use case measures the judge on them
(`evalsuite.analyse._judge`) and compares the result with the family's declared floors:

- agreement (Cohen's kappa, or Krippendorff's alpha for an ordinal scale): the lower end of
  its item-bootstrap interval must reach `floor` (a judge not *shown* to reach the floor
  fails: too few labels is not a pass);
- position consistency, when the file has both orders of pairwise verdicts: the lower end must
  reach `consistency_floor`;
- length bias, when the file has answer lengths and numeric judge scores: a flagged slope
  fails.

The result is kept in the project's state (``.evalsuite/audits/<suite>/<version>.judge.json``,
written atomically), where `judge_audit_status` reads it: a family whose judge failed, or was
never audited, has its scores marked wherever they are shown (docs/design/judge-audit.md).

The labels file (CSV): ``item_id``, ``human``, ``judge`` (labels or scores), optional
``epoch``, ``length`` (the judged answer's length, in characters or tokens), ``forward`` and
``backward`` (a pairwise judge's verdict, ``first``/``second``/``tie``, with the pair shown in
each order). Item ids must be items of the version; holdout items are accepted (labels carry
no item text).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd

from evalsuite._core.atomic import atomic_write_text
from evalsuite._core.hashing import sha256_file
from evalsuite._core.jsonout import JsonObject
from evalsuite._core.layout import Layout
from evalsuite.errors import IntegrityError, ItemSourceError, NotFoundError, UsageError

if TYPE_CHECKING:
    from evalsuite.audit import JudgeProbes
    from evalsuite.manifest import JudgeConfig, Manifest

__all__ = [
    "FamilyJudgeAudit",
    "JudgeAuditResult",
    "audit_judges",
    "judge_audit_path",
    "judge_audit_status",
]

REQUIRED = ("item_id", "human", "judge")
OPTIONAL = ("epoch", "length", "forward", "backward")
JudgeStatus = Literal["passed", "failing", "unaudited"]


@dataclass(frozen=True, slots=True)
class FamilyJudgeAudit:
    """One family's judge measured against the human labels of its items."""

    family: str
    judge_model: str
    scale: str
    floor: float
    consistency_floor: float
    n_labels: int
    agreement: JsonObject
    position: JsonObject | None
    length_bias: JsonObject | None
    probes: JsonObject | None
    """The injection, confidence, verbosity and reference probes (`evalsuite.audit`)."""
    self_preference: tuple[str, ...]
    """Judged models of the judge's own family (a risk named, not a failure)."""
    passed: bool
    reasons: tuple[str, ...]
    """Why it failed (empty when it passed)."""

    def to_dict(self) -> JsonObject:
        """JSON form (stored and ``--json``)."""
        return {
            "family": self.family,
            "judge_model": self.judge_model,
            "scale": self.scale,
            "floor": self.floor,
            "consistency_floor": self.consistency_floor,
            "n_labels": self.n_labels,
            "agreement": self.agreement,
            "position": self.position,
            "length_bias": self.length_bias,
            "probes": self.probes,
            "self_preference": list(self.self_preference),
            "passed": self.passed,
            "reasons": list(self.reasons),
        }


@dataclass(frozen=True, slots=True)
class JudgeAuditResult:
    """A version's judges measured against one labels file."""

    suite: str
    version: str
    manifest_hash: str
    labels_sha256: str
    seed: int
    families: tuple[FamilyJudgeAudit, ...]

    @property
    def ok(self) -> bool:
        """Every audited judge passed."""
        return all(f.passed for f in self.families)

    def to_dict(self) -> JsonObject:
        """JSON form (stored and ``--json``)."""
        return {
            "suite": self.suite,
            "version": self.version,
            "manifest_hash": self.manifest_hash,
            "labels_sha256": self.labels_sha256,
            "seed": self.seed,
            "ok": self.ok,
            "families": [f.to_dict() for f in self.families],
        }


def judge_audit_path(layout: Layout, suite: str, version: str) -> Path:
    """Where the judge audit of ``suite@version`` is kept (`manifest.judge_audit_file`)."""
    from evalsuite.manifest import judge_audit_file

    return judge_audit_file(layout, suite, version)


def _read_labels(path: Path) -> pd.DataFrame:
    if not path.is_file():
        raise NotFoundError(f"labels file {path} not found; give a CSV with columns {REQUIRED}")
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
        raise ItemSourceError(
            f"{path}: not a readable CSV ({type(exc).__name__}); expected the columns "
            f"{', '.join(REQUIRED)} and optionally {', '.join(OPTIONAL)}"
        ) from None
    frame.columns = [str(c).strip() for c in frame.columns]
    missing = [c for c in REQUIRED if c not in frame.columns]
    unknown = [c for c in frame.columns if c not in (*REQUIRED, *OPTIONAL)]
    if missing or unknown:
        raise ItemSourceError(
            f"{path}: "
            + "; ".join(
                part
                for part in (
                    f"missing column(s) {missing}" if missing else "",
                    f"unknown column(s) {unknown}" if unknown else "",
                )
                if part
            )
            + f". A labels file has {', '.join(REQUIRED)} and optionally {', '.join(OPTIONAL)}"
        )
    if frame.empty:
        raise ItemSourceError(f"{path}: no labelled attempts (the file has a header only)")
    for column in frame.columns:
        frame[column] = frame[column].str.strip()
    empty = frame.index[(frame["item_id"] == "") | (frame["human"] == "")]
    if len(empty):
        raise ItemSourceError(
            f"{path}: line(s) {[int(i) + 2 for i in empty[:10]]} have an empty item_id or "
            "human label; every row is one labelled attempt"
        )
    return frame


def _as_floats(values: pd.Series, column: str, path: Path) -> np.ndarray | None:
    converted = pd.to_numeric(values, errors="coerce")
    if converted.isna().any():
        return None
    array = converted.to_numpy(dtype=np.float64)
    if not np.all(np.isfinite(array)):
        raise ItemSourceError(f"{path}: column {column!r} holds a non-finite number")
    return array


def audit_judges(
    layout: Layout,
    ref: str,
    labels: Path,
    *,
    seed: int = 0,
    store: bool = True,
    probe_items: int = 10,
    judged_models: Sequence[str] = (),
) -> JudgeAuditResult:
    """Measure every judged family of `ref` on the human labels in `labels`.

    Args:
        layout: The project.
        ref: ``SUITE@X.Y.Z``.
        labels: The labels CSV (module docstring).
        seed: Seed of the item bootstrap (recorded).
        store: Keep the result in the project's state (`judge_audit_path`).
        probe_items: Dev items of each judged family the probes are scored on (0: none).
        judged_models: Models whose runs the judge grades (self-preference is named).

    Raises:
        UsageError: a ref without a version, a version with no judged family.
        ItemSourceError: a malformed labels file (the column or lines named), unknown item
            ids, items of a family without a judge.
    """
    from evalsuite.manifest import load_manifest, parse_ref

    name, version = parse_ref(ref)
    if version is None:
        raise UsageError(f"--judge needs the exact frozen version, e.g. {name}@1.0.0")
    manifest = load_manifest(layout, name, version)
    judges = {f.name: f.judge for f in manifest.families if f.judge is not None}
    if not judges:
        raise UsageError(
            f"{manifest.ref} declares no judge: no family has a [families.judge] table "
            "(docs/design/judge-audit.md)"
        )
    frame = _read_labels(labels)
    family_of = {i.id: i.family for i in manifest.items}
    unknown = sorted(set(frame["item_id"]) - set(family_of))
    if unknown:
        raise ItemSourceError(
            f"{labels}: {len(unknown)} item id(s) are not items of {manifest.ref}: "
            f"{unknown[:5]}; label attempts of this version's items"
        )
    frame["family"] = frame["item_id"].map(family_of)
    unjudged = sorted(set(frame["family"]) - set(judges))
    if unjudged:
        raise ItemSourceError(
            f"{labels}: labels of items of families {unjudged}, which declare no judge in "
            f"{manifest.ref}; leave them out"
        )
    results = tuple(
        _audit_family(
            family,
            judges[family],
            frame[frame["family"] == family],
            labels,
            seed,
            k,
            probes=_probes(layout, manifest, family, probe_items),
            judged_models=judged_models,
        )
        for k, family in enumerate(sorted(set(frame["family"])))
    )
    result = JudgeAuditResult(
        suite=manifest.suite,
        version=manifest.version,
        manifest_hash=manifest.manifest_hash,
        labels_sha256=sha256_file(labels),
        seed=seed,
        families=results,
    )
    if store:
        path = judge_audit_path(layout, manifest.suite, manifest.version)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps(result.to_dict(), indent=2, allow_nan=True) + "\n")
    return result


def _probes(layout: Layout, manifest: Manifest, family: str, n_items: int) -> JudgeProbes | None:
    from evalsuite.audit import probe_judge

    if n_items <= 0:
        return None
    frozen = next(f for f in manifest.families if f.name == family)
    return probe_judge(layout, manifest, frozen, n_items=n_items)


def _audit_family(  # noqa: PLR0913 - one family's labels and where they came from
    family: str,
    judge: JudgeConfig,
    rows: pd.DataFrame,
    labels: Path,
    seed: int,
    index: int,
    *,
    probes: JudgeProbes | None,
    judged_models: Sequence[str],
) -> FamilyJudgeAudit:
    """One family's judge against its labelled attempts (`audit_judges`)."""
    from evalsuite.analyse import agreement, length_bias, position_consistency, shared_family

    items = rows["item_id"].tolist()
    rng = np.random.default_rng([seed, index])
    agree = agreement(
        rows["human"].tolist(),
        rows["judge"].tolist(),
        items,
        scale=judge.scale,
        rng=rng,
        order=judge.labels,
    )
    reasons = []
    if not agree.interval.low >= judge.floor:
        low = "undefined" if math.isnan(agree.interval.low) else f"{agree.interval.low:.3f}"
        reasons.append(
            f"{agree.statistic} {agree.value:.3f} (lower end {low}) is not shown to reach "
            f"the floor {judge.floor}"
        )
    position = None
    if {"forward", "backward"} <= set(rows.columns):
        pos = position_consistency(
            rows["forward"].tolist(), rows["backward"].tolist(), items, rng=rng
        )
        position = pos.to_dict()
        if not pos.interval.low >= judge.consistency_floor:
            reasons.append(
                f"position consistency {pos.consistency:.3f} (lower end "
                f"{pos.interval.low:.3f}) is below {judge.consistency_floor}: its verdict "
                "depends on the order the answers are shown in"
            )
    bias = None
    scores = _as_floats(rows["judge"], "judge", labels)
    if "length" in rows.columns and scores is not None:
        lengths = _as_floats(rows["length"], "length", labels)
        if lengths is None:
            raise ItemSourceError(f"{labels}: column 'length' must hold numbers")
        found = length_bias(list(scores), list(lengths), rows["human"].tolist(), items)
        bias = found.to_dict()
        if found.flagged:
            reasons.append(
                f"length bias: {found.slope_per_doubling:+.3f} per doubling of the "
                "answer's length at a fixed human label"
            )
    if probes is not None:
        reasons.extend(probes.failures)
    return FamilyJudgeAudit(
        family=family,
        judge_model=judge.model,
        scale=judge.scale,
        floor=judge.floor,
        consistency_floor=judge.consistency_floor,
        n_labels=len(rows),
        agreement=agree.to_dict(),
        position=position,
        length_bias=bias,
        probes=probes.to_dict() if probes is not None else None,
        self_preference=tuple(sorted({m for m in judged_models if shared_family(judge.model, m)})),
        passed=not reasons,
        reasons=tuple(reasons),
    )


def judge_audit_status(layout: Layout, suite: str, version: str) -> dict[str, JudgeStatus]:
    """Each judged family of ``suite@version``: ``passed``, ``failing`` or ``unaudited``.

    Raises:
        IntegrityError: the stored audit exists but cannot be read, or is of another manifest.
    """
    from evalsuite.manifest import load_manifest, read_judge_audit

    manifest = load_manifest(layout, suite, version)
    status: dict[str, JudgeStatus] = {
        f.name: "unaudited" for f in manifest.families if f.judge is not None
    }
    if not status:
        return status
    stored, problem = read_judge_audit(layout, manifest)
    path = judge_audit_path(layout, suite, version)
    if problem == "unreadable":
        raise IntegrityError(
            f"the stored judge audit {path} cannot be read: run `evalsuite audit "
            f"{suite}@{version} --judge --labels FILE` again to rewrite it"
        )
    if problem is not None:
        raise IntegrityError(
            f"{path} is the judge audit of another manifest than {suite}@{version}'s: run "
            "the judge audit again"
        )
    for family, passed in (stored or {}).items():
        if family in status:
            status[family] = "passed" if passed else "failing"
    return status
