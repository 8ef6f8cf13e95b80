"""A warm fork server ("zygote") for the tests' CLI child processes.

A test that starts ``python -c CODE ARGS`` to run the CLI pays, in a fresh interpreter, about
4 s of CPU importing inspect and evalsuite and several more on the first run's lazy imports,
whatever the run does. The zygote is one helper process per test session (the pytest-xdist
workers share it, `zygote`), started on first use and stopped at the end, that has made those
imports once. On request it forks a child that runs CODE as ``python -c`` would, with the
given argv, environment (``os.environ`` replaced exactly), working directory, umask and
standard streams (the file descriptors travel over a UNIX socket, ``SCM_RIGHTS``), and
reports the child's exit status and CPU seconds when it ends.

`popen` returns a `ForkedProcess`, a ``subprocess.Popen`` stand-in for the calls the tests
make: ``pid``, ``args``, ``stdout``/``stderr`` pipes, ``poll``, ``wait``, ``communicate``
(with ``subprocess.TimeoutExpired``), ``send_signal``/``terminate``/``kill`` (``os.kill`` on
the child's pid: the child is a real separate process, and a real signal kills it), and
``returncode`` (``-N`` for a death by signal N, as ``Popen`` reports it). The child's CPU is
added to what tests/timing.py counts for the test (`tests.timing.add_child_cpu`).

What a fork inherits that a fresh interpreter would compute again, and how each is handled
(docs/design/test-speed.md, fifth pass; `tests/test_zygote.py` proves the equivalence):

- the environment: replaced in the child (``os.environ`` cleared and filled, so the C
  environment follows); values cached from it at import time: ``tempfile.tempdir`` is reset
  to None (the next ``gettempdir()`` reads ``TMPDIR`` again); inspect and platformdirs read
  ``HOME``/``XDG_*`` on every call (checked); the zygote imports nothing that caches them;
- threads and open connections: the zygote refuses to fork while it has more than one thread;
  it opens no database or network connection; every descriptor of its own (the listening
  socket, the connections, the signal pipe, the selector) is closed in the child;
- signals: every disposition is restored in the child to what the zygote found at its start,
  which is what a fresh child of the same test process would find (``SIGINT`` raises
  ``KeyboardInterrupt``, ``SIGPIPE`` ignored, the rest default); the wake-up fd is cleared;
- randomness: ``random`` reseeds itself after a fork; numpy's global generator is reseeded
  from the OS in the child. (Python's string hash seed is the zygote's, shared by its
  children; a fresh interpreter draws one each. No test depends on it.)
- ``__main__`` and ``sys.argv``: the child runs CODE in a clean ``__main__`` namespace with
  ``sys.argv == ['-c', *ARGS]``; SystemExit, an uncaught exception (traceback, exit 1) and an
  uncaught KeyboardInterrupt (death by SIGINT) end it as they end ``python -c``, because the
  child leaves the server loop and lets the interpreter shut down normally (atexit handlers,
  non-daemon threads joined, streams flushed).

What it does not give a child: a fresh interpreter's start-up. Tests whose subject is start-up
(tests/test_startup.py, the ``inspect eval`` console script of tests/tasks/test_support_task.py)
and one SIGINT interrupt test keep fresh interpreters.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.machinery
import io
import json
import os
import selectors
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

REPO = Path(__file__).resolve().parents[1]

WARM = (
    "inspect_ai",
    "inspect_ai._eval.task.run",
    "inspect_ai.agent._acp.server",
    "inspect_ai.log",
    "evalsuite.cli",
    "evalsuite.run",
    "evalsuite.store",
    "evalsuite.analyse._adaptive",
    "tests.run.fake_models",
    "pandas",
    "sqlalchemy",
)
"""Modules the zygote imports before it serves: what the CLI children import, and what inspect
imports lazily on a process's first eval."""

_HEADER = struct.Struct("!Q")


# the server (runs in the zygote process) -----------------------------------------------------


