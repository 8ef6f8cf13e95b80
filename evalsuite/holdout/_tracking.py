"""The ledger in git: tracked and committed, and every committed version a prefix of it.

The ledger is one of the project's records (docs/design/holdout-governance.md, section 11):

- it must be tracked and committed: while it is untracked, or holds entries not committed
  yet, deleting its newest entries leaves no trace in the repository (`ledger_tracking_warning`,
  which `verify` shows as a warning and `run` prints after a holdout run);
- every committed version of it must be a prefix of the ledger now (`ledger_history_problems`): a
  ledger only grows, so an entry that was committed and is gone (or changed) was deleted.
  This holds on every machine the repository reaches, where the head recorded in the key
  directory (`_anchor`) holds only on the machine that appended.

Without git, outside a repository, or for a ledger never committed, there is nothing to
compare; the warnings say so where it matters.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from evalsuite._core.git import run_git

__all__ = ["ledger_history_problems", "ledger_tracking_warning"]


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str] | None:
    """Run git in `cwd`; None when git is missing, fails to start or times out."""
    if shutil.which("git") is None:
        return None
    try:
        return run_git(cwd, *args)
    except (OSError, subprocess.TimeoutExpired):
        return None


def _in_repository(folder: Path) -> bool:
    done = _git(folder, "rev-parse", "--is-inside-work-tree")
    return done is not None and done.returncode == 0 and done.stdout.strip() == "true"


def ledger_tracking_warning(ledger: Path, shown: str) -> str | None:
    """Why the ledger at `ledger` is not safely in git yet (None: committed, or no git).

    `shown` names the ledger in the message (its path in the project).
    """
    if not ledger.is_file() or not _in_repository(ledger.parent):
        return None
    commit = f"git add {shown} && git commit -m 'holdout ledger'"
    tracked = _git(ledger.parent, "ls-files", "--error-unmatch", "--", ledger.name)
    if tracked is None or tracked.returncode != 0:
        return (
            f"the holdout access ledger {shown} is not tracked by git: deleting its newest "
            f"entries would leave no trace in the repository. Commit it ({commit}) and after "
            "every holdout run"
        )
    clean = _git(ledger.parent, "diff", "--quiet", "HEAD", "--", ledger.name)
    if clean is None or clean.returncode != 0:
        return (
            f"the holdout access ledger {shown} has entries that are not committed: commit "
            f"them ({commit}), so that the repository's history records them"
        )
    return None


def ledger_history_problems(ledger: Path, shown: str) -> list[str]:
    """Committed versions of the ledger that the ledger now does not extend (entries deleted).

    Compared line by line: each committed version must be the start of the current file.
    """
    if not _in_repository(ledger.parent):
        return []
    # --full-history: by default git log follows only the parent a merge took the file from, so
    # a branch with a truncated ledger merged with its side kept hid the longer commits
    log = _git(ledger.parent, "log", "--full-history", "--format=%H", "--", ledger.name)
    if log is None or log.returncode != 0:
        return []
    try:
        current = ledger.read_text(encoding="utf-8").splitlines() if ledger.is_file() else []
    except (OSError, UnicodeDecodeError):
        return []  # the chain check reports an unreadable ledger
    for commit in log.stdout.split():
        shown_commit = _git(ledger.parent, "show", f"{commit}:./{ledger.name}")
        if shown_commit is None or shown_commit.returncode != 0:
            continue  # this commit deleted the file; the commits before it still count
        committed = shown_commit.stdout.splitlines()
        if current[: len(committed)] != committed:
            kept = next(
                (i for i, (a, b) in enumerate(zip(committed, current, strict=False)) if a != b),
                min(len(committed), len(current)),
            )
            return [
                f"{shown} no longer starts with the {len(committed)} entries committed in "
                f"{commit[:10]} (it differs from entry {kept + 1} on; it holds {len(current)}): "
                "committed entries were deleted or edited. Restore it from version control "
                f"(`git checkout {commit[:10]} -- {shown}`, then add the entries made since)"
            ]
    return []  # every commit is checked: a truncated ledger may itself have been committed
