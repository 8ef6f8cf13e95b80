from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path
from types import SimpleNamespace

import pytest

from evalsuite._core.layout import Layout
from evalsuite.manifest import KeySpec, item_texts, load_holdout_items, load_manifest, resolve_key
from evalsuite.store import Store, default_store_url
from tests.helpers import CANARY, json_out
from tests.report.conftest import N_PER_STRATUM, Reported, report_dir, shared_report


def test_one_run_report_has_every_section(reported: Reported) -> None:
    out = shared_report(reported, "one", reported.candidate)
    html = (out / "index.html").read_text()
    for section in (
        "Provenance",
        "Harness health",
        "Scores",
        "Reliability",
        "Scores per stratum",
        "pass@k and pass^k",
        "Variance split",
        "Items",
    ):
        assert section in html, section
    assert html.count("<svg") >= 3
    # no network fetches: nothing is loaded from a URL (namespace URIs in SVG are not fetched)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "url(http" not in html
    assert "@import" not in html
    assert "<script" not in html
    payload = json.loads((out / "report.json").read_text())
    assert payload["runs"][0]["run_id"] == reported.candidate
    assert payload["comparisons"] == []
    assert (out / "report.md").read_text().startswith("# evalsuite report")


def test_report_json_has_the_same_numbers_as_score_and_compare(reported: Reported) -> None:
    project = reported.project
    out = shared_report(reported, "pair", reported.baseline, reported.candidate)
    payload = json.loads((out / "report.json").read_text())
    score = json_out(project.invoke("score", reported.candidate, "--json"))
    compare = json_out(project.invoke("compare", reported.baseline, reported.candidate, "--json"))
    run = payload["runs"][1]
    for key in (
        "overall",
        "weighted",
        "strata",
        "pass_at_k",
        "pass_hat_k",
        "harness",
        "reliability",
    ):
        assert run[key] == score[key], key
    comparison = payload["comparisons"][0]
    for key in ("diff", "se", "ci", "p_value", "verdict", "mde", "strata"):
        assert comparison[key] == compare[key], key
    html = (out / "index.html").read_text()
    assert "Comparisons (paired by item" in html
    assert comparison["verdict"].replace("_", " ") in html


def test_harness_faults_show_with_counts_that_match_the_store(reported: Reported) -> None:
    out = shared_report(reported, "faulty", reported.faulty, reported.candidate)
    store = Store(default_store_url(Layout(reported.project.root).state))
    frame = store.attempts(reported.faulty)
    errors = int((frame["outcome"] == "harness_error").sum())
    assert errors > 0
    payload = json.loads((out / "report.json").read_text())
    health = payload["runs"][0]["harness"]
    assert health["harness_errors"] == errors
    assert health["errors_by_kind"] == {"HarnessFault": errors}
    assert payload["invalid_runs"] == [reported.faulty]
    html = (out / "index.html").read_text()
    banner = html.index('id="invalid-banner"')
    assert banner < html.index('id="runs"')  # at the top of the page
    assert reported.faulty in html[banner : banner + 400]
    row = re.search(r'<table class="health">.*?</table>', html, re.DOTALL)
    assert row is not None
    assert f'<td class="num">{errors}</td>' in row.group(0)
    assert "HarnessFault: " + str(errors) in row.group(0)


def test_ingested_runs_are_reported_without_a_manifest(reported: Reported, tmp_path) -> None:
    csv = tmp_path / "r.csv"
    csv.write_text("model,item_id,epoch,score\nother,alpha-000,1,1\nother,alpha-004,1,0\n")
    ingested = json_out(reported.project.invoke("ingest", str(csv), "--format", "csv", "--json"))[
        "runs"
    ][0]["run_id"]
    out = report_dir(reported, "ingested", reported.candidate, ingested)
    html = (out / "index.html").read_text()
    assert "ingested, no manifest" in html
    assert "without a frozen manifest" in html
    payload = json.loads((out / "report.json").read_text())
    assert payload["runs"][1]["manifest"] is None


