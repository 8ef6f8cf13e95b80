"""`evalsuite store info` and `evalsuite store upgrade`: the results store's schema version.

docs/store.md tells the migration story: a store of an older schema is upgraded when a
command opens it (or explicitly, by `store upgrade`); a store of a newer schema is refused.
"""

from __future__ import annotations

import click

from evalsuite.cli._common import (
    Context,
    console,
    emit_json,
    handle_errors,
    json_option,
    pass_context,
)
from evalsuite.cli._views import print_view
from evalsuite.store import default_store_url

__all__ = ["store_group"]


def _url(ctx: Context) -> str:
    return ctx.store_url or default_store_url(ctx.layout.state)


@click.group("store")
def store_group() -> None:
    """The results store ($EVALSUITE_STORE, or .evalsuite/results.sqlite): schema and size."""


@store_group.command("info")
@json_option
@pass_context
@handle_errors
def info_cmd(ctx: Context, as_json: bool) -> None:
    """Show where the store is, its schema version, and how many runs and attempts it holds.

    Changes nothing: an older store is reported (with the command that upgrades it), not
    upgraded; a store of a newer schema is reported too.
    """
    from evalsuite.service import store_info, store_info_view

    view = store_info_view(store_info(_url(ctx)))
    if as_json:
        emit_json(view.to_dict())
    else:
        print_view(console, view)


@store_group.command("upgrade")
@json_option
@pass_context
@handle_errors
def upgrade_cmd(ctx: Context, as_json: bool) -> None:
    """Create the store, or upgrade its schema to this evalsuite's version, in one transaction.

    A store of a newer schema is refused (exit 1) and left as it is.
    """
    from evalsuite.service import upgrade_store

    result = upgrade_store(_url(ctx), ctx.layout)
    if as_json:
        emit_json(result.to_dict())
        return
    for line in result.lines:
        console.print(line)
