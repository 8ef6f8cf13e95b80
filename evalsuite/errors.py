"""The one exception tree of evalsuite.

Every error evalsuite raises on purpose derives from `EvalsuiteError`, carries the CLI exit
code it maps to, and says what happened, what was expected, and what to do about it::

    EvalsuiteError                     exit 1  unexpected, or no better class applies
    ├── UsageError                     exit 2  bad argument or input file
    │   ├── SuiteConfigError                   tasks/<suite>.toml is malformed
    │   ├── ItemSourceError                    an item file or record is malformed
    │   ├── VersionError                       a version string or bump is not acceptable
    │   ├── NotFoundError                      a suite, version, run or file does not exist
    │   ├── InsufficientDataError              a statistic is undefined for the data given
    │   ├── IncomparableRunsError              runs on different manifests or splits compared
    │   └── RunStoppedError                    a run's disk or store failed; resumable
    ├── IntegrityError                 exit 3  hash drift, tampering, refused overwrite
    │   ├── ManifestTamperedError              a manifest no longer matches its own hash
    │   ├── VaultError                         a vault is missing, corrupt or the key is wrong
    │   ├── FrozenVersionError                 a frozen version would change
    │   ├── LedgerError                        the holdout access ledger was edited
    │   └── GraderAuditError                   a suite's grader audit failed, or its tools drifted
    ├── ContaminationError             exit 4  a curriculum overlaps frozen items
    ├── InvalidRunError                exit 5  harness unhealthy: too many harness errors
    ├── GateFailedError                exit 6  a regression gate failed
    ├── HoldoutAccessError             exit 7  holdout budget spent, or a model's family changed
    ├── StoreError                     exit 1  the results store cannot be used
    └── RunInterrupted               exit 130  a run stopped by SIGINT/SIGTERM; resumable

Messages never contain holdout item text: they name items by id and hash only.
"""

from __future__ import annotations

__all__ = [
    "ContaminationError",
    "EvalsuiteError",
    "FrozenVersionError",
    "GateFailedError",
    "GraderAuditError",
    "HoldoutAccessError",
    "IncomparableRunsError",
    "InsufficientDataError",
    "IntegrityError",
    "InvalidRunError",
    "ItemSourceError",
    "LedgerError",
    "ManifestTamperedError",
    "NotFoundError",
    "RunInterrupted",
    "RunStoppedError",
    "StoreError",
    "SuiteConfigError",
    "UsageError",
    "VaultError",
    "VersionError",
]


class EvalsuiteError(Exception):
    """Base class of every deliberate evalsuite error."""

    exit_code: int = 1


class UsageError(EvalsuiteError):
    """An argument or input file is not what the command expects."""

    exit_code = 2


class SuiteConfigError(UsageError):
    """A suite file (`tasks/<suite>.toml`) is malformed or inconsistent."""


class ItemSourceError(UsageError):
    """An item source or one of its records is malformed."""


class VersionError(UsageError):
    """A version string is malformed, or the bump is too small for the change."""


class NotFoundError(UsageError):
    """A suite, version, run or file that was named does not exist."""


class InsufficientDataError(UsageError):
    """A statistic is undefined for the data given (too few items, no variance, ...)."""


class IncomparableRunsError(UsageError):
    """Two runs cannot be paired (different manifests or splits, or no shared items).

    A usage error (exit 2), not tampering: the message names the runs that can be compared.
    """


class IntegrityError(EvalsuiteError):
    """Something frozen no longer matches what was recorded."""

    exit_code = 3


class ManifestTamperedError(IntegrityError):
    """A manifest file no longer hashes to the hash recorded in it."""


class VaultError(IntegrityError):
    """A holdout vault is missing, corrupt, or cannot be opened with the key given."""


class FrozenVersionError(IntegrityError):
    """Freezing would change a version that is already frozen."""


class LedgerError(IntegrityError):
    """The holdout access ledger was edited, reordered or truncated."""


class GraderAuditError(IntegrityError):
    """A suite's grader audit failed, or the tools an episode exposes differ from the frozen.

    The message names the family, the check, the stratum and the items (by id).
    """


class ContaminationError(EvalsuiteError):
    """A training curriculum overlaps frozen evaluation items."""

    exit_code = 4


class InvalidRunError(EvalsuiteError):
    """A run has more harness errors than its health threshold allows."""

    exit_code = 5


class GateFailedError(EvalsuiteError):
    """A regression gate (e.g. non-inferiority) failed."""

    exit_code = 6


class HoldoutAccessError(EvalsuiteError):
    """The holdout access budget of a suite version is spent."""

    exit_code = 7


class StoreError(EvalsuiteError):
    """The results store cannot be opened, migrated or written."""


class RunStoppedError(UsageError):
    """A run stopped because its disk or its results store failed, not its model or harness.

    A full disk, or a database server that went away.
    Finished attempts are kept; the run is stored as ``interrupted`` when the store still
    takes the update, and ``evalsuite run --resume RUN`` completes it once the disk or the
    server is back. Exit 2, as for any path or disk that cannot be used (docs/cli.md).
    """


class RunInterrupted(EvalsuiteError):
    """A run stopped (SIGINT or SIGTERM) before every planned attempt ran.

    Finished attempts are kept and the run is stored as ``interrupted``; ``evalsuite run
    --resume RUN`` completes it. Exit 130, the shell's code for an interrupted command.
    """

    exit_code = 130
