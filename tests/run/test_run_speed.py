"""The run path's per-attempt costs (docs/design/run-speed.md): what inspect writes per sample.

Speed itself is measured in benchmarks/bench_run_overhead.py; these tests pin the behaviour
that makes it: a dev run's JSON log is not rewritten whole every few samples, a holdout run's
in-memory log keeps no samples, and a failed store write in the hook is still recorded.
"""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import EvalLog
from inspect_ai.log._recorders.json import JSONRecorder

import evalsuite.run._runner as runner
from evalsuite._core.layout import Layout
from evalsuite.store import Store, default_store_url
from tests.helpers import Project, count_calls, json_out


def _run(project: Project, *args: str) -> dict[str, Any]:
    result = project.invoke(
        "run", "probe@1.0.0", "--model", "fakeagent/x", "--json", "--no-progress", *args
    )
    assert result.exit_code == 0, result.stderr
    return json_out(result)


def test_a_dev_runs_json_log_is_written_whole_once_not_every_few_samples(
    probe_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes = count_calls(monkeypatch, JSONRecorder, "flush")
    out = _run(probe_project, "--epochs", "2", "--limit", "10")  # 10 items x 2 = 20 samples
    # inspect's default buffer for a local JSON log is 10 samples: after the header, the
    # whole file is rewritten at the 10th sample (with inspect's default buffer this run
    # makes 1 intermediate rewrite; 40 samples made 3); the run writes only the header
    # before the eval ends (then the whole log, once)
    assert len(writes) == 1, f"{len(writes) - 1} intermediate rewrites of the JSON log"
    logs = list((Layout(probe_project.root).state / "logs" / out["run_id"]).glob("*.json"))
    assert len(logs) == 1
    log = json.loads(logs[0].read_text(encoding="utf-8"))
    assert len(log["samples"]) == 20  # every sample is still in the user's log


def test_a_holdout_runs_in_memory_log_keeps_no_samples(
    probe_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    returned: list[EvalLog] = []
    execute = runner._execute

    def spying_execute(*args: Any, **kwargs: Any) -> list[EvalLog]:
        logs = execute(*args, **kwargs)
        returned.extend(logs)
        return logs

    monkeypatch.setattr(runner, "_execute", spying_execute)
    out = _run(probe_project, "--split", "holdout", "--epochs", "2", "--limit", "5")
    assert returned and all(log.status == "success" for log in returned)
    # nothing reads it, so no sample is condensed into it; the store has every attempt
    assert all(not log.samples for log in returned)
    frame = Store(default_store_url(Layout(probe_project.root).state)).attempts(out["run_id"])
    assert len(frame) == 5 * 2
    assert set(frame["outcome"]) == {"scored"}


def test_a_failed_store_write_in_the_hook_is_recorded_after_the_eval(
    probe_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    record_attempts = Store.record_attempts
    failures: list[str] = []

    def flaky(self: Store, run_id: str, records: Any) -> int:
        if len(records) == 1 and len(failures) < 3:  # the hook writes one sample at a time
            failures.append(records[0].item_id)
            raise OSError("disk hiccup")
        return record_attempts(self, run_id, records)

    monkeypatch.setattr(Store, "record_attempts", flaky)
    out = _run(probe_project, "--split", "holdout", "--epochs", "2", "--limit", "5")
    assert len(failures) == 3
    frame = Store(default_store_url(Layout(probe_project.root).state)).attempts(out["run_id"])
    assert len(frame) == 10
    # the three samples were recorded with their real outcome, not as "never ran"
    assert set(frame["outcome"]) == {"scored"}
    assert out["harness"]["harness_errors"] == 0


def test_a_dev_run_with_a_log_dir_logs_the_samples_it_ran(
    tmp_path: Path, probe_project: Project
) -> None:
    _run(probe_project, "--log-dir", str(tmp_path / "logs"), "--limit", "3")
    logs = list((tmp_path / "logs").glob("*.json"))
    assert len(logs) == 1
    log = json.loads(logs[0].read_text(encoding="utf-8"))
    assert log["eval"]["config"]["log_buffer"] == 4  # more than the run: never fills
    assert len(log["samples"]) == 3


def test_runs_in_one_process_scan_the_installed_distributions_once(
    probe_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    from inspect_ai._util import package

    scans: list[int] = []
    scan = importlib.metadata.packages_distributions

    def counting_scan() -> Any:
        scans.append(1)
        return scan()

    monkeypatch.setattr(package, "packages_distributions", counting_scan)
    first = _run(probe_project, "--limit", "2")
    second = _run(probe_project, "--limit", "2", "--split", "holdout")
    assert first["valid"] and second["valid"]
    # inspect scans every installed distribution's files for each eval() of a suite's task
    # file; the runner keeps the first scan
    assert len(scans) == 1


def test_package_versions_are_read_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    from evalsuite.run import _provenance

    calls = count_calls(monkeypatch, _provenance, "version")
    _provenance._versions_once.cache_clear()
    try:
        first = _provenance.package_versions()
        first["numpy"] = "changed by a caller"  # a copy: the next run is not affected
        second = _provenance.package_versions()
    finally:
        _provenance._versions_once.cache_clear()
    assert second["inspect-ai"] == importlib.metadata.version("inspect-ai")
    assert second["numpy"] == importlib.metadata.version("numpy")
    assert second["python"]
    # every run stores them in its provenance; the metadata is searched for the first only
    assert sorted(name for (name,) in calls) == sorted(_provenance._PACKAGES)


def test_guarded_tool_calls_bind_no_store_model_per_call(
    probe_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalsuite.run._episode import EpisodeState

    built = count_calls(monkeypatch, EpisodeState, "model_post_init")
    out = _run(probe_project, "--limit", "4")
    frame = Store(default_store_url(Layout(probe_project.root).state)).attempts(out["run_id"])
    assert len(frame) == 4 and set(frame["outcome"]) == {"scored"}
    # episode_setup binds the episode's state once per sample; each guarded tool call used to
    # bind it again and re-validate it at every field it set (several per call)
    assert len(built) == 4
