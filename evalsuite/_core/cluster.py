"""Connecting to a Ray cluster for ``--executor ray`` (docs/scale.md, "Runs on a Ray cluster").

Ray is an optional extra (``pip install 'evalsuite[ray]'``): this module imports it only when
`connect` is called, so that no command pays for it unless ``--executor ray`` is asked for
(docs/design/startup.md). Any command that spreads work over a cluster (`run` today, `guard`
next) connects through here, and gets the same messages for a missing Ray or an address where
no cluster answers.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from types import ModuleType

from evalsuite.errors import UsageError

__all__ = [
    "LOCAL_CLUSTER",
    "LOCAL_OBJECT_STORE_BYTES",
    "ClusterOptions",
    "check_address",
    "connect",
    "import_ray",
    "shutdown",
]

LOCAL_OBJECT_STORE_BYTES = 200 * 1024 * 1024
"""Object store of a local cluster made by `connect` (Ray's default is 30% of the memory)."""

LOCAL_CLUSTER = "a local Ray cluster started by this process"
"""How a run names the cluster it made itself (no ``--address``)."""

_QUIET_ENV = {
    # no usage statistics leave the machine, and no dashboard is started
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_DISABLE_DOCKER_CPU_WARNING": "1",
}


@dataclass(frozen=True, slots=True)
class ClusterOptions:
    """Where the work goes: a running cluster's address, or a local cluster made here.

    Attributes:
        address: ``HOST:PORT`` of a cluster's head (``ray start --head`` prints it), ``auto``
            (the cluster this machine belongs to), or ``ray://HOST:PORT`` (Ray Client); None
            starts a new local cluster in this process, stopped when the process ends (not one
            started earlier with ``ray start``), unless ``RAY_ADDRESS`` names a cluster.
        num_cpus: CPUs of a local cluster (None: the machine's); ignored with `address`.
        object_store_bytes: Object store of a local cluster (None: Ray's default, 30% of the
            memory; a run's shards pass only their command lines through it).
    """

    address: str | None = None
    num_cpus: int | None = None
    object_store_bytes: int | None = LOCAL_OBJECT_STORE_BYTES

    def describe(self) -> str:
        """The cluster, as messages name it."""
        address = self.address or os.environ.get("RAY_ADDRESS")
        return f"the Ray cluster at {address}" if address else LOCAL_CLUSTER


def import_ray() -> ModuleType:
    """The `ray` module.

    Raises:
        UsageError: Ray is not installed (how to install it).
    """
    for name, value in _QUIET_ENV.items():
        os.environ.setdefault(name, value)
    try:
        import ray
    except ImportError as exc:
        raise UsageError(
            f"--executor ray needs Ray, which is not installed here ({exc}): install the extra "
            "with `pip install 'evalsuite[ray]'` (on every machine of the cluster), or leave "
            "--executor out to run in this process"
        ) from None
    return ray


def _reachable(address: str, timeout_s: float) -> str | None:
    """None if a TCP connection to `address` opens in time, else why not.

    `address` is ``HOST:PORT`` or ``ray://HOST:PORT``; any other (``auto``) gives None.
    """
    bare = address.removeprefix("ray://")
    host, sep, port_text = bare.rpartition(":")
    if not sep or not host or not port_text.isdigit():
        return None
    try:
        with socket.create_connection((host.strip("[]"), int(port_text)), timeout=timeout_s):
            return None
    except OSError as exc:
        return exc.strerror or type(exc).__name__


def check_address(address: str | None, *, timeout_s: float = 5.0) -> None:
    """Refuse at once an address where nothing listens, before any other work.

    None (a local cluster) has nothing to check; `connect` checks an address again.

    Raises:
        UsageError: no TCP connection to the address opens within `timeout_s` (the cause
            named, and what to do).
    """
    if address is None:
        return
    why = _reachable(address, timeout_s)
    if why is not None:
        raise UsageError(
            f"--address {address}: no Ray cluster answers there ({why}). Give the address "
            "`ray start --head` printed on the cluster's head node (HOST:6379), check that "
            "this machine can reach it, or leave --address out to start a local cluster"
        )


def connect(options: ClusterOptions, *, timeout_s: float = 5.0) -> ModuleType:
    """Ray, connected to the cluster `options` names (a new local one without an address).

    An address is first checked with a plain TCP connection (`timeout_s`), so that an address
    where nothing listens is refused at once with a message, instead of Ray's retries.

    Raises:
        UsageError: Ray is missing; nothing answers at the address, or Ray cannot join the
            cluster there (the cause named, and what to do).
    """
    ray = import_ray()
    if ray.is_initialized():
        return ray
    check_address(options.address, timeout_s=timeout_s)
    kwargs: dict[str, object] = {
        "include_dashboard": False,
        "logging_level": "warning",
        "log_to_driver": False,
        "configure_logging": True,
    }
    if options.address is None and os.environ.get("RAY_ADDRESS"):
        # Ray's convention, as `guard --executor ray` follows it: join that cluster (its own
        # CPUs and object store, so no local settings)
        kwargs = {"logging_level": "warning", "log_to_driver": False}
    elif options.address is None:
        # "local": a new cluster of this process's own, even where a `ray start` cluster of
        # the machine is recorded in /tmp/ray (ray.init's default, address=None, would join
        # it, and refuse the num_cpus given here)
        kwargs["address"] = "local"
        if options.num_cpus is not None:
            kwargs["num_cpus"] = options.num_cpus
        if options.object_store_bytes is not None:
            kwargs["object_store_memory"] = options.object_store_bytes
    else:
        kwargs = {"address": options.address, "logging_level": "warning", "log_to_driver": False}
    try:
        ray.init(**kwargs)
    except (ConnectionError, RuntimeError, ValueError, TimeoutError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        raise UsageError(
            f"could not connect to {options.describe()}: {first}. Check that the cluster runs "
            "(`ray status` on its head node) with the same Ray and Python versions as this "
            "machine, and that RAY_AUTH_MODE is set here as on the cluster (with token "
            "authentication, Ray's default, this machine needs the cluster's token too); or "
            "leave --address out to start a local cluster"
        ) from None
    return ray


def shutdown(ray: ModuleType) -> None:
    """Disconnect from the cluster (a local cluster made by `connect` stops)."""
    if ray.is_initialized():
        ray.shutdown()
