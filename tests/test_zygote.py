"""The tests' fork server (tests/zygote.py): a forked child is what a fresh interpreter would be.

A child forked by the zygote and a fresh ``python -c`` given the same argv, environment and
working directory must see the same temporary directory, environment, directory, inspect
data and cache directories, signal dispositions, argv, umask, ``sys.path``, open descriptors
and threads; they must end the same way (exit codes, tracebacks, SIGINT, signals); their
files must land where the environment says (a privacy test's HOME and TMPDIR); and the
child's CPU must reach the timing plugin.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import timing, zygote
from tests.helpers import REPO, finish, wait_until

_STATE = """
import json, os, signal, sys, tempfile, threading
import platformdirs
def name(handler):
    if handler is signal.SIG_DFL: return "SIG_DFL"
    if handler is signal.SIG_IGN: return "SIG_IGN"
    if handler is signal.default_int_handler: return "default_int_handler"
    return repr(handler)
fds = sorted(int(f) for f in os.listdir("/proc/self/fd"))
umask = os.umask(0)
print(json.dumps({
    "tempdir": tempfile.gettempdir(),
    "environ": dict(os.environ),
    "cwd": os.getcwd(),
    "home": os.path.expanduser("~"),
    # inspect's data and cache directories, as inspect_ai._util.appdirs computes them (on each
    # call; importing inspect here would cost the fresh interpreter about 2.5 s of CPU)
    "inspect_data": str(platformdirs.user_data_path("inspect_ai")),
    "inspect_cache": str(platformdirs.user_cache_path("inspect_ai")),
    "signals": {s.name: name(signal.getsignal(s)) for s in signal.Signals
                if s not in (signal.SIGKILL, signal.SIGSTOP)},
    "wakeup_fd": signal.set_wakeup_fd(-1),
    "argv": sys.argv,
    "umask": umask,
    "path": sys.path,
    "fds": fds[:3],
    "fd_count": len(fds),
    "threads": threading.active_count(),
    "main": sorted(k for k in globals() if k.startswith("__")),
    "stdout": [sys.stdout.encoding, sys.stdout.errors, sys.stdout.line_buffering],
}))
"""


def _env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    (tmp_path / "tmp").mkdir()
    home.mkdir()
    return dict(
        os.environ,
        HOME=str(home),
        XDG_DATA_HOME=str(home / ".local/share"),
        XDG_CACHE_HOME=str(home / ".cache"),
        TMPDIR=str(tmp_path / "tmp"),
        EVALSUITE_ZYGOTE_PROBE="a value only this child has",
        PYTHONPATH=str(REPO),
    )


def _both(code: str, *args: str, env: dict[str, str], cwd: Path) -> list[tuple[int, str, str]]:
    """(exit code, stdout, stderr) of `python -c code args` fresh, then forked by the zygote."""
    results = []
    for start in (subprocess.Popen, zygote.popen):
        proc = start(
            [sys.executable, "-c", code, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=cwd,
        )
        out, err = finish(proc)
        assert proc.returncode is not None
        results.append((proc.returncode, out, err))
    return results


def test_a_forked_child_sees_what_a_fresh_interpreter_sees(tmp_path: Path) -> None:
    env = _env(tmp_path)
    workdir = tmp_path / "work"
    workdir.mkdir()
    (fresh_code, fresh_out, fresh_err), (forked_code, forked_out, forked_err) = _both(
        _STATE, "--root", "x y", env=env, cwd=workdir
    )
    assert fresh_code == forked_code == 0, (fresh_err, forked_err)
    fresh, forked = json.loads(fresh_out), json.loads(forked_out)
    assert forked == fresh
    # and what they both see is the environment given, not the zygote's
    assert fresh["tempdir"] == str(tmp_path / "tmp")
    assert fresh["inspect_data"] == str(tmp_path / "home/.local/share/inspect_ai")
    assert fresh["environ"]["EVALSUITE_ZYGOTE_PROBE"] == "a value only this child has"
    # a fresh child inherits an ignored SIGINT (as under pytest-xdist, whose workers ignore
    # it); otherwise Python installs its KeyboardInterrupt handler
    ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    assert fresh["signals"]["SIGINT"] == ("SIG_IGN" if ignored else "default_int_handler")
    assert fresh["argv"] == ["-c", "--root", "x y"]
    assert fresh["cwd"] == str(workdir)


def test_a_forked_child_ends_as_a_fresh_interpreter_ends(tmp_path: Path) -> None:
    env = _env(tmp_path)
    cases = {
        "exit 3": "import sys; sys.exit(3)",
        "exit with a message": "import sys; print('out'); sys.exit('went wrong')",
        "uncaught exception": "print('before', flush=True)\nraise ValueError('boom')",
        "uncaught KeyboardInterrupt": "raise KeyboardInterrupt",
        "atexit handlers": "import atexit; atexit.register(print, 'at exit')",
        "unflushed output": "import sys; sys.stdout.write('no newline')",
        "non-daemon thread": (
            "import threading, time\n"
            "threading.Thread(target=lambda: (time.sleep(0.2), print('joined'))).start()"
        ),
    }
    for what, code in cases.items():
        fresh, forked = _both(code, env=env, cwd=tmp_path)
        assert forked == fresh, what


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_a_signal_ends_a_forked_child_as_it_ends_a_fresh_one(
    tmp_path: Path, sig: signal.Signals
) -> None:
    code = (  # SIGINT raises KeyboardInterrupt, as in a run process (evalsuite installs its
        # handlers; a child of a pytest-xdist worker inherits SIGINT ignored)
        "import pathlib, signal, sys, time\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "pathlib.Path(sys.argv[1]).touch()\n"
        "try:\n    time.sleep(60)\n"
        "except KeyboardInterrupt:\n    print('interrupted'); sys.exit(130)\n"
    )
    ends = []
    for n, start in enumerate((subprocess.Popen, zygote.popen)):
        ready = tmp_path / f"ready-{n}"
        proc = start(
            [sys.executable, "-c", code, str(ready)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_until(ready.exists, "the child is ready", proc=proc)
        proc.send_signal(sig)
        out, _err = finish(proc)
        ends.append((proc.returncode, out))
    assert ends[0] == ends[1]
    assert ends[1][0] == (130 if sig == signal.SIGINT else -sig)


def test_files_a_forked_child_writes_land_in_its_own_home_and_tmpdir(tmp_path: Path) -> None:
    """What the privacy tests rely on: a leak to the temporary directory or HOME of a forked
    run process lands in the test's directories, where their scans look."""
    env = _env(tmp_path)
    code = (
        "import pathlib, tempfile\n"
        "pathlib.Path(tempfile.gettempdir(), 'leak').write_text('PLANTED')\n"
        "(pathlib.Path.home() / 'leak').write_text('PLANTED')\n"
        "tempfile.NamedTemporaryFile(delete=False).write(b'PLANTED')\n"
    )
    proc = zygote.popen([sys.executable, "-c", code], env=env, stderr=subprocess.PIPE, text=True)
    _out, err = finish(proc)
    assert proc.returncode == 0, err
    assert (tmp_path / "tmp" / "leak").read_text() == "PLANTED"
    assert (tmp_path / "home" / "leak").read_text() == "PLANTED"
    assert len(list((tmp_path / "tmp").iterdir())) == 2


