"""`evalsuite guard`: screen training curricula against every frozen fingerprint (exit 4).

`evalsuite fingerprints`: fingerprint the items of versions frozen with an older format again,
in the current one (``docs/design/guard-normalisation.md``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

from evalsuite.cli._common import (
    Context,
    console,
    emit_json,
    err_console,
    exit_after_output,
    handle_errors,
    json_option,
    key_file_option,
    pass_context,
)
from evalsuite.cli._paths import PathParam
from evalsuite.cli._views import print_view, wide_option
from evalsuite.errors import ContaminationError, UsageError
from evalsuite.guard import (
    DEFAULT_BATCH_BYTES,
    DEFAULT_THRESHOLD,
    BeforeDecrypt,
    DerivedResult,
    Format,
    GuardOptions,
    RayOptions,
    derive_fingerprints,
    frozen_suites,
    read_fingerprints,
)
from evalsuite.manifest import FINGERPRINT_FORMAT, frozen_versions, parse_ref
from evalsuite.service import guard_report, guard_view

if TYPE_CHECKING:
    from evalsuite.manifest import KeySpec, Manifest

__all__ = ["fingerprints_cmd", "guard_cmd"]


@click.command("guard")
@click.argument("paths", nargs=-1, required=True, type=PathParam(path_type=Path))
@click.option(
    "--suite",
    "suites",
    multiple=True,
    metavar="S[@X.Y.Z]",
    help="Screen against this suite (all its frozen versions) or version only (repeatable; "
    "default: every frozen version of every suite).",
)
@click.option(
    "--field",
    default="text",
    show_default=True,
    help="Text field of JSONL records and column of Parquet files and HF datasets.",
)
@click.option(
    "--threshold",
    type=click.FloatRange(0, 1, min_open=True),
    default=DEFAULT_THRESHOLD,
    show_default=True,
    help="Share of an item's evidence n-grams (those no other item of its suite version "
    "has) one document must contain to be flagged.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", "jsonl", "parquet", "text", "hf"]),
    default="auto",
    show_default=True,
    help="Input format (auto: by suffix; directories are searched recursively).",
)
@click.option(
    "--batch-bytes",
    type=click.IntRange(min=1 << 12),
    default=DEFAULT_BATCH_BYTES,
    show_default=True,
    help="Text screened per vectorised step; bounds memory.",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="local: screen on this process (one core); ray: screen shards in parallel on a Ray "
    "cluster (same findings; docs/guard.md, 'On a cluster').",
)
@click.option(
    "--address",
    default=None,
    metavar="HOST:PORT",
    help="With --executor ray: the cluster's head (as `ray start --head` prints it), "
    "ray://HOST:PORT or auto (default: $RAY_ADDRESS, else a local cluster).",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="With --executor ray: worker processes, one CPU each (default: one per CPU of the "
    "cluster).",
)
@click.option("--no-progress", is_flag=True, help="No progress bar on stderr.")
@json_option
@wide_option
@pass_context
@handle_errors
def guard_cmd(
    ctx: Context,
    paths: tuple[Path, ...],
    suites: tuple[str, ...],
    field: str,
    threshold: float,
    fmt: Format,
    batch_bytes: int,
    executor: str,
    address: str | None,
    workers: int | None,
    no_progress: bool,
    as_json: bool,
    wide: bool,
) -> None:
    """Screen training curricula at PATHS against the fingerprints of every frozen manifest.

    PATHS are JSONL, Parquet or text files (one document a file), saved HF dataset
    directories, or directories searched recursively. Dev and holdout items are both
    screened; no vault key is needed and no item text is ever shown. A document is flagged
    when it holds an item's canary, an item's exact text, a short item text whole, or at
    least THRESHOLD of an item's word n-grams (text shared by several items of a suite counts
    for none of them). Case, punctuation, white space, markdown, chat templates and JSON
    escaping do not matter. Symbolic links that dangle, loop or leave a named directory are
    skipped and listed. With --executor ray the curriculum is screened in shards on a Ray
    cluster, with the same findings. Exit 4 when anything is flagged.
    """
    options = GuardOptions(field=field, threshold=threshold, batch_bytes=batch_bytes, format=fmt)
    ray = _ray_options(executor, address, workers)
    if as_json or no_progress:
        report = guard_report(ctx.layout, paths, options=options, suites=suites, ray=ray)
    else:
        columns = (
            TextColumn("screening"),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
        )
        with Progress(*columns, console=err_console, transient=True) as progress:
            task = progress.add_task("guard", total=None)
            report = guard_report(
                ctx.layout,
                paths,
                options=options,
                suites=suites,
                total=lambda n: progress.update(task, total=n),
                advance=lambda n: progress.advance(task, n),
                ray=ray,
            )
    view = guard_view(report)
    if as_json:
        emit_json(view.to_dict())
    else:
        print_view(console, view, wide=wide)  # skipped paths and old formats: caveats
    if report.contaminated:
        exit_after_output(
            ContaminationError(
                f"{report.documents_flagged} document(s) overlap frozen evaluation items or "
                f"carry a suite canary ({len(report.hits)} hit(s) listed above). Remove them "
                "from the curriculum before training, or the affected suite versions no "
                "longer measure held-out performance."
            )
        )


def _ray_options(executor: str, address: str | None, workers: int | None) -> RayOptions | None:
    """The Ray settings of `guard`, or None for a local screen."""
    if executor == "ray":
        return RayOptions(address=address, workers=workers)
    for flag, value in (("--address", address), ("--workers", workers)):
        if value is not None:
            raise UsageError(
                f"{flag} applies to a screen on Ray; add --executor ray, or drop {flag} to "
                "screen on this machine"
            )
    return None


def _legacy_versions(ctx: Context) -> list[str]:
    refs = []
    for name in frozen_suites(ctx.layout):
        for version in frozen_versions(ctx.layout, name):
            if read_fingerprints(ctx.layout, name, version).format != FINGERPRINT_FORMAT:
                refs.append(f"{name}@{version}")
    return refs


def _recorder(ctx: Context, keys: KeySpec, *, check: bool) -> BeforeDecrypt:
    """Record the vault's decryption in the suite's access ledger before it happens.

    A ``decrypt`` entry that spends no budget (docs/design/holdout-governance.md, section 2);
    a damaged ledger refuses it (exit 3) and nothing is decrypted.
    """
    from evalsuite.holdout import anchor_file, record_decryption

    def record(manifest: Manifest) -> None:
        record_decryption(
            ctx.layout.ledger_file(manifest.suite),
            suite=manifest.suite,
            version=manifest.version,
            manifest_hash=manifest.manifest_hash,
            reason=f"fingerprint derivation (evalsuite fingerprints{' --check' if check else ''}):"
            " every item fingerprinted again in the current format, in memory",
            at=datetime.now(UTC).isoformat(),
            anchor=anchor_file(keys.key_dir, ctx.layout.root, manifest.suite),
        )

    return record


def _result_dict(result: DerivedResult) -> dict[str, object]:
    return {
        "manifest": result.ref,
        "path": str(result.path),
        "status": result.status,
        "sha256": result.sha256,
    }


@click.command("fingerprints")
@click.argument("refs", nargs=-1, metavar="[SUITE[@X.Y.Z]]...")
@click.option(
    "--check",
    is_flag=True,
    help="Derive again and compare with the file on disk instead of writing (exit 3 if it "
    "differs).",
)
@key_file_option
@json_option
@pass_context
@handle_errors
def fingerprints_cmd(
    ctx: Context, refs: tuple[str, ...], check: bool, key_file: Path | None, as_json: bool
) -> None:
    """Fingerprint frozen versions again in the current format, beside their own fingerprints.

    A frozen version keeps the fingerprint file it was frozen with (the manifest hashes it).
    For a version frozen with an older format, this writes
    manifests/SUITE/X.Y.Z.fingerprints.v3.jsonl from the version's frozen items (dev items
    from tasks/, holdout items from the vault: the key is needed), after checking every item
    against the manifest; `guard` then screens against both files. Without REFS: every
    frozen version in an older format. See docs/guard.md, "Fingerprint formats".
    """
    wanted: list[str] = []
    for ref in refs or tuple(_legacy_versions(ctx)):
        name, version = parse_ref(ref)
        wanted.extend(
            [f"{name}@{version}"]
            if version
            else [f"{name}@{v}" for v in frozen_versions(ctx.layout, name)]
        )
    results = []
    keys = ctx.keys(key_file)
    for ref in dict.fromkeys(wanted):
        name, version = parse_ref(ref)
        results.append(
            derive_fingerprints(
                ctx.layout,
                name,
                str(version),
                keys=keys,
                check=check,
                before_decrypt=_recorder(ctx, keys, check=check),
            )
        )
    if as_json:
        emit_json({"fingerprints": [_result_dict(r) for r in results]})
        return
    if not results:
        console.print("nothing to do: every frozen version has fingerprints in the current format")
    for result in results:
        console.print(f"{result.ref}: {result.status}  {result.path}  {result.sha256 or ''}")