def test_reports_carry_the_canary(reported: Reported) -> None:
    out = shared_report(reported, "one", reported.candidate)
    for name in ("index.html", "report.md", "report.json"):
        assert CANARY in (out / name).read_text(), name


def test_no_holdout_text_in_any_report_file(reported: Reported) -> None:
    project = reported.project
    out = report_dir(reported, "holdout", reported.holdout, reported.candidate)
    layout = Layout(project.root)
    manifest = load_manifest(layout, "probe")
    key = resolve_key(
        "probe", manifest.key, manifest.canary, KeySpec(key_dir=project.key_dir), create=False
    )
    needles = [t for _, item in load_holdout_items(layout, manifest, key) for t in item_texts(item)]
    assert needles
    for path in out.rglob("*"):
        if path.is_file():
            text = path.read_text()
            assert not [n for n in needles if n in text], path


def test_bad_report_arguments(reported: Reported) -> None:
    result = reported.project.invoke("report", "nope")
    assert result.exit_code == 2
    assert "no run 'nope'" in result.stderr
    twice = reported.project.invoke("report", reported.candidate, reported.candidate)
    assert twice.exit_code == 2
    assert "named twice" in twice.stderr


@pytest.fixture(scope="module")
def twice(reported: Reported) -> tuple[Path, Path]:
    """The same report made twice (once per session, for the three formats' checks): the pair's
    report the other tests read, and a second one of the same runs."""
    return (
        shared_report(reported, "pair", reported.baseline, reported.candidate),
        shared_report(reported, "pair-again", reported.baseline, reported.candidate),
    )


@pytest.mark.parametrize("fmt", ["html", "md", "json"])
def test_report_is_deterministic_for_a_fixed_seed(twice: tuple[Path, Path], fmt: str) -> None:
    a, b = twice
    name = {"html": "index.html", "md": "report.md", "json": "report.json"}[fmt]
    strip = re.compile(r"20\d\d-\d\d-\d\dT[0-9:.+]+")  # generation time differs
    assert strip.sub("", (a / name).read_text()) == strip.sub("", (b / name).read_text())


def test_pass_k_reports_its_items_per_k(reported: Reported) -> None:
    # issue 10 item 25: each k is computed over the items with at least k usable epochs, and
    # the report says how many those are (JSON, HTML and Markdown)
    out = shared_report(reported, "faulty", reported.faulty, reported.candidate)
    store = Store(default_store_url(Layout(reported.project.root).state))
    frame = store.attempts(reported.faulty)
    usable = frame[frame["outcome"] != "harness_error"].groupby("item_id")["epoch"].count()
    expected = {str(k): int((usable >= k).sum()) for k in (1, 2, 3)}
    assert expected["3"] < expected["1"]  # the injected faults left some items short
    run = json.loads((out / "report.json").read_text())["runs"][0]  # the faulty run's
    assert run["run_id"] == reported.faulty
    assert run["pass_k_n_items"] == expected
    assert [e["n_items"] for e in run["pass_k"]] == [expected[k] for k in ("1", "2", "3")]
    html = (out / "index.html").read_text()
    table = html[html.index('<table class="pass-k">') :]  # the first run's table
    table = table[: table.index("</table>")]
    assert all(f'<td class="num">{n}</td>' in table for n in expected.values())
    md = (out / "report.md").read_text()
    assert "items:  " + "  ".join(f"k={k} {v}" for k, v in expected.items()) in md


