from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalsuite._core.layout import Layout
from evalsuite.manifest import KeySpec, load_holdout_items, load_manifest, resolve_key
from tests.helpers import Project, json_out, make_items, make_project, write_jsonl


def _freeze(project: Project, version: str = "1.0.0", *extra: str) -> dict:
    result = project.invoke("freeze", "demo", "--version", version, "--json", *extra)
    assert result.exit_code == 0, result.stderr
    return json_out(result)


def test_freeze_writes_manifest_vault_fingerprints_and_changelog(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    out = _freeze(project, "1.0.0", "--note", "first")
    root = project.root
    assert out["status"] == "frozen"
    assert out["n_dev"] + out["n_holdout"] == 12
    assert (root / "manifests/demo/1.0.0.json").is_file()
    assert (root / "manifests/demo/1.0.0.fingerprints.jsonl").is_file()
    assert (root / "holdout/demo/1.0.0.vault").is_file()
    changelog = (root / "manifests/demo/CHANGELOG.md").read_text()
    assert "**1.0.0**" in changelog and "first" in changelog
    manifest = json.loads((root / "manifests/demo/1.0.0.json").read_text())
    holdout = [i for i in manifest["items"] if i["split"] == "holdout"]
    assert set(holdout[0]) == {"id", "hash", "stratum", "split", "family", "cluster"}
    # the source now holds exactly the dev items
    dev_ids = {i["id"] for i in manifest["items"] if i["split"] == "dev"}
    assert {r["id"] for r in project.read_items()} == dev_ids


def test_same_content_gives_the_same_manifest_hash(tmp_path: Path) -> None:
    a = make_project(tmp_path / "a")
    b = make_project(tmp_path / "b")
    assert _freeze(a)["manifest_hash"] == _freeze(b)["manifest_hash"]
    assert (a.root / "holdout/demo/1.0.0.vault").read_bytes() == (
        b.root / "holdout/demo/1.0.0.vault"
    ).read_bytes()


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 10**6))
def test_shuffled_item_order_changes_neither_hash_nor_split(tmp_path: Path, seed: int) -> None:
    items = make_items()
    reference = make_project(tmp_path / f"ref{seed}", records=items)
    ref = _freeze(reference)
    shuffled = list(items)
    random.Random(seed).shuffle(shuffled)
    other = make_project(tmp_path / f"shuf{seed}", records=shuffled)
    out = _freeze(other)
    assert out["manifest_hash"] == ref["manifest_hash"]
    m1 = json.loads((reference.root / "manifests/demo/1.0.0.json").read_text())
    m2 = json.loads((other.root / "manifests/demo/1.0.0.json").read_text())
    assert m1["items"] == m2["items"]
    shutil.rmtree(tmp_path / f"ref{seed}")
    shutil.rmtree(tmp_path / f"shuf{seed}")


def test_holdout_share_per_stratum_is_within_one_item(tmp_path: Path) -> None:
    project = make_project(tmp_path, records=make_items(n_per_stratum=7, ops=("a", "b", "c")))
    out = _freeze(project)
    for counts in out["strata"].values():
        n = counts["dev"] + counts["holdout"]
        assert abs(counts["holdout"] - 0.5 * n) <= 1


