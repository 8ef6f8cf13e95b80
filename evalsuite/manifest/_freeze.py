"""`evalsuite freeze`: items in `tasks/` become an immutable, versioned manifest and vault."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from evalsuite._core.atomic import atomic_write_text
from evalsuite._core.display import show_id
from evalsuite._core.hashing import sha256_bytes, sha256_file
from evalsuite._core.layout import Layout
from evalsuite._core.semver import Bump, SemVer
from evalsuite.errors import (
    FrozenVersionError,
    ItemSourceError,
    SuiteConfigError,
    UsageError,
    VersionError,
)
from evalsuite.manifest._catalog import frozen_versions, load_manifest
from evalsuite.manifest._dev_items import render_dev_items
from evalsuite.manifest._files import file_bytes
from evalsuite.manifest._fingerprints import (
    FINGERPRINT_FORMAT,
    describe_difference,
    file_format,
    fingerprint_item,
    render_fingerprints,
)
from evalsuite.manifest._freeze_audit import (
    AuditOutcome,
    FreezeAudit,
    FreezeCandidate,
    audit_stamp,
    changelog_audit_text,
    record_tools,
)
from evalsuite.manifest._history import changelog_hashes
from evalsuite.manifest._items import (
    Item,
    LoadedItem,
    TaskRecords,
    item_cluster,
    item_hash,
    item_stratum,
    load_suite_items,
    write_family_items,
)
from evalsuite.manifest._schema import (
    MANIFEST_FORMAT,
    Manifest,
    compute_manifest_hash,
)
from evalsuite.manifest._split import Split, split_salt, stratified_split
from evalsuite.manifest._suite import FamilyConfig, SuiteConfig, load_suite
from evalsuite.manifest._vault import (
    KeySpec,
    VaultKey,
    open_vault,
    resolve_key,
    save_new_key,
    seal_vault,
)

__all__ = ["FreezeResult", "freeze", "holdout_records", "load_holdout_items"]


@dataclass(frozen=True, slots=True)
class FreezeResult:
    """What `freeze` did."""

    manifest: Manifest
    path: Path
    status: Literal["frozen", "unchanged", "completed"]
    """``frozen``: a new version; ``unchanged``: identical content, nothing written;
    ``completed``: identical content, an interrupted freeze's source clean-up finished."""
    bump: Bump | None
    removed_from_sources: int
    key_source: str
    removed_files: int = 0
    """Files in `tasks/` that holdout items were read from, deleted once sealed."""
    audit: AuditOutcome | None = None
    """The grader audit run for this freeze (None when skipped, or not asked for)."""
    still_retired: tuple[str, ...] = ()
    """Items still in `tasks/` that an earlier version retired: left out again, and left in
    place (the versions that hold them as dev items read them there)."""


@dataclass(slots=True)
class _Entry:
    item: Item
    family: str
    location: str
    hash: str = ""
    stratum: str = ""
    cluster: str | None = None
    sources: Mapping[str, str] = field(default_factory=dict)
    """Files key -> project-relative path of the file it was read from (``{"path"}``)."""


@dataclass(slots=True)
class _Plan:
    entries: dict[str, _Entry] = field(default_factory=dict)
    leftovers: set[str] = field(default_factory=set)
    """Holdout items of the version being re-frozen still found in `tasks/`."""
    sources: dict[str, set[str]] = field(default_factory=dict)
    """family -> ids found in its item source in `tasks/`."""
    still_retired: set[str] = field(default_factory=set)
    """Ids found in `tasks/` that an earlier version retired (left out of this one)."""


def holdout_records(
    entries: Sequence[tuple[str, Item]],
    sources: Mapping[str, Mapping[str, str]] | None = None,
) -> list[dict[str, Any]]:
    """Vault payloads: ``{"family": ..., "item": {...}}`` sorted by item id.

    An item whose files were read from files beside its item source also records them as
    ``"sources"`` (files key -> project-relative path), so that a freeze run again can still
    remove those plaintext copies from `tasks/` (see docs/design/item-files.md).
    """
    records = []
    for family, item in sorted(entries, key=lambda e: e[1].id):
        record: dict[str, Any] = {"family": family, "item": item.payload()}
        if sources and sources.get(item.id):
            record["sources"] = dict(sorted(sources[item.id].items()))
        records.append(record)
    return records