def test_one_mde_named_the_same_way_in_score_compare_and_report(reported: Reported) -> None:
    # issue 10 item 26: with the same inputs (here α = 0.1 and an assumed true-score
    # correlation of 0.7) score, compare and the report show the same MDEs, and every output
    # names what each one assumes
    project = reported.project
    out = reported.reports / "mde"
    result = project.invoke(
        "report",
        reported.baseline,
        reported.candidate,
        "--alpha",
        "0.1",
        "--model-corr",
        "0.7",
        "--out",
        str(out),
    )
    assert result.exit_code == 0, result.stderr
    payload = json.loads((out / "report.json").read_text())
    score = json_out(
        project.invoke(
            "score", reported.candidate, "--alpha", "0.1", "--model-corr", "0.7", "--json"
        )
    )
    compare = json_out(
        project.invoke("compare", reported.baseline, reported.candidate, "--alpha", "0.1", "--json")
    )
    run, comparison = payload["runs"][1], payload["comparisons"][0]
    pilot = score["reliability"]["mde_assumption"]
    assert run["reliability"]["mde"] == score["reliability"]["mde"]
    assert run["reliability"]["mde_assumption"] == pilot
    assert (pilot["alpha"], pilot["true_score_correlation"]) == (0.1, 0.7)
    assert pilot["correlation_source"] == "assumed" and pilot["n_items"] == N_PER_STRATUM
    assert comparison["mde"] == compare["mde"]
    assert comparison["mde_assumption"] == compare["mde_assumption"]
    observed = compare["mde_assumption"]
    assert observed["correlation_source"] == "observed" and observed["alpha"] == 0.1
    assert observed["value"] == pytest.approx(compare["mde"], rel=1e-9)
    # the default α of score and report is the same 0.05 that compare uses
    default = json_out(project.invoke("score", reported.candidate, "--json"))
    assert default["reliability"]["mde_assumption"]["alpha"] == 0.05
    assert default["reliability"]["mde"] > score["reliability"]["mde"]
    # named in every human-readable output
    text = project.invoke("score", reported.candidate, "--alpha", "0.1", "--model-corr", "0.7")
    assert f"pilot MDE {score['reliability']['mde']:.3f}: {pilot['description']}" in " ".join(
        text.stdout.split()
    )
    compared = project.invoke("compare", reported.baseline, reported.candidate, "--alpha", "0.1")
    assert observed["description"] in " ".join(compared.stdout.split())
    page = " ".join(unescape((out / "index.html").read_text()).split())
    assert pilot["description"] in page and observed["description"] in page
    md = (out / "report.md").read_text()
    assert f"pilot MDE {score['reliability']['mde']:.3f}: {pilot['description']}" in md
    assert f"MDE: {observed['description']}." in md


def test_pass_k_figure_without_repeated_epochs_says_so_and_logs_no_legend_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import logging

    import matplotlib.pyplot as plt

    from evalsuite.report._figures import pass_k_curves

    caplog.set_level(logging.WARNING)
    fig = pass_k_curves([{"run_id": "r1", "model": "m", "pass_k": []}])
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    plt.close(fig)
    assert "no pass@k estimate: needs repeated epochs" in texts
    assert not [r for r in caplog.records if "legend" in r.getMessage()]


def test_each_run_is_compared_with_its_own_suites_first_run(monkeypatch) -> None:
    """One report over several suites pairs runs within a suite, never across suites."""
    from evalsuite.report import _build

    pairs: list[tuple[str, str]] = []

    def fake_compare(store, baseline, candidate, options, **kwargs):  # type: ignore[no-untyped-def]
        pairs.append((baseline, candidate))
        return SimpleNamespace(baseline=baseline, candidate=candidate, gate=None)

    monkeypatch.setattr(_build, "compare", fake_compare)
    runs = [
        SimpleNamespace(run_id=run_id, run=SimpleNamespace(suite=suite))
        for run_id, suite in (
            ("s-base", "support"),
            ("r-base", "repair"),
            ("s-new", "support"),
            ("r-new", "repair"),
            ("ingested", None),
        )
    ]
    out = _build._comparisons(
        None,  # type: ignore[arg-type]
        runs,  # type: ignore[arg-type]
        _build.AnalysisOptions(),
        layout=None,  # type: ignore[arg-type]
        allow_partial=False,
    )
    assert pairs == [("s-base", "s-new"), ("r-base", "r-new"), ("s-base", "ingested")]
    assert [c.candidate for c in out] == ["s-new", "r-new", "ingested"]
