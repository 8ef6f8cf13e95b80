"""Triage of candidate items before they are frozen (`evalsuite triage CANDIDATES --suite S`).

Every candidate is staged, with the other candidates only and all on the dev side, in a
private copy of the project (`evalsuite.audit.FreezeAuditor`'s staging: a temporary directory
outside the project, with a private store), and checked there:

* the grader audit (`evalsuite.audit.audit_manifest`): the oracle must solve it, doing
  nothing, the trivial policies and the exploit probes must not; no harness error; the same
  seed must give the same episode (determinism);
* the leak audit (`evalsuite.audit.audit_leaks`): its target must not show in what the agent
  can read;
* the reference agents (`evalsuite/<agent>`), each for `epochs` epochs through the real
  runner; the ``hacker`` agent is an exploit: an item it solves is trivially solved;
* stored runs (`--runs`): attempts of the candidate's id with the candidate's content hash;
* fingerprints (`evalsuite.manifest._candidates.find_duplicates`): the suite's latest
  frozen version (dev and holdout, without their key or text) and the other candidates.

Each candidate gets a verdict: ``fix`` when the item or its grader is broken (unsolvable,
harness error, flaky, leaky, id taken: it measures nothing until fixed), ``drop`` when it
works but adds nothing (trivially solved, no signal, duplicate), ``keep`` otherwise. The
output names items by id and reasons by numbers: never a candidate's text (candidates are
future holdout items). Design: docs/design/triage-and-diff.md.
"""

from __future__ import annotations

import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from evalsuite._core.atomic import atomic_write_text
from evalsuite._core.layout import Layout
from evalsuite.audit import (
    AuditOptions,
    audit_leaks,
    audit_manifest,
    declared_action_spaces,
    stage_candidate,
)
from evalsuite.errors import EvalsuiteError, UsageError
from evalsuite.manifest import (
    CANDIDATE_VERSION,
    Candidate,
    KeySpec,
    candidate_version,
    find_duplicates,
    load_latest,
    load_suite,
    read_candidates,
)
from evalsuite.run import RunSpec, run_suite
from evalsuite.store import Store

__all__ = ["REASONS", "TriageOptions", "TriageResult", "triage"]

Verdict = Literal["keep", "fix", "drop"]

REASONS: dict[str, Verdict] = {
    "unsolvable": "fix",
    "harness-error": "fix",
    "flaky": "fix",
    "leaky": "fix",
    "id-taken": "fix",
    "unaudited": "fix",
    "trivially-solved": "drop",
    "no-signal": "drop",
    "duplicate": "drop",
}
"""Every reason a candidate can get, and the verdict it leads to (fix wins over drop)."""
EXPLOIT_AGENTS = frozenset({"hacker"})
"""Reference agents that exploit graders instead of solving: solving is a trivial pass."""
MIN_MODELS = 2
"""Models of stored runs (`--runs`) needed to call an item without signal (every model
solves it, or none does); the reference agents' scores are shown but do not decide it."""


@dataclass(frozen=True, slots=True)
class TriageOptions:
    """How the candidates are played."""

    agents: tuple[str, ...] = ("baseline", "improved", "hacker")
    epochs: int = 2
    seed: int = 0
    runs: tuple[str, ...] = ()


@dataclass(slots=True)
class ItemTriage:
    """One candidate's verdict and why."""

    item_id: str
    family: str
    stratum: str
    reasons: list[tuple[str, str]] = field(default_factory=list)
    agents: dict[str, float] = field(default_factory=dict)
    """Reference agent (``evalsuite/<agent>``) -> mean score on the item (shown; the scripted
    agents are too alike to decide alone whether models separate on it)."""
    models: dict[str, float] = field(default_factory=dict)
    """Model of a stored run (`--runs`) -> mean score on the item (decides ``no-signal``)."""

    def add(self, reason: str, detail: str) -> None:
        """Record a reason once (the first detail is kept)."""
        if reason not in {r for r, _ in self.reasons}:
            self.reasons.append((reason, detail))

    @property
    def verdict(self) -> Verdict:
        """``fix`` if any reason asks for a fix, else ``drop`` if any, else ``keep``."""
        verdicts = {REASONS[r] for r, _ in self.reasons}
        return "fix" if "fix" in verdicts else "drop" if "drop" in verdicts else "keep"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "item_id": self.item_id,
            "family": self.family,
            "stratum": self.stratum,
            "verdict": self.verdict,
            "reasons": [{"reason": r, "detail": d} for r, d in self.reasons],
            "agents": dict(self.agents),
            "models": dict(self.models),
        }


