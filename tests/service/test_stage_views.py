"""The views of validity, audit and guard (docs/design/result-model.md): one object each,
rendered by the CLI (rich), Markdown, HTML and JSON, with the conventions of the comparison.

Issue 15 found `validity report` printing 111 lines for three models, about 65 of them five
caveats repeated per stratum, wider than the terminal, with the suite's row in the middle.
"""

from __future__ import annotations

import io
import json
import math
import re
from typing import Any

import numpy as np
import pandas as pd
import pytest
from rich.console import Console

from evalsuite.cli._views import print_view
from evalsuite.report import render_view_html, render_view_markdown
from evalsuite.service import ResultView, audit_view, guard_view, validity_view
from evalsuite.service._stage_views import GUARD_ROWS
from evalsuite.validity import validity_table

LEAKS = re.compile(r"\bNone\b|\bnan\b|\bNaN\b|\{'|\['|\[/?bold\]|np\.float")
SUITE = "demo@1.0.0"


def _terminal(view: ResultView, *, wide: bool = False) -> str:
    out = Console(file=io.StringIO(), width=100, color_system=None, record=True)
    print_view(out, view, wide=wide)
    return out.export_text()


def _validity_payload(n_models: int = 3, n_strata: int = 5) -> dict[str, Any]:
    """What `validity report --suite` returns for `n_models` models of a suite with strata."""
    rng = np.random.default_rng(7)
    models = [f"model-{i}" for i in range(n_models)]
    rows = []
    for i, model in enumerate(models):
        rows.append({"model": model, "predictor": SUITE, "score": 0.2 * i + 0.1, "se": 0.02})
        rows += [
            {
                "model": model,
                "predictor": f"stratum s{j}",
                "score": float(rng.uniform(0.1, 0.9)),
                "se": 0.05,
            }
            for j in range(n_strata)
        ]
    outcomes = pd.DataFrame(
        {"model": models, "value": [0.3, 0.5, 0.4][:n_models] + [0.6] * max(0, n_models - 3)}
    )
    report = validity_table(
        pd.DataFrame(rows), outcomes, metric="task_success", rng=np.random.default_rng(0)
    )
    payload = report.to_dict()
    payload |= {
        "source": f"runs of {SUITE}",
        "split": "dev",
        "main_predictor": SUITE,
        "partial_runs": [],
        "statements": [p["statement"] for p in payload["predictors"] if p["name"] == SUITE],
    }
    return payload


def _graders(*, ok: bool) -> dict[str, Any]:
    failed: dict[str, Any] = {
        "check": "exploit",
        "policy": "claim_success",
        "status": "failed",
        "summary": "the grader rewarded a claim of success on 2 items",
        "counts": {"rewarded": 2},
        "strata": {"easy": {"failed": 2}, "hard": {"failed": 0}},
        "items": ["e-1", "e-2"],
    }
    passed: dict[str, Any] = {
        "check": "oracle",
        "policy": None,
        "status": "passed",
        "summary": "every item solved by its oracle",
        "counts": {},
        "strata": {},
        "items": [],
    }
    return {
        "format": "evalsuite-grader-audit/1",
        "suite": "demo",
        "version": "1.0.0",
        "split": "dev",
        "ok": ok,
        "schedule": ["oracle", "null", "exploit/claim_success"],
        "seed": 0,
        "sample": {"items": 12, "of": 12, "per_stratum": None},
        "families": [
            {"family": "fam", "version": 1, "ok": ok, "checks": [passed] + ([] if ok else [failed])}
        ],
        "runs": [],
        "seconds": 3.2,
        "logs": [],
        "stored": "manifests/demo/1.0.0.audit.json" if ok else None,
    }


def _leaks(*, found: bool) -> dict[str, Any]:
    findings = [{"item_id": "h-7", "split": "holdout", "surface": "input", "how": "exact"}]
    return {
        "suite": "demo",
        "version": "1.0.0",
        "ok": not found,
        "checked": {"dev": 108, "holdout": 96},
        "findings": findings if found else [],
        "skipped": {"d-1": "target too short", "d-2": "target too short"},
    }


