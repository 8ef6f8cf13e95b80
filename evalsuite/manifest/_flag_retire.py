"""Retire the items `evalsuite items` flagged: `freeze S --version X.Y.Z --retire-flagged FILE`.

`evalsuite items SUITE@X.Y.Z --json` writes per item its flags (``dead``, ``flaky``,
``harness-suspect``, ``negatively-discriminating``, ``leaky``) and a reason per flag. This
module reads that file, checks that it is about the suite's latest frozen version, picks the
items carrying any of the flags asked for and returns their ids with a note that names each
one, its flags and reasons: `freeze` records the note in the new manifest and its changelog
line. Design: docs/design/triage-and-diff.md.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalsuite._core.display import show_id
from evalsuite._core.layout import Layout
from evalsuite.errors import UsageError
from evalsuite.manifest._catalog import load_manifest

__all__ = ["ITEM_FLAGS", "FlaggedRetirement", "flagged_retirements"]

ITEM_FLAGS = ("dead", "flaky", "harness-suspect", "negatively-discriminating", "leaky")
"""The flags `evalsuite items` sets (docs/design/triage-and-diff.md)."""
_REASON_CHARS = 160
"""A flag's reason is cut to this many characters in the note (one line each)."""


@dataclass(frozen=True, slots=True)
class FlaggedRetirement:
    """The items to retire and why."""

    item_ids: list[str]
    note: str
    """One sentence per item: id, flags, reasons; recorded in manifest and changelog."""
    source: str
    """``suite@version`` the flags were computed on."""


def _one_line(text: str) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= _REASON_CHARS else flat[: _REASON_CHARS - 1] + "…"


def parse_flags(text: str) -> list[str]:
    """``dead,leaky`` as a list of known flags.

    Raises:
        UsageError: an empty list or an unknown flag.
    """
    flags = [f.strip() for f in text.split(",") if f.strip()]
    unknown = sorted(set(flags) - set(ITEM_FLAGS))
    if not flags or unknown:
        raise UsageError(
            f"--flag takes a comma-separated list of {', '.join(ITEM_FLAGS)} "
            f"(got {text!r}{'; unknown: ' + ', '.join(unknown) if unknown else ''})"
        )
    return flags


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(
            f"--retire-flagged {path}: no such file; write it with "
            "`evalsuite items SUITE@X.Y.Z --json > FILE`"
        ) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(
            f"--retire-flagged {path} is not the JSON `evalsuite items --json` writes "
            f"({type(exc).__name__}: {exc})"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("items"), list):
        raise UsageError(
            f"--retire-flagged {path} has no 'items' list: expected the output of "
            "`evalsuite items SUITE@X.Y.Z --json`"
        )
    return data


def flagged_retirements(
    layout: Layout, suite: str, path: Path, flags: Sequence[str]
) -> FlaggedRetirement:
    """The items of `path` (``items --json``) flagged with any of `flags`, and the note.

    Raises:
        UsageError: the file is unreadable or of another shape, of another suite, or not of
            the suite's latest frozen version (flags of an older version describe other
            content); an item it flags is not in that version; no item carries the flags.
    """
    data = _read(path)
    manifest = load_manifest(layout, suite)
    if data.get("suite") != suite or data.get("version") != manifest.version:
        raise UsageError(
            f"--retire-flagged {path} is about {data.get('suite')}@{data.get('version')}, "
            f"but the version being retired from is {suite}@{manifest.version} (the latest "
            f"frozen): run `evalsuite items {suite}@{manifest.version} --json` first"
        )
    known = {i.id for i in manifest.items}
    chosen: list[tuple[str, list[str], dict[str, str]]] = []
    for index, row in enumerate(data["items"]):
        if not isinstance(row, dict) or not isinstance(row.get("item_id"), str):
            raise UsageError(f"--retire-flagged {path}: items[{index}] has no 'item_id' string")
        raw_flags = row.get("flags") or []
        if not isinstance(raw_flags, list):
            raise UsageError(f"--retire-flagged {path}: items[{index}].flags is not a list")
        hit = sorted(set(raw_flags) & set(flags))
        if not hit:
            continue
        if row["item_id"] not in known:
            raise UsageError(
                f"--retire-flagged {path} flags item {show_id(str(row['item_id']))}, which is "
                f"not in {suite}@{manifest.version}"
            )
        reasons = row.get("flag_reasons") or {}
        chosen.append((row["item_id"], hit, reasons if isinstance(reasons, dict) else {}))
    if not chosen:
        raise UsageError(
            f"no item of {path} carries any of the flags {', '.join(flags)}: nothing to "
            "retire, nothing frozen (drop --retire-flagged, or choose other --flag values)"
        )
    chosen.sort()
    parts = []
    for item_id, hit, reasons in chosen:
        why = ", ".join(
            f"{flag} ({_one_line(reasons[flag])})" if reasons.get(flag) else flag for flag in hit
        )
        parts.append(f"{item_id}: {why}")
    note = (
        f"Retired {len(chosen)} item(s) flagged {', '.join(flags)} by `evalsuite items "
        f"{suite}@{manifest.version}`: " + "; ".join(parts)
    )
    return FlaggedRetirement(
        item_ids=[c[0] for c in chosen], note=note, source=f"{suite}@{manifest.version}"
    )