def test_refreezing_identical_content_is_a_no_op(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    first = _freeze(project)
    manifest_bytes = (project.root / "manifests/demo/1.0.0.json").read_bytes()
    again = _freeze(project)
    assert again["status"] == "unchanged"
    assert again["manifest_hash"] == first["manifest_hash"]
    assert (project.root / "manifests/demo/1.0.0.json").read_bytes() == manifest_bytes
    assert (project.root / "manifests/demo/CHANGELOG.md").read_text().count("**1.0.0**") == 1


def test_refreezing_other_content_is_refused_with_exit_3(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    _freeze(project)
    records = project.read_items()
    records[0]["target"] = "something else"
    write_jsonl(project.items_path(), records)
    result = project.invoke("freeze", "demo", "--version", "1.0.0")
    assert result.exit_code == 3
    assert "already frozen" in result.stderr and records[0]["id"] in result.stderr
    assert "something else" not in result.stderr


def test_new_version_records_parent_diff_and_keeps_sides(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    first = _freeze(project)
    records = project.read_items()
    new = make_items(n_per_stratum=4, ops=("add", "mul"), seed=99)
    for r in new:
        r["id"] = "new-" + r["id"]
    write_jsonl(project.items_path(), records + new)
    out = _freeze(project, "1.1.0", "--note", "more items")
    assert out["parent"] == {"version": "1.0.0", "manifest_hash": first["manifest_hash"]}
    assert sorted(out["diff"]["added"]) == sorted(r["id"] for r in new)
    assert out["diff"]["removed"] == [] and out["diff"]["changed"] == []
    assert out["bump"] == "minor"
    layout = Layout(project.root)
    m1 = load_manifest(layout, "demo", "1.0.0")
    m2 = load_manifest(layout, "demo", "1.1.0")
    sides = {i.id: i.split for i in m2.items}
    assert all(sides[i.id] == i.split for i in m1.items)
    # the parent's holdout is carried forward from the parent's vault
    key = resolve_key("demo", "canary", m2.canary, KeySpec(key_dir=project.key_dir), create=False)
    held = {item.id for _, item in load_holdout_items(layout, m2, key)}
    assert {i.id for i in m1.items_by_split("holdout")} <= held
    for counts in m2.strata().values():
        assert abs(counts["holdout"] - 0.5 * (counts["dev"] + counts["holdout"])) <= 1


def test_too_small_a_bump_is_refused(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    _freeze(project)
    records = project.read_items()
    records[0]["input"] = records[0]["input"] + " (reworded)"
    write_jsonl(project.items_path(), records)
    result = project.invoke("freeze", "demo", "--version", "1.0.1")
    assert result.exit_code == 2
    assert "needs a major bump (at least 2.0.0)" in result.stderr
    out = _freeze(project, "2.0.0")
    assert out["diff"]["changed"] == [records[0]["id"]]


def test_older_version_and_unchanged_content_are_refused(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    _freeze(project, "1.2.0")
    older = project.invoke("freeze", "demo", "--version", "1.1.0")
    assert older.exit_code == 2 and "not newer than the latest" in older.stderr
    same = project.invoke("freeze", "demo", "--version", "1.3.0")
    assert same.exit_code == 2 and "nothing to freeze" in same.stderr


def test_retire_drops_dev_and_holdout_items(tmp_path: Path) -> None:
    project = make_project(tmp_path, records=make_items(n_per_stratum=8))
    _freeze(project)
    layout = Layout(project.root)
    m1 = load_manifest(layout, "demo", "1.0.0")
    hold = m1.items_by_split("holdout")[0].id
    dev = m1.items_by_split("dev")[0].id
    out = _freeze(project, "1.1.0", "--retire", hold, "--retire", dev)
    assert sorted(out["diff"]["removed"]) == sorted([hold, dev])
    # the retired dev item stays in tasks/ (1.0.0 runs it); the holdout one never was there
    assert dev in {r["id"] for r in project.read_items()}
    unknown = project.invoke("freeze", "demo", "--version", "1.2.0", "--retire", "nope")
    assert unknown.exit_code == 2 and "'nope'" in unknown.stderr


def test_a_retired_item_left_in_tasks_stays_retired_and_in_place(tmp_path: Path) -> None:
    """An item a version retired stays in `tasks/` (an older version runs it as a dev item)
    and is neither re-added by the next version nor by freezing the retiring one again."""
    items = make_items(n_per_stratum=8)
    project = make_project(tmp_path, records=items)
    _freeze(project)
    layout = Layout(project.root)
    dev = load_manifest(layout, "demo", "1.0.0").items_by_split("dev")[0].id
    _freeze(project, "1.1.0", "--retire", dev)
    assert dev in {r["id"] for r in project.read_items()}  # left for 1.0.0's dev split
    again = _freeze(project, "1.1.0")
    assert again["status"] == "unchanged" and again["still_retired"] == [dev]
    # a new item makes 1.2.0 a change; the retired one stays out of it and stays in tasks/
    new = {**items[0], "id": "brand-new", "input": "a question nobody asked before"}
    write_jsonl(project.items_path(), [*project.read_items(), new])
    out = _freeze(project, "1.2.0")
    assert out["diff"]["added"] == ["brand-new"] and out["diff"]["removed"] == []
    assert out["still_retired"] == [dev]
    assert dev in {r["id"] for r in project.read_items()}
    ids = {i.id for i in load_manifest(layout, "demo", "1.2.0").items}
    assert dev not in ids and "brand-new" in ids
    # naming it again with --retire is no error: it is retired already
    assert project.invoke("freeze", "demo", "--version", "1.2.0", "--retire", dev).exit_code == 0


def test_an_interrupted_freeze_is_completed_by_freezing_again(tmp_path: Path) -> None:
    items = make_items()
    project = make_project(tmp_path, records=items)
    _freeze(project)
    # simulate a crash after the manifest was written but before tasks/ was cleaned
    write_jsonl(project.items_path(), items)
    result = project.invoke("freeze", "demo", "--version", "1.0.0", "--json")
    assert result.exit_code == 0, result.stderr
    out = json_out(result)
    assert out["status"] == "completed"
    assert out["removed_from_sources"] == out["n_holdout"]
    assert len(project.read_items()) == out["n_dev"]


def test_holdout_item_put_back_into_tasks_is_refused_for_a_new_version(tmp_path: Path) -> None:
    items = make_items()
    project = make_project(tmp_path, records=items)
    _freeze(project)
    write_jsonl(project.items_path(), items)
    result = project.invoke("freeze", "demo", "--version", "1.1.0")
    assert result.exit_code == 2
    assert "holdout item of the parent version" in result.stderr


def test_random_key_is_created_outside_the_project_with_mode_600(tmp_path: Path) -> None:
    from tests.helpers import suite_toml

    project = make_project(tmp_path, toml=suite_toml(key="random"))
    out = _freeze(project)
    key_file = project.key_dir / "demo.key"
    assert key_file.is_file() and key_file.stat().st_mode & 0o777 == 0o600
    assert "created" in out["key"]
    assert not any(p.suffix == ".key" for p in project.root.rglob("*"))
    assert project.invoke("verify", "demo").exit_code == 0
    # without the key the vault cannot be opened: a clear message, no traceback
    key_file.rename(tmp_path / "elsewhere.key")
    missing = project.invoke("verify", "demo")
    assert missing.exit_code == 2 and "no vault key for suite 'demo'" in missing.stderr
    ok = project.invoke("verify", "demo", "--key-file", str(tmp_path / "elsewhere.key"))
    assert ok.exit_code == 0


def _files(root: Path) -> list[str]:
    """Files under `root`, but Python's bytecode cache (importing the task file writes it)."""
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    )


def test_a_key_directory_or_key_file_inside_the_project_is_refused(tmp_path: Path) -> None:
    from tests.helpers import suite_toml

    made = make_project(tmp_path, toml=suite_toml(key="random"))
    before = _files(made.root)
    (tmp_path / "link").symlink_to(made.root / "holdout", target_is_directory=True)
    for key_dir in (made.root / "holdout" / "x", tmp_path / "link" / "x"):  # a symlink too
        inside = Project(root=made.root, key_dir=key_dir)
        result = inside.invoke("freeze", "demo", "--version", "1.0.0")
        assert result.exit_code == 2, result.stderr
        assert "lies inside the project" in result.stderr
        assert "EVALSUITE_KEY_DIR" in result.stderr
        assert _files(made.root) == before  # no key, no manifest, no vault
    key_file = made.root / "demo.key"
    result = made.invoke("freeze", "demo", "--version", "1.0.0", "--key-file", str(key_file))
    assert result.exit_code == 2 and "(--key-file) lies inside the project" in result.stderr
    assert _files(made.root) == before


def test_a_key_directory_inside_the_project_is_refused_where_ledger_heads_go(
    tmp_path: Path,
) -> None:
    """A canary-keyed suite reads no key, but its ledger's head is kept in the key directory."""
    project = make_project(tmp_path)
    _freeze(project)
    inside = Project(root=project.root, key_dir=project.root / "holdout" / "x")
    for args in (("verify", "demo"), ("holdout", "status", "demo@1.0.0")):
        result = inside.invoke(*args)
        assert result.exit_code == 2, (args, result.output)
        assert "lies inside the project" in result.stderr
    assert not (project.root / "holdout" / "x").exists()


def test_a_freeze_refused_by_its_own_checks_writes_no_key(tmp_path: Path) -> None:
    from tests.helpers import suite_toml

    project = make_project(
        tmp_path, toml=suite_toml(key="random", weights={"fam/nope": 0.5, "fam/add": 0.5})
    )
    before = _files(project.root)
    result = project.invoke("freeze", "demo", "--version", "1.0.0")
    assert result.exit_code == 2
    assert "weights name unknown strata" in result.stderr
    assert not (project.key_dir / "demo.key").exists()
    assert _files(project.root) == before
    (project.root / "tasks" / "demo.toml").write_text(suite_toml(key="random"), encoding="utf-8")
    assert "created" in _freeze(project)["key"]  # fixed: the first freeze that passes makes it
    assert (project.key_dir / "demo.key").is_file()


def test_parquet_and_hf_dataset_sources(tmp_path: Path) -> None:
    import datasets

    items = make_items()
    rows = [dict(r, metadata=json.dumps(r["metadata"])) for r in items]
    for kind in ("parquet", "hf"):
        base = tmp_path / kind
        from tests.helpers import suite_toml

        source = "fam/items.parquet" if kind == "parquet" else "fam/items_ds"
        project = make_project(base, toml=suite_toml(items=source))
        project.items_path().unlink()
        ds = datasets.Dataset.from_list(rows)
        target = project.root / "tasks" / source
        if kind == "parquet":
            ds.to_parquet(str(target))
        else:
            ds.save_to_disk(str(target))
        out = _freeze(project)
        assert out["n_dev"] + out["n_holdout"] == len(items)
        if kind == "parquet":
            left = datasets.load_dataset("parquet", data_files=str(target), split="train")
        else:
            left = datasets.load_from_disk(str(target))
        assert len(left) == out["n_dev"]
        assert project.invoke("verify", "demo").exit_code == 0


def test_every_frozen_file_and_payload_carries_the_canary(tmp_path: Path) -> None:
    from tests.helpers import CANARY

    project = make_project(tmp_path)
    _freeze(project)
    root = project.root
    assert all(r["canary"] == CANARY for r in project.read_items())
    for path in (
        "manifests/demo/1.0.0.json",
        "manifests/demo/1.0.0.fingerprints.jsonl",
        "holdout/demo/1.0.0.vault",
    ):
        assert CANARY in (root / path).read_text(), path
    layout = Layout(root)
    manifest = load_manifest(layout, "demo")
    key = resolve_key("demo", "canary", CANARY, KeySpec(key_dir=project.key_dir), create=False)
    assert all(item.canary == CANARY for _, item in load_holdout_items(layout, manifest, key))


def test_an_item_with_another_suites_canary_is_refused(tmp_path: Path) -> None:
    items = make_items()
    items[2]["canary"] = "evalsuite-canary other-suite 00000000-0000"
    project = make_project(tmp_path, records=items)
    result = project.invoke("freeze", "demo", "--version", "1.0.0")
    assert result.exit_code == 2
    assert f"(item '{items[2]['id']}'): carries another canary" in result.stderr
