"""A throwaway S3 server for tests: moto's server, on a free port of 127.0.0.1.

A real fsspec file system (``s3://``, through s3fs, which inspect-ai already depends on)
that several processes share without any network: shards write their inspect logs into
it as they would into a bucket. The server runs as its own process and is stopped when the
context ends; `S3Server.env` is what a client process needs (dummy credentials and the
endpoint, read by botocore as ``AWS_ENDPOINT_URL``).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO

__all__ = ["S3Server", "s3_server"]


@dataclass(frozen=True)
class S3Server:
    """A running server; `env` points boto/s3fs clients at it."""

    endpoint: str

    @property
    def env(self) -> dict[str, str]:
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
        }


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def s3_server(timeout_s: float = 120.0) -> Iterator[S3Server]:
    """Start moto's S3 server; stop it after. Raises RuntimeError if it never answers."""
    port = _free_port()
    # the server logs every request to stderr: a file, since a pipe nobody reads fills up
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=log,
            env=dict(os.environ),
        )
        try:
            _wait_for(process, port, log, timeout_s)
            yield S3Server(endpoint=f"http://127.0.0.1:{port}")
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_for(
    process: subprocess.Popen[bytes], port: int, log: IO[bytes], timeout_s: float
) -> None:
    deadline = time.time() + timeout_s
    while True:
        if process.poll() is not None:
            log.seek(0)
            err = log.read().decode(errors="replace")
            raise RuntimeError(f"moto's S3 server exited ({process.returncode}): {err[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if time.time() > deadline:
                raise RuntimeError(f"moto's S3 server never answered on port {port}") from None
            time.sleep(0.1)
