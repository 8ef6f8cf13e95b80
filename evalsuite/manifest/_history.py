"""Where else a manifest's hash is written down: the suite's changelog and git history.

A manifest carries its own hash, so an edit that recomputes that hash (say `holdout_budget`
raised from 3 to 99) passes the self-check. It cannot also rewrite what was recorded
elsewhere when the version was frozen:

- the changelog line that `freeze` appended (``manifests/<suite>/CHANGELOG.md``);
- git, where the project is a git repository: the working copy must hash like the last
  commit of the file, every commit of the file must carry a changelog that records the hash
  it committed, and no commit may change the manifest after its first commit: a frozen
  version never changes, so an edit committed with its hash recomputed and its changelog line
  swapped (a version with no runs yet has no other record) is caught too. Without git, or
  outside a repository, the source is skipped and the report says so.

The holdout ledger and the results store record the hash too; they are compared one layer up
(`evalsuite.holdout.ledger_hash_check`, `store_hash_check`), since this layer reads neither. See
docs/design/holdout-governance.md.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from evalsuite._core.git import run_git
from evalsuite._core.layout import Layout

__all__ = [
    "CommittedVersion",
    "HashSources",
    "changelog_hashes",
    "git_manifest_hashes",
    "history_check",
]

_LINE = re.compile(
    r"^- \*\*(?P<version>[^*\s]+)\*\* .*?manifest `(?P<hash>sha256:[0-9a-f]{64})`", re.MULTILINE
)

_DEVELOPMENT_REFREEZES = frozenset(
    {
        # evalsuite's own example arith@1.0.0 was re-frozen twice on its first day, before any
        # release or run, when the fingerprint format and the canaries changed (commits
        # 41bc05c and 098e7ad). The content of the two commits it replaced is not the first
        # committed content; a commit id cannot be forged, so this names exactly those two.
        ("f2bce603b03999afeb76f562859fd23c451e487c", "arith", "1.0.0"),
        ("41bc05c70f1c2ec46e803a11fb77a99bd94d6d8c", "arith", "1.0.0"),
    }
)
"""(commit, suite, version) whose committed manifest was superseded during evalsuite's own
development; see docs/design/holdout-governance.md, section 3."""


@dataclass(slots=True)
class HashSources:
    """How each record of a manifest's hash compares with the manifest file."""

    problems: list[str] = field(default_factory=list)
    """Disagreements (integrity failures), each naming its source."""
    sources: dict[str, str] = field(default_factory=dict)
    """Source name -> ``agrees``, ``DISAGREES``, ``none`` or ``skipped: <why>``."""
    warnings: list[str] = field(default_factory=list)
    """What a source could not check (not failures): a shallow clone's missing history."""

    def add(self, source: str, state: str, problem: str | None = None) -> None:
        """Record one source's verdict (and its problem, when it disagrees)."""
        self.sources[source] = state
        if problem is not None:
            self.problems.append(problem)


def changelog_hashes(layout: Layout, suite: str) -> dict[str, list[str]] | None:
    """Manifest hashes per version in ``manifests/<suite>/CHANGELOG.md`` (None: no file)."""
    path = layout.manifest_dir(suite) / "CHANGELOG.md"
    if not path.is_file():
        return None
    return _parse_changelog(path.read_text(encoding="utf-8", errors="replace"))


@dataclass(frozen=True, slots=True)
class CommittedVersion:
    """The manifest hash in one commit that touched the file, and the changelog's then."""

    commit: str
    manifest_hash: str
    changelog: tuple[str, ...]
    """Hashes the changelog of that commit records for the version (empty: no line)."""


