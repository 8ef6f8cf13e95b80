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
from evalsuite.errors import StoreError
from evalsuite.store import SCHEMA_VERSION, Store, default_store_url

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
    from evalsuite.service import import_local_gates

    store = Store(_url(ctx), upgrade=False)
    before, after = store.upgrade()
    # gates recorded before version 5 in this checkout's .evalsuite/gates/: into the store
    imported, bad = import_local_gates(store, ctx.layout)
    if as_json:
        emit_json(
            {
                "url": store.display_url,
                "from_version": before,
                "to_version": after,
                "gates_imported": imported,
                "gate_files_not_imported": bad,
            }
        )
        return
    if before is None:
        console.print(f"created the store {store.display_url} at schema version {after}")
    elif before == after:
        console.print(f"the store {store.display_url} is at schema version {after}: nothing to do")
    else:
        console.print(f"upgraded the store {store.display_url} from version {before} to {after}")
    if imported:
        console.print(
            f"imported {imported} gate(s) recorded by `compare` from "
            f"{ctx.layout.state / 'gates'} into the store (the folder is now gates.imported)"
        )
    if bad:
        console.print(
            f"not imported (not a valid gate record): {', '.join(bad)} in "
            f"{ctx.layout.state / 'gates'}"
        )
    if after != SCHEMA_VERSION:  # pragma: no cover - upgrade reaches the current version
        raise StoreError(f"the store is at version {after}, not {SCHEMA_VERSION}")
