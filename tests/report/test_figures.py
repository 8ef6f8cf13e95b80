"""The report's figures draw what they have and say nothing more: no empty legend."""

from __future__ import annotations

import math
import warnings
from typing import Any

import matplotlib

from evalsuite.report._figures import reliability_panel, to_svg

matplotlib.use("Agg")


def _run(run_id: str, between: float, within: float, epochs: int) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "model": f"model-{run_id}",
        "reliability": {
            "var_between": between,
            "var_within": within,
            "epochs": epochs,
            "reason": None if epochs > 1 else "one epoch: no attempt noise to split",
        },
    }


def _legend_labels(runs: list[dict[str, Any]]) -> list[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns when asked for an empty legend
        fig = reliability_panel(runs)
    legend = fig.axes[0].get_legend()
    return [t.get_text() for t in legend.get_texts()] if legend is not None else []


def test_runs_of_one_epoch_draw_no_bar_and_no_legend() -> None:
    runs = [_run("a", math.nan, math.nan, 1), _run("b", math.nan, math.nan, 1)]
    assert _legend_labels(runs) == []


def test_the_legend_names_the_first_run_drawn_even_when_it_is_not_the_first() -> None:
    runs = [_run("a", math.nan, math.nan, 1), _run("b", 0.04, 0.02, 3), _run("c", 0.05, 0.01, 3)]
    assert _legend_labels(runs) == ["between items", "attempt noise / K"]


def test_a_model_name_with_control_characters_reaches_neither_stderr_nor_the_svg() -> None:
    """Issue 28.16: matplotlib's 'Glyph 27 (\\x1b) missing' warning printed a model name's ESC
    raw on stderr after `evalsuite report`, and the SVG carried it (not even valid XML)."""
    evil = "m\x1b[31mRED\u202e\r"
    runs = [_run("a", 0.04, 0.02, 3) | {"model": evil}, _run("b", 0.05, 0.01, 3)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        svg = to_svg(reliability_panel(runs), title=evil)
    assert "\x1b" not in svg and "\u202e" not in svg
    assert "\\x1b[31mRED" in svg
