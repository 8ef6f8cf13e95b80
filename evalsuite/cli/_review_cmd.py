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
    pass_context,
)
from evalsuite.cli._paths import PathParam
from evalsuite.cli._review_web import serve_review, wants_web, web_options
from evalsuite.errors import UsageError

if TYPE_CHECKING:
    from evalsuite.review import Taxonomy
    from evalsuite.store import Store

__all__ = ["label_cmd", "review_cmd"]

taxonomy_option = click.option(
    "--taxonomy",
    "taxonomy_file",
    type=PathParam(dir_okay=False, path_type=Path),
    default=None,
    help="Taxonomy file (default: tasks/taxonomies/<suite>.toml of the run's suite).",
)


def run_taxonomy(ctx: Context, store: Store, run_id: str, path: Path | None) -> Taxonomy:
    """The taxonomy that labels of run `run_id` are checked against.

    Raises:
        NotFoundError: no such run, or no taxonomy file.
        UsageError: the run names no suite (an ingested run) and no ``--taxonomy`` was given.
    """
    from evalsuite.review import load_taxonomy, suite_taxonomy

    run = store.get_run(run_id)
    if run.suite is None:
        if path is None:
            raise UsageError(
                f"run {run_id} names no suite (ingested), so it has no suite taxonomy; name "
                "one with --taxonomy FILE"
            )
        return load_taxonomy(path)
    return suite_taxonomy(ctx.layout, run.suite, path)


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


@click.group("review", cls=_ReviewGroup, invoke_without_command=True)
@click.argument("run_ids", nargs=-1, required=True)
@taxonomy_option
@web_options
@json_option
@pass_context
@handle_errors
def review_cmd(
    ctx: Context,
    run_ids: tuple[str, ...],
    taxonomy_file: Path | None,
    port: int | None,
    site_dir: Path | None,
    include_holdout: bool,
    who: str,
    as_json: bool,
) -> None:
    """Review the transcripts of RUN_IDS: labels and failure modes (docs/review.md).

    Serves the review app on 127.0.0.1 (docs/review-app.md), or writes it with --out DIR;
    with --json alone, prints the runs' label counts instead.
    `evalsuite review label RUN ITEM EPOCH --mode M` labels one attempt.
    """
    from evalsuite.cli._run_cmds import open_store

    if wants_web(as_json=as_json, port=port, site_dir=site_dir):
        serve_review(
            ctx, run_ids, port=port, site_dir=site_dir, who=who, taxonomy=taxonomy_file,
            as_json=as_json, include_holdout=include_holdout,
        )  # fmt: skip
        return

    store = open_store(ctx, create=False)
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