def _vault_entries(
    layout: Layout, manifest: Manifest, key: VaultKey, *, retiring: Collection[str] = ()
) -> list[tuple[str, Item, dict[str, str]]]:
    """(family, item, sources) of every sealed item; items being retired are not validated."""
    if manifest.vault is None:
        return []
    records = open_vault(
        layout.root / manifest.vault.path, suite=manifest.suite, version=manifest.version, key=key
    )
    entries = []
    for record in records:
        payload = record["item"]
        try:
            item = Item.model_validate(payload)
        except ValidationError:
            ident = payload.get("id")
            if ident in retiring:
                item = Item.model_construct(**payload)
            else:
                # the problem is not shown: it could quote holdout text (a files key, a value)
                raise ItemSourceError(
                    f"holdout item {ident!r} in the vault of {manifest.ref} is not a valid item "
                    "(e.g. a files key that is absolute or leaves the sandbox, accepted by an "
                    "older evalsuite), so it cannot be run or audited; drop it from a new "
                    f"version with `evalsuite freeze {manifest.suite} --version <next major> "
                    f"--retire {ident}`"
                ) from None
        entries.append((str(record["family"]), item, dict(record.get("sources") or {})))
    return entries


def load_holdout_items(layout: Layout, manifest: Manifest, key: VaultKey) -> list[tuple[str, Item]]:
    """Decrypt a version's vault: (family, item) for every holdout item, in memory only.

    Raises:
        VaultError: the vault does not open (see `open_vault`).
        ItemSourceError: a sealed item is not valid (named by id only).
    """
    return [(family, item) for family, item, _ in _vault_entries(layout, manifest, key)]


def _validate_weights(suite: SuiteConfig, strata: Counter[str]) -> dict[str, float]:
    total_items = sum(strata.values())
    if suite.weights is None:
        return {s: strata[s] / total_items for s in sorted(strata)}
    unknown = sorted(set(suite.weights) - set(strata))
    missing = sorted(set(strata) - set(suite.weights))
    problems: list[str] = []
    if unknown:
        problems.append(f"weights name unknown strata {unknown}")
    if missing:
        problems.append(f"weights leave out strata {missing}")
    negative = sorted(s for s, w in suite.weights.items() if not (w >= 0 and math.isfinite(w)))
    if negative:
        problems.append(f"weights must be finite and >= 0 (bad: {negative})")
    total = sum(suite.weights.values())
    if not problems and not math.isclose(total, 1.0, rel_tol=0, abs_tol=1e-9):
        problems.append(f"weights sum to {total!r}, not 1")
    if problems:
        raise SuiteConfigError(
            f"{suite.path_hint}: " + "; ".join(problems) + f". Strata of this suite: "
            f"{sorted(strata)}; give each a deployment share, summing to 1, or drop [weights] "
            "to use item shares."
        )
    return {s: float(suite.weights[s]) for s in sorted(strata)}


def _project_path(layout: Layout, path: Path) -> str:
    """`path` relative to the project root (POSIX), as recorded in the vault."""
    root = layout.root.resolve()
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else path.as_posix()


def _check_no_empty_family(
    layout: Layout, suite: SuiteConfig, plan: _Plan, carried: Sequence[tuple[str, Item]]
) -> None:
    """A family with no record in its source and none in the vault is an empty source."""
    in_vault = {family for family, _ in carried}
    for family in suite.families:
        if family.name in plan.sources or family.name in in_vault:
            continue
        if family.items is None:
            raise ItemSourceError(
                f"the dataset of task {family.task!r} (family {family.name!r}) holds no "
                "samples; check its task_args, or declare an item source with items = ..."
            )
        if family.name not in plan.sources and family.name not in in_vault:
            raise ItemSourceError(
                f"{layout.tasks / family.items}: the item source of family {family.name!r} "
                "holds no items (no record in it); add items (one JSON object per line in "
                f"JSONL) or remove the family from {suite.path_hint}"
            )


def _held_again(
    loaded: LoadedItem,
    held: tuple[str, Item],
    families: Mapping[str, FamilyConfig],
    suite: SuiteConfig,
    refreeze: bool,
) -> bool:
    """A record whose id is a sealed holdout item: True when it is a leftover to clean up.

    A task's dataset always holds its holdout items: identical ones are skipped (kept in the
    vault). Anything else is refused: holdout items live only in the vault and never change.
    """
    item = loaded.item
    family, sealed = held
    same = item_hash(item, loaded.family, families[loaded.family].version) == item_hash(
        sealed, family, families[family].version if family in families else 0
    )
    from_task = families[loaded.family].items is None
    if from_task and same:
        return False
    if refreeze and same:
        return True
    if from_task:
        raise ItemSourceError(
            f"{loaded.location}: item {item.id!r} of the task's dataset is a holdout item "
            f"sealed by an earlier version of {suite.name}, but the task's dataset now holds "
            "other content for it, and a sealed holdout item never changes. Build the task "
            "as it was frozen (same package version and task_args), or retire the item with "
            "--retire and give the changed sample a new id."
        )
    raise ItemSourceError(
        f"{loaded.location}: item {item.id!r} is a holdout item of the parent version "
        f"and must not appear in tasks/ ({'same' if same else 'different'} content). "
        "Holdout items live only in the vault; remove this record "
        "(or give a new item a new id)."
    )


