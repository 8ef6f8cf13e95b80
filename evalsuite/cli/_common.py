"""What every command shares: the project root, keys, JSON output and error handling.

This package is the only place that reads the environment (``EVALSUITE_KEY_DIR``,
``EVALSUITE_STORE``, ``EVALSUITE_DEBUG``); everything below it takes explicit arguments.
"""

from __future__ import annotations

import errno
import functools
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, ParamSpec, TextIO, TypeVar

import click

from evalsuite._core.display import printable
from evalsuite._core.jsonout import dumps_json
from evalsuite._core.layout import Layout
from evalsuite.cli._paths import PathParam
from evalsuite.errors import EvalsuiteError

if TYPE_CHECKING:
    from rich.console import Console

    from evalsuite.manifest import KeySpec

__all__ = [
    "Context",
    "GroupedCommand",
    "console",
    "emit_json",
    "err_console",
    "exit_after_output",
    "handle_errors",
    "json_option",
    "key_file_option",
    "level_option",
    "option_group",
    "pass_context",
    "path_error_message",
    "seed_option",
]

P = ParamSpec("P")
R = TypeVar("R")

if TYPE_CHECKING:
    console: Console
    """Standard output, through rich (tables, styles)."""
    err_console: Console
    """Standard error, through rich."""
else:

    def __getattr__(name: str) -> Any:
        """`console` and `err_console`, made (and rich imported) when first asked for.

        `verify` prints with click alone and never imports rich (about 0.1 s of CPU;
        docs/design/startup.md); every other command imports them as before.
        """
        if name not in ("console", "err_console"):
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        from rich.console import Console
        from rich.text import Text

        class Console(Console):  # type: ignore[no-redef]
            """A console that prints data strings' control characters as escapes.

            Every ``print`` of a text (a ``str`` or a `Text`) goes through `printable`, so a
            model name or an item id read from a file cannot act on the terminal
            (docs/design/terminal-output.md); tables escape their cells when they are built
            (`evalsuite.cli._views.print_table_view`). Markup is off: a model called ``[/]``
            or ``[bold]m[/bold]`` prints as written, never as a style or a MarkupError.
            """

            def print(self, *objects: Any, **kwargs: Any) -> None:
                safe = [
                    printable(o, keep_lines=True)
                    if isinstance(o, str)
                    else (
                        Text(printable(o.plain, keep_lines=True), style=o.style)
                        if isinstance(o, Text) and printable(o.plain, keep_lines=True) != o.plain
                        else o
                    )
                    for o in objects
                ]
                super().print(*safe, **kwargs)

        if name == "console":
            made = Console(
                markup=False,
                highlight=False,
                soft_wrap=True,
                width=None if sys.stdout.isatty() else 160,
            )
        else:
            made = Console(stderr=True, markup=False, highlight=False, soft_wrap=True)
        globals()[name] = made
        return made


def _error_line(message: str) -> None:
    """``error: MESSAGE`` on stderr ("error" in bold red on a terminal; no rich markup)."""
    click.echo(
        click.style("error", fg="red", bold=True) + ": " + printable(message, keep_lines=True),
        err=True,
    )


@dataclass(frozen=True, slots=True)
class Context:
    """Resolved global options."""

    layout: Layout
    key_dir: Path
    store_url: str | None

    def keys(self, key_file: Path | None) -> KeySpec:
        """Key locations, with an explicit `--key-file` taking precedence."""
        from evalsuite.manifest import KeySpec  # here: the vault (cryptography) only when used

        return KeySpec(key_dir=self.key_dir, key_file=key_file, project=self.layout.root)


def default_key_dir() -> Path:
    """``$EVALSUITE_KEY_DIR``, else ``~/.config/evalsuite/keys``."""
    env = os.environ.get("EVALSUITE_KEY_DIR")
    return Path(env) if env else Path.home() / ".config" / "evalsuite" / "keys"


def make_context(root: Path) -> Context:
    """Build the global context from the `--root` option and the environment."""
    return Context(
        layout=Layout(root.resolve()),
        key_dir=default_key_dir(),
        store_url=os.environ.get("EVALSUITE_STORE"),
    )


