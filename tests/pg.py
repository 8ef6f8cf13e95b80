"""A throwaway PostgreSQL server for tests and benchmarks: initdb in a temporary directory.

The server listens only on a Unix socket inside its own directory (no TCP port to collide
with anything else on the machine), trusts local connections, and is stopped and deleted
when the test session ends. Run as root, it runs as the ``postgres`` user (PostgreSQL refuses
to run as root). `find_pg_bin` says where the binaries are; tests marked ``postgres`` skip
when there are none, unless ``EVALSUITE_REQUIRE_POSTGRES=1`` (CI), when they fail.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["PgServer", "find_pg_bin", "pg_server"]

_USER = "evalsuite"


def find_pg_bin() -> Path | None:
    """The directory holding ``initdb`` and ``pg_ctl``.

    ``EVALSUITE_PG_BIN`` names it explicitly (a directory without them: none); otherwise
    PATH is searched first, then Debian's layout (/usr/lib/postgresql/VERSION/bin).
    """
    explicit = os.environ.get("EVALSUITE_PG_BIN")
    if explicit:
        path = Path(explicit)
        return path if (path / "initdb").exists() and (path / "pg_ctl").exists() else None
    for candidate in [
        shutil.which("initdb"),
        *sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb")),
    ]:
        if candidate and Path(candidate).exists():
            path = Path(candidate).resolve().parent
            if (path / "pg_ctl").exists():
                return path
    return None


@dataclass
class PgServer:
    """A running server; `new_database` gives each test its own empty database."""

    bin_dir: Path
    root: Path
    as_user: str | None
    _counter: Iterator[int] = field(default_factory=itertools.count)

    @property
    def socket_dir(self) -> Path:
        return self.root

    def url(self, database: str = "postgres") -> str:
        """``postgresql://evalsuite@/DB?host=SOCKET_DIR`` (psycopg 3 is the store's driver)."""
        return f"postgresql://{_USER}@/{database}?host={self.socket_dir}"

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        command = [str(self.bin_dir / args[0]), *args[1:]]
        if self.as_user:
            command = ["runuser", "-u", self.as_user, "--", *command]
        return subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)

    def psql(self, sql: str, database: str = "postgres") -> None:
        import psycopg

        with psycopg.connect(self._dsn(database), autocommit=True) as conn:
            conn.execute(sql)  # type: ignore[arg-type]

    def _dsn(self, database: str) -> str:
        return f"host={self.socket_dir} user={_USER} dbname={database}"

    def new_database(self, icu_locale: str | None = None) -> str:
        """A new empty database (with an ICU collation of `icu_locale`, e.g. en-US); its URL."""
        name = f"t{os.getpid()}_{next(self._counter)}_{secrets.token_hex(3)}"
        if icu_locale is None:
            self.psql(f"CREATE DATABASE {name}")
        else:
            self.psql(
                f"CREATE DATABASE {name} TEMPLATE template0 LOCALE_PROVIDER icu "
                f"ICU_LOCALE '{icu_locale}' LOCALE 'C.UTF-8'"
            )
        return self.url(name)

    @classmethod
    def of_url(cls, url: str) -> PgServer:
        """The server a `url` of this module points at (to make another database on it)."""
        socket_dir = Path(url.split("host=", 1)[1])
        return cls(bin_dir=Path("."), root=socket_dir, as_user=None)


def _check(result: subprocess.CompletedProcess[str], what: str, log: Path | None = None) -> None:
    if result.returncode != 0:
        tail = log.read_text(errors="replace")[-2000:] if log and log.exists() else ""
        raise RuntimeError(f"{what} failed ({result.returncode}): {result.stderr[-2000:]}\n{tail}")


@contextmanager
def pg_server(bin_dir: Path, *, durable: bool = False) -> Iterator[PgServer]:
    """Start a server in a new temporary directory; stop it and delete the directory after.

    Tests run without fsync (`durable=False`); benchmarks keep PostgreSQL's defaults.
    """
    as_user = None
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            raise RuntimeError(
                "running as root, PostgreSQL needs a 'postgres' user to run as"
            ) from None
        as_user = "postgres"
    root = Path(tempfile.mkdtemp(prefix="evalsuite-pg-"))
    if as_user:
        shutil.chown(root, user=as_user, group=None)
    server = PgServer(bin_dir=bin_dir, root=root, as_user=as_user)
    data, log = root / "data", root / "server.log"
    try:
        _check(
            server.run(
                "initdb", "-D", str(data), "-U", _USER, "--auth=trust", "-E", "UTF8",
                "--locale=C.UTF-8",
            ),
            "initdb",
        )  # fmt: skip
        options = f"-k {root} -c listen_addresses='' -c max_connections=100"
        if not durable:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        _check(
            server.run("pg_ctl", "-D", str(data), "-l", str(log), "-o", options, "-w", "start"),
            "pg_ctl start",
            log,
        )
        try:
            yield server
        finally:
            server.run("pg_ctl", "-D", str(data), "-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(root, ignore_errors=True)