def _collect(
    layout: Layout,
    suite: SuiteConfig,
    carried: Sequence[tuple[str, Item]],
    *,
    refreeze: bool,
    retire: set[str],
    retired_earlier: Collection[str] = (),
    task_records: TaskRecords | None = None,
) -> _Plan:
    plan = _Plan()
    holdout_by_id = {item.id: (family, item) for family, item in carried}
    families = {f.name: f for f in suite.families}
    for loaded in load_suite_items(layout, suite, task_records=task_records):
        item = loaded.item
        plan.sources.setdefault(loaded.family, set()).add(item.id)
        if item.id in retired_earlier and item.id not in holdout_by_id:
            plan.still_retired.add(item.id)
            continue
        if item.id in holdout_by_id:
            if _held_again(loaded, holdout_by_id[item.id], families, suite, refreeze):
                plan.leftovers.add(item.id)
            continue
        plan.entries[item.id] = _Entry(
            item=item,
            family=loaded.family,
            location=loaded.location,
            sources={k: _project_path(layout, p) for k, p in loaded.sources.items()},
        )
    _check_no_empty_family(layout, suite, plan, carried)
    for family, item in carried:
        if family not in families:
            raise SuiteConfigError(
                f"{suite.path_hint}: holdout item {item.id!r} belongs to family {family!r}, "
                "which the suite no longer declares; restore the family or retire its items "
                "with --retire"
            )
        plan.entries[item.id] = _Entry(item=item, family=family, location=f"vault:{item.id}")
    unknown = sorted(retire - set(plan.entries) - plan.still_retired)
    if unknown:
        raise UsageError(
            "--retire names items that are not in the suite: "
            + ", ".join(show_id(i) for i in unknown)
        )
    for item_id in retire - plan.still_retired:
        del plan.entries[item_id]
    for entry in plan.entries.values():
        if entry.item.canary not in (None, suite.canary):
            raise ItemSourceError(
                f"{entry.location} (item {entry.item.id!r}): carries another canary than "
                f"{suite.path_hint}; every item of a suite carries its suite's canary (remove "
                "the field and freeze will add the right one)"
            )
        loaded = LoadedItem(item=entry.item, family=entry.family, location=entry.location)
        entry.hash = item_hash(entry.item, entry.family, families[entry.family].version)
        entry.stratum = item_stratum(suite, loaded)
        entry.cluster = item_cluster(suite, loaded)
    if not plan.entries:
        raise ItemSourceError(f"suite {suite.name!r} has no items to freeze")
    return plan


def _plan(
    layout: Layout,
    suite: SuiteConfig,
    held_version: Manifest | None,
    key: VaultKey,
    *,
    refreeze: bool,
    retire: set[str],
    task_records: TaskRecords | None = None,
) -> _Plan:
    """The items of the version to freeze: `tasks/` plus the holdout items carried over.

    An item that an earlier version retired stays retired even though it is still in
    `tasks/` (docs/design/retirement.md).
    """
    vault = _vault_entries(layout, held_version, key, retiring=retire) if held_version else []
    carried = [(family, item) for family, item, _ in vault]
    plan = _collect(
        layout,
        suite,
        carried,
        refreeze=refreeze,
        retire=retire,
        retired_earlier=retired_before(layout, held_version) if held_version else set(),
        task_records=task_records,
    )
    for _, item, sources in vault:
        if item.id in plan.entries and sources:
            plan.entries[item.id].sources = sources
    return plan


def retired_before(layout: Layout, manifest: Manifest) -> set[str]:
    """Ids that a version up to `manifest` held and `manifest` does not: retired on the way.

    See docs/design/retirement.md.
    """
    upto = SemVer.parse(manifest.version)
    held: set[str] = set()
    for version in frozen_versions(layout, manifest.suite):
        if SemVer.parse(version) <= upto:
            held.update(i.id for i in load_manifest(layout, manifest.suite, version).items)
    return held - {i.id for i in manifest.items}


