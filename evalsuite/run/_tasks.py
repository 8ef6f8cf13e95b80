"""A family's inspect task: found by its reference, built with its arguments and the frozen items.

A family names any inspect task (docs/design/foreign-tasks.md): a file relative to ``tasks/``
(``evals/triage.py@triage``), a module path (``mypkg.evals:triage``) or a registry name
(``inspect_evals/gsm8k``), with ``task_args``. The task is used as it is:

* a task file that takes a ``dataset`` argument (the contract of the families written for
  evalsuite) is called with the frozen items as ``dataset=``;
* any other task is built with its arguments while dataset reads are short-circuited
  (`no_dataset_reads`: its own dataset is never needed again once frozen, and may need a
  download), and the frozen items replace its dataset with ``task_with(dataset=...)``.
  Its solver, scorer, sandbox, limits and configuration stay as they are.

`task_dataset_samples` builds a task to read its own dataset (`freeze` of a family without an
item source); a download that fails there is refused with what to do instead.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import io
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from inspect_ai import Task, task_with
from inspect_ai.dataset import MemoryDataset, Sample

from evalsuite._core.layout import Layout
from evalsuite.errors import UsageError
from evalsuite.manifest import TASK_REFERENCE_FORMS, task_reference_kind

__all__ = [
    "RUN_HINT",
    "TaskReference",
    "build_task",
    "load_task_function",
    "no_dataset_reads",
    "takes_dataset",
    "task_dataset_samples",
    "task_source_dir",
]

RUN_HINT = (
    "The frozen manifest names this reference and cannot be re-pointed: restore the task code "
    "from version control, or fix the suite file and freeze a new version."
)


class TaskReference(Protocol):
    """A family's task reference: a suite file's family or a frozen manifest's."""

    @property
    def name(self) -> str: ...

    @property
    def task(self) -> str: ...

    @property
    def task_args(self) -> dict[str, Any] | None: ...


def _describe(family: TaskReference) -> str:
    return f"task = {family.task!r} of family {family.name!r}"


def _file_function(layout: Layout, suite: str, family: TaskReference, hint: str) -> object:
    file_part, _, name = family.task.partition("@")
    name = name or family.name
    ref = _describe(family)
    path = layout.tasks / file_part
    if not path.is_file():
        raise UsageError(f"{ref}: the task file {path} does not exist. {hint}")
    module_name = f"evalsuite_tasks_{suite}_{family.name}".replace("-", "_")
    module = sys.modules.get(module_name)
    stat = path.stat()
    stamp = (str(path), stat.st_mtime_ns, stat.st_size)
    if module is None or getattr(module, "__evalsuite_stamp__", None) != stamp:
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise UsageError(f"{ref}: cannot import the task file {path}. {hint}")
        module = importlib.util.module_from_spec(spec)
        module.__evalsuite_stamp__ = stamp  # type: ignore[attr-defined]  # reload on edit
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            sys.modules.pop(module_name, None)
            raise UsageError(
                f"{ref}: importing {path} failed ({type(exc).__name__}: {exc}). {hint}"
            ) from None
    function = getattr(module, name, None)
    if not callable(function):
        raise UsageError(f"{ref}: {path} defines no task function {name!r}. {hint}")
    return function


def _module_function(family: TaskReference, hint: str) -> object:
    module_name, _, name = family.task.partition(":")
    ref = _describe(family)
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise UsageError(
            f"{ref}: importing module {module_name!r} failed ({type(exc).__name__}: {exc}); "
            f"install the package that provides it. {hint}"
        ) from None
    function = getattr(module, name, None)
    if not callable(function):
        raise UsageError(f"{ref}: module {module_name!r} has no task function {name!r}. {hint}")
    return function


def _registry_function(family: TaskReference, hint: str) -> object:
    # inspect has no public lookup by name; `registry_lookup` loads the package's entry point
    from inspect_ai._util.registry import registry_lookup

    function: object = None
    cause = ""
    try:
        function = registry_lookup("task", family.task)
    except Exception as exc:
        cause = f" ({type(exc).__name__}: {exc})"
    if not callable(function):
        package = family.task.split("/")[0]
        raise UsageError(
            f"{_describe(family)}: no inspect task is registered under that name{cause}; "
            f"install the package that provides it (e.g. `pip install {package}`) or write "
            f"{TASK_REFERENCE_FORMS}. {hint}"
        )
    return function


