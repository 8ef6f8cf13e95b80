"""Where a version's leak audit is kept, and reading it back (`evalsuite items` reads it).

``evalsuite audit SUITE@X.Y.Z --leaks`` writes its findings into the project's state
(``.evalsuite/audits/<suite>/<version>.leaks.json``): item ids, surfaces and how, never item
text. Not beside the frozen manifest: the result depends on the family code's leak hooks,
which may change after the freeze, so it is a finding about this checkout, like a run
(docs/design/items.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalsuite._core.layout import Layout
from evalsuite.errors import IntegrityError

__all__ = ["leak_audit_path", "read_leak_audit"]


def leak_audit_path(layout: Layout, suite: str, version: str) -> Path:
    """The stored leak audit of ``suite@version``."""
    return layout.state / "audits" / suite / f"{version}.leaks.json"


def read_leak_audit(layout: Layout, suite: str, version: str) -> dict[str, Any] | None:
    """The stored leak audit of ``suite@version`` (None: none stored).

    Raises:
        IntegrityError: the file exists but is not a leak audit of this version.
    """
    path = leak_audit_path(layout, suite, version)
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise IntegrityError(
            f"the stored leak audit {path} cannot be read ({type(exc).__name__}): run "
            f"`evalsuite audit {suite}@{version} --leaks` again to rewrite it"
        ) from None
    if (
        not isinstance(data, dict)
        or data.get("suite") != suite
        or data.get("version") != version
        or not isinstance(data.get("findings"), list)
    ):
        raise IntegrityError(
            f"{path} is not the leak audit of {suite}@{version} (expected an object with "
            f"suite {suite!r}, version {version!r} and a list of findings): run "
            f"`evalsuite audit {suite}@{version} --leaks` again to rewrite it"
        )
    return data