def _warm() -> None:
    import importlib

    sys.path.insert(0, str(REPO))
    from tests.entry_points import load_all_but_inspect_evals

    for name in WARM:
        importlib.import_module(name)
    load_all_but_inspect_evals()
    # cache the temporary directory as a module computing a path at import would: the
    # child's reset (`_become_child`) is then always exercised (tests/test_zygote.py)
    tempfile.gettempdir()


def _recv_exact(conn: socket.socket, n: int) -> bytes:
    chunks = []
    while n:
        chunk = conn.recv(min(n, 1 << 16))
        if not chunk:
            raise EOFError("client closed the connection")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


class _Child(Exception):
    """Raised in a forked child to leave the server loop and run its code."""

    def __init__(self, code: str) -> None:
        super().__init__()
        self.code = code


def _become_child(
    request: dict[str, Any],
    fds: list[int],
    own: list[socket.socket | selectors.BaseSelector | int],
    dispositions: dict[int, Any],
) -> None:
    """In the forked child: drop the zygote's descriptors, take the request's streams,
    environment, directory, umask and the signal dispositions of a fresh child."""
    signal.set_wakeup_fd(-1)
    for thing in own:
        with contextlib.suppress(OSError):
            if isinstance(thing, int):
                os.close(thing)
            else:
                thing.close()
    for signum, handler in dispositions.items():
        with contextlib.suppress(OSError, ValueError):
            signal.signal(signum, handler)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in set(fds):
        if fd > 2:
            os.close(fd)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    os.umask(request["umask"])
    tempfile.tempdir = None
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    sys.argv = ["-c", *request["args"]]