def _parameters(function: Callable[..., Any]) -> list[inspect.Parameter] | None:
    try:
        return list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return None  # unknown signature: the call decides


def _check_args(function: Callable[..., Any], family: TaskReference, hint: str) -> None:
    parameters = _parameters(function)
    if parameters is None or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return
    names = {p.name for p in parameters}
    unknown = sorted(set(family.task_args or {}) - names)
    if unknown:
        raise UsageError(
            f"{_describe(family)}: task_args {unknown} are not arguments of the task function "
            f"(it takes {sorted(names) or 'none'}). {hint}"
        )
    if getattr(family, "judge", None) is not None:
        if "judge" not in names:
            raise UsageError(
                f"{_describe(family)} declares a judge, but its task function takes no "
                "`judge` argument, so the declared judge could not reach its scorer: add "
                "`judge: str` (the inspect model name its model-graded scorer uses, e.g. "
                "`model_graded_qa(model=judge)`; docs/design/judge-audit.md). " + hint
            )
        if "judge" in (family.task_args or {}):
            raise UsageError(
                f"{_describe(family)} sets `judge` in task_args and declares a judge: give "
                "the judge once, in [families.judge]. " + hint
            )


def load_task_function(
    layout: Layout, suite: str, family: TaskReference, *, hint: str = RUN_HINT
) -> Callable[..., Task]:
    """Find a family's inspect @task function: a task file, a module path or a registry name.

    The family's ``task_args`` must be arguments of the function. `freeze` calls this before
    writing anything, so a wrong reference is caught while it can still be fixed in the
    suite file.

    Raises:
        UsageError: the reference is malformed; the file is missing or fails to import; the
            module cannot be imported; no task is registered under the name; the function
            is missing; or a task argument is not one of its parameters. The message ends
            with `hint`.
    """
    try:
        kind = task_reference_kind(family.task)
    except ValueError as exc:
        raise UsageError(f"{exc}. {hint}") from None
    if kind == "file":
        function = _file_function(layout, suite, family, hint)
    elif kind == "module":
        function = _module_function(family, hint)
    else:
        function = _registry_function(family, hint)
    checked: Callable[..., Task] = function  # type: ignore[assignment]  # an inspect @task
    _check_args(checked, family, hint)
    return checked


def takes_dataset(function: Callable[..., Any], family: TaskReference) -> bool:
    """True for a task file written for evalsuite: it takes the frozen items as ``dataset=``.

    Only task files (``file.py@name``) are called that way; a task from a module or the
    registry gets its dataset replaced with ``task_with`` (its ``dataset`` argument, if it
    has one, may mean something else).
    """
    if task_reference_kind(family.task) != "file":
        return False
    parameters = _parameters(function)
    return parameters is None or any(
        p.name == "dataset" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters
    )


class _NoRows:
    """What a dataset read returns while building a task whose items come from a manifest."""

    column_names: list[str] = []  # noqa: RUF012 - read-only, never mutated

    def __len__(self) -> int:
        return 0

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(())

    def __getitem__(self, _key: object) -> _NoRows:
        return self

    def to_list(self) -> list[dict[str, Any]]:
        return []

    def save_to_disk(self, *_args: object, **_kwargs: object) -> None:
        return None

    def __getattr__(self, _name: str) -> Callable[..., _NoRows]:
        # shuffle, select, filter, map, add_column, ...: still no rows
        return lambda *_args, **_kwargs: self


@contextmanager
def no_dataset_reads() -> Iterator[None]:
    """Short-circuit Hugging Face dataset reads while a task is built for frozen items.

    ``datasets.load_dataset`` and ``datasets.load_from_disk`` return no rows, so a task
    whose dataset comes from the Hub builds offline (and quickly); nothing is written to
    inspect's dataset cache. ``Task`` accepts the empty dataset that results (inspect
    refuses one otherwise, in ``inspect_ai._eval.task.task.resolve_dataset``, which is
    wrapped for the duration; the tests build ``inspect_evals/humaneval`` offline through
    it). Files read by inspect's ``json_dataset``/``csv_dataset`` are read as usual.
    """
    import datasets
    from inspect_ai._eval.task import task as task_module

    saved = {name: getattr(datasets, name) for name in ("load_dataset", "load_from_disk")}
    for name in saved:
        setattr(datasets, name, lambda *_args, **_kwargs: _NoRows())
    resolve = task_module.resolve_dataset

    def resolve_allowing_empty(dataset: Any) -> Any:
        if dataset is not None and len(dataset) == 0:
            return MemoryDataset([])
        return resolve(dataset)

    task_module.resolve_dataset = resolve_allowing_empty
    try:
        # inspect announces "Loading dataset ... from Hugging Face" before the read it skips
        with contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        task_module.resolve_dataset = resolve
        for name, value in saved.items():
            setattr(datasets, name, value)


