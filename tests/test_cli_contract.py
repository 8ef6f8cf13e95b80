"""The `--json` fields docs/cli.md promises other tools (extend, never rename)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import json_out
from tests.run.conftest import make_probe_project

ESTIMATE = {"mean", "se", "ci", "level", "n_items", "method"}


def test_json_contract_of_every_command(tmp_path: Path) -> None:
    # fields, not figures: two 2-epoch runs (pass@k's and test-retest's fields) of 6 dev items
    project = make_probe_project(tmp_path, n_per_stratum=6)
    base = json_out(
        project.invoke(
            "run",
            "probe@1.0.0",
            "--model",
            "fakeagent/x",
            "-M",
            "accuracy=0.5",
            "--epochs",
            "2",
            "--json",
            "--no-progress",
        )
    )
    cand = json_out(
        project.invoke(
            "run",
            "probe@1.0.0",
            "--model",
            "fakeagent/x",
            "-M",
            "accuracy=0.9",
            "--epochs",
            "2",
            "--json",
            "--no-progress",
        )
    )
    assert {"run_id", "valid", "mean", "harness", "audit"} <= set(base)
    assert {"status", "detail", "marker"} <= set(base["audit"])
    verified = json_out(project.invoke("verify", "probe@1.0.0", "--json"))
    audit_fields = {"status", "detail", "problems", "failed_checks"}
    assert all(audit_fields <= set(s["audit"]) for s in verified["suites"])

    score = json_out(project.invoke("score", cand["run_id"], "--json"))
    assert {
        "run_id",
        "suite",
        "version",
        "manifest_hash",
        "split",
        "model",
        "epochs",
        "valid",
        "harness",
        "overall",
        "weighted",
        "strata",
        "pass_at_k",
        "pass_hat_k",
        "reliability",
    } <= set(score)
    assert {"planned", "scored", "limits", "harness_errors", "error_rate"} <= set(score["harness"])
    assert set(score["overall"]) >= ESTIMATE and set(score["weighted"]) >= ESTIMATE
    assert all(ESTIMATE | {"stratum", "weight"} <= set(s) for s in score["strata"])
    assert {"flip_rate", "test_retest", "noise_floor"} <= set(score["reliability"])
    assert set(score["pass_at_k"]) == {"1", "2"}

    compare = json_out(
        project.invoke(
            "compare",
            base["run_id"],
            cand["run_id"],
            "--gate",
            "noninferior",
            "--margin",
            "0.05",
            "--json",
        )
    )
    assert {
        "baseline",
        "candidate",
        "diff",
        "se",
        "ci",
        "p_value",
        "n_items",
        "verdict",
        "mde",
        "strata",
        "gate",
    } <= set(compare)
    assert compare["verdict"] in {"candidate_better", "baseline_better", "no_detectable_difference"}
    assert {"kind", "margin", "passed"} <= set(compare["gate"])
    assert compare["common_items"] == {"cross_version": False}  # runs of one version
    assert all({"stratum", "p_holm"} <= set(s) for s in compare["strata"])

    runs = json_out(project.invoke("runs", "--json"))
    assert all(
        {"run_id", "suite", "version", "split", "model", "valid", "started_at", "audit"} <= set(r)
        for r in runs
    )

    csv = tmp_path / "r.csv"
    csv.write_text("model,item_id,epoch,score\nm,a,1,1\n")
    ingest = json_out(project.invoke("ingest", str(csv), "--format", "csv", "--json"))
    assert all({"run_id", "model", "n_items", "epochs"} <= set(r) for r in ingest["runs"])

    doc = tmp_path / "doc.jsonl"
    doc.write_text(json.dumps({"text": "nothing to see here"}) + "\n")
    guard = json_out(project.invoke("guard", str(doc), "--json"))
    assert {"documents_scanned", "bytes_scanned", "seconds", "contaminated"} <= set(guard)
    assert guard["headline"].startswith("clean: screened 1 documents")  # the view's sentence

    outcomes = tmp_path / "o.csv"
    outcomes.write_text("model,metric,value\nfakeagent/x,succ,0.5\n")
    assert project.invoke("validity", "import", str(outcomes)).exit_code == 0
    scores = tmp_path / "s.csv"
    scores.write_text("model,benchmark,score\nfakeagent/x,b,0.5\n")
    validity = json_out(
        project.invoke("validity", "report", "--metric", "succ", "--scores", str(scores), "--json")
    )
    assert {"metric", "n_models", "predictors", "headline", "caveats"} <= set(validity)
    assert {
        "name",
        "n",
        "spearman",
        "spearman_ci",
        "kendall",
        "kendall_ci",
        "pearson",
        "pearson_ci",
        "disattenuated",
        "deming_slope",
        "deming_slope_ci",
        "loo_error",
    } <= set(validity["predictors"][0])