@dataclass(slots=True)
class TriageResult:
    """The triage of a set of candidates."""

    suite: str
    against: str | None
    """``suite@version`` the duplicates were looked for in (None: nothing frozen yet)."""
    options: TriageOptions
    items: list[ItemTriage]
    candidates: list[Candidate]
    sources: dict[str, str] = field(default_factory=dict)
    """What each check did (one line each)."""

    def funnel(self) -> dict[str, int]:
        """Candidates, then how many are kept, to fix and to drop."""
        counts = Counter(i.verdict for i in self.items)
        return {
            "candidates": len(self.items),
            "keep": counts.get("keep", 0),
            "fix": counts.get("fix", 0),
            "drop": counts.get("drop", 0),
        }

    def reason_counts(self) -> dict[str, int]:
        """Reason -> candidates with it (a candidate may have several)."""
        counts = Counter(r for i in self.items for r, _ in i.reasons)
        return {r: counts[r] for r in REASONS if counts.get(r)}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (`triage --json`)."""
        return {
            "suite": self.suite,
            "against": self.against,
            "funnel": self.funnel(),
            "reasons": self.reason_counts(),
            "items": [i.to_dict() for i in self.items],
            "sources": dict(self.sources),
            "options": {
                "agents": list(self.options.agents),
                "epochs": self.options.epochs,
                "seed": self.options.seed,
                "runs": list(self.options.runs),
            },
        }

    def write_kept(self, path: Path) -> None:
        """Write the kept candidates, as read, to `path` (JSONL, atomically), for `freeze`.

        Raises:
            UsageError: `path` is a directory or its folder does not exist.
        """
        if path.is_dir():
            raise UsageError(f"--keep-only {path} is a directory; give a file path (JSONL)")
        if not path.parent.is_dir():
            raise UsageError(f"--keep-only {path}: the folder {path.parent} does not exist")
        kept = {i.item_id for i in self.items if i.verdict == "keep"}
        lines = [c.line for c in self.candidates if c.item.id in kept]
        atomic_write_text(path, "".join(line + "\n" for line in lines))


_CHECK_REASONS = {
    "oracle": ("unsolvable", "the family's oracle does not solve it in every run"),
    "null": ("trivially-solved", "doing nothing scores above 0"),
    "harness": ("harness-error", "an audit episode ended in a harness error"),
    "determinism": ("flaky", "the same seed gave another score or final state"),
}
"""Grader-audit check -> the reason its items get (trivial policies and exploits: below)."""


def _check_reason(check: Any) -> tuple[str, str] | None:
    if check.check in ("trivial", "exploit"):
        return "trivially-solved", f"the {check.check} policy {check.policy} passes"
    return _CHECK_REASONS.get(check.check)


def _audit_reasons(audit: Any, rows: dict[str, ItemTriage], sources: dict[str, str]) -> None:
    """Reasons from the grader audit's checks (by item id; never an item's text)."""
    for family in audit.families:
        for check in family.checks:
            if check.check == "kit" and check.status == "failed":
                for row in rows.values():
                    if row.family == family.family:
                        row.add("unaudited", f"family {family.family}: {check.summary}")
                continue
            reason = _check_reason(check)
            if reason is None:
                continue
            for item_id in check.items:
                if item_id in rows:
                    rows[item_id].add(*reason)
    failed = [
        f"{f.family}: {c.label}" for f in audit.families for c in f.checks if c.status == "failed"
    ]
    sources["grader audit"] = (
        f"{audit.sample.get('items', 0)} candidate(s) played by oracle, null, trivial and "
        "exploit policies; "
        + (f"failed checks: {', '.join(failed)}" if failed else "every check held")
    )


def _score_by_item(frame: pd.DataFrame) -> dict[str, list[float]]:
    scores: dict[str, list[float]] = defaultdict(list)
    usable = frame[frame["outcome"] != "harness_error"]
    for item_id, score in zip(usable["item_id"], usable["score"], strict=True):
        scores[str(item_id)].append(float(score))
    return scores


def _errored(frame: pd.DataFrame) -> set[str]:
    return {str(i) for i in frame.loc[frame["outcome"] == "harness_error", "item_id"]}


def _agent_reasons(
    name: str, frame: pd.DataFrame, rows: dict[str, ItemTriage], epochs: int
) -> None:
    scores = _score_by_item(frame)
    for item_id in _errored(frame):
        if item_id in rows:
            rows[item_id].add("harness-error", f"evalsuite/{name} hit a harness error")
    for item_id, values in scores.items():
        row = rows.get(item_id)
        if row is None:
            continue
        mean = sum(values) / len(values)
        if name in EXPLOIT_AGENTS:
            if mean > 0:
                row.add("trivially-solved", f"the exploit agent evalsuite/{name} passes")
            continue
        row.agents[f"evalsuite/{name}"] = mean


def _stored_reasons(
    store: Store, run_ids: Iterable[str], rows: dict[str, ItemTriage], hashes: dict[str, str]
) -> str:
    used = 0
    other_content = 0
    for run_id in run_ids:
        run = store.get_run(run_id)
        frame = store.attempt_columns(
            run.run_id, ("item_id", "item_hash", "epoch", "outcome", "score")
        )
        frame = frame[frame["item_id"].astype(str).isin(rows.keys())]
        same = frame[
            [hashes[str(i)] == h for i, h in zip(frame["item_id"], frame["item_hash"], strict=True)]
        ]
        other_content += frame["item_id"].nunique() - same["item_id"].nunique()
        used += len(same)
        for item_id, values in _score_by_item(same).items():
            rows[item_id].models[run.model] = sum(values) / len(values)
        for item_id in _errored(same):
            rows[item_id].add(
                "harness-error", f"run {run.run_id} ({run.model}) hit a harness error"
            )
    line = f"{used} attempt(s) of candidates with the same content in {len(list(run_ids))} run(s)"
    if other_content:
        line += f"; {other_content} item(s) stored with other content were left out"
    return line


def _signal_reasons(rows: dict[str, ItemTriage]) -> None:
    for row in rows.values():
        means = list(row.models.values())
        if len(means) < MIN_MODELS:
            continue
        if all(m == 1.0 for m in means):
            row.add("no-signal", f"all {len(means)} stored models solve it every time")
        elif all(m == 0.0 for m in means):
            row.add("no-signal", f"none of {len(means)} stored models ever solves it")


def triage(
    layout: Layout,
    suite_name: str,
    path: Path,
    *,
    options: TriageOptions = TriageOptions(),
    store: Store | None = None,
) -> TriageResult:
    """Sort the candidates at `path` into keep / fix / drop (see the module doc).

    Args:
        layout: The project (read only: nothing is written into it).
        suite_name: The suite the candidates are for.
        path: A file of candidate items (one-family suite) or a directory of
            ``<family>.jsonl`` files, in the suite's item format.
        options: Reference agents, epochs, seed, stored runs.
        store: The results store, to read `options.runs` from (needed with runs).

    No vault is opened: frozen items (dev and holdout) are compared by their fingerprints.

    Raises:
        UsageError: unreadable or ambiguous candidates, an unknown suite or run, bad options.
        ItemSourceError: a malformed candidate.
    """
    if options.epochs < 1:
        raise UsageError(f"--epochs must be at least 1 (got {options.epochs})")
    if options.runs and store is None:
        raise UsageError("stored runs need the results store")
    suite = load_suite(layout, suite_name)
    latest = load_latest(layout, suite_name)
    candidates = read_candidates(suite, path)
    rows = {c.item.id: ItemTriage(c.item.id, c.family, c.stratum) for c in candidates}
    sources: dict[str, str] = {}
    for item_id, (kind, detail) in find_duplicates(layout, latest, candidates).items():
        rows[item_id].add(kind, detail)
    sources["fingerprints"] = (
        f"compared with the {len(latest.items)} items of {latest.ref} and each other"
        if latest is not None
        else "compared with each other (no frozen version yet)"
    )
    fresh = [c for c in candidates if rows[c.item.id].verdict == "keep"]
    if fresh:
        _play(layout, suite_name, fresh, rows, sources, options)
    else:
        sources["grader audit"] = "not run: every candidate is a duplicate or its id is taken"
    if options.runs and store is not None:
        hashes = {c.item.id: c.hash for c in candidates}
        sources["stored runs"] = _stored_reasons(store, options.runs, rows, hashes)
    _signal_reasons(rows)
    return TriageResult(
        suite=suite_name,
        against=latest.ref if latest is not None else None,
        options=options,
        items=[rows[c.item.id] for c in candidates],
        candidates=candidates,
        sources=sources,
    )


def _play(
    layout: Layout,
    suite_name: str,
    candidates: Sequence[Candidate],
    rows: dict[str, ItemTriage],
    sources: dict[str, str],
    options: TriageOptions,
) -> None:
    """Audit, leak-check and play the reference agents on `candidates`, in a private copy."""
    suite = load_suite(layout, suite_name)
    staged_version = candidate_version(
        layout, suite, candidates, tools=declared_action_spaces(layout, suite_name)
    )
    manifest = staged_version.manifest
    with tempfile.TemporaryDirectory(prefix="evalsuite-triage-") as scratch:
        root = Path(scratch)
        staged = stage_candidate(layout, staged_version, root / "project")
        store = Store(f"sqlite:///{root / 'triage.sqlite'}")
        no_keys = KeySpec(key_dir=root / "no-keys")
        try:
            audit = audit_manifest(
                staged,
                manifest,
                keys=no_keys,
                store=store,
                options=AuditOptions(split="dev", seed=options.seed),
            )
            _audit_reasons(audit, rows, sources)
            leaks = audit_leaks(staged, suite_name, CANDIDATE_VERSION, keys=no_keys, holdout=False)
            for finding in leaks.findings:
                rows[finding.item_id].add(
                    "leaky", f"its target shows in {finding.surface} ({finding.how})"
                )
            sources["leak audit"] = (
                f"{sum(leaks.checked.values())} candidate(s) checked, {len(leaks.findings)} "
                f"leak(s), {len(leaks.skipped)} skipped (target too short)"
            )
            played = []
            for agent in options.agents:
                try:
                    result = run_suite(
                        staged,
                        RunSpec(
                            suite=suite_name,
                            version=CANDIDATE_VERSION,
                            model=f"evalsuite/{agent}",
                            epochs=options.epochs,
                            seed=options.seed,
                            log_samples=False,
                        ),
                        keys=no_keys,
                        store=store,
                        progress=False,
                    )
                except EvalsuiteError as exc:
                    raise UsageError(
                        f"the reference agent evalsuite/{agent} cannot play the candidates "
                        f"({exc}); choose --agents among baseline, improved, hacker, or 'none'"
                    ) from None
                frame = store.attempt_columns(
                    result.run.run_id, ("item_id", "epoch", "outcome", "score")
                )
                _agent_reasons(agent, frame, rows, options.epochs)
                played.append(f"evalsuite/{agent}")
            sources["reference agents"] = (
                f"{', '.join(played)} × {options.epochs} epoch(s), seed {options.seed}"
                if played
                else "none played (--agents none)"
            )
        finally:
            store.engine.dispose()
