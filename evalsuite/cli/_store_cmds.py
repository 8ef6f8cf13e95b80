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
from evalsuite.errors import StoreError
from evalsuite.store import SCHEMA_VERSION, Store, StoreInfo, default_store_url

__all__ = ["store_group"]


def _url(ctx: Context) -> str:
    return ctx.store_url or default_store_url(ctx.layout.state)


def _size(size: int | None) -> str:
    if size is None:
        return "n/a"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024  # type: ignore[assignment]
    raise AssertionError("unreachable")  # pragma: no cover


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
    info: StoreInfo = Store(_url(ctx), upgrade=False, refuse_newer=False).info()
    if as_json:
        emit_json(info.to_dict())
        return
    version = "none (empty)" if info.schema_version is None else str(info.schema_version)
    console.print(f"store     {info.url} ({info.backend})")
    console.print(f"schema    version {version}; this evalsuite uses version {SCHEMA_VERSION}")
    if info.written_by:
        console.print(f"written   by evalsuite {info.written_by}")
    console.print(f"holds     {info.runs} runs, {info.attempts} attempts, {info.outcomes} outcomes")
    console.print(f"size      {_size(info.size_bytes)}")
    if info.state == "older":
        console.print(
            "upgrade   run `evalsuite store upgrade` (any command that writes would upgrade it)"
        )
    elif info.state == "newer":
        console.print(
            "newer     this evalsuite refuses to use it: upgrade evalsuite to the version that "
            "wrote it"
        )


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