def _required_bump(content: Mapping[str, Any], parent: Manifest) -> Bump | None:
    old = parent.hashed_content()
    diff = content["diff"]
    if diff["changed"] or any(
        content[k] != old[k] for k in ("stratify_by", "cluster_by", "canary", "key_id")
    ):
        return "major"
    if [f["version"] for f in content["families"]] != [f["version"] for f in old["families"]]:
        return "major"
    if [_scoring(f) for f in content["families"]] != [_scoring(f) for f in old["families"]]:
        return "major"  # another score counts, or on another scale: scores not comparable
    if any(
        "tools" in new and "tools" in was and new["tools"] != was["tools"]
        for new, was in zip(content["families"], old["families"], strict=False)
    ):
        return "major"  # the tools a model is shown changed: scores not comparable
    if content.get("holdout_mechanism") != old.get("holdout_mechanism"):
        # released numbers of two mechanisms (or of none) mean different things, and a new
        # mechanism restarts its guarantee: docs/design/reusable-holdout.md
        return "major"
    if diff["added"] or diff["removed"]:
        return "minor"
    skip = {"version", "parent", "diff", "split_salt", "vault", "fingerprints", "dev_items"}
    if any(content[k] != old.get(k) for k in content if k not in skip):
        return "patch"
    return None


def _scoring(family: Mapping[str, Any]) -> tuple[Any, Any, Any, Any]:
    """What decides a family's score besides its items: score, bounds, task arguments, judge.

    See docs/design/scorers.md, docs/design/foreign-tasks.md and docs/design/judge-audit.md.
    """
    bounds = family.get("score_bounds")
    return (
        family.get("score"),
        list(bounds) if bounds is not None else None,
        family.get("task_args"),
        family.get("judge"),
    )


def _manifest_content(
    suite: SuiteConfig,
    version: str,
    plan: _Plan,
    split: Mapping[str, Split],
    *,
    parent: Manifest | None,
    key: VaultKey,
) -> dict[str, Any]:
    strata = Counter(e.stratum for e in plan.entries.values())
    parent_items = {i.id: i.hash for i in parent.items} if parent else {}
    diff = {
        "added": sorted(set(plan.entries) - set(parent_items)) if parent else [],
        "removed": sorted(set(parent_items) - set(plan.entries)),
        "changed": sorted(
            i for i, e in plan.entries.items() if i in parent_items and parent_items[i] != e.hash
        ),
    }
    return {
        "format": MANIFEST_FORMAT,
        "suite": suite.name,
        "version": version,
        "description": suite.description,
        "parent": (
            {"version": parent.version, "manifest_hash": parent.manifest_hash} if parent else None
        ),
        "diff": diff,
        "split_salt": split_salt(suite.canary, version),
        "holdout_fraction": suite.holdout_fraction,
        "canary": suite.canary,
        "key": suite.key,
        "key_id": key.key_id,
        "stratify_by": list(suite.stratify_by),
        "cluster_by": suite.cluster_by,
        "holdout_budget": suite.holdout_budget,
        # only when declared: a suite without it keeps the hash it had before it existed
        **(
            {"holdout_mechanism": suite.holdout_mechanism.model_dump(mode="json")}
            if suite.holdout_mechanism is not None
            else {}
        ),
        "weights": _validate_weights(suite, strata),
        # undeclared optional fields (score, score_bounds) are left out: the hash of a suite
        # that declares none is the hash it had before they existed
        "families": [f.model_dump(mode="json", exclude_none=True) for f in suite.families],
        "items": [
            {
                "id": item_id,
                "hash": e.hash,
                "stratum": e.stratum,
                "split": split[item_id],
                "family": e.family,
                "cluster": e.cluster,
            }
            for item_id, e in sorted(plan.entries.items())
        ],
    }


def _vault_bytes_record(
    layout: Layout,
    suite: SuiteConfig,
    version: str,
    plan: _Plan,
    split: Mapping[str, Split],
    key: VaultKey,
) -> tuple[dict[str, str], list[dict[str, Any]]]:
    held = {i: e for i, e in plan.entries.items() if split[i] == "holdout"}
    records = holdout_records(
        [(e.family, e.item.model_copy(update={"canary": suite.canary})) for e in held.values()],
        {i: e.sources for i, e in held.items()},
    )
    path = layout.vault_file(suite.name, version)
    return {"path": path.relative_to(layout.root).as_posix()}, records


