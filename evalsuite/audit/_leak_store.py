"""Keep a leak audit's findings with the version, for `evalsuite items` (the leaky flag)."""

from __future__ import annotations

import json
from pathlib import Path

from evalsuite._core.atomic import atomic_write_text
from evalsuite._core.layout import Layout
from evalsuite.audit._leaks import LeakReport
from evalsuite.manifest import leak_audit_path

__all__ = ["store_leak_audit"]


def store_leak_audit(layout: Layout, report: LeakReport, *, holdout: bool) -> Path:
    """Write `report` into the project's state (atomically); `holdout`: holdout items checked.

    The file names items by id, surface and how only: never an item's text.
    """
    path = leak_audit_path(layout, report.suite, report.version)
    data = report.to_dict() | {"holdout_checked": holdout}
    atomic_write_text(path, json.dumps(data, indent=2, sort_keys=True) + "\n")
    return path