pass_context = click.make_pass_decorator(Context)

json_option = click.option(
    "--json", "as_json", is_flag=True, help="Print machine-readable JSON on stdout."
)
level_option = click.option(
    "--level",
    type=click.FloatRange(0.5, 0.999),
    default=0.95,
    show_default=True,
    help="Confidence level of every interval.",
)
seed_option = click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Seed of the analysis (bootstrap and permutation draws); recorded in the output.",
)
key_file_option = click.option(
    "--key-file",
    type=PathParam(dir_okay=False, path_type=Path),
    default=None,
    help="Vault key file (default: $EVALSUITE_KEY_DIR/<suite>.key).",
)


HELP_GROUP = "help_group"
"""The attribute `option_group` sets on each of its options: the heading `--help` puts it under."""


def option_group(
    title: str, into: str, build: Callable[..., object], *options: Callable[[Any], Any]
) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """Add `options` to a command, shown under `title` in its help, and pass them as one object.

    The command's function receives ``build(**values)`` as its parameter `into` instead of one
    parameter per option (`values`: each option's value by its parameter name), the way
    inspect's CLI bundles its options. `build` may raise an `EvalsuiteError` for a malformed
    value: put the group under `handle_errors` (nearer the function) so that it exits with
    that error's code. A command shows the headings when made with ``cls=GroupedCommand``.
    """

    def collect() -> None:  # pragma: no cover - never called: it only gathers the options
        return None

    gathered: Any = collect
    for option in reversed(options):
        gathered = option(gathered)
    params: list[click.Parameter] = gathered.__click_params__  # application order
    for param in params:
        setattr(param, HELP_GROUP, title)
    names = [param.name for param in params if param.name is not None]

    def decorator(func: Callable[..., R]) -> Callable[..., R]:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> R:
            values = {name: kwargs.pop(name) for name in names}
            kwargs[into] = build(**values)
            return func(*args, **kwargs)

        inner = list(getattr(func, "__click_params__", []))
        wrapper.__click_params__ = [*inner, *params]  # type: ignore[attr-defined]
        return wrapper

    return decorator


class GroupedCommand(click.Command):
    """A command whose ``--help`` lists its options under the headings of their `option_group`.

    Options of no group (``--json``, ``--help``, ...) come last, under `other_heading`.
    """

    other_heading = "Output and other options"

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The options, one headed section per group, in the order the groups are declared."""
        sections: dict[str, list[tuple[str, str]]] = {}
        for param in self.get_params(ctx):
            if not isinstance(param, click.Option):
                continue  # arguments are in the usage line
            record = param.get_help_record(ctx)
            if record is not None:
                heading = getattr(param, HELP_GROUP, None) or self.other_heading
                sections.setdefault(heading, []).append(record)
        other = sections.pop(self.other_heading, None)
        for heading, rows in [*sections.items(), *([(self.other_heading, other)] if other else [])]:
            with formatter.section(heading):
                formatter.write_dl(rows)


def emit_json(payload: Any) -> None:
    """Print `payload` as JSON (NaN and infinities become null: JSON has no NaN)."""
    click.echo(dumps_json(payload))


def handle_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Map `EvalsuiteError` to its exit code with a one-paragraph message; never a traceback.

    Unexpected exceptions exit 1 with their type and message; set ``EVALSUITE_DEBUG=1`` to see
    the traceback.
    """

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        as_json = bool(kwargs.get("as_json"))
        try:
            return func(*args, **kwargs)
        except EvalsuiteError as exc:
            _fail(str(exc), exc.exit_code, type(exc).__name__, as_json)
        except KeyboardInterrupt:
            # Ctrl-C outside a run (which stores itself as interrupted, `RunInterrupted`):
            # click would print "Aborted!" and exit 1, the code of a bug (docs/cli.md: 130)
            _fail(
                "interrupted (SIGINT) before the command finished; each write to the store "
                "is one transaction, kept whole or not at all. Run the command again",
                130,
                "Interrupted",
                as_json,
            )
        except (click.exceptions.Exit, click.ClickException):
            raise
        except Exception as exc:
            if os.environ.get("EVALSUITE_DEBUG"):
                raise
            path_problem = path_error_message(exc) if isinstance(exc, OSError) else None
            if path_problem is not None:
                _fail(path_problem, 2, type(exc).__name__, as_json)
            _fail(
                f"unexpected {type(exc).__name__}: {exc} (set EVALSUITE_DEBUG=1 for a "
                "traceback and report it)",
                1,
                type(exc).__name__,
                as_json,
            )
        raise AssertionError("unreachable")  # pragma: no cover  (_fail exits)

    return wrapper


