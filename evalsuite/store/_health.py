"""Run health from stored attempts: the one computation every command and report shares."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "ErrorGroup",
    "Health",
    "HealthCounts",
    "advice_for",
    "error_groups",
    "error_kind",
    "run_health",
]

_KIND = re.compile(r"^([A-Za-z_][A-Za-z0-9_.]*):")


def error_kind(reason: str | None) -> str:
    """A short kind for a harness error's reason (the exception type, or a named cause).

    Examples:
        >>> error_kind("HarnessFault: injected fault: tool 'refund' failed")
        'HarnessFault'
        >>> error_kind("not run: the eval stopped before this attempt")
        'not run'
    """
    if not reason:
        return "unknown"
    match = _KIND.match(reason)
    if match:
        return match.group(1)
    return reason.split(":", 1)[0].strip()[:40] or "unknown"


_NUMBER = re.compile(r"\d+")

_ADVICE: tuple[tuple[tuple[str, ...], str], ...] = (
    (
        ("not run",),
        "the eval stopped before these attempts ran (interrupted, or the eval failed as a "
        "whole); `evalsuite run --resume RUN` runs exactly the missing ones",
    ),
    (
        ("ConnectionError", "ConnectError", "APIConnectionError", "socket", "network"),
        "something tried to reach the network: check the model name, its API key and the "
        "network; offline, use the reference agents, `mockllm/model` or `evalsuite/replay` "
        "(docs/inspect.md)",
    ),
    (
        ("RateLimit", "429", "APIStatusError", "AuthenticationError", "PermissionDenied"),
        "the model provider refused requests: check the API key, quota and "
        "`--max-samples`, then resume the run",
    ),
    (
        ("HarnessFault", "injected fault"),
        "the family's environment or tools failed (with --inject-faults, on purpose): see "
        "the family's environment code; transient faults are retried up to --max-retries",
    ),
    (
        ("TimeoutError", "timed out"),
        "a tool or the provider took longer than its timeout (--tool-timeout); a slow "
        "provider can also be given more time, a hanging tool is an environment bug",
    ),
    (
        ("grader", "scorer", "score value", "score_bounds", "not a score", "declared score"),
        "the grader produced no value evalsuite can read as a score: declare the family's "
        "`score` and `score_bounds` (docs/design/scorers.md) or fix the grader",
    ),
    (
        ("PrerequisiteError", "docker", "sandbox"),
        "a sandbox could not start (no Docker daemon here, for example): choose a sandbox "
        "this machine has, such as `local`",
    ),
    (
        ("recorded output", "diverged from the recording", "replay"),
        "the replay model has no matching recording for these samples: replay a log of the "
        "same items and epochs (docs/design/scorers.md)",
    ),
)
_NOT_RUN_ELSEWHERE = (
    "these planned attempts have no result in what was ingested: the run was made elsewhere "
    "({source}), so `evalsuite run --resume` cannot complete it. Run the missing items where "
    "the run was made, export its results again (the whole run) and ingest it again "
    "(`evalsuite ingest FILE --format {source} ...`, the same --suite)"
)
"""The "not run" advice of an ingested run (its source, ``inspect`` or ``csv``)."""
_DEFAULT_ADVICE = (
    "read the example's reason; rerun that item alone (`--limit`) and open the run's inspect "
    "log under .evalsuite/logs/RUN (dev runs) to see the whole error"
)


def advice_for(kind: str, message: str, *, source: str = "evalsuite") -> str:
    """What to do about a harness error of `kind` with `message` (first rule that matches).

    `source` is the run's (`RunRecord.source`): attempts of an ingested run (``inspect``,
    ``csv``) that were not run cannot be resumed by evalsuite.

    Examples:
        >>> advice_for("not run", "not run: the eval ended")[:30]
        'the eval stopped before these '
        >>> "--resume` cannot" in advice_for("not run", "not run", source="csv")
        True
    """
    if kind == "not run" and source != "evalsuite":
        return _NOT_RUN_ELSEWHERE.format(source=source)
    text = f"{kind} {message}".lower()
    for needles, advice in _ADVICE:
        if any(needle.lower() in text for needle in needles):
            return advice
    return _DEFAULT_ADVICE


@dataclass(frozen=True, slots=True)
class ErrorGroup:
    """Harness errors with one reason (numbers aside): how many, an example, what to do."""

    kind: str
    message: str
    """The first such attempt's reason, as stored (never holdout text: reasons are redacted)."""
    count: int
    example_item: str | None
    """An item id with this error (``None`` for planned attempts without a row)."""
    example_epoch: int | None
    advice: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def error_groups(
    attempts: pd.DataFrame, *, planned: int, top: int = 5, source: str = "evalsuite"
) -> list[ErrorGroup]:
    """The `top` most frequent harness error reasons of a run, most frequent first.

    Reasons that differ only in their numbers (an item number, a count) form one group.
    Planned attempts without a row form the group "not run". `source`: the run's
    (`advice_for`).
    """
    groups: dict[str, list[Any]] = {}
    if len(attempts):
        errors = attempts.loc[attempts["outcome"] == "harness_error"]
        if len(errors):
            raw = (
                errors["reason"].astype(object)
                if "reason" in errors
                else pd.Series(None, index=errors.index, dtype=object)
            )
            reasons = raw.fillna("unknown error").astype(str)
            unknown = pd.Series(-1, index=errors.index)
            frame = pd.DataFrame(
                {
                    "key": reasons.str.replace(_NUMBER, "#", regex=True),
                    "reason": reasons,
                    "item": errors["item_id"].astype(str) if "item_id" in errors else "",
                    "epoch": errors.get("epoch", unknown),
                }
            )
            firsts = frame.groupby("key", sort=False).agg(
                reason=("reason", "first"),
                count=("reason", "size"),
                item=("item", "first"),
                epoch=("epoch", "first"),
            )
            for key, row in firsts.iterrows():
                epoch = int(row["epoch"])
                groups[str(key)] = [
                    str(row["reason"]),
                    int(row["count"]),
                    str(row["item"]) or None,
                    epoch if epoch >= 0 else None,
                ]
    return _ranked(groups, missing=max(planned - len(attempts), 0), top=top, source=source)