def build_task(
    function: Callable[..., Task],
    family: TaskReference,
    samples: Sequence[Sample],
    run_args: Mapping[str, Any] | None = None,
) -> Task:
    """The family's task with `samples` as its dataset; everything else as the task has it.

    Args:
        function: From `load_task_function`.
        family: The family (its frozen ``task_args``).
        samples: The frozen items as inspect samples.
        run_args: Task arguments given at run time (``-T``), over the frozen ones.
    """
    args = {**(family.task_args or {}), **(run_args or {})}
    judge = getattr(family, "judge", None)
    if judge is not None:  # the declared, frozen judge grades (docs/design/judge-audit.md)
        args["judge"] = judge.model
    if takes_dataset(function, family):
        return function(dataset=list(samples), **args)
    with no_dataset_reads():
        base = function(**args)
    return task_with(base, dataset=list(samples))


def task_source_dir(function: Callable[..., Any]) -> Path | None:
    """The directory of the file that defines `function` (None if unknown)."""
    try:
        source = inspect.getsourcefile(inspect.unwrap(function))
    except TypeError:
        return None
    return Path(source).resolve().parent if source else None


class _DatasetUnavailableError(RuntimeError):
    """A dataset read failed while a task was built for `freeze` (not retried by inspect)."""

    def __init__(self, call: str, cause: BaseException) -> None:
        super().__init__(f"{call} failed: {type(cause).__name__}: {str(cause)[:300]}")


@contextmanager
def _downloads_reported() -> Iterator[None]:
    """Make a failed Hugging Face read fail at once, as `_DatasetUnavailableError`.

    inspect and packages such as inspect_evals retry a failed Hub read for minutes (the
    Hub's rate-limit window); offline that only delays the refusal.
    """
    import datasets
    import huggingface_hub

    patched: list[tuple[Any, str, Any]] = [
        (datasets, "load_dataset", datasets.load_dataset),
        (huggingface_hub, "snapshot_download", huggingface_hub.snapshot_download),
        (huggingface_hub, "hf_hub_download", huggingface_hub.hf_hub_download),
    ]

    def reporting(call: str, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return original(*args, **kwargs)
            except Exception as exc:
                raise _DatasetUnavailableError(call, exc) from exc

        return wrapper

    for owner, name, original in patched:
        setattr(owner, name, reporting(f"{owner.__name__}.{name}", original))
    try:
        yield
    finally:
        for owner, name, original in patched:
            setattr(owner, name, original)


def task_dataset_samples(layout: Layout, suite: str, family: TaskReference) -> list[Sample]:
    """Build a family's task with its ``task_args`` and return its own dataset's samples.

    Raises:
        UsageError: the task cannot be found or built; a dataset read (e.g. a Hugging Face
            download) failed, with what to do: pre-download the data and declare it as the
            family's item source, or make the data available offline.
    """
    hint = f"Fix the family in tasks/{suite}.toml; nothing was frozen."
    function = load_task_function(layout, suite, family, hint=hint)
    ref = _describe(family)
    try:
        with _downloads_reported():
            task = function(**(family.task_args or {}))
    except _DatasetUnavailableError as exc:
        raise UsageError(
            f"{ref}: building the task reads its dataset, and that failed ({exc}). Its data "
            "must be on this machine to be frozen (no download happens at run time). Either "
            "download it where there is network and save it (datasets' `save_to_disk`, or "
            "evalsuite items as JSONL) into tasks/, then declare it as the family's item "
            "source with items = '...'; or fill the Hugging Face cache and set "
            "HF_DATASETS_OFFLINE=1. Nothing was frozen."
        ) from None
    except Exception as exc:
        raise UsageError(
            f"{ref}: building the task failed ({type(exc).__name__}: {str(exc)[:300]}). {hint}"
        ) from None
    if not isinstance(task, Task):
        raise UsageError(f"{ref}: the task function returned {type(task).__name__}, not a Task")
    return list(task.dataset)
