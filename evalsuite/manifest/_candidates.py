"""Candidate items before they are frozen: read, hashed, fingerprinted, staged for an audit.

`evalsuite triage CANDIDATES --suite S` (docs/design/triage-and-diff.md) reads candidate
items in the suite's item format, gives each its family, content hash and stratum the way
`freeze` will, looks for duplicates of the items already frozen (by their fingerprints, so
holdout items are compared without their key and without their text) and of each other, and
builds a candidate version holding every candidate on the dev side, for the grader audit.
Nothing here writes into the project.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalsuite._core.hashing import sha256_bytes
from evalsuite._core.layout import Layout
from evalsuite.errors import ItemSourceError, UsageError
from evalsuite.manifest._catalog import load_manifest
from evalsuite.manifest._fingerprints import (
    FINGERPRINT_FORMAT,
    FORMATS,
    file_format,
    fingerprint_item,
    render_fingerprints,
)
from evalsuite.manifest._freeze_audit import FreezeCandidate
from evalsuite.manifest._items import (
    Item,
    LoadedItem,
    item_cluster,
    item_hash,
    item_stratum,
    read_item_source,
)
from evalsuite.manifest._schema import MANIFEST_FORMAT, Manifest, compute_manifest_hash
from evalsuite.manifest._split import split_salt
from evalsuite.manifest._suite import SuiteConfig

__all__ = [
    "CANDIDATE_VERSION",
    "DUPLICATE_SHARE",
    "Candidate",
    "candidate_version",
    "find_duplicates",
    "read_candidates",
]

CANDIDATE_VERSION = "0.0.0"
"""The version a staged candidate set carries (it is never written into the project)."""
DUPLICATE_SHARE = 0.5
"""A candidate whose long-text n-grams are at least this share in one other item's is a
duplicate of it (as is one whose input text is identical after normalisation)."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """One candidate item, as `freeze` would record it."""

    family: str
    item: Item
    hash: str
    stratum: str
    cluster: str | None
    location: str
    line: str
    """The record as read (JSON), for `--keep-only`."""


def _family_files(suite: SuiteConfig, path: Path) -> list[tuple[str, Path]]:
    names = [f.name for f in suite.families]
    if path.is_file():
        if len(names) != 1:
            raise UsageError(
                f"suite {suite.name!r} has {len(names)} families ({', '.join(names)}): give a "
                f"directory with one item file per family, named <family>.jsonl (got the file "
                f"{path})"
            )
        return [(names[0], path)]
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
        out = []
        for file in files:
            family = file.name.split(".", 1)[0]
            if family not in names:
                raise UsageError(
                    f"{file}: no family {family!r} in suite {suite.name!r} (families: "
                    f"{', '.join(names)}); name each candidate file <family>.jsonl"
                )
            out.append((family, file))
        if not out:
            raise UsageError(f"{path} holds no candidate item file (<family>.jsonl)")
        return out
    raise UsageError(f"no candidates at {path}: give a JSONL file of items or a directory of them")


def read_candidates(suite: SuiteConfig, path: Path) -> list[Candidate]:
    """The candidate items at `path`: a file (one-family suite) or ``<family>.jsonl`` files.

    Raises:
        UsageError: no such path, a file of an unknown family, a multi-family suite given a
            single file, no candidate at all, or one id twice.
        ItemSourceError: a malformed item (the message names file and line).
    """
    out: list[Candidate] = []
    versions = {f.name: f.version for f in suite.families}
    for family, file in _family_files(suite, path):
        items = read_item_source(file)
        lines = [ln for ln in file.read_text(encoding="utf-8").splitlines() if ln.strip()]
        records = {}
        for raw in lines:
            try:
                records[str(json.loads(raw).get("id"))] = raw
            except (json.JSONDecodeError, AttributeError):
                continue
        for number, item in enumerate(items, start=1):
            if item.canary is not None and item.canary != suite.canary:
                raise ItemSourceError(
                    f"{file}: candidate {item.id!r} carries another suite's canary; remove "
                    "the field (freeze adds the right one)"
                )
            loaded = LoadedItem(item=item, family=family, location=f"{file}:{number}")
            out.append(
                Candidate(
                    family=family,
                    item=item,
                    hash=item_hash(item, family, versions[family]),
                    stratum=item_stratum(suite, loaded),
                    cluster=item_cluster(suite, loaded),
                    location=loaded.location,
                    line=records.get(item.id, json.dumps(item.payload(), sort_keys=True)),
                )
            )
    if not out:
        raise UsageError(f"{path} holds no candidate item")
    seen = Counter(c.item.id for c in out)
    twice = sorted(i for i, n in seen.items() if n > 1)
    if twice:
        raise UsageError(
            f"candidate ids appear more than once: {twice[:10]}; give every candidate its own id"
        )
    return out


def _input_text(item: Item) -> str:
    if isinstance(item.input, str):
        return item.input
    return " ".join(str(m.get("content", "")) for m in item.input)


def _frozen_fingerprints(layout: Layout, manifest: Manifest) -> tuple[str, list[dict[str, Any]]]:
    path = layout.root / manifest.fingerprints.path
    text = path.read_text(encoding="utf-8")
    if sha256_bytes(text.encode("utf-8")) != manifest.fingerprints.sha256:
        raise UsageError(
            f"{manifest.fingerprints.path} does not hash to what {manifest.ref} recorded: "
            f"run `evalsuite verify {manifest.ref}`"
        )
    fmt = file_format(text) or FINGERPRINT_FORMAT
    rows = [json.loads(line) for line in text.splitlines()[1:] if line.strip()]
    return fmt, rows


def find_duplicates(
    layout: Layout, manifest: Manifest | None, candidates: Sequence[Candidate]
) -> dict[str, tuple[str, str]]:
    """Candidate id -> (kind, detail) for each candidate that duplicates another item.

    Kinds: ``id-taken`` (its id is already frozen with other content: a new id is needed),
    ``duplicate`` (identical content, identical input text, or most of its n-grams in one
    frozen item or in an earlier candidate). Frozen items are compared through the version's
    fingerprints: a holdout item is named by id only.
    """
    out: dict[str, tuple[str, str]] = {}
    fmt = FINGERPRINT_FORMAT
    frozen: list[dict[str, Any]] = []
    frozen_hashes: dict[str, str] = {}
    ref = None
    if manifest is not None:
        fmt, frozen = _frozen_fingerprints(layout, manifest)
        frozen_hashes = {i.id: i.hash for i in manifest.items}
        ref = manifest.ref
    spec = FORMATS[fmt].spec
    pool: list[tuple[str, str, set[str], set[int]]] = [
        (
            str(r["id"]),
            f"{r['split']} item {r['id']} of {ref}",
            set(r["text_hashes"]),
            set(r["ngrams"]),
        )
        for r in frozen
    ]
    for cand in candidates:
        item_id = cand.item.id
        if item_id in frozen_hashes:
            if frozen_hashes[item_id] == cand.hash:
                out[item_id] = ("duplicate", f"identical to item {item_id} of {ref}")
            else:
                out[item_id] = (
                    "id-taken",
                    f"id {item_id} is already frozen in {ref} with other content: a changed "
                    "item needs a new id (or retire the old one)",
                )
            continue
        record = fingerprint_item(cand.item, split="dev", stratum=cand.stratum, format=fmt)
        grams = set(record.ngrams)
        text = _input_text(cand.item)
        input_hash = spec.text_hash(text) if text.strip() else None
        for _other, label, hashes, other_grams in pool:
            if input_hash is not None and input_hash in hashes:
                out[item_id] = ("duplicate", f"same input text as {label}")
                break
            if grams and len(grams & other_grams) / len(grams) >= DUPLICATE_SHARE:
                share = len(grams & other_grams) / len(grams)
                out[item_id] = ("duplicate", f"{share:.0%} of its n-grams are in {label}")
                break
        if item_id not in out:
            pool.append((item_id, f"candidate {item_id}", set(record.text_hashes), grams))
    return out


def candidate_version(
    layout: Layout,
    suite: SuiteConfig,
    candidates: Sequence[Candidate],
    *,
    tools: Mapping[str, Mapping[str, str]] | None,
) -> FreezeCandidate:
    """A version of `suite` holding only `candidates`, all on the dev side, for the audit.

    Never written into the project: the audit stages it in a private directory
    (`evalsuite.audit.FreezeAuditor`). It has no vault (no holdout item).
    """
    version = CANDIDATE_VERSION
    families = sorted({c.family for c in candidates})
    strata = Counter(c.stratum for c in candidates)
    fp_text = render_fingerprints(
        (fingerprint_item(c.item, split="dev", stratum=c.stratum) for c in candidates),
        suite=suite.name,
        version=version,
        canary=suite.canary,
    )
    family_records = []
    for family in suite.families:
        if family.name not in families:
            continue
        record = family.model_dump(mode="json", exclude_none=True)
        if tools is not None and family.name in tools:
            record["tools"] = dict(tools[family.name])
        family_records.append(record)
    content: dict[str, Any] = {
        "format": MANIFEST_FORMAT,
        "suite": suite.name,
        "version": version,
        "description": suite.description,
        "parent": None,
        "diff": {"added": [], "removed": [], "changed": []},
        "split_salt": split_salt(suite.canary, version),
        "holdout_fraction": suite.holdout_fraction,
        "canary": suite.canary,
        "key": suite.key,
        "key_id": "candidates-have-no-vault",
        "stratify_by": list(suite.stratify_by),
        "cluster_by": suite.cluster_by,
        "holdout_budget": suite.holdout_budget,
        # only when declared: a suite without it keeps the hash it had before it existed
        **(
            {"holdout_mechanism": suite.holdout_mechanism.model_dump(mode="json")}
            if suite.holdout_mechanism is not None
            else {}
        ),
        "weights": {s: n / len(candidates) for s, n in sorted(strata.items())},
        "families": family_records,
        "items": [
            {
                "id": c.item.id,
                "hash": c.hash,
                "stratum": c.stratum,
                "split": "dev",
                "family": c.family,
                "cluster": c.cluster,
            }
            for c in sorted(candidates, key=lambda c: c.item.id)
        ],
        "vault": None,
        "fingerprints": {
            "path": layout.fingerprint_file(suite.name, version)
            .relative_to(layout.root)
            .as_posix(),
            "sha256": sha256_bytes(fp_text.encode("utf-8")),
        },
    }
    manifest = Manifest.model_validate(
        {
            **content,
            "frozen_at": "1970-01-01T00:00:00+00:00",
            "note": "candidates staged for triage (never frozen)",
            "manifest_hash": compute_manifest_hash(content),
        }
    )
    return FreezeCandidate(
        manifest=manifest,
        fingerprints_text=fp_text,
        vault_path=layout.root / "no-vault",
        dev_items=[(c.family, c.item) for c in sorted(candidates, key=lambda c: c.item.id)],
    )


def load_latest(layout: Layout, suite: str) -> Manifest | None:
    """The latest frozen version of `suite`, or None when it has none."""
    from evalsuite.manifest._catalog import frozen_versions

    if not frozen_versions(layout, suite):
        return None
    return load_manifest(layout, suite)