def serve(path: str, base_path: list[str]) -> None:
    """Serve fork requests on the UNIX socket `path` until stdin closes.

    Never returns: the zygote exits (SystemExit) when it is done; a forked child leaves by
    raising `_Child` with the code it must run.
    """
    dispositions = {
        s: signal.getsignal(s) for s in signal.valid_signals() if signal.getsignal(s) is not None
    }
    dispositions = {
        s: h for s, h in dispositions.items() if s not in (signal.SIGKILL, signal.SIGSTOP)
    }
    _warm()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    os.set_blocking(wake_r, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(wake_r, selectors.EVENT_READ, "child")
    selector.register(sys.stdin.fileno(), selectors.EVENT_READ, "stdin")
    waiting: dict[int, socket.socket] = {}
    stopping = False
    import gc

    gc.collect()
    gc.freeze()  # the children share the warm heap instead of copying it as the GC walks it
    own = resource_cpu()
    sys.stdout.write(json.dumps({"ready": True, "cpu": own, "pid": os.getpid()}) + "\n")
    sys.stdout.flush()
    while True:
        for key, _ in selector.select():
            if key.data == "stdin":  # the pytest process that started it is done
                # no new children (the other workers start a zygote of their own); the
                # children running, perhaps another worker's, are reaped and reported first
                selector.unregister(sys.stdin.fileno())
                selector.unregister(listener)
                listener.close()
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
                stopping = True
            if stopping and not waiting:
                sys.exit(0)
            if key.data == "child":
                with contextlib.suppress(BlockingIOError):
                    while os.read(wake_r, 512):
                        pass
                _reap(waiting)
                if stopping and not waiting:
                    sys.exit(0)
                continue
            if key.data != "accept" or stopping:  # (an accept seen with the stop: dropped)
                continue
            conn, _ = listener.accept()
            try:
                msg, fds, _flags, _addr = socket.recv_fds(conn, _HEADER.size, 3)
                if not msg:  # a probe (`Zygote.attach`): it only checked that we listen
                    conn.close()
                    continue
                (length,) = _HEADER.unpack(msg)
                request = json.loads(_recv_exact(conn, length))
            except (OSError, EOFError, ValueError, struct.error) as exc:
                conn.close()
                sys.stderr.write(f"zygote: bad request: {exc!r}\n")
                continue
            if threading.active_count() != 1:
                conn.sendall(b'{"error": "the zygote has threads; it will not fork"}\n')
                conn.close()
                continue
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                own: list[socket.socket | selectors.BaseSelector | int] = [
                    selector,
                    listener,
                    conn,
                    wake_r,
                    wake_w,
                    *waiting.values(),
                ]
                sys.path[:] = _sys_path(base_path, request)  # before the environment changes
                _become_child(request, fds, own, dispositions)
                raise _Child(request["code"])
            for fd in fds:
                os.close(fd)
            conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
            waiting[pid] = conn
            _reap(waiting)  # a child may have ended before it was registered


def resource_cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _reap(waiting: dict[int, socket.socket]) -> None:
    while waiting:
        try:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = waiting.pop(pid, None)
        if conn is None:
            continue
        cpu = usage.ru_utime + usage.ru_stime
        with contextlib.suppress(OSError):
            conn.sendall(json.dumps({"status": status, "cpu": cpu}).encode() + b"\n")
        conn.close()


def _exit_status(code: object) -> int:
    """The exit status ``python`` gives ``SystemExit(code)`` (printing a non-integer code)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    sys.stderr.write(f"{code}\n")
    return 1


def _run_as_main(code: str) -> None:
    """Run `code` in a clean ``__main__`` as ``python -c`` does, then end the process as the
    interpreter ends: non-daemon threads joined, atexit handlers run, streams flushed, the
    exit status of a SystemExit, 1 after an uncaught exception (its traceback printed by
    ``sys.excepthook``), death by SIGINT after an uncaught KeyboardInterrupt. The module
    teardown a fresh interpreter would do next is skipped (``os._exit``): about 1.5 s of CPU
    in a process holding inspect's imports, and nothing the tests observe."""
    import atexit

    namespace = sys.modules["__main__"].__dict__
    for name in [n for n in namespace if n != "__builtins__"]:
        del namespace[name]
    namespace.update({"__name__": "__main__", "__doc__": None, "__package__": None})
    namespace.update({"__spec__": None, "__annotations__": {}})
    namespace["__loader__"] = importlib.machinery.BuiltinImporter
    status, interrupted = 0, False
    try:
        exec(compile(code, "<string>", "exec"), namespace)
    except SystemExit as exc:
        status = _exit_status(exc.code)
    except BaseException as exc:
        tb = exc.__traceback__.tb_next if exc.__traceback__ is not None else None
        sys.excepthook(type(exc), exc.with_traceback(tb), tb)
        interrupted = isinstance(exc, KeyboardInterrupt)
        status = 1
    with contextlib.suppress(BaseException):
        threading._shutdown()  # type: ignore[attr-defined]  # join non-daemon threads
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    if interrupted:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(status)


def _python_path(env: Mapping[str, str], cwd: str) -> list[str]:
    """``PYTHONPATH``'s entries as an interpreter started in `cwd` puts them on ``sys.path``."""
    entries = env.get("PYTHONPATH", "").split(os.pathsep)
    return [os.path.normpath(os.path.join(cwd, e)) for e in entries if e]


def _sys_path(base: list[str], request: dict[str, Any]) -> list[str]:
    """The ``sys.path`` of ``python -c`` started with the request's environment and directory:
    the zygote's own start-up path with its ``PYTHONPATH`` entries replaced by the request's."""
    own = _python_path(os.environ, os.getcwd())
    rest = [p for p in base if p != "" and p not in own]
    return ["", *_python_path(request["env"], request["cwd"]), *rest]


def main(path: str, base_path: list[str]) -> None:
    """The zygote's entry point: serve; in a forked child, run the requested code."""
    code = ""
    try:
        serve(path, base_path)
    except _Child as child:
        code = child.code
    _run_as_main(code)  # outside the handler: no exception context for the child's code


_BOOT = (
    "import sys; base = list(sys.path); sys.path.insert(0, {repo!r}); import tests.zygote; "
    "tests.zygote.main({path!r}, base)"
)


# the client (runs in the pytest process) ---------------------------------------------------


class Zygote:
    """A running zygote: the socket it listens on, and the process if this one started it."""

    def __init__(self, directory: Path | None = None) -> None:
        """Start a zygote listening in `directory` (a new private one if None)."""
        self.dir = str(directory) if directory else tempfile.mkdtemp(prefix="zyg-", dir="/tmp")
        self.path = os.path.join(self.dir, "s")
        self.log = open(os.path.join(self.dir, f"stderr-{os.getpid()}"), "w+b")  # noqa: SIM115
        self.process: subprocess.Popen[bytes] | None = subprocess.Popen(
            [sys.executable, "-c", _BOOT.format(repo=str(REPO), path=self.path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            env=dict(os.environ),
            cwd=REPO,  # not the test's directory of the moment, which may be deleted
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            self.process.wait()
            self.log.seek(0)
            raise RuntimeError(f"the zygote did not start:\n{self.log.read().decode()[-3000:]}")
        hello = json.loads(line)
        self.pid: int = hello["pid"]
        self.start_cpu: float = hello["cpu"]
        Path(self.dir, "pid").write_text(str(self.pid))

    @classmethod
    def attach(cls, directory: Path) -> Zygote | None:
        """The zygote another process of this session started in `directory`, if it serves."""
        path = os.path.join(directory, "s")
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(path)  # the zygote drops a connection that sends nothing
        except OSError:
            return None
        finally:
            probe.close()
        self = cls.__new__(cls)
        self.dir, self.path, self.process, self.start_cpu = str(directory), path, None, 0.0
        self.pid = int(Path(directory, "pid").read_text())
        return self

    broken = False
    """Set when a request to it failed: it is not asked again."""

    def alive(self) -> bool:
        if self.broken:
            return False
        if self.process is None:
            return os.path.exists(self.path)
        return self.process.poll() is None

    def close(self) -> None:
        """Stop a zygote this process started: it takes no new child and ends when the ones
        it runs (perhaps another worker's) have ended."""
        if self.process is None:
            return
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.log.close()
        if os.path.getsize(self.log.name) == 0:
            os.unlink(self.log.name)  # a zygote's stderr is kept only if it said something
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(self.dir, "pid"))
        if not os.listdir(self.dir):  # a private directory; a shared one keeps its lock file
            os.rmdir(self.dir)


WAIT_S = float(os.environ.get("EVALSUITE_TEST_WAIT_S", "900"))
"""How long a pytest process waits at exit for its zygote's last children (tests/helpers.py)."""

_ZYGOTE: list[Zygote] = []


def _session_dir() -> Path | None:
    """The directory the pytest-xdist workers of this session share their zygote in; None
    outside xdist (the zygote is then the process's own)."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if not run:
        return None
    directory = Path("/tmp", f"evalsuite-zygote-{run}")
    directory.mkdir(exist_ok=True)
    return directory


def zygote() -> Zygote:
    """The zygote of this test session, started on first use and stopped at exit.

    Under pytest-xdist the workers share one (started by the first worker that needs it, under
    a file lock, in a directory named by the session's run id): its start-up, about 7 s of CPU,
    is paid once a session and charged to the test that started it. When the worker that
    started it ends, it takes no new child; a worker still running then starts another.
    """
    if _ZYGOTE and _ZYGOTE[-1].alive():
        return _ZYGOTE[-1]
    if not _ZYGOTE:
        atexit.register(shutdown)
    shared = _session_dir()
    if shared is None:
        z = Zygote()
    else:
        from filelock import FileLock

        with FileLock(str(shared / "lock")):
            attached = Zygote.attach(shared)
            if attached is not None:
                _ZYGOTE.append(attached)
                return attached
            with contextlib.suppress(FileNotFoundError):
                os.unlink(shared / "s")  # a stopped zygote's
            z = Zygote(shared)
    _charge(z.start_cpu)
    _ZYGOTE.append(z)
    return z


def shutdown() -> None:
    """Stop the zygotes this process started."""
    while _ZYGOTE:
        _ZYGOTE.pop().close()


def _charge(cpu: float) -> None:
    try:
        from tests import timing
    except ImportError:  # pragma: no cover - the plugin module is part of the suite
        return
    timing.add_child_cpu(cpu)


def _stream(spec: int | IO[Any] | None, default: int, closers: list[int]) -> tuple[int, int | None]:
    """(fd to give the child, fd to keep as our end of a pipe or None)."""
    if spec is None:
        return default, None
    if spec == subprocess.PIPE:
        r, w = os.pipe()
        closers.append(w)
        return w, r
    if spec == subprocess.DEVNULL:
        fd = os.open(os.devnull, os.O_RDWR)
        closers.append(fd)
        return fd, None
    if isinstance(spec, int):
        return spec, None
    return spec.fileno(), None


class _HungUp(RuntimeError):
    """The zygote closed a connection before it answered."""


class ForkedProcess(subprocess.Popen[str]):
    """A ``subprocess.Popen`` stand-in for a child forked by the zygote (see the module doc)."""

    def __init__(
        self,
        args: Sequence[str],
        *,
        stdin: int | IO[Any] | None = None,
        stdout: int | IO[Any] | None = None,
        stderr: int | IO[Any] | None = None,
        text: bool = False,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
    ) -> None:
        argv = [str(a) for a in args]
        if len(argv) < 3 or argv[0] != sys.executable or argv[1] != "-c":
            raise ValueError(f"the zygote runs `{sys.executable} -c CODE ...` only, not {argv!r}")
        self.args = argv
        self.returncode: int | None = None  # type: ignore[assignment]
        self.child_cpu: float | None = None
        self.text_mode = text
        self._outputs: dict[str, Any] = {}
        self._readers: list[threading.Thread] = []
        closers: list[int] = []
        fd_in, _ = _stream(stdin, 0, closers)
        fd_out, keep_out = _stream(stdout, 1, closers)
        if stderr == subprocess.STDOUT:
            fd_err, keep_err = fd_out, None
        else:
            fd_err, keep_err = _stream(stderr, 2, closers)
        umask = os.umask(0)
        os.umask(umask)
        request = {
            "code": argv[2],
            "args": argv[3:],
            "env": dict(os.environ if env is None else env),
            "cwd": str(cwd) if cwd is not None else os.getcwd(),
            "umask": umask,
        }
        body = json.dumps(request).encode()
        try:
            for last in (False, True):  # a shared zygote may stop between lookup and request
                server = zygote()
                try:
                    answer = self._request(server.path, body, [fd_in, fd_out, fd_err])
                    break
                except (OSError, _HungUp):
                    self._conn.close()
                    server.broken = True
                    if last:
                        raise
        finally:
            for fd in closers:
                os.close(fd)
        if "error" in answer:
            raise RuntimeError(f"the zygote could not start {argv[:3]!r}: {answer['error']}")
        self.pid: int = answer["pid"]
        self.stdin = None
        self.stdout = self._wrap(keep_out)  # type: ignore[assignment]
        self.stderr = self._wrap(keep_err)  # type: ignore[assignment]

    def _request(self, path: str, body: bytes, fds: list[int]) -> dict[str, Any]:
        self._conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._buf = b""
        self._conn.connect(path)
        socket.send_fds(self._conn, [_HEADER.pack(len(body))], fds)
        self._conn.sendall(body)
        line = self._line(None)
        answer: dict[str, Any] = json.loads(line or b"{}")
        return answer

    def _wrap(self, fd: int | None) -> IO[Any] | None:
        if fd is None:
            return None
        raw = open(fd, "rb")  # noqa: SIM115 - closed by communicate
        if self.text_mode:
            return io.TextIOWrapper(raw)
        return raw

    # status ------------------------------------------------------------------------------

    def _line(self, timeout: float | None) -> bytes | None:
        """The zygote's next line on this connection; None if none came within `timeout`."""
        import select

        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._buf:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self._conn], [], [], left)
            if not ready:
                return None
            chunk = self._conn.recv(1 << 16)
            if not chunk:
                raise _HungUp(f"the zygote hung up before reporting on {self.args[:2]!r}")
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return line

    def _take_status(self, timeout: float | None) -> bool:
        if self.returncode is not None:
            return True
        line = self._line(timeout)
        if line is None:
            return False
        report = json.loads(line)
        status = report["status"]
        self.returncode = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        self.child_cpu = report["cpu"]
        _charge(report["cpu"])
        self._conn.close()
        return True

    def poll(self) -> int | None:
        self._take_status(0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._take_status(timeout):
            raise subprocess.TimeoutExpired(self.args, timeout)  # type: ignore[arg-type]
        assert self.returncode is not None
        return self.returncode

    def communicate(  # type: ignore[override]
        self, input: str | None = None, timeout: float | None = None
    ) -> tuple[Any, Any]:
        if input is not None:
            raise ValueError("the zygote's children take no input")
        deadline = None if timeout is None else time.monotonic() + timeout
        if not self._readers:
            for name in ("stdout", "stderr"):
                stream = getattr(self, name)
                if stream is not None:
                    reader = threading.Thread(target=self._read, args=(name, stream), daemon=True)
                    reader.start()
                    self._readers.append(reader)
        for reader in self._readers:
            reader.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
            if reader.is_alive():
                raise subprocess.TimeoutExpired(self.args, timeout)  # type: ignore[arg-type]
        self.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return self._outputs.get("stdout"), self._outputs.get("stderr")

    def _read(self, name: str, stream: IO[Any]) -> None:
        try:
            self._outputs[name] = stream.read()
        finally:
            stream.close()

    # signals -----------------------------------------------------------------------------

    def send_signal(self, sig: int) -> None:
        if self.returncode is None and self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def __del__(self) -> None:  # Popen's would warn about a process it did not start
        pass

    def __enter__(self) -> ForkedProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        for stream in (self.stdout, self.stderr):
            if stream is not None and not stream.closed:
                stream.close()
        self.wait()

    def __repr__(self) -> str:
        return f"<ForkedProcess: returncode: {self.returncode} args: {self.args[:2]!r}...>"


def popen(
    args: Sequence[str],
    *,
    stdin: int | IO[Any] | None = None,
    stdout: int | IO[Any] | None = None,
    stderr: int | IO[Any] | None = None,
    text: bool = False,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> ForkedProcess:
    """``subprocess.Popen([sys.executable, '-c', CODE, *ARGS], ...)`` served by the zygote."""
    return ForkedProcess(
        args, stdin=stdin, stdout=stdout, stderr=stderr, text=text, env=env, cwd=cwd
    )


def run(
    args: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[str]:
    """``subprocess.run(..., capture_output=True, text=True, check=False)`` served by the zygote;
    a timeout kills the child and raises ``subprocess.TimeoutExpired`` as ``run`` does."""
    proc = popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise
    assert proc.returncode is not None
    return subprocess.CompletedProcess(list(args), proc.returncode, out, err)


def start_together(project: Any, scratch: Path, commands: Sequence[Sequence[str]]) -> list[Any]:
    """`tests.helpers.start_together` with the processes forked by the zygote: each runs its
    CLI command (``--root`` the project) as soon as the "go" file exists, so the commands
    themselves overlap. Returns `tests.helpers.Finished` per command, in order."""
    from tests.helpers import _WAIT_THEN_RUN, Finished, finish, wait_until

    scratch.mkdir(parents=True, exist_ok=True)
    go = scratch / "go"
    ready = [scratch / f"ready-{n}" for n in range(len(commands))]
    procs = [
        popen(
            [
                sys.executable,
                "-c",
                _WAIT_THEN_RUN,
                str(r),
                str(go),
                "--root",
                str(project.root),
                *c,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "EVALSUITE_KEY_DIR": str(project.key_dir)},
        )
        for r, c in zip(ready, commands, strict=True)
    ]
    wait_until(
        lambda: all(r.exists() or p.poll() is not None for r, p in zip(ready, procs, strict=True)),
        "the processes are ready",
    )
    go.touch()
    finished = []
    for proc in procs:
        out, err = finish(proc)
        assert proc.returncode is not None
        finished.append(Finished(proc.returncode, out, err))
    return finished