def _ranked(
    groups: dict[str, list[Any]], *, missing: int, top: int, source: str = "evalsuite"
) -> list[ErrorGroup]:
    """Error groups ranked, most frequent first, as `ErrorGroup`s.

    `groups` maps a key to [first reason, count, first item, first epoch]; `missing` planned
    attempts without a row join the group "not run".
    """
    groups = {key: list(group) for key, group in groups.items()}
    if missing:
        reason = "not run: planned, but no attempt was recorded"
        groups.setdefault(reason, [reason, 0, None, None])[1] += missing
    ranked = sorted(groups.values(), key=lambda g: (-g[1], g[0]))[:top]
    return [
        ErrorGroup(
            kind=error_kind(message),
            message=message[:300],
            count=count,
            example_item=item,
            example_epoch=epoch,
            advice=advice_for(error_kind(message), message, source=source),
        )
        for message, count, item, epoch in ranked
    ]


@dataclass(frozen=True, slots=True)
class Health:
    """Harness health of a run: what was planned, what happened, what was excluded.

    The one health record of the project (docs/architecture.md, "Run health"). The runner and
    the store compute it from a run's attempts and judge it against the run's threshold
    (`run_health`, `HealthCounts.health`); the statistics count the attempts they were given
    and the items they had to exclude (`evalsuite.analyse`'s item table), without a threshold.
    A field a computation does not know is None, and `to_dict` leaves it out.

    Attributes:
        planned: planned attempts (items × epochs); the denominator of `error_rate`.
        scored: attempts the verifier scored.
        limits: attempts that hit a limit (model failures, score 0).
        harness_errors: harness-error rows plus planned attempts with no row at all.
        error_rate: ``harness_errors / planned`` (NaN when nothing was planned).
        threshold: the highest error rate of a valid run; None: not judged here.
        valid: ``error_rate <= threshold`` with something planned; None: not judged here.
        limits_by_type: `limits` split by ``limit_type`` (``unspecified`` when missing).
        errors_by_kind: harness errors by kind (`error_kind`; ``not run`` for missing rows).
        retried: attempts that needed at least one retry (whatever their final outcome).
        top_errors: the most frequent harness error reasons, each with a count, an example
            and advice.
        recorded: rows in the attempts table.
        unrecorded: planned attempts with no row (``planned − recorded``).
        n_items: distinct items in the attempts table.
        n_items_excluded: items whose every epoch was a harness error.
    """

    planned: int
    scored: int
    limits: int
    harness_errors: int
    error_rate: float
    threshold: float | None
    valid: bool | None
    limits_by_type: dict[str, int] = field(default_factory=dict)
    errors_by_kind: dict[str, int] | None = None
    retried: int | None = None
    top_errors: list[ErrorGroup] | None = None
    recorded: int | None = None
    unrecorded: int | None = None
    n_items: int | None = None
    n_items_excluded: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: the ``harness`` block of ``run --json`` and ``score --json``.

        `planned`, `scored`, `limits`, `harness_errors`, `error_rate` first; fields this
        computation did not know (None) are left out.
        """
        return {k: v for k, v in asdict(self).items() if v is not None}


def run_health(
    attempts: pd.DataFrame, *, planned: int, threshold: float, source: str = "evalsuite"
) -> Health:
    """Health of a run from its attempts table (docs/design/attempts.md).

    Planned attempts without a row count as harness errors, so nothing leaves the
    denominator. Undefined for ``planned == 0`` (error rate NaN, run invalid). `source`: the
    run's, for the advice of its top errors (`advice_for`).
    """
    outcome = attempts["outcome"] if len(attempts) else pd.Series(dtype=str)
    scored = int((outcome == "scored").sum())
    limits = int((outcome == "limit").sum())
    recorded_errors = int((outcome == "harness_error").sum())
    missing = max(planned - len(attempts), 0)
    errors = recorded_errors + missing
    rate = errors / planned if planned > 0 else math.nan
    reasons = attempts["reason"] if "reason" in attempts else pd.Series([None] * len(attempts))
    kinds = Counter(error_kind(r) for r in reasons[(outcome == "harness_error").to_numpy()])
    if missing:
        kinds["not run"] += missing
    limit_types = Counter(
        str(t) for t in attempts.loc[outcome == "limit", "limit_type"].fillna("unspecified")
    )
    retried = int((attempts["retries"] > 0).sum()) if len(attempts) and "retries" in attempts else 0
    return Health(
        planned=planned,
        scored=scored,
        limits=limits,
        harness_errors=errors,
        error_rate=rate,
        threshold=threshold,
        valid=bool(planned > 0 and rate <= threshold),
        limits_by_type=dict(sorted(limit_types.items())),
        errors_by_kind=dict(sorted(kinds.items())),
        retried=retried,
        top_errors=error_groups(attempts, planned=planned, source=source) if errors else [],
        recorded=len(attempts),
        unrecorded=missing,
    )


@dataclass(slots=True)
class HealthCounts:
    """What run health needs from a run's attempts, added up batch by batch (constant memory).

    The same computation as `run_health` (and `error_groups` for its top errors), for the bulk
    ingest path, which never holds a whole run: memory grows with the number of distinct
    error reasons, not with the rows.
    """

    rows: int = 0
    scored: int = 0
    limits: int = 0
    harness_errors: int = 0
    retried: int = 0
    limit_types: Counter[str] = field(default_factory=Counter)
    error_kinds: Counter[str] = field(default_factory=Counter)
    groups: dict[str, list[Any]] = field(default_factory=dict)
    """Error reason with numbers masked -> [first reason, count, first item, first epoch]."""

    def add(self, batch: pa.RecordBatch | pa.Table) -> None:
        """Count a batch with columns ``outcome``, ``limit_type``, ``reason``, ``retries``.

        ``item_id`` and ``epoch``, when the batch has them, give the error groups' examples.
        """
        outcome = batch.column("outcome")
        is_limit = pc.fill_null(pc.equal(outcome, "limit"), False)
        is_error = pc.fill_null(pc.equal(outcome, "harness_error"), False)
        self.rows += batch.num_rows
        self.scored += pc.sum(pc.cast(pc.equal(outcome, "scored"), pa.int64())).as_py() or 0
        self.limits += pc.sum(pc.cast(is_limit, pa.int64())).as_py() or 0
        errors = pc.sum(pc.cast(is_error, pa.int64())).as_py() or 0
        self.harness_errors += errors
        retries = pc.fill_null(batch.column("retries"), 0)
        self.retried += pc.sum(pc.cast(pc.greater(retries, 0), pa.int64())).as_py() or 0
        types = pc.fill_null(pc.filter(batch.column("limit_type"), is_limit), "unspecified")
        self.limit_types.update(str(t) for t in types.to_pylist())
        if not errors:
            return
        names = set(batch.schema.names)
        reasons = pc.filter(batch.column("reason"), is_error).to_pylist()
        self.error_kinds.update(error_kind(r) for r in reasons)
        items = (
            pc.filter(batch.column("item_id"), is_error).to_pylist()
            if "item_id" in names
            else [None] * len(reasons)
        )
        epochs = (
            pc.filter(batch.column("epoch"), is_error).to_pylist()
            if "epoch" in names
            else [None] * len(reasons)
        )
        for reason, item, epoch in zip(reasons, items, epochs, strict=True):
            text = str(reason) if reason is not None else "unknown error"
            group = self.groups.get(key := _NUMBER.sub("#", text))
            if group is None:
                self.groups[key] = [
                    text,
                    1,
                    str(item) if item is not None and str(item) else None,
                    int(epoch) if epoch is not None and int(epoch) >= 0 else None,
                ]
            else:
                group[1] += 1

    def health(self, *, planned: int, threshold: float, source: str = "evalsuite") -> Health:
        """The run's health, counting planned attempts without a row as harness errors.

        `source`: the run's, for the advice of its top errors (`advice_for`).
        """
        missing = max(planned - self.rows, 0)
        errors = self.harness_errors + missing
        rate = errors / planned if planned > 0 else math.nan
        kinds = Counter(self.error_kinds)
        if missing:
            kinds["not run"] += missing
        return Health(
            planned=planned,
            scored=self.scored,
            limits=self.limits,
            harness_errors=errors,
            error_rate=rate,
            threshold=threshold,
            valid=bool(planned > 0 and rate <= threshold),
            limits_by_type=dict(sorted(self.limit_types.items())),
            errors_by_kind=dict(sorted(kinds.items())),
            retried=self.retried,
            top_errors=(
                _ranked(self.groups, missing=missing, top=5, source=source) if errors else []
            ),
            recorded=self.rows,
            unrecorded=missing,
        )