def _guard(n_hits: int) -> dict[str, Any]:
    hit = {
        "suite": "demo",
        "version": "1.0.0",
        "split": "holdout",
        "overlap": 0.8125,
        "matched": 13,
        "how": "ngram",
    }
    hits = [hit | {"document": f"doc-{i}.txt", "item_id": f"h-{i}"} for i in range(n_hits)]
    if n_hits:  # and a canary hit: no split, no item
        hits.append(hit | {"document": "c.txt", "item_id": None, "split": None, "how": "canary"})
    return {
        "documents_scanned": 300,
        "bytes_scanned": 12_345_678,
        "seconds": 0.5,
        "threshold": 0.2,
        "manifests": ["demo@1.0.0"],
        "documents_flagged": len(hits),
        "skipped": ["b.bin"],
        "skipped_details": [{"path": "b.bin", "reason": "unknown format"}],
        "fingerprints": [{"manifest": "demo@1.0.0", "format": "f/2", "derived": False}],
        "legacy_only": ["demo@1.0.0"],
        "contaminated": hits,
    }


def _all_views() -> list[ResultView]:
    return [
        validity_view(_validity_payload()),
        audit_view({"graders": _graders(ok=False), "leaks": _leaks(found=True)}),
        audit_view({"leaks": _leaks(found=False)}),
        guard_view(_guard(3)),
        guard_view(_guard(0)),
    ]


# ----------------------------------------------------------------------------- validity


def test_validity_of_three_models_is_short_suite_first_each_caveat_once() -> None:
    payload = _validity_payload(n_models=3, n_strata=5)
    flags = [f for p in payload["predictors"] for f in p["flags"]]
    assert len(flags) > len(set(flags))  # the strata repeat the suite's flags
    view = validity_view(payload)
    assert view.tables[0].rows[0][0] == SUITE  # the suite's own row first
    assert view.headline.startswith(f"Over 3 models, {SUITE} predicted task_success")
    text = _terminal(view)
    lines = text.rstrip().splitlines()
    assert len(lines) <= 45, text  # issue 15: 111 lines for three models
    assert max(len(line) for line in lines if line[:1] in "┏┃┡│└") <= 100
    assert lines.index("caveats:") > max(i for i, x in enumerate(lines) if x.startswith("└"))
    assert len(view.caveats) == len(set(view.caveats))
    numbers = re.compile(r"[−-]?\d+(?:\.\d+)?")
    for flag in {numbers.sub("#", f) for f in flags}:  # each flag once, naming its predictors
        assert sum(numbers.sub("#", c).startswith(flag) for c in view.caveats) == 1, flag
    assert sum("not compared" in c for c in view.caveats) == 1
    assert not LEAKS.search(text), LEAKS.search(text)
    header = " ".join(line for line in lines if line.startswith("┃"))
    wide = _terminal(view, wide=True)
    wide_header = " ".join(x for x in wide.splitlines() if x.startswith("┃"))
    assert "Kendall" not in header and "Kendall" in wide_header


def test_validity_view_says_n_a_with_the_reason_when_the_suite_cannot_be_judged() -> None:
    payload = _validity_payload()
    for p in payload["predictors"]:
        if p["name"] == SUITE:
            p["spearman"] = math.nan
            p["flags"] = ["2 models have both; at least 3 needed"]
    view = validity_view(payload)
    assert "n/a (2 models have both; at least 3 needed)" in view.headline
    assert not LEAKS.search(_terminal(view))


def test_validity_json_keeps_every_field_and_adds_the_sentences() -> None:
    payload = _validity_payload()
    out = validity_view(payload).to_dict()
    assert set(payload) < set(out)
    assert {"headline", "caveats"} <= set(out) and "gate_line" not in out
    assert out["predictors"] == payload["predictors"]


# ----------------------------------------------------------------------------- audit


def test_audit_view_leads_with_the_failures_and_never_prints_a_dict() -> None:
    view = audit_view({"graders": _graders(ok=False), "leaks": _leaks(found=True)})
    assert view.headline.startswith("demo@1.0.0: grader audit FAILED (12 of 12 dev items")
    assert "LEAKS in 1 of 108 dev and 96 holdout items" in view.headline
    assert view.alerts[0] == "FAILED fam exploit/claim_success in easy: items e-1, e-2"
    assert any(a.startswith("LEAKS: 1 item(s)") for a in view.alerts)
    assert view.caveats == ("2 item(s) could not be audited for leaks (target too short 2)",)
    text = _terminal(view)
    assert text.index("FAILED fam exploit") < text.index("family fam")  # alerts first
    assert "{'dev'" not in text and not LEAKS.search(text), LEAKS.search(text)


