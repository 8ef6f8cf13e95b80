"""`evalsuite verify`: re-hash frozen items, check the ledger, the audit and the action space.

The use case is `evalsuite.service.verify`; its view is printed with click alone (styles on a
terminal, plain text otherwise, `cli._plain`), so that checking suite versions whose content a
previous full check found intact imports neither rich, pydantic nor cryptography (start-up,
docs/design/startup.md). Only what changed is checked in full.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from evalsuite.cli._common import (
    Context,
    emit_json,
    exit_after_output,
    handle_errors,
    json_option,
    key_file_option,
    pass_context,
)
from evalsuite.cli._plain import echo_view
from evalsuite.errors import IntegrityError, UsageError

if TYPE_CHECKING:
    from evalsuite._core.layout import Layout

__all__ = ["verify_cmd"]


def _action_space(
    layout: Layout,
    suite: str,
    version: str,
    families: Sequence[Mapping[str, Any]],
    *,
    use_cache: bool,
    environment: list[bytes],
) -> tuple[list[str], list[str]]:
    """The families' tools against their manifest (`evalsuite.service.ActionSpaceCheck`).

    Through the runner (inspect), which the service layer does not import; only a version
    whose agreement is not recorded for this exact content loads its tasks.
    """
    from evalsuite.manifest import load_manifest
    from evalsuite.run import (
        agreements_recorded,
        environment_digest,
        verified_action_space_problems,
    )

    recorded = [f for f in families if f.get("tools") is not None]
    if use_cache and recorded and not environment:
        environment.append(environment_digest(layout))
    if use_cache and agreements_recorded(
        layout, suite, families, environment=environment[0] if environment else None
    ):
        return [], []
    manifest = load_manifest(layout, suite, version)
    return verified_action_space_problems(layout, manifest, use_cache=use_cache)


@click.command("verify")
@click.argument("ref", required=False)
@click.option("--skip-holdout", is_flag=True, help="Do not open the vault (no key needed).")
@click.option(
    "--no-cache",
    is_flag=True,
    help="Check everything in full (re-read every item, decrypt the vault, load every "
    "family's tools), ignoring the record of earlier checks of unchanged content.",
)
@key_file_option
@json_option
@pass_context
@handle_errors
def verify_cmd(
    ctx: Context,
    ref: str | None,
    skip_holdout: bool,
    no_cache: bool,
    key_file: Path | None,
    as_json: bool,
) -> None:
    """Re-hash frozen items: exit 0 when all match, 3 naming every drifted or missing item.

    An item source that cannot be read (unreadable, not UTF-8, malformed) is reported and
    the other suites are still checked; it alone exits 2. A deleted item source exits 3,
    naming the dev items it held.

    REF is SUITE or SUITE@X.Y.Z; without it, the latest version of every frozen suite.
    Also checks the holdout access ledger (hash chain; against the results store both
    ways) and the manifest hash against its changelog line, git history, ledger and store.

    A version whose content (every file under tasks/ and manifests/SUITE/, the vault, the
    key, evalsuite's code and the installed packages, byte for byte) is exactly what an
    earlier full check found intact is not re-read (recorded in .evalsuite/verified.json);
    --no-cache checks everything in full.
    """
    from evalsuite.manifest import parse_ref
    from evalsuite.service import verify, verify_view

    result = verify(
        ctx.layout,
        ctx.keys(key_file),
        ctx.key_dir,
        ctx.store_url,
        _action_space,
        None if ref is None else [parse_ref(ref)],
        skip_holdout=skip_holdout,
        use_cache=not no_cache,
    )
    view = verify_view(result)
    if as_json:
        emit_json(view.to_dict())
    else:
        echo_view(view, title=False)
    if not result.ok:
        failed = ", ".join(result.failed)
        if result.integrity_failed:
            exit_after_output(IntegrityError(f"verification failed for {failed}"))
        exit_after_output(
            UsageError(f"could not verify {failed}: an item source cannot be read (see above)")
        )
