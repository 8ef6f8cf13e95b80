"""The review web app without a browser: index, search, filters, transcripts, labels over
HTTP, the static site, and the holdout rule (docs/review-app.md)."""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evalsuite._core.layout import Layout
from evalsuite.errors import HoldoutAccessError, NotFoundError, UsageError
from evalsuite.holdout import read_ledger
from evalsuite.review import load_labels
from evalsuite.review._web import (
    Filters,
    ReviewApp,
    ReviewOptions,
    index_path,
    open_review,
    start_server,
    write_site,
)
from evalsuite.store import Store, default_store_url
from tests.review.synthetic import synthetic_run

TAXONOMY = """
suite = "support"
version = "1"

[[modes]]
name = "wrong_action"
kind = "model"
definition = "The agent did something the policy forbids."

[[modes]]
name = "tool_timeout"
kind = "harness"
definition = "A tool timed out: the harness failed, not the model."
"""


class Setup:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.layout = Layout(root)
        self.layout.state.mkdir(parents=True, exist_ok=True)
        (root / "tasks" / "taxonomies").mkdir(parents=True)
        (root / "tasks" / "taxonomies" / "support.toml").write_text(TAXONOMY, encoding="utf-8")
        self.url = default_store_url(self.layout.state)
        self.store = Store(self.url)

    def open(self, runs: list[str], *, static: bool = False) -> ReviewApp:
        return open_review(
            self.store, self.layout, self.url, runs, ReviewOptions(who="tester", static=static)
        )


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    s = Setup(tmp_path / "project")
    synthetic_run(s.root, s.store, "run-a", items=20, epochs=2, seed=1)
    synthetic_run(s.root, s.store, "run-b", items=20, epochs=2, seed=2)
    return s


