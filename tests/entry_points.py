"""inspect's entry points without inspect_evals' task registry, for CLI test subprocesses.

inspect loads every installed ``inspect_ai`` entry point the first time a process asks for a
model (``init_hooks``). The test dependency inspect-evals registers all of its tasks there:
about 4 s of CPU per process (its registry imports every task module and parses 149 YAML
files), which every test that starts an ``evalsuite run`` in a new process paid, though none
of those runs uses an inspect_evals task. `load_all_but_inspect_evals` loads the other entry
points (evalsuite's own agents and model providers among them) and marks inspect's loading as
done, so that a test's child process skips only that registry. The pytest processes (each xdist
worker) skip it the same way (tests/conftest.py); the one test module that runs inspect_evals
tasks, tests/run/test_published_task.py, loads it with `load_inspect_evals` first. Measured
figures in docs/design/test-speed.md.
"""

from __future__ import annotations

SKIPPED = frozenset({"inspect_evals"})

PRELUDE = "import tests.entry_points; tests.entry_points.load_all_but_inspect_evals(); "
"""Python statements for the start of a ``python -c`` launcher (after the repository root is on
``sys.path``)."""


def load_all_but_inspect_evals() -> None:
    """Load every ``inspect_ai`` entry point except those of `SKIPPED`, as inspect would."""
    from importlib.metadata import entry_points

    from inspect_ai._util import entrypoints

    for ep in entry_points(group="inspect_ai"):
        if ep.name not in SKIPPED:
            ep.load()
    # inspect's own flag for "every entry point is loaded" (inspect_ai/_util/entrypoints.py)
    entrypoints._inspect_ai_eps_loaded_all = True


def load_inspect_evals() -> None:
    """Load the entry points `load_all_but_inspect_evals` skipped (inspect_evals' registry).

    For a process that skipped them and then needs an ``inspect_evals/...`` task: inspect will
    not load them itself once it has been told every entry point is loaded. Deprecation
    warnings of the registry's own imports (inspect_evals 0.26.0 calls the legacy
    ``importlib.resources.path``) are not the tests' concern and are ignored while it loads.
    """
    import warnings
    from importlib.metadata import entry_points

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for ep in entry_points(group="inspect_ai"):
            if ep.name in SKIPPED:
                ep.load()