def test_two_forked_children_draw_different_numpy_randomness() -> None:
    code = "import numpy; print(numpy.random.random())"
    draws = {zygote.run([sys.executable, "-c", code]).stdout for _ in range(2)}
    assert len(draws) == 2


def test_a_forked_childs_cpu_is_counted_by_the_timing_plugin() -> None:
    zygote.zygote()  # started already: its start-up is not this child's
    before = timing._FORKED_CPU[0]
    t0 = time.process_time()
    done = zygote.run([sys.executable, "-c", "sum(i * i for i in range(2_000_000))"])
    assert done.returncode == 0
    spent = timing._FORKED_CPU[0] - before
    assert spent > 0.05  # the child's loop, about 0.1 to 0.3 s
    assert spent > 5 * (time.process_time() - t0)  # the child's, not this process's


def test_a_forked_child_is_a_separate_process_of_the_zygote() -> None:
    code = "import os; print(os.getpid(), os.getppid())"
    pid, ppid = map(int, zygote.run([sys.executable, "-c", code]).stdout.split())
    assert pid != os.getpid()
    assert ppid == zygote.zygote().pid


def test_the_zygote_runs_only_python_c() -> None:
    with pytest.raises(ValueError, match="-c CODE"):
        zygote.popen(["ls"])


def test_another_process_of_the_session_attaches_to_a_serving_zygote(tmp_path: Path) -> None:
    """How the pytest-xdist workers share one zygote: a worker finds the one in the shared
    directory if it still serves, and nothing where none does."""
    serving = zygote.zygote()
    attached = zygote.Zygote.attach(Path(serving.dir))
    assert attached is not None and attached.pid == serving.pid
    assert zygote.Zygote.attach(tmp_path) is None
