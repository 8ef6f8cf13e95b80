"""``audit --graders --policies FILE``: load a team's own red-team policies from a Python file.

The file declares `evalsuite.kit.RedTeam` objects at module level, alone or in lists or tuples
(any names). It is imported once, under a private module name, in the auditing process. A
missing file, a file that does not import, one that declares no `RedTeam`, a list mixing
`RedTeam` with anything else, or two policies with one name is a usage error (exit 2): the
audit does not run and nothing is written. See docs/cli.md and docs/design/grader-audit.md.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path

from evalsuite.errors import UsageError
from evalsuite.kit import RedTeam, RedTeamError

__all__ = ["load_team_policies"]


def _declared(name: str, value: object, path: Path) -> list[RedTeam]:
    if isinstance(value, RedTeam):
        return [value]
    if isinstance(value, list | tuple) and any(isinstance(v, RedTeam) for v in value):
        bad = [type(v).__name__ for v in value if not isinstance(v, RedTeam)]
        if bad:
            raise UsageError(
                f"{path}: {name} mixes RedTeam policies with {', '.join(sorted(set(bad)))}; "
                "declare evalsuite.kit.RedTeam(name, policy, description, families=None) objects"
            )
        return list(value)
    return []


def load_team_policies(path: Path) -> tuple[RedTeam, ...]:
    """The `RedTeam` policies `path` declares, in declaration order.

    Raises:
        UsageError: no such file, it does not import, it declares none, a bad declaration.
    """
    if not path.is_file():
        raise UsageError(f"--policies {path}: no such file (a Python file declaring RedTeam)")
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
    key = f"_evalsuite_team_policies_{digest}"
    spec = importlib.util.spec_from_file_location(key, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"--policies {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module
    try:
        spec.loader.exec_module(module)
    except RedTeamError as exc:
        sys.modules.pop(key, None)
        raise UsageError(f"--policies {path}: {exc}") from None
    except Exception as exc:  # the team's code: any failure is a usage error, named
        sys.modules.pop(key, None)
        raise UsageError(
            f"--policies {path}: importing it failed ({type(exc).__name__}: {exc})"
        ) from None
    found: list[RedTeam] = []
    for name, value in vars(module).items():
        if not name.startswith("__"):
            found += [p for p in _declared(name, value, path) if p not in found]
    if not found:
        raise UsageError(
            f"--policies {path}: declares no red-team policy; declare "
            "evalsuite.kit.RedTeam(name, policy, description, families=None) objects at "
            "module level (alone or in a list)"
        )
    names = [p.name for p in found]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UsageError(f"--policies {path}: two red-team policies named {', '.join(twice)}")
    return tuple(found)