def test_audit_view_of_a_clean_suite_and_a_canary_probe() -> None:
    canary = {
        "suite": "demo",
        "model": "mockllm/model",
        "tries": 5,
        "hidden_chars": 32,
        "best_match": 3,
        "completions_matching": 0,
        "memorised": False,
        "seeds": [0, 1, 2, 3, 4],
    }
    view = audit_view({"graders": _graders(ok=True), "canary_probe": canary})
    assert view.alerts == ()
    assert "grader audit passed" in view.headline
    assert "mockllm/model did not reproduce the canary (best 3 of 32" in view.headline
    assert view.facts == ("results stored with the version: manifests/demo/1.0.0.audit.json",)
    memorised = audit_view({"canary_probe": canary | {"memorised": True}})
    assert memorised.alerts[0].startswith("CANARY MEMORISED: mockllm/model")


def test_a_partial_grader_audit_says_so_once_at_the_end() -> None:
    graders = _graders(ok=True) | {"sample": {"items": 4, "of": 12, "per_stratum": 2}}
    view = audit_view({"graders": graders})
    assert view.caveats[-1].startswith("a partial audit (the first 2 items of each stratum)")
    text = _terminal(view)
    assert text.index("- a partial audit") > text.rindex("└")  # after every table


# ----------------------------------------------------------------------------- guard


def test_guard_view_names_hits_without_raw_values() -> None:
    view = guard_view(_guard(3))
    assert view.headline.startswith("CONTAMINATED: 4 document(s) overlap frozen evaluation items")
    assert "screened 300 documents (12.3 MB) in 0.5 s (25 MB/s)" in view.headline
    [hits] = view.tables
    assert hits.rows[0] == ("doc-0.txt", "demo@1.0.0", "holdout", "h-0", "0.81", "ngram")
    assert hits.rows[-1][2:4] == ("n/a (canary)", "(canary)")
    assert view.caveats[0] == "skipped (unknown format): b.bin"
    assert "demo@1.0.0 has fingerprints in an older format only" in view.caveats[1]
    clean = guard_view(_guard(0))
    assert clean.headline.startswith("clean: screened 300 documents")
    assert clean.tables == () and clean.alerts == ()


def test_guard_view_shows_at_most_its_rows_and_counts_the_rest() -> None:
    view = guard_view(_guard(GUARD_ROWS + 5))
    assert len(view.tables[0].rows) == GUARD_ROWS
    assert view.facts == ("... and 6 more hits (see --json)",)
    assert len(view.to_dict()["contaminated"]) == GUARD_ROWS + 6  # JSON keeps every hit


# ----------------------------------------------------------------------------- every renderer


@pytest.mark.parametrize("index", range(5))
def test_every_renderer_shows_the_same_view(index: int) -> None:
    view = _all_views()[index]
    text = _terminal(view)
    markdown = render_view_markdown(view)
    html = render_view_html(view)
    payload = json.loads(json.dumps(view.to_dict(), allow_nan=True))
    assert payload["headline"] == view.headline and payload["caveats"] == list(view.caveats)
    assert set(view.payload) <= set(payload)  # no --json field lost
    flat = " ".join(text.split())
    for rendered in (flat, markdown):
        assert " ".join(view.headline.split()) in " ".join(rendered.split())
        for caveat in view.caveats:  # once each, after every table
            assert " ".join(rendered.split()).count(" ".join(caveat.split())) == 1
    assert f'data-view="{view.kind}"' in html and "<h3>" in html
    for table in view.tables:
        assert f"**{table.title}**" in markdown
        assert f"<h4>{table.title}</h4>" in html
        for row in table.rows[:3]:
            assert "| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" in markdown
    for alert in view.alerts:
        assert f"> **{alert}**" in markdown
    if view.caveats:
        assert markdown.index("Caveats:") > max(
            [markdown.index(f"**{t.title}**") for t in view.tables] or [0]
        )
        assert html.index("data-caveats") > max(
            [html.index(f"<h4>{t.title}</h4>") for t in view.tables] or [0]
        )
    lines = text.splitlines()
    assert max(len(line) for line in lines if line[:1] in "┏┃┡│└┗") <= 100 if view.tables else True
    for rendered in (text, markdown, re.sub(r"<[^>]+>", " ", html)):
        assert not LEAKS.search(rendered), LEAKS.search(rendered)


def test_html_escapes_what_a_view_carries() -> None:
    payload = _guard(1)
    payload["contaminated"][0]["document"] = "<script>x</script>.txt"
    html = render_view_html(guard_view(payload))
    assert "<script>" not in html and "&lt;script&gt;" in html
