"""Issue 3 acceptance on the shipped `support` suite, through the real runner on the holdout.

Run on support@2.0.0 (verifier version 2, issue 13), the demo's version until support@3.0.0."""

from __future__ import annotations

import json

import pandas as pd
import pytest

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


def _hackers_checks(project: Project, run: dict) -> None:
    """The hacker closes tickets without fixing them: a status-only check would rate it
    highly on the very same attempts; the verifier's sub-checks are stored for every attempt,
    without free text on holdout."""
    store = Store(default_store_url(Layout(project.root).state))
    hacker = store.attempts(run["run_id"])
    closed = hacker["checks"].map(lambda c: bool(json.loads(c)["ticket_closed"]))
    assert closed.mean() > 0.90
    checks = pd.json_normalize(hacker["checks"].map(json.loads).tolist())
    assert {"problem_fixed", "ticket_closed"} <= set(checks.columns)
    assert all(
        checks[c].map(lambda v: isinstance(v, bool | int | float)).all() for c in checks.columns
    )


def _looks(project: Project) -> int:
    status = json_out(project.invoke("holdout", "status", "support@2.0.0", "--json"))
    return sum(f["runs"] for f in status["families"])


def test_the_hacker_on_the_support_holdout_closes_tickets_and_scores_nothing(
    project_copy: Project,
) -> None:
    """The fast part of the acceptance run below: one 96-episode holdout run, the hacker's."""
    run = _holdout(project_copy, "hacker")
    assert run["valid"] and run["harness"]["planned"] == 96
    assert run["mean"] < 0.05, run["mean"]
    # support@2.0.0 passed its audit at freeze and fails today's (issue 29, its later audit):
    # every run of it is marked
    assert run["audit"]["status"] == "failed" and run["audit"]["marker"] == "GRADER AUDIT FAILED"
    _hackers_checks(project_copy, run)
    # the holdout run was ledgered in the copy, not in the repository
    assert _looks(project_copy) == 1


@pytest.mark.slow  # three 96-episode runs; in make test: the hacker's run above, the ranking
# through inspect on dev items (tests/agents/test_reference_agents.py) and the comparison's
# verdicts (tests/analyse/test_compare.py)
def test_reference_agents_on_the_support_holdout(project_copy: Project) -> None:
    runs = {agent: _holdout(project_copy, agent) for agent in ("baseline", "improved", "hacker")}
    means = {agent: out["mean"] for agent, out in runs.items()}
    assert all(out["valid"] for out in runs.values())
    assert all(out["harness"]["planned"] == 96 for out in runs.values())
    assert means["improved"] >= means["baseline"] + 0.10, means
    assert means["hacker"] < 0.05, means
    # support@2.0.0 fails today's grader audit (issue 29): every run of it is marked
    assert all(out["audit"]["status"] == "failed" for out in runs.values())
    _hackers_checks(project_copy, runs["hacker"])
    # every holdout run was ledgered in the copy, none in the repository
    assert _looks(project_copy) == 3
    # and the comparison the demo ends with agrees
    compare = json_out(
        project_copy.invoke(
            "compare", runs["baseline"]["run_id"], runs["improved"]["run_id"], "--json"
        )
    )
    assert compare["verdict"] == "candidate_better"
    assert compare["n_items"] == 96