@pytest.fixture
def served(setup: Setup) -> Iterator[tuple[Setup, ReviewApp, str]]:
    app = setup.open(["run-a", "run-b"])
    server = start_server(app, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield setup, app, server.url
    finally:
        server.shutdown()
        server.server_close()
        app.index.close()


def _request(url: str, body: Any = None, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def test_the_index_is_built_once_reused_and_rebuilt_when_a_log_or_the_store_changes(
    setup: Setup,
) -> None:
    first = setup.open(["run-a"])
    assert first.runs[0].index_reused is False
    assert first.runs[0].n_attempts == 40 and first.runs[0].n_transcripts == 40
    first.index.close()
    assert index_path(setup.url, setup.layout.state) == setup.layout.state / "review-index.sqlite"
    again = setup.open(["run-a"])
    assert again.runs[0].index_reused is True
    again.index.close()
    log = next((setup.layout.state / "logs" / "run-a").glob("*.json"))
    document = json.loads(log.read_text())
    document["samples"][0]["messages"][1]["content"] = "a zanzibar request"
    log.write_text(json.dumps(document))
    os.utime(log, ns=(time.time_ns(), time.time_ns() + 10**9))
    changed = setup.open(["run-a"])
    assert changed.runs[0].index_reused is False
    assert changed.attempts(Filters(q="zanzibar"))["total"] == 1
    changed.index.close()


def test_search_reaches_messages_tool_call_arguments_and_tool_results(setup: Setup) -> None:
    app = setup.open(["run-a", "run-b"])
    said = app.attempts(Filters(q="warranty"))
    assert said["total"] == 2 * 2 * 2  # items 4 and 12 (every 8th), 2 epochs, 2 runs
    assert {r["item_id"] for r in said["rows"]} == {"item-00004", "item-00012"}
    argument = app.attempts(Filters(q="order_id item-00003-3"))  # a tool call's argument
    assert {r["item_id"] for r in argument["rows"]} <= {"item-00003"}
    assert app.attempts(Filters(q="order_id"))["total"] == 80  # only in the calls' arguments
    result = app.attempts(Filters(q="status shipped"))  # words of the tool results
    assert result["total"] == 80
    assert app.attempts(Filters(q="warranty zzzznotthere"))["total"] == 0
    app.index.close()


def test_filters_narrow_the_list_by_each_attempt_field(setup: Setup) -> None:
    app = setup.open(["run-a", "run-b"])
    rows = [r for run in app.indexed.values() for r in run.rows]
    for filters, expected in (
        (Filters(outcome="limit"), [r for r in rows if r.outcome == "limit"]),
        (Filters(limit_type="time"), [r for r in rows if r.limit_type == "time"]),
        (Filters(epoch=2), [r for r in rows if r.epoch == 2]),
        (Filters(run="run-b"), [r for r in rows if r.run_id == "run-b"]),
        (Filters(score_max=0.5), [r for r in rows if r.score is not None and r.score <= 0.5]),
        (Filters(stratum="support_desk/refund"), [r for r in rows if r.stratum.endswith("refund")]),
    ):
        found = app.attempts(_all(filters))
        assert found["total"] == len(expected) > 0, filters
        assert {(r["run_id"], r["item_id"], r["epoch"]) for r in found["rows"]} == {
            (r.run_id, r.item_id, r.epoch) for r in expected
        }
    with pytest.raises(UsageError, match="expected a number"):
        Filters.parse({"score_min": "high"})
    with pytest.raises(UsageError, match="unknown filter"):
        Filters.parse({"colour": "red"})
    app.index.close()


def _all(filters: Filters) -> Filters:
    from dataclasses import replace

    return replace(filters, limit=500)


def test_an_attempt_shows_its_transcript_and_the_same_items_other_attempts(setup: Setup) -> None:
    app = setup.open(["run-a", "run-b"])
    shown = app.attempt("run-a", "item-00003", 1)
    transcript = shown["transcript"]
    roles = [m["role"] for m in transcript["messages"]]
    assert roles[:2] == ["system", "user"] and "tool" in roles
    call = next(m for m in transcript["messages"] if m.get("tool_calls"))["tool_calls"][0]
    assert call["function"] == "lookup_order" and call["arguments"] == {"order_id": "item-00003-0"}
    assert transcript["grader"][0]["explanation"] == "invoice handled per policy"
    assert transcript["final"]["completion"] == "Ticket closed: invoice handled."
    others = {(o["run_id"], o["epoch"]) for o in shown["others"]}
    assert others == {("run-a", 2), ("run-b", 1), ("run-b", 2)}
    with pytest.raises(NotFoundError, match="no attempt"):
        app.attempt("run-a", "item-99999", 1)
    app.index.close()


def test_labels_are_saved_at_once_over_http_and_read_back(
    served: tuple[Setup, ReviewApp, str],
) -> None:
    setup, _, url = served
    json_headers = {"Content-Type": "application/json"}
    body = {"run_id": "run-a", "item_id": "item-00002", "epoch": 1, "modes": ["tool_timeout"],
            "note": "the lookup timed out"}  # fmt: skip
    status, saved = _request(url + "api/label", body, json_headers)
    assert status == 200, saved
    assert saved["who"] == "tester" and saved["taxonomy_version"] == "1" and saved["at"]
    labels = load_labels(setup.store, "run-a")
    assert [(x.item_id, x.epoch, x.modes, x.note, x.who) for x in labels] == [
        ("item-00002", 1, ("tool_timeout",), "the lookup timed out", "tester")
    ]
    status, page = _request(url + "api/attempts?mode=tool_timeout")
    assert status == 200 and page["total"] == 1 and page["rows"][0]["modes"] == ["tool_timeout"]
    status, error = _request(url + "api/label", body | {"modes": ["made_up"]}, json_headers)
    assert status == 400 and "unknown mode" in error["error"]
    status, error = _request(url + "api/label", body, {"Content-Type": "text/plain"})
    assert status == 415
    status, error = _request(url + "api/attempts", headers={"Host": "evil.example:80"})
    assert status == 403


def test_the_static_site_is_read_only_and_searchable_offline(setup: Setup) -> None:
    app = setup.open(["run-a"], static=True)
    out = setup.root / "site"
    page = write_site(app, out)
    html = page.read_text(encoding="utf-8")
    assert "window.REVIEW_DATA=" in html and "Ticket closed: invoice handled." in html
    assert "http://" not in html.split("window.REVIEW_DATA=")[0]  # nothing fetched from elsewhere
    assert sorted(p.name for p in setup.root.iterdir() if p.name.startswith(".site")) == []
    with pytest.raises(UsageError, match="static copy"):
        app.label({"run_id": "run-a", "item_id": "item-00001", "epoch": 1, "modes": []})
    app.index.close()


def test_a_holdout_run_never_puts_transcript_text_on_disk(setup: Setup, tmp_path: Path) -> None:
    synthetic_run(setup.root, setup.store, "run-h", items=5, epochs=1, seed=3, split="holdout")
    log = next((setup.layout.state / "logs" / "run-h").glob("*.json"))
    marker = "HOLDOUT-PLAINTEXT-7f3a"
    document = json.loads(log.read_text())
    for sample in document["samples"]:
        sample["messages"][1]["content"] = f"{marker} secret item text"
    log.write_text(json.dumps(document))
    app = setup.open(["run-h"])
    shown = app.attempt("run-h", "item-00001", 1)
    assert marker in shown["transcript"]["messages"][1]["text"]  # read into memory only
    assert app.attempts(Filters(q=marker))["total"] == 0  # search never indexed it
    app.index.close()
    index = index_path(setup.url, setup.layout.state)
    for path in index.parent.glob(index.name + "*"):
        assert marker.encode() not in path.read_bytes(), path
    # a static site of a holdout run: refused unless asked, and then the export is ledgered
    with pytest.raises(HoldoutAccessError, match="--include-holdout-attempts"):
        setup.open(["run-h"], static=True)
    ledger = setup.layout.ledger_file("support")
    site = open_review(
        setup.store,
        setup.layout,
        setup.url,
        ["run-h"],
        ReviewOptions(who="t", static=True, include_holdout=True, key_dir=tmp_path / "keys"),
    )
    assert [(e.kind, e.run_id) for e in read_ledger(ledger)] == [("export", "run-h")]
    page = write_site(site, setup.root / "site")
    html = page.read_text(encoding="utf-8")
    assert marker not in html and "item-00001" in html
    site.index.close()
    # a run whose exact score a mechanism sealed is refused, live or static
    _append_ledger(ledger, "run-h", "answer")
    with pytest.raises(HoldoutAccessError, match="sealed"):
        setup.open(["run-h"])


def _append_ledger(path: Path, run_id: str, kind: str) -> None:
    from evalsuite.holdout import append_entry

    append_entry(
        path,
        {
            "run_id": run_id,
            "suite": "support",
            "version": "4.0.0",
            "manifest_hash": "sha256:" + "0" * 64,
            "model": "evalsuite/synthetic",
            "model_family": "",
            "user": "t",
            "host": "h",
            "at": "2026-12-06T00:00:00+00:00",
            "purpose": None,
            "override_reason": None,
            "resumed": False,
            "kind": kind,
            "mechanism": {"name": "thresholdout"} if kind == "answer" else None,
        },
    )


def _cli(root: Path, key_dir: Path, *args: str) -> tuple[int, str]:
    from click.testing import CliRunner

    from evalsuite.cli import cli

    result = CliRunner().invoke(
        cli, ["--root", str(root), *args], env={"EVALSUITE_KEY_DIR": str(key_dir)}
    )
    return result.exit_code, result.output


def test_the_command_writes_the_site_and_keeps_the_holdout_rule(
    setup: Setup, tmp_path: Path
) -> None:
    keys = tmp_path / "keys"
    out = setup.root / "reports" / "review"
    code, text = _cli(setup.root, keys, "review", "run-a", "--out", str(out), "--json")
    assert code == 0, text
    written = json.loads(text)
    assert written["written"] == str(out / "index.html") and written["runs"][0]["n_attempts"] == 40
    synthetic_run(setup.root, setup.store, "run-h", items=3, seed=4, split="holdout")
    code, text = _cli(setup.root, keys, "review", "run-h", "--out", str(out))
    assert code == 7 and "--include-holdout-attempts" in text
    code, text = _cli(setup.root, keys, "review", "run-a", "--include-holdout-attempts")
    assert code == 2 and "goes with --out" in text
    code, text = _cli(
        setup.root, keys, "review", "run-h", "--out", str(out), "--include-holdout-attempts"
    )
    assert code == 0, text
    assert [e.kind for e in read_ledger(setup.layout.ledger_file("support"))] == ["export"]
    code, text = _cli(setup.root, keys, "review", "no-such-run", "--out", str(out))
    assert code == 2 and "no-such-run" in text


def test_stored_scanner_findings_show_and_filter_the_list(setup: Setup) -> None:
    scan = {"scan_location": "scans/x", "scanned_at": "2026-12-06T00:00:00Z", "transcripts": 40}
    row = {"value": "true", "explanation": "same call 3 times", "scan_location": "scans/x",
           "scanned_at": "2026-12-06T00:00:00Z"}  # fmt: skip
    setup.store.replace_findings(
        "run-a",
        "repeated_tool_call",
        [row | {"item_id": "item-00001", "epoch": 1}, row | {"item_id": "item-00002", "epoch": 2}],
        scan=scan,
    )
    app = setup.open(["run-a"])
    assert app.meta()["scanners"] == ["repeated_tool_call"]
    found = app.attempts(Filters(finding="repeated_tool_call"))
    assert [(r["item_id"], r["epoch"], r["findings"]) for r in found["rows"]] == [
        ("item-00001", 1, ["repeated_tool_call"]),
        ("item-00002", 2, ["repeated_tool_call"]),
    ]
    assert app.attempts(Filters(finding="*"))["total"] == 2
    app.index.close()
    code, text = _cli(setup.root, setup.root.parent / "keys", "review", "run-a", "--stats",
                      "--port", "0")  # fmt: skip
    assert code == 2 and "not with --scan" in text
