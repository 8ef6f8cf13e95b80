"""The code_repair jail: run the test runner where the agent's code sees only its repository.

Run as ``python -I -S -c <this file's text> <runner text> <token>`` in the episode's
repository. Standard library only (``ctypes`` for the system calls). It

1. creates new user, mount, PID, network, IPC and UTS namespaces (no privilege needed where
   unprivileged user namespaces are allowed; as root, none is gained outside);
2. builds a new root on a small tmpfs holding only, read-only: the system libraries
   (``/usr``, ``/lib*``, ``/bin``), the interpreter's own prefix, ``/etc/ld.so.cache``, a few
   device files, and the repository at ``/repo``; an empty writable ``/tmp``; no ``/proc``;
3. switches to it (``pivot_root``) and detaches the old root: the project (``tasks/``,
   ``manifests/``, ``holdout/``), the key directory, the store, other work trees and the
   harness's processes are not in the process's world at all, whatever their modes;
4. drops every capability (bounding set) and sets ``no_new_privs``, so the code cannot undo
   the mounts; mounts inherited by a namespace it creates itself are locked by the kernel;
5. runs the runner with a fresh interpreter (``-I -S``) and an environment of PATH and LANG.

When any step fails it prints ``evalsuite-jail <token>: <step>: <reason>`` on standard error
and exits with status 97, before the agent's code runs (the runner never sees the token, so
the agent's code cannot fake a harness fault): the family then reports a harness fault and
never falls back to running the code unisolated (docs/design/code_repair.md).
"""

import ctypes
import os
import platform
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MNT_DETACH = 2
KEEP = 1 | 2 | 4 | 8 | 16 | 64 | 1024 | 2048 | 4096
"""statvfs flags a bind mount in a user namespace must keep (they equal the MS_ flags)."""
PR_SET_PDEATHSIG = 1
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "arm64": 41}
FAILED = 97
ROOT = "/tmp"
"""Where the new root's tmpfs is mounted before the switch (only in the jail's namespace)."""

libc = ctypes.CDLL(None, use_errno=True)
TOKEN = sys.argv[2] if len(sys.argv) > 2 else "-"
"""The harness's token for this run: it marks the jail's own failures (the runner never sees it)."""


def fail(step: str, reason: str = "") -> None:
    reason = reason or os.strerror(ctypes.get_errno())
    sys.stderr.write(f"evalsuite-jail {TOKEN}: {step}: {reason}\n")
    sys.stderr.flush()
    os._exit(FAILED)


def check(result: int, step: str) -> None:
    if result != 0:
        fail(step)


def mount(source, target, kind, flags: int, data=None) -> None:
    enc = [None if x is None else os.fsencode(x) for x in (source, target, kind, data)]
    check(libc.mount(enc[0], enc[1], enc[2], ctypes.c_ulong(flags), enc[3]), f"mount {target}")


def write(path: str, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


def sources() -> list:
    """(path, kind) of what the new root holds, read-only: 'dir', 'file' or 'link'."""
    python = os.path.realpath(sys.executable)
    wanted = ["/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin"]
    wanted += [os.path.realpath(sys.prefix), os.path.dirname(python), "/etc/ld.so.cache"]
    wanted += ["/dev/null", "/dev/zero", "/dev/urandom", "/dev/random"]
    found = []
    for path in dict.fromkeys(wanted):
        if os.path.islink(path):
            found.append((path, "link"))
        elif os.path.isdir(path):
            found.append((path, "dir"))
        elif os.path.exists(path):
            found.append((path, "file"))
    return found


def bind(fd: int, target: str) -> None:
    """Bind the directory or file open as `fd` at `target`, read-only."""
    source = f"/proc/self/fd/{fd}"
    keep = os.statvfs(source).f_flag & KEEP
    mount(source, target, None, MS_BIND | MS_REC)
    mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | keep)


def build_root(work_fd: int, fds: list) -> None:
    mount("jail", ROOT, "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=0755")
    for path, kind, fd in fds:
        target = ROOT + path
        if kind == "link":
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if not os.path.lexists(target):
                os.symlink(os.readlink(path), target)
            continue
        if kind == "dir":
            os.makedirs(target, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            open(target, "a").close()
        bind(fd, target)
    os.makedirs(ROOT + "/repo", exist_ok=True)
    bind(work_fd, ROOT + "/repo")
    os.makedirs(ROOT + "/tmp", mode=0o1777, exist_ok=True)
    os.makedirs(ROOT + "/.old", exist_ok=True)


def pivot() -> None:
    number = PIVOT_ROOT.get(platform.machine())
    if number is None:
        fail("pivot_root", f"unsupported machine {platform.machine()!r}")
    os.chdir(ROOT)
    check(libc.syscall(number, b".", b".old"), "pivot_root")
    os.chdir("/")
    check(libc.umount2(b"/.old", MNT_DETACH), "detach the old root")
    os.rmdir("/.old")
    mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir("/repo")


def drop() -> None:
    for cap in range(64):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() != 22:
            fail("drop capabilities")
    check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")


def main() -> None:
    runner = sys.argv[1]
    python = os.path.realpath(sys.executable)
    uid, gid = os.geteuid(), os.getegid()
    flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC
    check(libc.unshare(flags | CLONE_NEWUTS), "unshare (Linux user namespaces)")
    write("/proc/self/setgroups", "deny")
    write("/proc/self/uid_map", f"0 {uid} 1")
    write("/proc/self/gid_map", f"0 {gid} 1")
    child = os.fork()
    if child:
        _, status = os.waitpid(child, 0)
        code = os.waitstatus_to_exitcode(status)
        os._exit(code if code >= 0 else 128 - code)
    check(libc.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0), "parent-death signal")
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    work_fd = os.open(".", os.O_PATH | os.O_DIRECTORY)
    fds = [(p, k, -1 if k == "link" else os.open(p, os.O_PATH)) for p, k in sources()]
    build_root(work_fd, fds)
    for _, _, fd in fds:
        if fd >= 0:
            os.close(fd)
    os.close(work_fd)
    pivot()
    drop()
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    os.execve(python, [python, "-I", "-S", "-c", runner], env)


try:
    main()
except OSError as exc:
    fail("setup", f"{type(exc).__name__}: {exc}")
