"""Issue 3 acceptance on the shipped `support` suite, through the real runner on the holdout.

Run on support@2.0.0 (verifier version 2, issue 13), the version the demo uses."""

from __future__ import annotations

import json

import pandas as pd

from evalsuite._core.layout import Layout
from evalsuite.store import Store, default_store_url
from tests.helpers import Project, json_out


def _holdout(project: Project, agent: str) -> dict:
    result = project.invoke(
        "run",
        "support@2.0.0",
        "--split",
        "holdout",
        "--model",
        f"evalsuite/{agent}",
        "--seed",
        "1",
        "--no-progress",
        "--json",
        "--purpose",
        "acceptance test",
    )
    assert result.exit_code == 0, result.stderr
    return json_out(result)


def test_reference_agents_on_the_support_holdout(project_copy: Project) -> None:
    runs = {agent: _holdout(project_copy, agent) for agent in ("baseline", "improved", "hacker")}
    means = {agent: out["mean"] for agent, out in runs.items()}
    assert all(out["valid"] for out in runs.values())
    assert all(out["harness"]["planned"] == 96 for out in runs.values())
    assert means["improved"] >= means["baseline"] + 0.10, means
    assert means["hacker"] < 0.05, means
    # the suite version passed its grader audit: no run of it is marked
    assert all(out["audit"]["status"] == "passed" for out in runs.values())
    # a status-only check on the very same attempts would rate the hacker highly
    store = Store(default_store_url(Layout(project_copy.root).state))
    hacker = store.attempts(runs["hacker"]["run_id"])
    closed = hacker["checks"].map(lambda c: bool(json.loads(c)["ticket_closed"]))
    assert closed.mean() > 0.90
    # the verifier's sub-checks are stored for every attempt, without free text on holdout
    checks = pd.json_normalize(hacker["checks"].map(json.loads).tolist())
    assert {"problem_fixed", "ticket_closed"} <= set(checks.columns)
    assert all(
        checks[c].map(lambda v: isinstance(v, bool | int | float)).all() for c in checks.columns
    )
    # every holdout run was ledgered in the copy, none in the repository
    status = json_out(project_copy.invoke("holdout", "status", "support@2.0.0", "--json"))
    assert sum(f["runs"] for f in status["families"]) == 3
    # and the comparison the demo ends with agrees
    compare = json_out(
        project_copy.invoke(
            "compare", runs["baseline"]["run_id"], runs["improved"]["run_id"], "--json"
        )
    )
    assert compare["verdict"] == "candidate_better"
    assert compare["n_items"] == 96
