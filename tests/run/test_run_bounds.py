"""What bounds a run (issue 28): its planned attempts, the limits its episodes run under, and
limits an agent's own loop swallowed (docs/design/run-limits.md)."""

from __future__ import annotations

import time

import pytest

from evalsuite.run import _spec
from tests.helpers import Project, json_out
from tests.run.conftest import make_probe_project
from tests.run.processes import store_of


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """A frozen probe project shared by the refusals below (they store nothing)."""
    return make_probe_project(tmp_path_factory.mktemp("bounds"), n_per_stratum=2)


def test_a_billion_epochs_is_refused_at_once_naming_the_cap(probe: Project) -> None:
    start = time.perf_counter()
    result = probe.invoke(
        "run", "probe@1.0.0", "--model", "fakeagent/x", "--epochs", "1000000000", "--json",
    )  # fmt: skip
    elapsed = time.perf_counter() - start
    assert result.exit_code == 2, result.stderr
    assert "--epochs 1,000,000,000 is above the cap of 1,000 epochs per item" in result.stderr
    assert "ingest" in result.stderr  # why: the cap ingest applies too
    assert json_out(result)["error"] == "UsageError"
    assert elapsed < 5  # refused before anything is planned (it took 90 s and 1.35 GB)
    assert store_of(probe).list_runs() == []


def test_planned_attempts_above_the_cap_are_refused_before_planning(
    probe: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_spec, "MAX_PLANNED_ATTEMPTS", 10)  # 2 dev items x 6 epochs = 12
    result = probe.invoke("run", "probe@1.0.0", "--model", "fakeagent/x", "--epochs", "6")
    assert result.exit_code == 2, result.stderr
    assert "2 items x 6 epochs = 12 planned attempts, above the cap of 10" in result.stderr
    assert "--limit" in result.stderr
    assert store_of(probe).list_runs() == []


def test_epochs_at_the_cap_pass_the_check() -> None:
    _spec.check_plan_size(_spec.MAX_EPOCHS, 1)  # the cap itself is allowed
    with pytest.raises(Exception, match="above the cap"):
        _spec.check_plan_size(_spec.MAX_EPOCHS + 1)