def _fingerprint_text(
    suite: SuiteConfig,
    version: str,
    plan: _Plan,
    split: Mapping[str, Split],
    *,
    existing: Manifest | None,
    layout: Layout,
) -> str:
    """The fingerprint file, in the format of the `existing` version when freezing it again.

    A frozen version keeps the fingerprint format it was frozen with, so that freezing it
    again with a newer evalsuite is still a no-op (docs/design/guard-normalisation.md).
    """
    frozen = _frozen_fingerprints(layout, existing) if existing is not None else None
    fmt = (file_format(frozen) if frozen else None) or FINGERPRINT_FORMAT
    return render_fingerprints(
        (
            fingerprint_item(e.item, split=split[i], stratum=e.stratum, format=fmt)
            for i, e in plan.entries.items()
        ),
        suite=suite.name,
        version=version,
        canary=suite.canary,
        format=fmt,
    )


def _dev_items_text(
    layout: Layout, suite: SuiteConfig, version: str, plan: _Plan, split: Mapping[str, Split]
) -> tuple[str | None, Path]:
    """The frozen dev items of families without an item source (None when there are none)."""
    path = layout.dev_items_file(suite.name, version)
    from_task = {f.name for f in suite.families if f.items is None}
    if not from_task:
        return None, path
    entries = [
        (e.family, e.item)
        for i, e in plan.entries.items()
        if e.family in from_task and split[i] == "dev"
    ]
    return render_dev_items(entries, canary=suite.canary), path


