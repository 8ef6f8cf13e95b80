"""Serve the review app on 127.0.0.1 (standard library `http.server`), or write it as a site.

The server binds the loopback address only and answers only requests whose ``Host`` is that
address (or ``localhost``) at its port, so a web page elsewhere cannot reach it through DNS
rebinding; a label is saved only from a JSON ``POST`` (a cross-origin page cannot send one
without a CORS preflight, which is never granted).
"""

from __future__ import annotations

import json
import math
import shutil
import tempfile
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from evalsuite._core.atomic import atomic_replace_dir
from evalsuite.errors import EvalsuiteError, NotFoundError, UsageError
from evalsuite.review._web._app import Filters, ReviewApp
from evalsuite.review._web._page import render_page

__all__ = ["ReviewServer", "site_data", "start_server", "write_site"]

_BODY_LIMIT = 1_000_000


def _clean(value: Any) -> Any:
    """NaN and infinities to None, all the way down (JSON has no NaN)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


class _Handler(BaseHTTPRequestHandler):
    server: ReviewServer

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the command prints its URL; requests are not logged."""

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, payload: Any) -> None:
        body = json.dumps(_clean(payload), allow_nan=False).encode("utf-8")
        self._send(status, body, "application/json; charset=utf-8")

    def _host_ok(self) -> bool:
        host = self.headers.get("Host", "")
        port = self.server.server_address[1]
        return host in (f"127.0.0.1:{port}", f"localhost:{port}")

    def _answer(self, action: Callable[[], Any]) -> None:
        try:
            self._json(HTTPStatus.OK, action())
        except NotFoundError as exc:
            self._json(HTTPStatus.NOT_FOUND, {"error": str(exc)})
        except (UsageError, EvalsuiteError, ValueError) as exc:
            self._json(HTTPStatus.BAD_REQUEST, {"error": str(exc)})

    def do_GET(self) -> None:
        """The page, or one of the API's read requests."""
        if not self._host_ok():
            self._json(HTTPStatus.FORBIDDEN, {"error": "the review app answers 127.0.0.1 only"})
            return
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        app = self.server.app
        if url.path in ("/", "/index.html"):
            self._send(HTTPStatus.OK, self.server.page, "text/html; charset=utf-8")
        elif url.path == "/api/meta":
            self._answer(app.meta)
        elif url.path == "/api/attempts":
            self._answer(lambda: app.attempts(Filters.parse(query)))
        elif url.path == "/api/attempt":
            self._answer(lambda: self._attempt(query))
        else:
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no such page {url.path}"})

    def _attempt(self, query: dict[str, str]) -> Any:
        try:
            epoch = int(query.get("epoch", ""))
        except ValueError:
            raise UsageError(f"epoch={query.get('epoch')!r}: expected an integer") from None
        return self.server.app.attempt(query.get("run", ""), query.get("item", ""), epoch)

    def do_POST(self) -> None:
        """Save a label (JSON body)."""
        if not self._host_ok():
            self._json(HTTPStatus.FORBIDDEN, {"error": "the review app answers 127.0.0.1 only"})
            return
        if urlsplit(self.path).path != "/api/label":
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no such action {self.path}"})
            return
        if not self.headers.get("Content-Type", "").startswith("application/json"):
            self._json(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, {"error": "send the label as JSON"})
            return
        length = int(self.headers.get("Content-Length", "0") or 0)
        if length > _BODY_LIMIT:
            self._json(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"error": "label too large"})
            return
        try:
            payload = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            self._json(HTTPStatus.BAD_REQUEST, {"error": "the body is not JSON"})
            return
        if not isinstance(payload, dict):
            self._json(HTTPStatus.BAD_REQUEST, {"error": "expected a JSON object"})
            return
        with self.server.label_lock:
            self._answer(lambda: self.server.app.label(payload))


class ReviewServer(ThreadingHTTPServer):
    """The app's HTTP server (daemon threads: stopping the command stops it)."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], app: ReviewApp) -> None:
        super().__init__(address, _Handler)
        self.app = app
        self.page = render_page().encode("utf-8")
        self.label_lock = threading.Lock()

    @property
    def url(self) -> str:
        """Where the app is: ``http://127.0.0.1:<port>/``."""
        return f"http://127.0.0.1:{self.server_address[1]}/"


def start_server(app: ReviewApp, port: int = 0) -> ReviewServer:
    """A server for `app` on 127.0.0.1:`port` (0: a free port), not yet serving.

    Raises:
        UsageError: the port is taken or cannot be bound.
    """
    if not 0 <= port <= 65535:
        raise UsageError(f"--port {port}: expected 0 (any free port) to 65535")
    try:
        return ReviewServer(("127.0.0.1", port), app)
    except OSError as exc:
        raise UsageError(
            f"cannot serve on 127.0.0.1:{port} ({exc.strerror or exc}); pick another --port, "
            "or --port 0 for any free one"
        ) from None


def site_data(app: ReviewApp) -> dict[str, Any]:
    """Everything a static site embeds: the list, the transcripts and their search text.

    Holdout runs contribute no transcript and no search text (the caller refuses them unless
    the ledger allows their rows at all).
    """
    rows, transcripts, text, missing = [], {}, {}, {}
    for run in app.indexed.values():
        for row in run.rows:
            rows.append(row.to_dict())
            found = None if run.holdout else app.index.transcript(row.id)
            if found is None:
                missing[row.id] = (
                    "a holdout run's transcripts are never written outside the vault"
                    if run.holdout
                    else f"no sample of this attempt in the run's logs ({run.logs.where})"
                )
                continue
            transcripts[row.id] = found
            said = [m["text"] for m in found["messages"]]
            calls = [
                f"{c['function']} {json.dumps(c['arguments'], sort_keys=True)}"
                for m in found["messages"]
                for c in m.get("tool_calls", [])
            ]
            extra = [str(g.get("explanation") or "") for g in found["grader"]]
            text[row.id] = "\n".join(said + calls + extra + [found["final"]["completion"]]).lower()
    meta = app.meta() | {"can_label": False}
    data: dict[str, Any] = _clean(
        {
            "meta": meta,
            "rows": rows,
            "transcripts": transcripts,
            "text": text,
            "missing": missing,
            "labels": {"\x1f".join([k[0], k[1], str(k[2])]): v for k, v in app.labels.items()},
            "findings": {"\x1f".join([k[0], k[1], str(k[2])]): v for k, v in app.findings.items()},
        }
    )
    return data


def write_site(app: ReviewApp, out: Path) -> Path:
    """Write the app as a static site into directory `out` (replaced atomically); its page.

    Raises:
        UsageError: `out` exists and is not a directory.
    """
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: a file is there; name a directory (it is replaced whole)")
    out.parent.mkdir(parents=True, exist_ok=True)
    staged = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        (staged / "index.html").write_text(render_page(site_data(app)), encoding="utf-8")
        staged.chmod(0o755)
        atomic_replace_dir(out, staged)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        raise
    return out / "index.html"
