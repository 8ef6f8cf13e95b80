"""The grader audit `freeze` runs, on the version it is about to write.

The audit runs through `run_suite`, which only runs frozen versions. So the candidate version
is written into a private staging project (a temporary directory outside the project and
outside git): its manifest (hash without the audit stamp), fingerprints and sealed vault, a
changelog line, the suite file with each family's items pointing at a file of the version's
dev items only, and links to everything else in `tasks/` (the family code). The dev audit runs
there with a private store; nothing of it is kept but the results, which `freeze` writes beside
the manifest. No holdout item is written anywhere (the vault stays sealed). See
docs/design/grader-audit.md.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evalsuite._core.layout import Layout
from evalsuite.audit._graders import AuditOptions, audit_manifest
from evalsuite.audit._record import audit_text
from evalsuite.audit._report import GraderAudit
from evalsuite.errors import UsageError
from evalsuite.kit import FamilyKitError, action_space, family_of_task
from evalsuite.manifest import (
    AuditOutcome,
    FreezeCandidate,
    KeySpec,
    SuiteConfig,
    load_suite,
)
from evalsuite.run import load_task_function
from evalsuite.store import Store

__all__ = ["FreezeAuditor", "declared_action_spaces"]

_ITEMS_DIR = ".evalsuite-audit-items"


def declared_action_spaces(layout: Layout, suite_name: str) -> dict[str, dict[str, str]]:
    """Family -> the action space its kit declares now (families without a kit left out).

    Raises:
        UsageError: a kit's tools cannot be described to a model (a parameter without a
            description, say): fix the tool before freezing.
    """
    suite = load_suite(layout, suite_name)
    spaces = {}
    for family in suite.families:
        try:
            kit = family_of_task(load_task_function(layout, suite.name, family))
        except FamilyKitError:
            continue
        if kit is None:
            continue
        try:
            spaces[family.name] = action_space([d.tool for d in kit.tools])
        except Exception as exc:  # the family's own tool definitions
            raise UsageError(
                f"the tools of family {family.name!r} cannot be described to a model "
                f"({type(exc).__name__}: {str(exc)[:200]}); fix them before freezing"
            ) from None
    return spaces


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):  # a family's judge, task_args, sandbox...: an inline table
        pairs = (
            f"{json.dumps(str(k), ensure_ascii=False)} = {_toml_value(v)}" for k, v in value.items()
        )
        return "{ " + ", ".join(pairs) + " }"
    return json.dumps(str(value), ensure_ascii=False)


def _suite_toml(suite: SuiteConfig, items: Mapping[str, str]) -> str:
    """The suite file with each family's items at `items[family]` (JSON strings are TOML)."""
    data = suite.model_dump(mode="json", exclude_none=True)
    families, weights = data.pop("families"), data.pop("weights", None)
    lines = [f"{key} = {_toml_value(value)}" for key, value in data.items()]
    for family in families:
        family["items"] = items[family["name"]]
        lines += ["", "[[families]]"]
        lines += [f"{key} = {_toml_value(value)}" for key, value in family.items()]
    if weights:
        lines += ["", "[weights]"]
        lines += [f"{json.dumps(k)} = {_toml_value(v)}" for k, v in weights.items()]
    return "\n".join(lines) + "\n"


def stage_candidate(layout: Layout, candidate: FreezeCandidate, root: Path) -> Layout:
    """A throwaway project at `root` holding `candidate` as its suite (tasks linked in)."""
    manifest = candidate.manifest
    staged = Layout(root, origin=layout.root)  # its tasks/ links into the project's
    staged.tasks.mkdir(parents=True)
    for entry in sorted(layout.tasks.iterdir()):
        if entry.name != f"{manifest.suite}.toml" and entry.name != _ITEMS_DIR:
            (staged.tasks / entry.name).symlink_to(entry.resolve(), entry.is_dir())
    sources: dict[str, list[str]] = {f.name: [] for f in manifest.families}
    for family, item in candidate.dev_items:
        sources[family].append(json.dumps(item.payload(), sort_keys=True, ensure_ascii=False))
    (staged.tasks / _ITEMS_DIR).mkdir()
    for family, lines in sources.items():
        (staged.tasks / _ITEMS_DIR / f"{family}.jsonl").write_text(
            "".join(line + "\n" for line in lines), encoding="utf-8"
        )
    items = {f: f"{_ITEMS_DIR}/{f}.jsonl" for f in sources}
    suite = load_suite(layout, manifest.suite)
    staged.suite_file(manifest.suite).write_text(_suite_toml(suite, items), encoding="utf-8")
    folder = staged.manifest_dir(manifest.suite)
    folder.mkdir(parents=True)
    staged.manifest_file(manifest.suite, manifest.version).write_text(
        manifest.model_dump_json(indent=2) + "\n", encoding="utf-8"
    )
    staged.fingerprint_file(manifest.suite, manifest.version).write_text(
        candidate.fingerprints_text, encoding="utf-8"
    )
    (folder / "CHANGELOG.md").write_text(
        f"- **{manifest.version}** (staged for its grader audit): manifest "
        f"`{manifest.manifest_hash}`\n",
        encoding="utf-8",
    )
    if manifest.vault is not None:
        vault = staged.root / manifest.vault.path
        vault.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(candidate.vault_path, vault)
    return staged


class FreezeAuditor:
    """The audit `freeze` runs on a candidate version (`evalsuite.manifest.FreezeAudit.run`).

    The last audit is kept in `audit` (for the command to print, also when it failed).
    """

    def __init__(self, layout: Layout, options: AuditOptions = AuditOptions()) -> None:  # noqa: B008 (frozen)
        self.layout = layout
        self.options = AuditOptions(
            split="dev", repeat=options.repeat, seed=options.seed, per_stratum=None
        )
        self.audit: GraderAudit | None = None

    def __call__(self, candidate: FreezeCandidate) -> AuditOutcome:
        """Audit the candidate's dev split in a staging copy; never write into the project."""
        with tempfile.TemporaryDirectory(prefix="evalsuite-freeze-audit-") as scratch:
            root = Path(scratch)
            staged = stage_candidate(self.layout, candidate, root / "project")
            store = Store(f"sqlite:///{root / 'audit.sqlite'}")
            try:
                audit = audit_manifest(
                    staged,
                    candidate.manifest,
                    keys=KeySpec(key_dir=root / "no-keys"),
                    store=store,
                    options=self.options,
                )
            finally:
                store.engine.dispose()
        audit.logs = []  # the staging copy, and its logs, are gone
        self.audit = audit
        return AuditOutcome(
            passed=audit.ok,
            content_hash=audit.content_hash(),
            text=audit_text(audit),
            summary=" ".join(f"{line}." for line in audit.failures()),
        )
