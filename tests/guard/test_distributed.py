"""Sharded screening (`evalsuite guard --executor ray`): the same findings as one local screen.

The shard plan and `screen_shard` are checked without Ray (fast); then the command runs on a
real local Ray cluster (two CPUs, small object store) and its ``--json`` is compared with the
local one. The 1 GB acceptance is behind the `slow` marker (`make slow`).
"""

from __future__ import annotations

import gzip
import importlib
import itertools
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from evalsuite._core.layout import Layout
from evalsuite.cli._common import make_context
from evalsuite.cli._guard_cmd import guard_cmd
from evalsuite.errors import UsageError
from evalsuite.guard import GuardOptions, RayOptions, find_sources, load_index, screen_sources
from evalsuite.guard._distributed import (
    count_lines,
    line_cuts,
    plan_shards,
    screen_on_ray,
    screen_shard,
)
from tests.guard.conftest import CANARY, Frozen
from tests.guard.corpus import documents
from tests.helpers import write_jsonl


def run_guard(root: Path, *args: str) -> Result:
    return CliRunner().invoke(guard_cmd, list(args), obj=make_context(root), catch_exceptions=False)


@pytest.fixture(scope="module")
def curriculum(frozen: Frozen, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """JSONL (with blank lines, lists of messages, long records), gzip and text, with copies
    of holdout and dev items and a canary planted at seeded places."""
    rng = random.Random(35)
    out = tmp_path_factory.mktemp("sharded")
    docs = documents(frozen.clean, 600, rng=rng)
    items = sorted(frozen.texts.items())
    for at in rng.sample(range(len(docs)), 30):
        _, text = rng.choice(items)
        docs[at] = docs[at] + "\n\n" + (text.upper() if rng.random() < 0.5 else text)
    docs[17] += f" {CANARY} "
    docs[400] = "\n\n".join([*docs[400:420], items[3][1]])  # longer than a piece
    records: list[Any] = [{"text": d, "k": k} for k, d in enumerate(docs[:300])]
    records[5] = {"text": [{"role": "user", "content": docs[5]}]}
    lines = [json.dumps(r) for r in records]
    lines[40:40] = ["", "   "]  # blank lines: the careful path, numbers kept
    (out / "a.jsonl").write_text("\n".join(lines), encoding="utf-8")  # no final newline
    write_jsonl(out / "b.jsonl", [{"text": d} for d in docs[300:500]])
    with gzip.open(out / "c.jsonl.gz", "wt", encoding="utf-8") as handle:
        handle.writelines(json.dumps({"text": d}) + "\n" for d in docs[500:560])
    (out / "d.txt").write_text("\n\n".join(docs[560:]), encoding="utf-8")
    return out


def _local(frozen: Frozen, path: Path, options: GuardOptions) -> Any:
    index = load_index(Layout(frozen.root))
    sources, skipped = find_sources([path])
    return index, sources, screen_sources(sources, index, options=options, skipped=skipped)


@pytest.mark.parametrize("shard_bytes", [1, 3000, 50_000])
def test_shards_screened_apart_find_what_one_screen_finds(
    frozen: Frozen, curriculum: Path, shard_bytes: int
) -> None:
    options = GuardOptions(batch_bytes=1 << 14)
    index, sources, local = _local(frozen, curriculum, options)
    assert len({h.document for h in local.hits}) >= 25
    shards = plan_shards(sources, shard_bytes)
    assert len(shards) > len(sources) or shard_bytes > 10_000
    results = [screen_shard(s, index, options) for s in shards]
    assert [h for r in results for h in r.hits] == local.hits  # same hits, same order
    assert sum(r.documents for r in results) == local.documents_scanned
    assert sum(r.bytes for r in results) == local.bytes_scanned


def _random_file(path: Path, rng: random.Random) -> bytes:
    lines = [b"x" * rng.choice([0, 1, 5, 80, 400]) for _ in range(rng.randint(0, 40))]
    data = b"\n".join(lines) + (b"\n" if rng.random() < 0.5 else b"")
    path.write_bytes(data)
    return data


def test_cuts_fall_on_line_starts_and_line_numbers_add_up(tmp_path: Path) -> None:
    rng = random.Random(1)
    for trial in range(200):
        path = tmp_path / f"f{trial}.jsonl"
        data = _random_file(path, rng)
        cuts = line_cuts(path, len(data), rng.choice([1, 7, 64, 500]))
        assert cuts[0] == 0 and cuts[-1] == len(data) and cuts == sorted(set(cuts))
        assert all(data[c - 1 : c] == b"\n" for c in cuts[1:-1])
        assert sum(count_lines(path, a, b) for a, b in itertools.pairwise(cuts)) == data.count(
            b"\n"
        )


def test_a_bad_record_is_named_by_its_line_in_the_whole_file(
    frozen: Frozen, tmp_path: Path
) -> None:
    lines = [json.dumps({"text": f"record number {k} " * 20}) for k in range(200)]
    lines[150] = '{"text": broken'
    (tmp_path / "bad.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    index = load_index(Layout(frozen.root))
    sources, _ = find_sources([tmp_path / "bad.jsonl"])
    with pytest.raises(UsageError) as local:
        screen_sources(sources, index, options=GuardOptions())
    assert "bad.jsonl:151: not valid JSON" in str(local.value)
    shards = plan_shards(sources, 2000)
    with pytest.raises(UsageError) as sharded:  # noqa: PT012 - the shard holding line 151
        for shard in shards:
            screen_shard(shard, index, GuardOptions())
    assert str(sharded.value) == str(local.value)


def test_address_and_workers_need_the_ray_executor(frozen: Frozen, curriculum: Path) -> None:
    result = run_guard(frozen.root, str(curriculum / "b.jsonl"), "--workers", "2")
    assert result.exit_code == 2
    assert "--workers applies to a screen on Ray; add --executor ray" in result.output


def test_missing_ray_is_a_clear_error(
    frozen: Frozen, curriculum: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.import_module

    def no_ray(name: str, *args: Any) -> Any:
        if name == "ray":
            raise ImportError("No module named 'ray'")
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", no_ray)
    result = run_guard(frozen.root, str(curriculum / "b.jsonl"), "--executor", "ray", "--json")
    assert result.exit_code == 2
    assert "pip install 'evalsuite[ray]'" in json.loads(result.stdout)["message"]


def test_an_unreachable_cluster_is_a_clear_error(frozen: Frozen, curriculum: Path) -> None:
    args = ("--executor", "ray", "--address", "127.0.0.1:9", "--json")
    result = run_guard(frozen.root, str(curriculum / "b.jsonl"), *args)
    assert result.exit_code == 2
    message = json.loads(result.stdout)["message"]
    assert message.startswith("cannot reach a Ray cluster at 127.0.0.1:9")
    assert "ray start --head" in message
    bad = run_guard(frozen.root, str(curriculum), "--executor", "ray", "--address", "nowhere")
    assert bad.exit_code == 2 and "expected HOST:PORT" in bad.output


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    """A real local Ray cluster: two CPUs, a 100 MB object store, no dashboard."""
    ray = pytest.importorskip("ray")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAY_USAGE_STATS_ENABLED", "0")
        ray.init(
            address="local",
            num_cpus=2,
            include_dashboard=False,
            object_store_memory=100 << 20,
            logging_level="ERROR",
            log_to_driver=False,
        )
        try:
            yield ray
        finally:
            ray.shutdown()


def _without_seconds(stdout: str) -> dict[str, Any]:
    """The ``--json`` payload without what depends on the clock (seconds, MB/s)."""
    payload: dict[str, Any] = json.loads(stdout)
    payload.pop("seconds")
    payload["headline"] = payload["headline"].split(" in ")[0]
    return payload


def test_ray_screen_equals_the_local_screen(
    frozen: Frozen, curriculum: Path, ray_cluster: Any
) -> None:
    local = run_guard(frozen.root, str(curriculum), "--json", "--batch-bytes", "16384")
    assert local.exit_code == 4, local.output
    on_ray = run_guard(
        frozen.root,
        str(curriculum),
        "--json",
        "--batch-bytes",
        "16384",
        "--executor",
        "ray",
        "--workers",
        "2",
    )
    assert on_ray.exit_code == 4, on_ray.output
    assert _without_seconds(on_ray.stdout) == _without_seconds(local.stdout)


def test_small_shards_on_ray_give_the_local_report(
    frozen: Frozen, curriculum: Path, ray_cluster: Any
) -> None:
    """Many shards per worker (4 KiB each), still the local hits in the local order."""
    index, sources, report = _local(frozen, curriculum, GuardOptions())
    sharded = screen_on_ray(
        sources, index, options=GuardOptions(), ray_options=RayOptions(workers=2, shard_bytes=4096)
    )
    assert sharded.hits == report.hits
    assert (sharded.documents_scanned, sharded.bytes_scanned) == (
        report.documents_scanned,
        report.bytes_scanned,
    )


def test_more_workers_than_the_cluster_has_cpus_is_refused(
    frozen: Frozen, curriculum: Path, ray_cluster: Any
) -> None:
    args = ("--executor", "ray", "--workers", "3", "--json")
    result = run_guard(frozen.root, str(curriculum / "b.jsonl"), *args)
    assert result.exit_code == 2
    assert "the Ray cluster has 2 CPU(s)" in json.loads(result.stdout)["message"]


def test_a_bad_record_on_a_worker_fails_as_locally(
    frozen: Frozen, tmp_path: Path, ray_cluster: Any
) -> None:
    lines = [json.dumps({"text": f"record number {k} " * 20}) for k in range(200)]
    lines[150] = '{"text": broken'
    (tmp_path / "bad.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    local = run_guard(frozen.root, str(tmp_path), "--json")
    on_ray = run_guard(frozen.root, str(tmp_path), "--json", "--executor", "ray", "--workers", "2")
    assert local.exit_code == on_ray.exit_code == 2
    assert json.loads(on_ray.stdout) == json.loads(local.stdout)


def _gigabyte(frozen: Frozen, out: Path, *, size: int, files: int) -> set[str]:
    """JSONL files totalling `size` bytes of clean documents, with copies of frozen items
    (plain, upper case, with Cyrillic lookalikes) planted at seeded places; the documents
    planted (``path:line``)."""
    rng = random.Random(20261206)
    pool = [json.dumps({"text": d}) + "\n" for d in documents(frozen.clean, 3000, rng=rng)]
    items = sorted(frozen.texts.values())
    lookalikes = str.maketrans("aeopcxy", "аеорсху")
    planted: set[str] = set()
    per_file = size // files
    for k in range(files):
        path = out / f"part-{k:02d}.jsonl"
        written, line = 0, 0
        with path.open("w", encoding="utf-8") as handle:
            while written < per_file:
                block = rng.choices(pool, k=2000)
                for at in rng.sample(range(len(block)), 3):
                    text = rng.choice(items)
                    text = rng.choice([text, text.upper(), text.translate(lookalikes)])
                    doc = json.loads(block[at])["text"] + "\n\n" + text
                    block[at] = json.dumps({"text": doc}) + "\n"
                    planted.add(f"{path}:{line + at + 1}")
                chunk = "".join(block)
                handle.write(chunk)
                written += len(chunk)
                line += len(block)
    return planted


@pytest.mark.slow
def test_a_gigabyte_on_ray_gives_the_local_findings(
    frozen: Frozen, tmp_path: Path, ray_cluster: Any
) -> None:
    """Issue 35's acceptance: ``guard --executor ray`` on 1 GB equals the local guard."""
    planted = _gigabyte(frozen, tmp_path, size=1_000_000_000, files=4)
    index, sources, local = _local(frozen, tmp_path, GuardOptions())
    assert local.bytes_scanned >= 950_000_000
    assert planted <= {h.document for h in local.hits}  # (and a stock docstring phrase or two)
    on_ray = screen_on_ray(
        sources, index, options=GuardOptions(), ray_options=RayOptions(workers=2)
    )
    assert on_ray.hits == local.hits
    assert on_ray.documents_scanned == local.documents_scanned
    assert on_ray.bytes_scanned == local.bytes_scanned


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.slow
def test_the_command_screens_on_a_cluster_started_apart(frozen: Frozen, curriculum: Path) -> None:
    """`ray start --head` in its own process group (stopped by its id), then `evalsuite guard
    --executor ray --address 127.0.0.1:PORT` in another process: the local `--json`."""
    port = _free_port()
    env = {
        **os.environ,
        "RAY_USAGE_STATS_ENABLED": "0",
        # no token from the shared ~/.ray: this throwaway cluster listens on 127.0.0.1 only
        "RAY_AUTH_MODE": "disabled",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }
    env.pop("RAY_ADDRESS", None)
    ray_cli = Path(sys.executable).with_name("ray")
    # its own temp dir (short, for Ray's socket paths): the address file that `ray start`
    # leaves there must not send other processes' `ray.init()` to this cluster
    temp = tempfile.mkdtemp(prefix="es-ray-", dir="/tmp")
    head = subprocess.Popen(
        [
            ray_cli,
            "start",
            "--head",
            "--block",
            f"--port={port}",
            "--node-ip-address=127.0.0.1",
            "--num-cpus=2",
            "--include-dashboard=false",
            "--disable-usage-stats",
            f"--temp-dir={temp}",
        ],
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert head.poll() is None and time.monotonic() < deadline, "ray did not start"
                time.sleep(1)
        command = [sys.executable, "-c", "from evalsuite.cli import main; main()"]
        command += ["--root", str(frozen.root), "guard", str(curriculum), "--json"]
        remote = [*command, "--executor", "ray", "--address", f"127.0.0.1:{port}"]
        done = subprocess.run(remote, env=env, capture_output=True, text=True, timeout=600)
    finally:
        os.killpg(head.pid, signal.SIGTERM)
        head.wait(timeout=60)
        shutil.rmtree(temp, ignore_errors=True)
    local = run_guard(frozen.root, str(curriculum), "--json")
    assert done.returncode == local.exit_code == 4, done.stderr
    assert _without_seconds(done.stdout) == _without_seconds(local.stdout)