def _parse_changelog(text: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for match in _LINE.finditer(text):
        found.setdefault(match.group("version"), []).append(match.group("hash"))
    return found


def git_manifest_hashes(path: Path, version: str) -> tuple[list[CommittedVersion] | None, str]:
    """Every committed version of the manifest file at `path`, newest first.

    Returns:
        (the versions, ``""``) when the file has git history, else (None, why the source was
        skipped): git not installed, not a git repository, the file never committed.
    """
    if shutil.which("git") is None:
        return None, "git is not installed"
    folder = path.parent
    try:
        inside = run_git(folder, "rev-parse", "--is-inside-work-tree")
        if inside.returncode != 0 or inside.stdout.strip() != "true":
            return None, "the project is not in a git repository"
        # --full-history: by default git log follows only the parent a merge took the file
        # from, so a branch that froze other content, merged with its side kept, hid the
        # first commit of the manifest (docs/design/holdout-governance.md, section 3)
        log = run_git(folder, "log", "--full-history", "--format=%H", "--", path.name)
        if log.returncode != 0:
            return None, f"git log failed: {log.stderr.strip()[:200]}"
        found: list[CommittedVersion] = []
        for commit in log.stdout.split():
            shown = run_git(folder, "show", f"{commit}:./{path.name}")
            if shown.returncode != 0:  # this commit deleted the file
                continue
            try:
                recorded = str(json.loads(shown.stdout).get("manifest_hash"))
            except (json.JSONDecodeError, AttributeError):
                recorded = "(unreadable manifest)"
            changelog = run_git(folder, "show", f"{commit}:./CHANGELOG.md")
            lines = _parse_changelog(changelog.stdout) if changelog.returncode == 0 else {}
            found.append(CommittedVersion(commit, recorded, tuple(lines.get(version, []))))
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"git failed ({type(exc).__name__})"
    if not found:
        return None, f"{path.name} has no commits yet"
    return found, ""


def history_check(layout: Layout, suite: str, version: str, manifest_hash: str) -> HashSources:
    """Compare `manifest_hash` with the changelog line and the git history of the file."""
    result = HashSources()
    changelog = changelog_hashes(layout, suite)
    where = f"manifests/{suite}/CHANGELOG.md"
    if changelog is None:
        result.add(
            "changelog",
            "DISAGREES",
            f"{where} is missing: freeze writes one line per version with its manifest hash. "
            f"If `evalsuite freeze {suite} --version {version}` was interrupted, run it again to "
            "complete it; otherwise restore the changelog from version control",
        )
    elif version not in changelog:
        result.add(
            "changelog",
            "DISAGREES",
            f"{where} has no line for {suite}@{version}: freeze writes one with the manifest "
            f"hash. If `evalsuite freeze {suite} --version {version}` was interrupted, run it "
            "again to complete it; otherwise restore the changelog from version control",
        )
    elif any(h != manifest_hash for h in changelog[version]):
        others = sorted({h for h in changelog[version] if h != manifest_hash})
        result.add(
            "changelog",
            "DISAGREES",
            f"{where} records {suite}@{version} as {', '.join(others)}, but the manifest now "
            f"hashes to {manifest_hash}: the manifest was edited after freezing (its own hash "
            "recomputed); restore it from version control",
        )
    else:
        result.add("changelog", "agrees")
    path = layout.manifest_file(suite, version)
    committed, skipped = git_manifest_hashes(path, version)
    if committed is None:
        result.add("git", f"skipped: {skipped}")
        return result
    rel = f"manifests/{suite}/{version}.json"
    head = committed[0]
    if head.manifest_hash != manifest_hash:
        result.add(
            "git",
            "DISAGREES",
            f"{rel} hashes to {manifest_hash}, but its last commit ({head.commit[:10]}) holds "
            f"{head.manifest_hash}: the frozen manifest was edited and not through freeze; "
            f"restore it with `git checkout -- {rel}`",
        )
        return result
    committed = [c for c in committed if (c.commit, suite, version) not in _DEVELOPMENT_REFREEZES]
    first = committed[-1]
    # A commit of the first committed content needs no changelog line of its own: the manifest
    # committed before its changelog line (two commits) is the frozen content, recorded by the
    # changelog now (checked above); it would otherwise fail verify for good
    unrecorded = [
        c
        for c in committed
        if c.manifest_hash not in c.changelog and c.manifest_hash != first.manifest_hash
    ]
    if unrecorded:
        bad = unrecorded[0]
        result.add(
            "git",
            "DISAGREES",
            f"commit {bad.commit[:10]} changed {rel} to {bad.manifest_hash}, which the "
            f"changelog of that commit does not record (it records "
            f"{', '.join(bad.changelog) or 'no line for this version'}): the manifest was "
            "edited outside freeze and committed",
        )
        return result
    changed = [c for c in committed[:-1] if c.manifest_hash != first.manifest_hash]
    if changed:
        bad = changed[-1]  # the oldest change
        result.add(
            "git",
            "DISAGREES",
            f"commit {bad.commit[:10]} changed {rel} from {first.manifest_hash} (as first "
            f"committed, in {first.commit[:10]}) to {bad.manifest_hash}: a frozen manifest "
            "never changes after its first commit, even with its hash and changelog line "
            f"rewritten to match. Restore it (`git show {first.commit[:10]}:{rel}`) and freeze "
            "any change as a new version",
        )
        return result
    cut = _shallow_cut(path, first.commit)
    if cut:
        result.add("git", f"agrees ({len(committed)} commit(s) fetched; {cut})")
        result.warnings.append(
            f"{rel}: this is a shallow clone and the manifest's oldest fetched commit "
            f"({first.commit[:10]}) is where its history was cut, so a change committed after "
            "the version was first frozen is not visible here (verify would pass it). Run "
            "`git fetch --unshallow` and verify again to check the whole history"
        )
        return result
    result.add("git", f"agrees ({len(committed)} commit(s))")
    return result


def _shallow_cut(path: Path, commit: str) -> str:
    """Why the history before `commit` is not checked (a shallow clone's cut), else ``""``."""
    folder = path.parent
    try:
        where = run_git(folder, "rev-parse", "--git-path", "shallow")
        if where.returncode != 0:
            return ""
        shallow = Path(where.stdout.strip())
        shallow = shallow if shallow.is_absolute() else folder / shallow
        cut = set(shallow.read_text(encoding="ascii").split()) if shallow.is_file() else set()
    except (OSError, UnicodeDecodeError, subprocess.TimeoutExpired):
        return ""
    if commit not in cut:
        return ""
    return "shallow clone: history before the oldest fetched commit not checked"
