"""The MySQL server that `backend="mysql"` without a url starts: one container per host, shared.

How the sharing is decided: the server is a container labelled `org.lifelong-gym.mysql`
with this host, user and lease folder. Every process that uses it holds a lease, a file
named after the container and the process id (holding the process's start time, so a
reused pid is not taken for the owner) in the lease folder, in the host's temporary
directory; the environments of one process share its one lease. Finding, starting and
removing happen under a file lock in that folder, so the workers of a vector env that
start at once find one container. A process that lets go of its last lease removes the
container when no lease of a live process is left; a container without such a lease (its
run was killed) is removed by the next start, which starts a fresh one. The lease folder
is in the label because a process sees only the leases of its own folder: processes with
different temporary directories (`TMPDIR`, which a batch system sets per job) each use a
server of their own, never one whose users they cannot see.
"""

from __future__ import annotations

import atexit
import fcntl
import logging
import os
import secrets
import socket
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lifelong_gym.docker_engine import docker_client
from lifelong_gym.processes import process_alive

from ...image import DEFAULT_IMAGE, PASSWORD_VARIABLE
from ..base import BackendError

logger = logging.getLogger(__name__)

LABEL = "org.lifelong-gym.mysql"  # value: scope(), whose server it is
LABEL_PASSWORD = "org.lifelong-gym.mysql.password"
LEASES = Path(tempfile.gettempdir()) / f"lifelong-gym-mysql-{os.getuid()}"
READY_TIMEOUT = 120.0
BUILD_HINT = (
    "build it with `lifelong-gym build-image mysql --name {image}` (offline, needs "
    "debootstrap) or `docker build -t {image} -f docker/mysql/Dockerfile .`"
)

_held: dict[str, int] = {}  # container id -> environments of this process using it
os.register_at_fork(after_in_child=_held.clear)  # a forked worker holds no lease of its parent


@dataclass(frozen=True)
class ServerLease:
    """This process's use of the shared server: its URL, and `release()` when done."""

    container_id: str
    url: str

    def release(self) -> None:
        """Let go of the server; the last user on the host removes its container."""
        release_server(self.container_id)


def check_image(client: Any, image: str) -> None:
    """Raise one clear line when the server's image is not in the engine."""
    try:
        client.images.get(image)
    except Exception:
        raise BackendError(
            f"the MySQL image {image!r} is not in the Docker engine; "
            + BUILD_HINT.format(image=image)
        ) from None


def acquire_server(image: str = DEFAULT_IMAGE, client: Any = None) -> ServerLease:
    """The host's running server (started from `image` if none is), answering, under a lease."""
    client = client or docker_client()
    check_image(client, image)
    with _host_lock():
        container = _running_server(client) or _start_server(client, image)
        _take_lease(container.id)
    try:
        url = _server_url(container)
        _wait_until_ready(container, url)
    except BaseException:
        release_server(container.id, client)
        raise
    return ServerLease(container.id, url)


def release_server(container_id: str, client: Any = None) -> None:
    """Drop one of this process's uses of the server; remove it when nobody uses it."""
    with _host_lock():
        if _held.get(container_id, 0) > 1:
            _held[container_id] -= 1
            return
        _held.pop(container_id, None)
        _lease_path(container_id, os.getpid()).unlink(missing_ok=True)
        if not _in_use(container_id):
            _remove(client or docker_client(), container_id)


def scope() -> str:
    """The label value of this process's server: host, user and lease folder."""
    return f"{socket.gethostname()}:{os.getuid()}:{LEASES}"


def server_containers(client: Any) -> list[Any]:
    """The server containers of this host, user and lease folder, running or not."""
    return client.containers.list(all=True, filters={"label": f"{LABEL}={scope()}"})


# -- internals ------------------------------------------------------------------------


@contextmanager
def _host_lock() -> Iterator[None]:
    """The host-wide lock of the server's leases (also between threads of one process)."""
    LEASES.mkdir(mode=0o700, exist_ok=True)
    with open(LEASES / "lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _running_server(client: Any) -> Any | None:
    """The running server some live process uses; servers nobody uses are removed."""
    found = None
    for container in server_containers(client):
        if not _in_use(container.id):
            logger.info("removing the MySQL container %s of a run that ended", container.short_id)
            _remove(client, container.id)
        elif found is None and container.status == "running":
            found = container
    return found


def _start_server(client: Any, image: str) -> Any:
    password = secrets.token_urlsafe(18)
    try:
        return client.containers.run(
            image,
            detach=True,
            labels={LABEL: scope(), LABEL_PASSWORD: password},
            environment={PASSWORD_VARIABLE: password},
            tmpfs={"/var/lib/mysql": "size=2g", "/run/mysqld": "size=16m"},
            # a free port of the host's choosing, on loopback only (never 3306)
            ports={"3306/tcp": ("127.0.0.1", None)},
            hostname="lifelong-mysql",
        )
    except Exception as error:
        raise BackendError(f"starting the MySQL container from {image!r} failed: {error}") from None


def _server_url(container: Any) -> str:
    container.reload()
    bindings = (container.attrs["NetworkSettings"]["Ports"] or {}).get("3306/tcp") or []
    if not bindings:
        raise BackendError(f"the MySQL container {container.short_id} publishes no port")
    password = container.labels[LABEL_PASSWORD]
    return f"mysql://root:{password}@127.0.0.1:{bindings[0]['HostPort']}"


def _wait_until_ready(container: Any, url: str) -> None:
    import pymysql

    from .backend import parse_url

    arguments = parse_url(url)
    deadline = time.monotonic() + READY_TIMEOUT
    while True:
        try:
            pymysql.connect(connect_timeout=2, **arguments).close()
            return
        except pymysql.MySQLError as error:
            container.reload()
            if container.status != "running" or time.monotonic() > deadline:
                log = container.logs(tail=5).decode(errors="replace").strip().replace("\n", " | ")
                raise BackendError(
                    f"the MySQL container {container.short_id} did not answer ({error}); "
                    f"status {container.status}, log: {log}"
                ) from None
        time.sleep(0.1)


def _lease_path(container_id: str, pid: int) -> Path:
    return LEASES / f"{container_id[:12]}.{pid}"


def _process_start(pid: int) -> str:
    """When process `pid` started (clock ticks since boot), or '' where /proc cannot say."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rsplit(")", 1)[1].split()[19]


def _take_lease(container_id: str) -> None:
    if _held.get(container_id, 0) == 0:
        _lease_path(container_id, os.getpid()).write_text(_process_start(os.getpid()))
    _held[container_id] = _held.get(container_id, 0) + 1


def _in_use(container_id: str) -> bool:
    """Whether a live process holds a lease on the container; stale leases are deleted."""
    if _held.get(container_id):
        return True
    used = False
    for lease in LEASES.glob(f"{container_id[:12]}.*"):
        pid = int(lease.suffix[1:])
        started = lease.read_text()
        if process_alive(pid) and (not started or started == _process_start(pid)):
            used = True
        else:
            lease.unlink(missing_ok=True)
    return used


def _remove(client: Any, container_id: str) -> None:
    try:
        client.api.remove_container(container_id, force=True)
    except Exception as error:  # already gone
        logger.debug("removing %s: %s", container_id[:12], error)


@atexit.register
def _release_at_exit() -> None:
    for container_id in list(_held):
        _held[container_id] = 1
        release_server(container_id)