_PATH_ERRNOS = frozenset(
    {
        errno.ENOENT,
        errno.EACCES,
        errno.EPERM,
        errno.ENOTDIR,
        errno.EISDIR,
        errno.EROFS,
        errno.ENOSPC,
        errno.EEXIST,
        errno.ENAMETOOLONG,
    }
)
"""The errors of a path the user named or an environment they set (a directory that cannot be
made, a file without permission, a full or read-only disk), as opposed to a defect."""


def path_error_message(exc: OSError) -> str | None:
    """What went wrong with which path and what to do, for an `OSError` about a path.

    None for any other `OSError` (no file name, or an errno that points at a defect rather
    than at the path): the CLI reports those as unexpected errors.
    """
    if exc.filename is None or exc.errno not in _PATH_ERRNOS:
        return None
    path = os.fsdecode(exc.filename)
    reason = exc.strerror or type(exc).__name__
    if exc.errno == errno.ENOSPC:
        advice = "free space on that disk, or point the output elsewhere, and run again"
    else:
        advice = (
            "check that the path (and each directory above it) exists, is of the right kind and "
            "is writable by you, or choose another path (e.g. --out, --root, EVALSUITE_STORE)"
        )
    return f"cannot use '{path}': {reason}; {advice}"


def exit_after_output(error: EvalsuiteError) -> NoReturn:
    """Exit with `error`'s code when the command's output (JSON or text) is already printed.

    The message goes to stderr only, so that ``--json`` output stays one JSON document.
    """
    _error_line(str(error))
    sys.exit(error.exit_code)


def hard_exit(error: EvalsuiteError, *, as_json: bool, stdout: TextIO) -> NoReturn:
    """Report `error` as `handle_errors` does and end the process at once (``os._exit``).

    For a run that inspect has not stopped within seconds of SIGINT or SIGTERM
    (docs/design/run-limits.md): the run is already recorded, and waiting for inspect's
    cleanup, or unwinding through it, would keep the process alive. `stdout` is the
    command's real standard output (a run sends everything else on it to stderr).
    """
    message = plain_message(str(error))
    if as_json:
        payload = {"error": type(error).__name__, "message": message}
        stdout.write(dumps_json(payload | {"exit_code": error.exit_code}) + "\n")
        stdout.flush()
    _error_line(message)
    sys.stderr.flush()
    os._exit(error.exit_code)


_MARKUP = re.compile(r"\[/?(?:bold|italic|dim|underline|red|green|blue|yellow|bright_black)\]")
"""Rich style tags that inspect puts in its messages; an error message shows none of them."""


def plain_message(message: str) -> str:
    """`message` without rich style tags such as ``[bold]ERROR[/bold]`` (brackets kept)."""
    return _MARKUP.sub("", message)


def _fail(message: str, code: int, kind: str, as_json: bool) -> None:
    message = plain_message(message)
    if as_json:
        emit_json({"error": kind, "message": message, "exit_code": code})
    _error_line(message)
    sys.exit(code)


def print_top_errors(groups: Sequence[Mapping[str, Any]], *, target: Console | None = None) -> None:
    """The most frequent harness error reasons: count, reason, an example item, what to do."""
    out = target or sys.modules[__name__].console  # made on first use (see `__getattr__`)
    if not groups:
        return
    out.print("top harness error reasons:")
    for g in groups:
        example = (
            f" (e.g. item {g['example_item']}, epoch {g['example_epoch']})"
            if g.get("example_item")
            else ""
        )
        out.print(f"  {g['count']} × {g['message']}{example}")
        out.print(f"      what to do: {g['advice']}")
