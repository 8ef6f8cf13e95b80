"""The web app of `evalsuite review RUN [RUN ...]`: served on 127.0.0.1, or written as a site.

`web_options` adds ``--port``, ``--out`` and ``--who`` to the review command; `serve_review`
opens the runs and serves them until Ctrl-C (printing the URL first), or writes the static
site with ``--out`` (docs/review-app.md).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from evalsuite.cli._common import Context, console, emit_json
from evalsuite.cli._paths import PathParam
from evalsuite.errors import UsageError

if TYPE_CHECKING:
    from evalsuite.review import ReviewApp

__all__ = ["DEFAULT_PORT", "WebRequest", "open_app", "serve_review", "wants_web", "web_options"]

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_PORT = 8765


def web_options(func: F) -> F:
    """``--port``, ``--out DIR``, ``--include-holdout-attempts`` and ``--who NAME``."""
    func = click.option(
        "--include-holdout-attempts",
        "include_holdout",
        is_flag=True,
        help=(
            "With --out: write holdout runs' attempt rows (ids, outcomes, scores; never a "
            "transcript), recording the export in the holdout ledger."
        ),
    )(func)
    func = click.option(
        "--who",
        default="",
        help="Who labels in the app (default: $EVALSUITE_LABELLER or the login name).",
    )(func)
    func = click.option(
        "--out",
        "site_dir",
        type=PathParam(file_okay=False, path_type=Path),
        default=None,
        help=(
            "Write the app as a static, read-only site into DIR (replaced whole) instead of "
            "serving it; holdout runs only as the ledger allows, never their transcripts."
        ),
    )(func)
    func = click.option(
        "--port",
        type=click.IntRange(0, 65535),
        default=None,
        help=f"Port of the app on 127.0.0.1 (default {DEFAULT_PORT}; 0: any free port).",
    )(func)
    return func


def wants_web(*, as_json: bool, port: int | None, site_dir: Path | None) -> bool:
    """Whether `review` serves or writes the app: always but for ``--json`` alone."""
    return site_dir is not None or port is not None or not as_json


@dataclass(frozen=True, slots=True)
class WebRequest:
    """The review command's web options, and what they ask for."""

    port: int | None
    site_dir: Path | None
    include_holdout: bool
    who: str

    def serve_or_write(
        self,
        ctx: Context,
        run_ids: Sequence[str],
        *,
        acts: bool,
        taxonomy: Path | None,
        as_json: bool,
    ) -> bool:
        """Serve or write the app unless the command `acts` otherwise; whether it did.

        Raises:
            UsageError: web options with another action (``--scan``, ``--stats``,
                ``--propose``), or ``--include-holdout-attempts`` without ``--out``.
        """
        if self.include_holdout and self.site_dir is None:
            raise UsageError("--include-holdout-attempts goes with --out DIR (a static site)")
        if acts:
            if self.port is not None or self.site_dir is not None:
                raise UsageError(
                    "--port and --out serve or write the review app: not with --scan, --stats "
                    "or --propose"
                )
            return False
        if not wants_web(as_json=as_json, port=self.port, site_dir=self.site_dir):
            return False
        serve_review(
            ctx,
            run_ids,
            port=self.port,
            site_dir=self.site_dir,
            who=self.who,
            taxonomy=taxonomy,
            as_json=as_json,
            include_holdout=self.include_holdout,
        )
        return True


def open_app(
    ctx: Context,
    run_ids: Sequence[str],
    *,
    who: str,
    taxonomy: Path | None,
    static: bool,
    include_holdout: bool = False,
    findings: Mapping[tuple[str, str, int], Sequence[str]] | None = None,
) -> ReviewApp:
    """Open `run_ids` of the project's store for the app (see `evalsuite.review._web`)."""
    from evalsuite.cli._run_cmds import open_store
    from evalsuite.review import ReviewOptions, default_labeller, open_review
    from evalsuite.store import default_store_url

    store = open_store(ctx, create=False)
    url = ctx.store_url or default_store_url(ctx.layout.state)
    options = ReviewOptions(
        who=who.strip() or default_labeller(),
        taxonomy=taxonomy,
        static=static,
        include_holdout=include_holdout,
        key_dir=ctx.key_dir,
    )
    return open_review(store, ctx.layout, url, run_ids, options, findings)


def _opened(app: ReviewApp) -> list[dict[str, Any]]:
    return [r.to_dict() for r in app.runs]


def serve_review(
    ctx: Context,
    run_ids: Sequence[str],
    *,
    port: int | None,
    site_dir: Path | None,
    who: str,
    taxonomy: Path | None,
    as_json: bool,
    include_holdout: bool = False,
    findings: Mapping[tuple[str, str, int], Sequence[str]] | None = None,
) -> None:
    """Serve the app until interrupted (printing its URL), or write it with `site_dir`.

    Raises:
        UsageError: bad runs or options, a port that cannot be bound.
        HoldoutAccessError: a holdout run the ledger does not allow (exit 7).
    """
    from evalsuite.review import start_server, write_site

    if include_holdout and site_dir is None:
        raise UsageError("--include-holdout-attempts goes with --out DIR (a static site)")
    app = open_app(
        ctx,
        run_ids,
        who=who,
        taxonomy=taxonomy,
        static=site_dir is not None,
        include_holdout=include_holdout,
        findings=findings,
    )
    if site_dir is not None:
        page = write_site(app, site_dir)
        if as_json:
            emit_json({"written": str(page), "runs": _opened(app)})
        else:
            console.print(f"review site {page}", markup=False)
        return
    server = start_server(app, DEFAULT_PORT if port is None else port)
    if as_json:
        emit_json({"url": server.url, "runs": _opened(app), "open_s": app.open_s})
    else:
        for run in app.runs:
            how = "reused" if run.index_reused else f"built in {run.index_build_s:.1f} s"
            console.print(
                f"{run.run_id}: {run.n_attempts} attempts, {run.n_transcripts} transcripts "
                f"(index {how})",
                markup=False,
            )
        console.print(f"review app at {server.url} (Ctrl-C stops it)", markup=False)
    sys.stdout.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        app.index.close()
