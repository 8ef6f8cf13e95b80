"""Benchmark of the review app's first page on a run of 10,000 attempts (issue 32).

A synthetic run (tests/review/synthetic.py: store rows through `Store.record_attempts`, a
JSON log in inspect's format where `evalsuite run` writes logs) is opened as
`evalsuite review RUN` opens it (`open_review`), served on 127.0.0.1, and the page's first
requests are made over HTTP. Reported separately:

- index build: the first open, which reads the log and fills the index beside the store;
- time to first page: a second open (the index reused: the run's rows read from the store
  and checked against the index's signature) plus the page, ``/api/meta`` and the first page
  of ``/api/attempts``, each over HTTP; server start (binding the socket) reported apart;
- a search over all transcripts (``/api/attempts?q=...``);
- the baseline, measured in the same run: what showing the first page costs without an
  index, reading the run's log and building every attempt's transcript (as a viewer that
  loads the log does), then taking the first 50.

Run: ``.venv/bin/python benchmarks/bench_review.py [--attempts 10000] [--seed 0]``. The target
is a first page under 2 s.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from evalsuite._core.layout import Layout
from evalsuite.review import ReviewApp, ReviewOptions, open_review, start_server
from evalsuite.review._web._logs import log_source, read_transcripts
from evalsuite.store import RunRecord, Store, default_store_url
from tests.review.synthetic import synthetic_run

TARGET_S = 2.0


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=60) as response:
        body: bytes = response.read()
    return body


def _baseline(record: RunRecord, layout: Layout, attempts: int) -> float:
    """Seconds to the first 50 transcripts without an index: read the log, build them all."""
    started = time.perf_counter()
    transcripts = read_transcripts(log_source(record.run_id, record.spec, layout.state))
    first = sorted(transcripts)[:50]
    seconds = time.perf_counter() - started
    assert len(transcripts) == attempts
    assert len(first) == 50
    return seconds


def _served(app: ReviewApp, attempts: int) -> dict[str, float]:
    """Bind the server, then time the page's first requests and a search over HTTP."""
    started = time.perf_counter()
    server = start_server(app, 0)
    times = {"bind": time.perf_counter() - started}
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        started = time.perf_counter()
        _get(server.url)
        _get(server.url + "api/meta")
        page = _get(server.url + "api/attempts?offset=0&limit=50")
        times["requests"] = time.perf_counter() - started
        assert b'"total": %d' % attempts in page, page[:200]
        started = time.perf_counter()
        found = _get(server.url + "api/attempts?q=warranty")
        times["search"] = time.perf_counter() - started
        assert b'"total": 0' not in found
    finally:
        server.shutdown()
        server.server_close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        layout = Layout(root)
        layout.state.mkdir(parents=True)
        url = default_store_url(layout.state)
        store = Store(url)
        started = time.perf_counter()
        record = synthetic_run(root, store, "bench-run", items=args.attempts, seed=args.seed)
        written = time.perf_counter() - started
        print(f"synthetic run of {args.attempts} attempts written in {written:.1f} s")
        options = ReviewOptions(who="bench")
        baseline_s = _baseline(record, layout, args.attempts)

        started = time.perf_counter()
        app = open_review(store, layout, url, [record.run_id], options)
        build_s = time.perf_counter() - started
        app.index.close()

        started = time.perf_counter()
        app = open_review(store, layout, url, [record.run_id], options)
        open_s = time.perf_counter() - started
        assert app.runs[0].index_reused
        try:
            times = _served(app, args.attempts)
        finally:
            app.index.close()
    first_page_s = open_s + times["requests"]
    print(f"index build (first open, reads the log):   {build_s:.2f} s")
    print(f"server start (bind 127.0.0.1):             {times['bind'] * 1000:.1f} ms")
    print(f"open with the index reused:                {open_s:.2f} s")
    print(f"page + meta + first 50 attempts over HTTP: {times['requests'] * 1000:.0f} ms")
    print(f"time to first page (open + requests):      {first_page_s:.2f} s")
    print(f"search 'warranty' over every transcript:   {times['search'] * 1000:.0f} ms")
    print(f"baseline (read the log, all transcripts):  {baseline_s:.2f} s")
    print(f"first page / baseline:                     {first_page_s / baseline_s:.3f}")
    verdict = "meets" if first_page_s < TARGET_S else "MISSES"
    print(f"{verdict} the target of a first page under {TARGET_S:.0f} s")


if __name__ == "__main__":
    main()
