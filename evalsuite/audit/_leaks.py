"""Leak audit: does an item's answer show in what the agent can read?

Benchmarks lose their value when the target, or a distinctive part of it, is visible to the
agent: in the prompt, in the files it is given, or in the environment state its tools can
read. For every item (holdout items decrypted in memory only) this module compares the
target's distinctive strings with those surfaces, word by word after normalisation.

A family can refine both sides in its kit (`evalsuite.kit.Family`):

* ``leak_surface(payload: dict) -> dict[str, str]``: name -> text the agent can read
  (default: the input and each file);
* ``leak_secrets(payload: dict) -> list[str]``: the distinctive parts of the target
  (default: the target itself, each element of a list target).

A task file without a kit may still define the two functions at module level (the form
before the kit existed; still read).

Findings name items by id and surface only, never by text.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from evalsuite._core.layout import Layout
from evalsuite._core.text import normalise_words
from evalsuite.holdout import anchor_file, record_decryption
from evalsuite.kit import family_of
from evalsuite.manifest import (
    KeySpec,
    Manifest,
    file_bytes,
    load_holdout_items,
    load_manifest,
    load_suite,
    load_suite_items,
    resolve_key,
)
from evalsuite.run import load_task_function

__all__ = ["LeakFinding", "LeakReport", "audit_leaks", "default_secrets", "default_surface"]

MIN_SECRET_CHARS = 3
"""Secrets shorter than this (normalised) are too common to mean anything and are skipped."""
WINDOW = 8
"""Long secrets also leak through any WINDOW consecutive words of theirs."""


@dataclass(frozen=True, slots=True)
class LeakFinding:
    """An item whose target shows in a surface the agent can read."""

    item_id: str
    split: str
    surface: str
    how: str

    def to_dict(self) -> dict[str, str]:
        """JSON-ready form."""
        return {
            "item_id": self.item_id,
            "split": self.split,
            "surface": self.surface,
            "how": self.how,
        }


@dataclass(slots=True)
class LeakReport:
    """What the leak audit checked and found."""

    suite: str
    version: str
    checked: dict[str, int] = field(default_factory=dict)
    findings: list[LeakFinding] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    """item id -> why it could not be audited (e.g. target too short)."""

    @property
    def ok(self) -> bool:
        """True when no item leaks."""
        return not self.findings

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (`audit --leaks --json`)."""
        return {
            "suite": self.suite,
            "version": self.version,
            "ok": self.ok,
            "checked": self.checked,
            "findings": [f.to_dict() for f in self.findings],
            "skipped": self.skipped,
        }


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(
            str(m.get("content", "")) if isinstance(m, dict) else str(m) for m in value
        )
    return json.dumps(value, sort_keys=True)


def default_surface(payload: dict[str, Any]) -> dict[str, str]:
    """What the agent reads by default: the input and the files it is given.

    A file of bytes is read as UTF-8 with undecodable bytes replaced, so text stored in it
    (a target inside a PDF's or a database's strings) still shows.
    """
    surface = {"input": _text(payload["input"])}
    for path, content in (payload.get("files") or {}).items():
        surface[f"file:{path}"] = file_bytes(content).decode("utf-8", errors="replace")
    return surface


def default_secrets(payload: dict[str, Any]) -> list[str]:
    """The target (each element of a list target)."""
    target = payload["target"]
    return [target] if isinstance(target, str) else [str(t) for t in target]


def _contains(haystack: list[str], needle: list[str]) -> bool:
    if not needle or len(needle) > len(haystack):
        return False
    first = needle[0]
    width = len(needle)
    return any(
        haystack[i] == first and haystack[i : i + width] == needle
        for i in range(len(haystack) - width + 1)
    )


def _leaks(secret: str, surface: list[str]) -> str | None:
    words = normalise_words(secret)
    if _contains(surface, words):
        return "the whole target"
    if len(words) > WINDOW:
        for start in range(len(words) - WINDOW + 1):
            if _contains(surface, words[start : start + WINDOW]):
                return f"{WINDOW} consecutive words of the target"
    return None


Hooks = tuple[Callable[[dict[str, Any]], dict[str, str]], Callable[[dict[str, Any]], list[str]]]


def _hooks(layout: Layout, manifest: Manifest) -> dict[str, Hooks]:
    hooks: dict[str, Hooks] = {}
    for family in manifest.families:
        function = load_task_function(layout, manifest.suite, family)
        module = sys.modules[function.__module__]
        kit = family_of(module)
        if kit is not None:
            hooks[family.name] = (
                kit.leak_surface or default_surface,
                kit.leak_secrets or default_secrets,
            )
            continue
        hooks[family.name] = (
            getattr(module, "leak_surface", default_surface),
            getattr(module, "leak_secrets", default_secrets),
        )
    return hooks


def audit_leaks(
    layout: Layout, suite: str, version: str | None, *, keys: KeySpec, holdout: bool = True
) -> LeakReport:
    """Check every item of ``suite@version`` for its target in what the agent can read.

    Args:
        layout: The project.
        suite: Suite name.
        version: Frozen version (latest when None).
        keys: Vault key locations (holdout items are decrypted in memory).
        holdout: Also audit the holdout items (needs the key). The decryption is recorded in
            the suite's access ledger first (a ``decrypt`` entry, no budget spent).

    Raises:
        LedgerError: the ledger is damaged: nothing is decrypted.
    """
    manifest = load_manifest(layout, suite, version)
    report = LeakReport(suite=suite, version=manifest.version)
    hooks = _hooks(layout, manifest)
    dev_ids = {i.id for i in manifest.items_by_split("dev")}
    pairs = [
        (e.family, e.item, "dev")
        for e in load_suite_items(layout, load_suite(layout, suite))
        if e.item.id in dev_ids
    ]
    if holdout:
        key = resolve_key(suite, manifest.key, manifest.canary, keys, create=False)
        record_decryption(  # before the vault is opened; no budget spent
            layout.ledger_file(suite),
            suite=suite,
            version=manifest.version,
            manifest_hash=manifest.manifest_hash,
            reason="leak audit (evalsuite audit --leaks): holdout targets compared with what "
            "the agent can read, in memory",
            at=datetime.now(UTC).isoformat(),
            anchor=anchor_file(keys.key_dir, layout.root, suite),
        )
        pairs += [(f, i, "holdout") for f, i in load_holdout_items(layout, manifest, key)]
    for family, item, split in pairs:
        report.checked[split] = report.checked.get(split, 0) + 1
        surface_of, secrets_of = hooks[family]
        payload = item.payload()
        secrets = [
            s for s in secrets_of(payload) if len(" ".join(normalise_words(s))) >= MIN_SECRET_CHARS
        ]
        if not secrets:
            report.skipped[item.id] = f"no target part of {MIN_SECRET_CHARS}+ characters"
            continue
        for name, text in surface_of(payload).items():
            words = normalise_words(text)
            for secret in secrets:
                how = _leaks(secret, words)
                if how is not None:
                    report.findings.append(LeakFinding(item.id, split, name, how))
                    break
    return report