def _frozen_fingerprints(layout: Layout, manifest: Manifest) -> str | None:
    """The fingerprint file of a frozen version, if it can be read."""
    try:
        return (layout.root / manifest.fingerprints.path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _changelog_line(manifest: Manifest, bump: Bump | None, now: datetime) -> str:
    n_dev = len(manifest.items_by_split("dev"))
    n_hold = len(manifest.items_by_split("holdout"))
    diff = manifest.diff
    parent = (
        f"parent {manifest.parent.version} ({manifest.parent.manifest_hash[:19]}…)"
        if manifest.parent
        else "first version"
    )
    line = (
        f"- **{manifest.version}** ({now.date().isoformat()}, {bump or 'initial'}): "
        f"{len(diff.added)} added, {len(diff.removed)} removed, {len(diff.changed)} changed; "
        f"{n_dev} dev / {n_hold} holdout; {parent}; manifest `{manifest.manifest_hash}`"
    )
    line += changelog_audit_text(manifest.audit)
    if manifest.note:
        line += f". {manifest.note.strip()}"
    return line


def _complete_changelog(
    layout: Layout, existing: Manifest, content: Mapping[str, Any], parent: Manifest | None
) -> bool:
    """Append the changelog line an interrupted freeze did not write (`verify` wants it)."""
    if existing.version in (changelog_hashes(layout, existing.suite) or {}):
        return False
    bump = _required_bump(content, parent) if parent is not None else None
    frozen_at = datetime.fromisoformat(existing.frozen_at)
    _append_changelog(layout, existing.suite, _changelog_line(existing, bump, frozen_at))
    return True


def _append_changelog(layout: Layout, suite: str, line: str) -> None:
    from filelock import FileLock  # here: `verify` imports this module and needs no lock

    path = layout.manifest_dir(suite) / "CHANGELOG.md"
    with FileLock(str(path) + ".lock"):
        text = (
            path.read_text(encoding="utf-8")
            if path.exists()
            else (
                f"# {suite}: manifest changelog\n\nOne line per frozen version "
                "(major: scores not comparable; minor: items added or retired; "
                "patch: metadata).\n\n"
            )
        )
        atomic_write_text(path, text + line + "\n")


def _clean_sources(layout: Layout, suite: SuiteConfig, plan: _Plan, manifest: Manifest) -> int:
    """Rewrite item sources in `tasks/` without the version's holdout items, with canaries.

    Retired items stay, those this freeze retires and those an earlier version retired: older
    versions read their dev items there (docs/design/retirement.md).
    """
    holdout = {i.id for i in manifest.items_by_split("holdout")}
    removed = 0
    for family in suite.families:
        if family.items is None:
            continue  # items from the task's dataset: nothing in tasks/ to rewrite
        present = plan.sources.get(family.name, set())
        keep = present - holdout
        unmarked = any(
            plan.entries[i].item.canary != suite.canary for i in keep if i in plan.entries
        )
        if keep != present or unmarked:
            write_family_items(layout.tasks / family.items, sorted(keep), canary=suite.canary)
            removed += len(present) - len(keep)
    return removed


def _clean_holdout_files(layout: Layout, plan: _Plan, manifest: Manifest) -> int:
    """Delete the files in `tasks/` that holdout items were read from: sealed in the vault now.

    A file is kept when a dev item of the version still reads it (then it is dev content),
    and when its bytes are no longer exactly the sealed content (it is something else now).
    Directories left empty are removed up to `tasks/`.
    """
    holdout = {i.id for i in manifest.items_by_split("holdout")}
    read_by_dev = {
        path for i, e in plan.entries.items() if i not in holdout for path in e.sources.values()
    }
    removed = 0
    for item_id in sorted(holdout & set(plan.entries)):
        entry = plan.entries[item_id]
        for key, relative in sorted(entry.sources.items()):
            path = layout.root / relative
            files = entry.item.files or {}
            if relative in read_by_dev or key not in files or not path.is_file():
                continue
            if path.read_bytes() != file_bytes(files[key]):
                continue
            path.unlink()
            removed += 1
            parent = path.parent
            while parent != layout.tasks and parent.is_relative_to(layout.tasks):
                try:
                    parent.rmdir()
                except OSError:
                    break
                parent = parent.parent
    return removed


def _lineage(
    layout: Layout, suite: SuiteConfig, requested: SemVer, keys: KeySpec
) -> tuple[Manifest | None, Manifest | None, VaultKey]:
    """(the version itself if frozen already, its parent, the vault key), checked."""
    version = str(requested)
    versions = frozen_versions(layout, suite.name)
    existing = load_manifest(layout, suite.name, version) if version in versions else None
    if existing is None and versions and SemVer.parse(versions[-1]) >= requested:
        raise VersionError(
            f"{suite.name}@{version} is not newer than the latest frozen version "
            f"{versions[-1]}; choose a greater version"
        )
    parent: Manifest | None
    if existing is not None:
        parent = (
            load_manifest(layout, suite.name, existing.parent.version) if existing.parent else None
        )
    else:
        parent = load_manifest(layout, suite.name, versions[-1]) if versions else None
    key = resolve_key(suite.name, suite.key, suite.canary, keys, create=not versions)
    if parent is not None and parent.key_id != key.key_id:
        raise VersionError(
            f"the vault key ({key.source}, {key.key_id}) differs from the key of "
            f"{parent.ref} ({parent.key_id}); use the suite's original key file"
        )
    return existing, parent, key


def _check_task_records(suite: SuiteConfig, task_records: TaskRecords | None) -> None:
    missing = [
        f.name for f in suite.families if f.items is None and f.name not in (task_records or {})
    ]
    if missing:
        raise UsageError(
            f"families {missing} of {suite.path_hint} take their items from their task's "
            "dataset, and no records were given for them (freeze them with `evalsuite freeze`, "
            "which builds the tasks)"
        )


def freeze(  # noqa: PLR0913 - the options of `freeze`, one each
    layout: Layout,
    suite_name: str,
    version: str,
    *,
    keys: KeySpec,
    now: datetime,
    note: str | None = None,
    retire: Sequence[str] = (),
    task_records: TaskRecords | None = None,
    audit: FreezeAudit | None = None,
) -> FreezeResult:
    """Freeze `suite_name` as `version`.

    See docs/architecture.md, "Data model": Manifest, Split, Vault.

    Args:
        layout: The project.
        suite_name: Suite to freeze (``tasks/<suite_name>.toml``).
        version: New version ``X.Y.Z``; it must be greater than every frozen version, unless
            it is an existing version frozen again with identical content (a no-op).
        keys: Where vault keys live.
        now: Freeze time, recorded in the manifest (not hashed).
        note: Free text for the manifest and the changelog line.
        retire: Item ids to drop from the new version (dev or holdout).
        task_records: For each family without an item source, the item records its task's
            own dataset made (built by `evalsuite.run`; the manifest layer imports no
            inspect). Their dev items are frozen to ``<version>.items.jsonl`` beside the
            manifest (docs/design/foreign-tasks.md).
        audit: The action spaces to record and the grader audit to run before anything is
            written (or the reason it is skipped); a failed audit refuses the freeze. None:
            no action space and no audit stamp (docs/design/grader-audit.md).

    Raises:
        VersionError: malformed version, not newer than the latest, or a bump too small for
            the change (the message names the smallest acceptable version).
        FrozenVersionError: `version` is frozen with other content (exit 3).
        SuiteConfigError, ItemSourceError: invalid suite or items.
        VaultError: the parent's vault cannot be opened.
        GraderAuditError: the grader audit failed (exit 3; nothing is written).
    """
    suite = load_suite(layout, suite_name)
    requested = SemVer.parse(version)
    version = str(requested)
    existing, parent, key = _lineage(layout, suite, requested, keys)
    refreeze = existing is not None
    _check_task_records(suite, task_records)
    plan = _plan(
        layout,
        suite,
        existing or parent,
        key,
        refreeze=refreeze,
        retire=set(retire),
        task_records=task_records,
    )
    previous = {i.id: i.split for i in parent.items} if parent else {}
    if existing is not None:
        previous.update({i.id: i.split for i in existing.items})
    split = stratified_split(
        {i: e.stratum for i, e in plan.entries.items()},
        salt=split_salt(suite.canary, version),
        fraction=suite.holdout_fraction,
        previous=previous,
    )
    content = _manifest_content(suite, version, plan, split, parent=parent, key=key)
    record_tools(content, audit.tools if audit else None)
    bump: Bump | None = None
    if existing is None and parent is not None:
        # before anything is staged: the bump ignores the vault, fingerprints and dev items
        bump = _required_bump(content, parent)
        _check_bump(parent, requested, bump, suite.name)
    fp_text, fp_path, vault_path, staged = _stage_files(
        layout, suite, version, plan, split, key, existing=existing
    )
    content["fingerprints"] = {
        "path": fp_path.relative_to(layout.root).as_posix(),
        "sha256": sha256_bytes(fp_text.encode("utf-8")),
    }
    dev_text, dev_path = _dev_items_text(layout, suite, version, plan, split)
    if dev_text is not None:
        content["dev_items"] = {
            "path": dev_path.relative_to(layout.root).as_posix(),
            "sha256": sha256_bytes(dev_text.encode("utf-8")),
        }
    content["vault"] = {
        "path": vault_path.relative_to(layout.root).as_posix(),
        "sha256": sha256_file(staged),
    }
    manifest_hash = compute_manifest_hash(content)
    if existing is not None:
        staged.unlink()
        if manifest_hash != existing.audited_hash():
            raise FrozenVersionError(_refuse_message(layout, existing, content, fp_text))
        removed = _clean_sources(layout, suite, plan, existing) if plan.leftovers else 0
        removed_files = _clean_holdout_files(layout, plan, existing)
        logged = _complete_changelog(layout, existing, content, parent)
        return FreezeResult(
            manifest=existing,
            path=layout.manifest_file(suite.name, version),
            status="completed" if removed or removed_files or logged else "unchanged",
            bump=None,
            removed_from_sources=removed,
            key_source=key.source,
            removed_files=removed_files,
            still_retired=tuple(sorted(plan.still_retired)),
        )
    try:
        manifest, outcome = _stamped(
            layout, content, fp_text, staged, plan, split, audit, now, note
        )
        save_new_key(key)  # every check has passed: a refused freeze leaves no key behind
    except BaseException:
        staged.unlink(missing_ok=True)
        raise
    staged.replace(vault_path)
    atomic_write_text(fp_path, fp_text)
    if dev_text is not None:
        atomic_write_text(dev_path, dev_text)
    atomic_write_text(
        layout.manifest_file(suite.name, version),
        manifest.model_dump_json(indent=2) + "\n",
    )
    removed = _clean_sources(layout, suite, plan, manifest)
    removed_files = _clean_holdout_files(layout, plan, manifest)
    _append_changelog(layout, suite.name, _changelog_line(manifest, bump, now))
    return FreezeResult(
        manifest=manifest,
        path=layout.manifest_file(suite.name, version),
        status="frozen",
        bump=bump,
        removed_from_sources=removed,
        key_source=key.source,
        removed_files=removed_files,
        audit=outcome,
        still_retired=tuple(sorted(plan.still_retired)),
    )


def _stage_files(
    layout: Layout,
    suite: SuiteConfig,
    version: str,
    plan: _Plan,
    split: Mapping[str, Split],
    key: VaultKey,
    *,
    existing: Manifest | None,
) -> tuple[str, Path, Path, Path]:
    """The fingerprint text and path, and the vault's path and its sealed, staged copy.

    The vault is deterministic for given content and key: it is sealed (staged) to learn its
    hash before the manifest is written. The fingerprints keep the format of the `existing`
    version when it is frozen again (`_fingerprint_text`).
    """
    vault_record, records = _vault_bytes_record(layout, suite, version, plan, split, key)
    fp_text = _fingerprint_text(suite, version, plan, split, existing=existing, layout=layout)
    vault_path = layout.root / vault_record["path"]
    staged = vault_path.with_name(f".{vault_path.name}.staged")
    seal_vault(staged, records, suite=suite.name, version=version, key=key, canary=suite.canary)
    return fp_text, layout.fingerprint_file(suite.name, version), vault_path, staged


def _stamped(  # noqa: PLR0913 (the pieces of one version being written)
    layout: Layout,
    content: dict[str, Any],
    fp_text: str,
    staged: Path,
    plan: _Plan,
    split: Mapping[str, Split],
    audit: FreezeAudit | None,
    now: datetime,
    note: str | None,
) -> tuple[Manifest, AuditOutcome | None]:
    """The manifest to write, with the grader audit's stamp (see `_freeze_audit`).

    The audit runs on the manifest as it will be without the stamp; a passed audit's results
    file is written here, before the manifest that records its hash.
    """
    fields = {"frozen_at": now.isoformat(), "note": note}
    unstamped = Manifest.model_validate(
        {**content, **fields, "manifest_hash": compute_manifest_hash(content)}
    )
    candidate = FreezeCandidate(
        manifest=unstamped,
        fingerprints_text=fp_text,
        vault_path=staged,
        dev_items=[
            (e.family, e.item) for i, e in sorted(plan.entries.items()) if split[i] == "dev"
        ],
    )
    stamp, outcome = audit_stamp(candidate, audit)
    if stamp is None:
        return unstamped, None
    content["audit"] = stamp.model_dump(mode="json")
    manifest = Manifest.model_validate(
        {**content, **fields, "manifest_hash": compute_manifest_hash(content)}
    )
    if outcome is not None and stamp.file:
        atomic_write_text(layout.root / stamp.file, outcome.text)
    return manifest, outcome


def _check_bump(parent: Manifest, requested: SemVer, needed: Bump | None, suite: str) -> None:
    base = SemVer.parse(parent.version)
    if needed is None:
        raise UsageError(
            f"nothing to freeze: the content of {suite} is identical to {parent.version}"
        )
    kind = base.bump_kind(requested)
    if not SemVer.at_least(kind, needed):
        raise VersionError(
            f"the change since {parent.version} needs a {needed} bump (at least "
            f"{base.bumped(needed)}), got {requested}. Major: items changed or scoring moved; "
            "minor: items added or retired; patch: metadata only."
        )


_NOT_LISTED = ("items", "fingerprints", "vault", "audit")
"""Fields `_refuse_message` describes on their own (the audit stamp is not compared)."""


def _refuse_message(
    layout: Layout, existing: Manifest, content: Mapping[str, Any], fp_text: str
) -> str:
    """Why freezing `existing` again is refused: every field that differs, named."""
    frozen_fp = _frozen_fingerprints(layout, existing)
    old = {i.id: i.hash for i in existing.items}
    new = {i["id"]: i["hash"] for i in content["items"]}
    added = sorted(set(new) - set(old))
    removed = sorted(set(old) - set(new))
    changed = sorted(i for i in set(old) & set(new) if old[i] != new[i])
    details: list[str] = []
    if added or removed or changed:
        details.append(
            f"{len(added)} item(s) added {added[:5]}, {len(removed)} removed {removed[:5]}, "
            f"{len(changed)} changed {changed[:5]}"
        )
    frozen = existing.hashed_content()
    for name in sorted(set(frozen) | set(content)):
        if name in _NOT_LISTED or frozen.get(name) == content.get(name):
            continue
        details.append(
            f"{name} frozen as {_brief(frozen.get(name))}, now {_brief(content.get(name))}"
        )
    if frozen["vault"] != content["vault"]:
        details.append(f"vault {_brief(frozen['vault'])} would now be {_brief(content['vault'])}")
    if frozen["fingerprints"] != content["fingerprints"]:
        details.append(
            f"fingerprint file {existing.fingerprints.path} frozen as "
            f"{existing.fingerprints.sha256}, regenerated as "
            f"{content['fingerprints']['sha256']} ({describe_difference(frozen_fp, fp_text)})"
        )
    return (
        f"{existing.ref} is already frozen (manifest {existing.manifest_hash}) with other "
        f"content: {'; '.join(details) or 'the manifest hash differs'}. A frozen version never "
        "changes; freeze the change as a new version instead."
    )


def _brief(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
