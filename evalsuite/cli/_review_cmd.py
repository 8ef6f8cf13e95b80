"""`evalsuite review`: read a run's transcripts, label failure modes, scan, count (docs/review.md).

``evalsuite review RUN [RUN ...]`` with one of ``--scan``, ``--stats``, ``--propose N``;
``evalsuite review label RUN ITEM EPOCH --mode M`` labels one attempt from the command line.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from evalsuite.cli._common import (
    Context,
    console,
    emit_json,
    handle_errors,
    json_option,
    level_option,
    pass_context,
    seed_option,
)
from evalsuite.cli._paths import PathParam
from evalsuite.cli._review_scan import run_taxonomy, scan_runs
from evalsuite.cli._review_web import WebRequest, web_options
from evalsuite.errors import UsageError

if TYPE_CHECKING:
    from evalsuite.store import Store

__all__ = ["label_cmd", "review_cmd"]

taxonomy_option = click.option(
    "--taxonomy",
    "taxonomy_file",
    type=PathParam(dir_okay=False, path_type=Path),
    default=None,
    help="Taxonomy file (default: tasks/taxonomies/<suite>.toml of the run's suite).",
)


class _ReviewGroup(click.Group):
    """`review RUN ...` (a command), whose first word ``label`` runs `label_cmd` instead.

    A group only for its subcommands: any other first word is a run id, and the group's own
    callback runs with every word as RUN_IDS (``invoke_without_command``), options anywhere.
    """

    allow_interspersed_args = True

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        sub = self.commands.get(args[0]) if args else None
        if sub is not None:
            return sub.make_context(f"{info_name} {args[0]}", args[1:], parent=parent, **extra)
        return super().make_context(info_name, args, parent=parent, **extra)

    def collect_usage_pieces(self, ctx: click.Context) -> list[str]:
        """``[OPTIONS] RUN_IDS...`` (or ``label RUN ITEM EPOCH``, said in the help text)."""
        return click.Command.collect_usage_pieces(self, ctx)


@click.command("label")
@click.argument("run_id")
@click.argument("item_id")
@click.argument("epoch", type=click.IntRange(min=1))
@click.option(
    "--mode",
    "modes",
    multiple=True,
    help="A failure mode of the taxonomy (repeat for several; none: no mode applies).",
)
@click.option("--note", default="", help="A free note on the attempt.")
@click.option("--who", default="", help="Who labels (default: $EVALSUITE_LABELLER or login).")
@taxonomy_option
@json_option
@pass_context
@handle_errors
def label_cmd(
    ctx: Context,
    run_id: str,
    item_id: str,
    epoch: int,
    modes: tuple[str, ...],
    note: str,
    who: str,
    taxonomy_file: Path | None,
    as_json: bool,
) -> None:
    """Label attempt (ITEM, EPOCH) of RUN_ID with failure modes and a note.

    Each save is kept; the latest is the attempt's label (docs/review.md).
    """
    from evalsuite.cli._run_cmds import open_store
    from evalsuite.review import AttemptLabel, load_labels, save_label

    store = open_store(ctx, create=False)
    taxonomy = run_taxonomy(ctx, store, run_id, taxonomy_file)
    label = AttemptLabel(run_id, item_id, epoch, tuple(modes), note=note, who=who)
    save_label(store, label, taxonomy=taxonomy)
    saved = next(x for x in load_labels(store, run_id) if x.key == (item_id, epoch))
    if as_json:
        emit_json({"label": saved.to_dict(), "taxonomy": taxonomy.to_dict()})
        return
    shown = ", ".join(saved.modes) or "no failure mode"
    console.print(
        f"labelled {item_id} epoch {epoch} of {run_id}: {shown} "
        f"(taxonomy {taxonomy.suite} v{taxonomy.version}, by {saved.who} at {saved.at})",
        markup=False,
    )


def _labels_summary(ctx: Context, store: Store, run_ids: tuple[str, ...]) -> list[dict[str, Any]]:
    from evalsuite.review import load_labels

    out = []
    for run_id in run_ids:
        run = store.get_run(run_id)
        labels = load_labels(store, run_id)
        counts: dict[str, int] = {}
        for label in labels:
            for mode in label.modes:
                counts[mode] = counts.get(mode, 0) + 1
        out.append(
            {
                "run_id": run_id,
                "suite": run.suite,
                "labelled": len(labels),
                "modes": dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))),
            }
        )
    return out


def _print_scan(reports: list[dict[str, Any]]) -> None:
    for report in reports:
        console.print(
            f"{report['run_id']}: {report['transcripts']} transcripts scanned; Scout's results "
            f"in {report['location']}",
            markup=False,
        )
        for name, count in report["counts"].items():
            console.print(f"  {name:24s} {count} flagged", markup=False)


def _print_stats(payload: dict[str, Any]) -> None:
    from evalsuite.service import review_lines

    for line in review_lines(payload):
        console.print(line, markup=False)


def _propose(
    ctx: Context, store: Store, run_ids: tuple[str, ...], n: int, seed: int, share: float
) -> list[dict[str, Any]]:
    from evalsuite.review import label_history, load_labels, propose, saturation

    out = []
    for run_id in run_ids:
        store.get_run(run_id)
        found = propose(
            run_id,
            store.attempts(run_id),
            load_labels(store, run_id),
            n=n,
            seed=seed,
            random_share=share,
        )
        out.append(found.to_dict() | {"saturation": saturation(label_history(store, run_id))})
    return out


def _print_proposals(proposals: list[dict[str, Any]]) -> None:
    for found in proposals:
        sat = found["saturation"]
        console.print(
            f"{found['run_id']}: {found['proposed']} attempts to label (seed {found['seed']}, "
            f"{found['random_share']:.0%} random; {found['already_labelled']} labelled so far, "
            f"{sat['modes_seen']} modes seen, {sat['new_in_last_k']} new in the last "
            f"{sat['k']} labels)",
            markup=False,
        )
        for row in found["attempts"]:
            console.print(f"  {row['attempt']:32s} {row['outcome']:14s} {row['why']}", markup=False)


@click.group("review", cls=_ReviewGroup, invoke_without_command=True)
@click.argument("run_ids", nargs=-1, required=True)
@click.option("--scan", is_flag=True, help="Scan the runs' transcripts with Inspect Scout.")
@click.option(
    "--scanner",
    "scanner_names",
    multiple=True,
    help="With --scan: a built-in scanner to run (repeat; default: all of them).",
)
@click.option(
    "--llm-scanner",
    "llm_scanners",
    multiple=True,
    metavar="MODE=MODEL",
    help="With --scan: also ask MODEL (any inspect model) whether each transcript shows MODE.",
)
@click.option(
    "--scanner-file",
    "scanner_files",
    multiple=True,
    metavar="FILE.py[@NAME]",
    help="With --scan: also run a team's own Scout scanners from FILE.py (as `scout scan`).",
)
@click.option(
    "--log-dir",
    type=PathParam(path_type=Path),
    default=None,
    help="With --scan: the runs' inspect logs (default: where each run wrote them).",
)
@click.option(
    "--scans",
    "scans_dir",
    type=PathParam(file_okay=False, path_type=Path),
    default=None,
    help="With --scan: where Scout writes its results (default: .evalsuite/scans).",
)
@click.option(
    "--stats",
    is_flag=True,
    help="Per-mode rates with intervals, changes between runs, scanner checks.",
)
@click.option(
    "--propose",
    "propose_n",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Propose N attempts to label next (failures stratified, plus a random share).",
)
@click.option(
    "--random-share",
    type=click.FloatRange(0, 1),
    default=0.25,
    show_default=True,
    help="With --propose: the share of attempts drawn at random.",
)
@taxonomy_option
@level_option
@click.option("--alpha", type=click.FloatRange(0.001, 0.5), default=0.05, show_default=True)
@seed_option
@web_options
@json_option
@pass_context
@handle_errors
def review_cmd(  # noqa: C901, PLR0912 (one branch per action: scan, stats, propose, app)
    ctx: Context,
    run_ids: tuple[str, ...],
    scan: bool,
    scanner_names: tuple[str, ...],
    llm_scanners: tuple[str, ...],
    scanner_files: tuple[str, ...],
    log_dir: Path | None,
    scans_dir: Path | None,
    stats: bool,
    propose_n: int | None,
    random_share: float,
    taxonomy_file: Path | None,
    level: float,
    alpha: float,
    seed: int,
    port: int | None,
    site_dir: Path | None,
    include_holdout: bool,
    who: str,
    as_json: bool,
) -> None:
    """Review the transcripts of RUN_IDS: scan, count failure modes, propose what to label.

    One of --scan, --stats, --propose N; with none, the review app on 127.0.0.1
    (docs/review-app.md), or written as a static site with --out DIR; with --json alone
    (no --port, no --out), the labels so far per mode.
    `evalsuite review label RUN ITEM EPOCH --mode M` labels one attempt (docs/review.md).
    """
    from evalsuite.cli._run_cmds import open_store

    if sum([scan, stats, propose_n is not None]) > 1:
        raise UsageError("give one of --scan, --stats and --propose N (run them one by one)")
    if (scanner_names or llm_scanners or scanner_files or log_dir or scans_dir) and not scan:
        raise UsageError(
            "--scanner, --llm-scanner, --scanner-file, --log-dir and --scans go with --scan"
        )
    web = WebRequest(port=port, site_dir=site_dir, include_holdout=include_holdout, who=who)
    if web.serve_or_write(ctx, run_ids, acts=scan or stats or propose_n is not None,
                          taxonomy=taxonomy_file, as_json=as_json):  # fmt: skip
        return
    store = open_store(ctx, create=scan)
    if scan:
        reports = scan_runs(
            ctx,
            store,
            run_ids,
            names=scanner_names,
            llm=llm_scanners,
            files=scanner_files,
            taxonomy_file=taxonomy_file,
            log_dir=log_dir,
            scans_dir=scans_dir,
        )
        if as_json:
            emit_json({"scans": reports})
        else:
            _print_scan(reports)
        return
    if stats:
        from evalsuite.review import StatsOptions, review_summary

        payload = review_summary(
            store,
            ctx.layout,
            run_ids,
            taxonomy_file=taxonomy_file,
            options=StatsOptions(level=level, alpha=alpha, seed=seed),
        )
        if as_json:
            emit_json(payload)
        else:
            _print_stats(payload)
        return
    if propose_n is not None:
        proposals = _propose(ctx, store, run_ids, propose_n, seed, random_share)
        if as_json:
            emit_json({"proposals": proposals})
        else:
            _print_proposals(proposals)
        return
    for run_id in run_ids:
        run_taxonomy(ctx, store, run_id, taxonomy_file)
    summary = _labels_summary(ctx, store, run_ids)
    if as_json:
        emit_json({"runs": summary})
        return
    for row in summary:
        modes = ", ".join(f"{k} {v}" for k, v in row["modes"].items()) or "none yet"
        console.print(
            f"{row['run_id']}: {row['labelled']} attempts labelled; modes: {modes}", markup=False
        )


review_cmd.add_command(label_cmd)
