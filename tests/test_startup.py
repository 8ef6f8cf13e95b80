"""The command line starts at once: `--help` imports no command module and nothing heavy;
`runs`, `suites` and `verify` import none of the analysis, database or harness libraries
(docs/scale.md, "Start-up"); a run imports no statistics or plotting library, and a full
`verify` no frames or database (docs/design/run-speed.md, "Cold first run"). A regression
that imports one of them again fails here; the CPU seconds are measured by
benchmarks/bench_store_scale.py and benchmarks/bench_cold_run.py, not by tests."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from evalsuite.cli import COMMANDS, cli
from tests.entry_points import PRELUDE
from tests.run.conftest import make_probe_project

HEAVY = (
    "pandas",
    "numpy",
    "scipy",
    "statsmodels",
    "matplotlib",
    "sqlalchemy",
    "inspect_ai",
    "datasets",
    "pyarrow",
    "cryptography",
    "rich",
)

_PROBE = """
import json, sys
from evalsuite.cli import main
sys.argv = ["evalsuite", *json.loads(sys.argv[1])]
try:
    main()
except SystemExit:
    pass
print("\\n@@MODULES@@" + json.dumps(sorted(sys.modules)))
"""


def _modules_after(*argv: str, env: dict[str, str] | None = None) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(list(argv))],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **(env or {})},
    ).stdout
    return set(json.loads(out.split("@@MODULES@@", 1)[1]))


def _top(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def test_help_imports_no_command_module_and_nothing_heavy() -> None:
    modules = _modules_after("--help")
    # the path parameter type of `--root` (click only) is the one cli module --help needs
    shared = {"evalsuite.cli._paths"}
    assert {m for m in modules if m.startswith("evalsuite.cli.")} - shared == set()
    assert _top(modules) & set(HEAVY) == set()


def test_a_commands_help_imports_only_that_commands_module() -> None:
    modules = _modules_after("runs", "--help")
    assert "evalsuite.cli._run_cmds" in modules
    assert "evalsuite.cli._analyse_cmds" not in modules
    assert "evalsuite.cli._report_cmd" not in modules


def test_every_entry_resolves_to_the_command_of_that_name() -> None:
    ctx = click.Context(cli)
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert isinstance(command, click.Command)
        assert command.name == name
    assert cli.get_command(ctx, "no-such-command") is None


def test_an_unknown_command_is_a_usage_error() -> None:
    result = subprocess.run(
        [sys.executable, "-c", "from evalsuite.cli import main; main()", "frobnicate"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert "No such command 'frobnicate'" in result.stderr


# Not imported by `runs`, `suites` and `verify` (`runs` and `suites` print with rich; `verify`
# of unchanged suite versions imports no rich, pydantic or cryptography either, see below).
NOT_AT_START = (
    "pandas",
    "numpy",
    "scipy",
    "statsmodels",
    "matplotlib",
    "sqlalchemy",
    "inspect_ai",
    "datasets",
    "pyarrow",
    "jinja2",
    "psycopg",
)
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the shipped suites (arith, support) with a store of runs: one ingested run
    attached to arith@2.0.0 (with a harness error) and one free-standing ingested run."""
    root = tmp_path_factory.mktemp("startup") / "project"
    for part in ("tasks", "manifests", "holdout"):
        shutil.copytree(ROOT / part, root / part, ignore=shutil.ignore_patterns("__pycache__"))
    manifest = json.loads((root / "manifests/arith/2.0.0.json").read_text(encoding="utf-8"))
    dev = [i["id"] for i in manifest["items"] if i["split"] == "dev"]
    rows = ["model,item_id,epoch,score,outcome"]
    rows += [f"acme/a,{item},1,1.0,scored" for item in dev[1:]]
    rows.append(f"acme/a,{dev[0]},1,,harness_error")
    (root / "suite.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (root / "free.csv").write_text("model,item_id,epoch,score\nacme/b,q1,1,0.5\n")
    runner = CliRunner()
    for args in (
        ("ingest", str(root / "suite.csv"), "--format", "csv", "--suite", "arith@2.0.0"),
        ("ingest", str(root / "free.csv"), "--format", "csv"),
        ("verify",),  # records that the shipped families' tools agree with their manifests
    ):
        result = runner.invoke(cli, ["--root", str(root), *args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
    return root


@pytest.mark.parametrize(
    "argv",
    [("runs",), ("runs", "--json"), ("runs", "--all"), ("suites",), ("verify",)],
    ids=" ".join,
)
def test_runs_suites_and_verify_import_no_heavy_library(shipped: Path, argv: tuple[str]) -> None:
    modules = _modules_after("--root", str(shipped), *argv)
    assert _top(modules) & set(NOT_AT_START) == set()
    assert "cryptography" not in _top(modules)
    # manifests and suite files are summarised without the models (docs/design/startup.md)
    assert "pydantic" not in _top(modules)


def test_verify_of_unchanged_versions_imports_no_models_vault_or_rich(shipped: Path) -> None:
    """The fixture's first `verify` checked everything in full and recorded it; this one
    finds the same content and re-reads no item: no pydantic (the item models), no
    cryptography (the vault), no rich (verify prints with click), in text and JSON."""
    for argv in (("verify",), ("verify", "--json"), ("verify", "arith@2.0.0")):
        modules = _modules_after("--root", str(shipped), *argv)
        assert _top(modules) & {"pydantic", "cryptography", "rich"} == set(), argv
        assert "evalsuite.manifest._items" not in modules
        assert "evalsuite.manifest._vault" in modules  # the key's id is part of the record


def test_verify_checks_a_changed_version_in_full_and_names_the_drift(
    shipped: Path, tmp_path: Path
) -> None:
    """The same project with one dev item changed: the full check runs (models, vault), and
    the exit code and message name the drift."""
    project = tmp_path / "project"
    shutil.copytree(shipped, project)
    source = project / "tasks" / "arith" / "items.jsonl"  # the dev items of arith@2.0.0
    lines = source.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[0])
    record["target"] = str(record.get("target", "")) + " (edited)"
    lines[0] = json.dumps(record)
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    main = "from evalsuite.cli import main; main()"
    result = subprocess.run(
        [sys.executable, "-c", main, "--root", str(project), "verify", "--json"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 3, result.stderr
    suites = json.loads(result.stdout)["suites"]
    changed = [s for s in suites if s["items"]]
    assert len(changed) == 1 and changed[0]["recorded"] is False
    assert [p["item_id"] for p in changed[0]["items"]] == [record["id"]]
    # a file under tasks/ changed: every suite is checked in full (any may read it)
    assert not any(s["recorded"] for s in suites)
    assert "verification failed for " + f"{changed[0]['suite']}@{changed[0]['version']}" in (
        result.stderr
    )


def test_ingesting_a_table_imports_no_inspect(tmp_path: Path) -> None:
    """A CSV or Parquet table needs none of inspect-ai (seconds of CPU): only logs do."""
    table = tmp_path / "results.csv"
    table.write_text("model,item_id,epoch,score\nacme/a,q1,1,0.5\n", encoding="utf-8")
    root = tmp_path / "project"
    root.mkdir()
    modules = _modules_after("--root", str(root), "ingest", str(table), "--format", "csv")
    assert "evalsuite.run._ingest" in modules
    assert "inspect_ai" not in _top(modules)
    assert _top(modules) & set(STATISTICS) == set()


def test_the_runs_the_fast_path_lists_are_those_store_lists(shipped: Path) -> None:
    from evalsuite.store import RunReader, Store, default_store_url

    url = default_store_url(shipped / ".evalsuite")
    reader = RunReader(url)
    stored = Store(url)
    assert reader.runs() == stored.list_runs() and len(reader.runs()) == 2
    assert reader.runs(newest=1) == stored.list_runs(newest=1) == stored.list_runs()[-1:]
    assert reader.runs(suite="arith") == stored.list_runs(suite="arith")
    assert reader.count() == stored.count_runs() == 2
    # what `verify` cross-checks the ledger with: the identity of every run, in order
    assert [
        (k.run_id, k.suite, k.version, k.split, k.source, k.manifest_hash)
        for k in reader.run_keys()
    ] == [
        (r.run_id, r.suite, r.version, r.split, r.source, r.manifest_hash)
        for r in stored.list_runs()
    ]
    assert reader.count(suite="arith") == stored.count_runs(suite="arith") == 1
    ids = [r.run_id for r in stored.list_runs()]
    assert reader.top_error_reasons(ids) == stored.top_error_reasons(ids) != {}
    assert reader.fast


STATISTICS = ("scipy", "statsmodels", "matplotlib")
"""Not imported by a run, `ingest` or `verify`: only the analysis commands (and an adaptive run,
whose rule needs scipy.stats) use them."""

_RUN = (
    "import json, sys; sys.path.insert(0, {repo!r}); " + PRELUDE + "import tests.run.fake_models\n"
    "from evalsuite.cli import main\n"
    "sys.argv = ['evalsuite', *sys.argv[1:]]\n"
    "try:\n    main()\nexcept SystemExit:\n    pass\n"
    "print('\\n@@MODULES@@' + json.dumps(sorted(sys.modules)))"
)


def test_a_plain_dev_run_imports_no_statistics_and_no_agent_policies(tmp_path: Path) -> None:
    """A run of the probe project in a fresh process, with inspect's entry points loaded as
    they are for any run: no scipy (the adaptive rule's module, imported only with
    --adaptive), statsmodels or matplotlib, and none of the reference agents' policies
    (the `evalsuite` entry point is loaded for every model; the policies only for its
    agents)."""
    project = make_probe_project(tmp_path)
    argv = ["--root", str(project.root), "run", "probe@1.0.0", "--model", "fakeagent/x"]
    out = subprocess.run(
        [sys.executable, "-c", _RUN.format(repo=str(ROOT)), *argv, "--limit", "2", "--json"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "EVALSUITE_KEY_DIR": str(project.key_dir)},
    ).stdout
    result, listed = out.split("@@MODULES@@", 1)
    assert json.loads(result)["harness"]["scored"] == 2  # the run ran
    modules = set(json.loads(listed))
    assert {"inspect_ai", "pandas", "sqlalchemy"} <= _top(modules)  # what a run does need
    assert _top(modules) & set(STATISTICS) == set()
    assert "evalsuite.analyse._adaptive" not in modules
    assert "evalsuite.agents._registry" in modules  # the entry point, loaded
    assert "evalsuite.agents._provider" not in modules


def test_a_full_verify_imports_no_frames_and_no_database(tmp_path: Path) -> None:
    """The first `verify` of a project (nothing recorded: every item re-hashed, the family's
    tools loaded through inspect and compared with the manifest) needs inspect, not pandas,
    pyarrow or SQLAlchemy (it loads task functions from their own module, not the runner's)."""
    root = tmp_path / "project"
    for part in ("tasks", "manifests", "holdout"):
        shutil.copytree(ROOT / part, root / part, ignore=shutil.ignore_patterns("__pycache__"))
    modules = _modules_after("--root", str(root), "verify", "support@2.0.0")
    assert "evalsuite.manifest._items" in modules and "inspect_ai" in _top(modules)  # in full
    assert "evalsuite.run._tasks" in modules  # the family's task function was loaded
    assert _top(modules) & {"pandas", "numpy", "pyarrow", "sqlalchemy", *STATISTICS} == set()
