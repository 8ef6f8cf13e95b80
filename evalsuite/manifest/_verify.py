"""`evalsuite verify`: re-hash dev items, the vault's holdout items and the manifest itself.

The manifest's hash is also compared with the records made when it was frozen: its changelog
line and the git history of the file (`_history`); see docs/design/holdout-governance.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from evalsuite._core.hashing import sha256_file
from evalsuite._core.layout import Layout
from evalsuite.errors import EvalsuiteError, IntegrityError, ItemSourceError, UsageError
from evalsuite.manifest._catalog import frozen_versions, load_manifest
from evalsuite.manifest._history import history_check
from evalsuite.manifest._lean import ManifestSummary, load_manifest_summary
from evalsuite.manifest._verify_cache import VerifyCache

# The item models (pydantic), the vault (cryptography) and the item readers are imported by
# the full check only: a check answered by the record (`VerifyCache`) needs none of them
# (docs/design/startup.md).
if TYPE_CHECKING:
    from evalsuite.manifest._items import LoadedItem
    from evalsuite.manifest._judge_config import JudgeConfig
    from evalsuite.manifest._schema import FileRecord, Manifest
    from evalsuite.manifest._suite import FamilyConfig, SuiteConfig
    from evalsuite.manifest._vault import KeySpec

__all__ = ["ItemProblem", "VerifyCache", "VerifyReport", "verify"]

ProblemKind = Literal["drifted", "missing", "leaked", "unexpected"]


@dataclass(frozen=True, slots=True)
class ItemProblem:
    """One item that no longer matches its manifest (named by id and hash, never text)."""

    item_id: str
    split: str
    kind: ProblemKind
    detail: str


@dataclass(slots=True)
class VerifyReport:
    """Everything `verify` checked for one suite version."""

    suite: str
    version: str | None
    manifest_hash: str | None = None
    problems: list[str] = field(default_factory=list)
    """File-level failures: tampered manifest, vault or fingerprints, deleted item sources."""
    errors: list[str] = field(default_factory=list)
    """Usage errors that kept part of the check from running: an item source that cannot be
    read (unreadable, not UTF-8, malformed records). Not tampering, but not OK either."""
    items: list[ItemProblem] = field(default_factory=list)
    candidates: list[str] = field(default_factory=list)
    """Items in `tasks/` that no manifest holds yet: new candidates, not failures."""
    superseded: list[str] = field(default_factory=list)
    """Dev items changed or retired by a later frozen version (not failures)."""
    dev_checked: int = 0
    holdout_checked: int = 0
    holdout_skipped: bool = False
    store: str | None = None
    """The results store the ledger was checked against (set by the CLI)."""
    hash_sources: dict[str, str] = field(default_factory=dict)
    """Where else the manifest hash is recorded, and whether each agrees (``changelog``,
    ``git``; the CLI adds ``ledger`` and ``store``)."""
    warnings: list[str] = field(default_factory=list)
    """Not failures, but to act on: the access ledger untracked by git or not committed
    (set by the CLI; docs/design/holdout-governance.md, section 11)."""
    recorded: bool = False
    """True when the items, vault and files were not re-read because a full check of exactly
    this content (same bytes, same code, same key) found them intact (`VerifyCache`)."""

    @property
    def ok(self) -> bool:
        """True when all was checked and nothing drifted, went missing, leaked or changed."""
        return not self.problems and not self.items and not self.errors

    @property
    def integrity_failed(self) -> bool:
        """True when something frozen no longer matches (exit 3, over usage errors' exit 2)."""
        return bool(self.problems or self.items)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form (the `--json` output of `verify`)."""
        return {
            "suite": self.suite,
            "version": self.version,
            "manifest_hash": self.manifest_hash,
            "ok": self.ok,
            "problems": list(self.problems),
            "errors": list(self.errors),
            "items": [
                {"item_id": p.item_id, "split": p.split, "kind": p.kind, "detail": p.detail}
                for p in self.items
            ],
            "candidates": list(self.candidates),
            "superseded": list(self.superseded),
            "dev_checked": self.dev_checked,
            "holdout_checked": self.holdout_checked,
            "holdout_skipped": self.holdout_skipped,
            "hash_sources": dict(self.hash_sources),
            "store": self.store,
            "recorded": self.recorded,
            "warnings": list(self.warnings),
        }


def _check_file(layout: Layout, record: FileRecord | None, what: str, report: VerifyReport) -> bool:
    if record is None:
        return True
    path = layout.root / record.path
    if not path.is_file():
        report.problems.append(f"{what} {record.path} is missing")
        return False
    actual = sha256_file(path)
    if actual != record.sha256:
        report.problems.append(
            f"{what} {record.path} was modified after freezing (hashes to {actual}, frozen as "
            f"{record.sha256}); restore it from version control"
        )
        return False
    return True


def _later_hashes(layout: Layout, manifest: Manifest) -> dict[str, str] | None:
    versions = frozen_versions(layout, manifest.suite)
    if versions[-1] == manifest.version:
        return None
    latest = load_manifest(layout, manifest.suite, versions[-1])
    return {i.id: i.hash for i in latest.items}


def _new_candidates(layout: Layout, manifest: Manifest, unfrozen: set[str]) -> set[str]:
    """The ids of `unfrozen` (in tasks/, not in `manifest`) no other frozen version holds.

    A version's retired items kept in tasks/ for an older version's dev split (records@1.0.0's
    beside records@2.0.0's) are not new candidates.
    """
    if not unfrozen:
        return unfrozen
    for version in frozen_versions(layout, manifest.suite):
        if version != manifest.version:
            unfrozen = unfrozen - {
                i.id for i in load_manifest(layout, manifest.suite, version).items
            }
    return unfrozen


def _current_dev(
    layout: Layout, suite: SuiteConfig, manifest: Manifest, report: VerifyReport
) -> tuple[list[LoadedItem], dict[str, str], set[str]]:
    """The dev-side items as they are now, and which families lost their items.

    Items: the item sources in `tasks/` and the items frozen from tasks' datasets. Also:
    families whose item source was deleted (-> its path), and families whose frozen dev
    items file cannot be read (reported as a problem here).
    """
    from evalsuite.manifest._dev_items import read_frozen_dev_items
    from evalsuite.manifest._items import load_suite_items

    deleted = {
        f.name: (layout.tasks / f.items).relative_to(layout.root).as_posix()
        for f in suite.families
        if f.items is not None and not (layout.tasks / f.items).exists()
    }
    from_task = {f.name for f in manifest.families if f.items is None}
    # an item source in tasks/ never stands in for items frozen from a task's dataset
    loaded = [
        e for e in load_suite_items(layout, suite, missing_ok=True) if e.family not in from_task
    ]
    try:
        loaded += read_frozen_dev_items(layout, manifest)
    except IntegrityError as exc:
        report.problems.append(str(exc))
        return loaded, deleted, from_task
    return loaded, deleted, set()


def _check_dev(layout: Layout, manifest: Manifest, report: VerifyReport) -> None:
    from evalsuite.manifest._items import item_hash
    from evalsuite.manifest._suite import load_suite

    suite = load_suite(layout, manifest.suite)
    frozen_families = {f.name: f.version for f in manifest.families}
    _check_family_versions(layout, suite, manifest, report)
    loaded, deleted, unreadable = _current_dev(layout, suite, manifest, report)
    current = {e.item.id: (e.family, e.item) for e in loaded}
    files_gone = {
        e.item.id: sorted(_relative(layout, p) for p in e.missing_files.values())
        for e in loaded
        if e.missing_files
    }
    later = _later_hashes(layout, manifest)
    split_of = {i.id: i.split for i in manifest.items}
    lost: dict[str, int] = {}
    for frozen in manifest.items_by_split("dev"):
        report.dev_checked += 1
        found = current.get(frozen.id)
        if found is None:
            if later is not None and frozen.id not in later:
                report.superseded.append(frozen.id)
            elif frozen.family in deleted or frozen.family in unreadable:
                if frozen.family in deleted:
                    lost[frozen.family] = lost.get(frozen.family, 0) + 1
                what = (
                    f"its item source {deleted[frozen.family]} was deleted"
                    if frozen.family in deleted
                    else "the frozen dev items file cannot be read"
                )
                report.items.append(
                    ItemProblem(
                        frozen.id,
                        "dev",
                        "missing",
                        f"{what}, so it can no longer be verified ({frozen.hash})",
                    )
                )
            else:
                report.items.append(
                    ItemProblem(frozen.id, "dev", "missing", f"not found in tasks/ ({frozen.hash})")
                )
            continue
        family, item = found
        actual = item_hash(item, family, frozen_families.get(family, 0))
        if actual == frozen.hash:
            continue
        if later is not None and later.get(frozen.id) == item_hash(
            item, family, _family_version(suite.families, family)
        ):
            report.superseded.append(frozen.id)
        else:
            gone = files_gone.get(frozen.id)
            detail = f"hashes to {actual}, frozen as {frozen.hash}"
            if gone:
                detail = f"a file it reads was deleted ({', '.join(gone)}); {detail}"
            report.items.append(ItemProblem(frozen.id, "dev", "drifted", detail))
    for family, count in sorted(lost.items()):
        report.problems.append(
            f"item source {deleted[family]} of family {family!r} is missing: {count} dev "
            "item(s) can no longer be verified; restore it from version control"
        )
    report.candidates.extend(
        sorted(_new_candidates(layout, manifest, set(current) - set(split_of)))
    )
    for item_id in sorted(set(current) & {i for i, s in split_of.items() if s == "holdout"}):
        report.items.append(
            ItemProblem(item_id, "holdout", "leaked", "holdout item found in tasks/ in plaintext")
        )


def _frozen_paths_escape(layout: Layout, manifest: Manifest, report: VerifyReport) -> bool:
    """True (and reported) when a path the manifest froze now leads out of the project.

    Nothing behind such a path is read: what it holds is not part of the project.
    """
    from evalsuite.manifest._paths import escaping_paths

    escaping = escaping_paths(layout, manifest.families)
    report.problems.extend(
        e.message(f"{manifest.ref} (its manifest)")
        + "; restore it inside the project, or freeze a new version from files inside it"
        for e in escaping
    )
    return bool(escaping)


def _check_family_versions(
    layout: Layout, suite: SuiteConfig, manifest: Manifest, report: VerifyReport
) -> None:
    """A family's code must still be the version the manifest froze.

    When the suite file points the family at another task file than the manifest records (a
    new family version kept beside the old one, tasks/README.md), the frozen version runs
    its own task file, which must still exist; otherwise the versions must agree.
    """
    frozen = {f.name: f for f in manifest.families}
    frozen_families = {f.name: f.version for f in manifest.families}
    for fam in suite.families:
        old = frozen.get(fam.name)
        if old is not None and old.task != fam.task:
            task_file = layout.tasks / old.task.partition("@")[0]
            if not task_file.is_file():
                report.problems.append(
                    f"family {fam.name!r} of {manifest.ref} runs {old.task!r} (version "
                    f"{old.version}), but {task_file.relative_to(layout.root)} is gone; "
                    "restore it from version control"
                )
            continue
        if fam.name in frozen_families and fam.version != frozen_families[fam.name]:
            report.problems.append(
                f"family {fam.name!r} has version {fam.version} in {suite.path_hint} but "
                f"{frozen_families[fam.name]} in {manifest.ref}; freeze a new major version"
            )
        elif old is not None and old.judge != fam.judge:
            report.problems.append(_judge_changed(fam.name, old.judge, fam.judge, suite, manifest))


def _judge_changed(
    name: str,
    frozen: JudgeConfig | None,
    declared: JudgeConfig | None,
    suite: SuiteConfig,
    manifest: Manifest,
) -> str:
    """The problem of a family whose declared judge is not the one its version froze."""
    was = frozen.model_dump(exclude_none=True) if frozen else {}
    now = declared.model_dump(exclude_none=True) if declared else {}
    fields = sorted(k for k in {*was, *now} if was.get(k) != now.get(k))
    shown = ", ".join(
        f"{k}: {was.get(k)!r} -> {now.get(k)!r}" if k != "prompt" else "prompt changed"
        for k in fields
    )
    return (
        f"family {name!r}'s judge in {suite.path_hint} is not the one {manifest.ref} froze "
        f"({shown}); a judge decides the scores, so a changed judge is a new major version "
        "(docs/design/judge-audit.md)"
    )


def _relative(layout: Layout, path: Path) -> str:
    root = layout.root.resolve()
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)


def _family_version(families: list[FamilyConfig], name: str) -> int:
    for family in families:
        if family.name == name:
            return int(family.version)
    return 0


def _check_holdout(layout: Layout, manifest: Manifest, keys: KeySpec, report: VerifyReport) -> None:
    from evalsuite.manifest._freeze import load_holdout_items
    from evalsuite.manifest._items import item_hash
    from evalsuite.manifest._vault import resolve_key

    key = resolve_key(manifest.suite, manifest.key, manifest.canary, keys, create=False)
    families = {f.name: f.version for f in manifest.families}
    frozen = {i.id: i.hash for i in manifest.items_by_split("holdout")}
    held = load_holdout_items(layout, manifest, key)
    seen: set[str] = set()
    for family, item in held:
        seen.add(item.id)
        report.holdout_checked += 1
        if item.id not in frozen:
            report.items.append(
                ItemProblem(item.id, "holdout", "unexpected", "in the vault but not the manifest")
            )
            continue
        actual = item_hash(item, family, families.get(family, 0))
        if actual != frozen[item.id]:
            report.items.append(
                ItemProblem(
                    item.id,
                    "holdout",
                    "drifted",
                    f"hashes to {actual}, frozen as {frozen[item.id]}",
                )
            )
    for item_id in sorted(set(frozen) - seen):
        report.items.append(ItemProblem(item_id, "holdout", "missing", "not in the vault"))


def _content_digest(
    cache: VerifyCache,
    layout: Layout,
    suite: str,
    version: str | None,
    keys: KeySpec,
    skip_holdout: bool,
    *,
    fresh: bool = False,
) -> tuple[str | None, ManifestSummary | None]:
    """The digest of everything the content check of ``suite@version`` reads, and its summary.

    The digest is None when the content cannot be recorded, the summary when the manifest
    cannot be read (the full check then says what is wrong).
    """
    try:
        summary = load_manifest_summary(layout, suite, version)
    except EvalsuiteError:
        return None, None
    digest = cache.digest(summary.record(), keys=keys, skip_holdout=skip_holdout, fresh=fresh)
    return digest, summary


def _check_content(
    layout: Layout, manifest: Manifest, keys: KeySpec, skip_holdout: bool, report: VerifyReport
) -> None:
    """The full check: recorded files, dev items, and the vault's holdout items."""
    _check_file(layout, manifest.fingerprints, "fingerprint file", report)
    vault_ok = _check_file(layout, manifest.vault, "vault", report)
    try:
        if not _frozen_paths_escape(layout, manifest, report):
            _check_dev(layout, manifest, report)
    except UsageError as exc:
        report.errors.append(f"dev items could not be checked: {exc}")
    except EvalsuiteError as exc:
        report.problems.append(f"dev items could not be read: {exc}")
    if skip_holdout:
        report.holdout_skipped = True
    elif vault_ok:
        try:
            _check_holdout(layout, manifest, keys, report)
        except IntegrityError as exc:
            report.problems.append(str(exc))
        except ItemSourceError as exc:
            report.errors.append(f"holdout items could not be checked: {exc}")


def verify(
    layout: Layout,
    suite: str,
    version: str | None = None,
    *,
    keys: KeySpec,
    skip_holdout: bool = False,
    cache: VerifyCache | None = None,
) -> VerifyReport:
    """Check one frozen suite version against its manifest, vault and fingerprints.

    Args:
        layout: The project.
        suite: Suite name.
        version: Version to check; the latest frozen version when None.
        keys: Where vault keys live (unused with `skip_holdout`).
        skip_holdout: Check dev items, manifest and file hashes only (no key needed).
        cache: The record of intact checks (`VerifyCache`): when it holds the digest of this
            version's content, the items are not re-read (``report.recorded``); a check that
            finds nothing wrong is recorded. None: always the full check, nothing recorded.
            The manifest's hash and its changelog and git history are checked every time.

    Returns:
        A report; ``report.ok`` is False on any drifted, missing or leaked item, a tampered
        manifest, vault or fingerprint file, a vault that does not decrypt, a manifest hash
        that its changelog line or git history contradicts, or an item source that cannot
        be read (`VerifyReport.errors`: a usage error, not tampering). A deleted item source
        names every dev item it held as missing.

    Raises:
        NotFoundError: the suite or version does not exist, or the vault key is missing.
    """
    report = VerifyReport(suite=suite, version=version)
    before = None
    if cache is not None:
        before, summary = _content_digest(cache, layout, suite, version, keys, skip_holdout)
        found = cache.lookup(before)
        if found is not None and summary is not None:
            report.version = summary.version
            report.manifest_hash = summary.manifest_hash
            history = history_check(layout, summary.suite, summary.version, summary.manifest_hash)
            report.hash_sources.update(history.sources)
            report.problems.extend(history.problems)
            report.warnings.extend(history.warnings)
            report.dev_checked = found["dev_checked"]
            report.holdout_checked = found["holdout_checked"]
            report.holdout_skipped = skip_holdout
            report.candidates = list(found["candidates"])
            report.superseded = list(found["superseded"])
            report.recorded = True
            return report
    try:
        manifest = load_manifest(layout, suite, version)
    except IntegrityError as exc:
        report.problems.append(str(exc))
        return report
    report.version = manifest.version
    report.manifest_hash = manifest.manifest_hash
    history = history_check(layout, manifest.suite, manifest.version, manifest.manifest_hash)
    report.hash_sources.update(history.sources)
    report.problems.extend(history.problems)
    report.warnings.extend(history.warnings)
    content = VerifyReport(suite=suite, version=manifest.version)
    _check_content(layout, manifest, keys, skip_holdout, content)
    report.problems.extend(content.problems)
    report.errors.extend(content.errors)
    report.items.extend(content.items)
    report.candidates.extend(content.candidates)
    report.superseded.extend(content.superseded)
    report.dev_checked = content.dev_checked
    report.holdout_checked = content.holdout_checked
    report.holdout_skipped = content.holdout_skipped
    if cache is not None and before is not None and content.ok:
        # recorded only when the inputs hashed the same before and after the check
        after, _ = _content_digest(cache, layout, suite, version, keys, skip_holdout, fresh=True)
        if after == before:
            cache.record(before, content.to_dict())
    return report
