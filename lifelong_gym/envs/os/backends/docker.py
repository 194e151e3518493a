"""The Docker sandbox: containers of the engine, labelled with their run.

Every container carries the labels of its run (run id, owner pid and host), so that
`close()`, the exit handler, or the next start after a crash can find and remove it
(`remove_leftovers`). The pool, the shells and the judge are the sandbox's own
(sandbox.py); the OCI runtime's counterpart is oci.py.
"""

from __future__ import annotations

import logging
import os
import socket
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from lifelong_gym.docker_engine import docker_client, wait_for_engine
from lifelong_gym.envs.os.backends.sandbox import (
    KEEPER_ARGV,
    Limits,
    Sandbox,
    SandboxPool,
    start_shells,
)
from lifelong_gym.envs.os.backends.shell import Channel, DockerChannel
from lifelong_gym.envs.os.backends.toolset import TOOLSET_ROOT, agent_programs, ensure_toolset
from lifelong_gym.errors import SandboxError
from lifelong_gym.processes import process_alive

logger = logging.getLogger(__name__)

LABEL = "org.lifelong-gym.os"  # value: the run id
LABEL_PID = "org.lifelong-gym.os.pid"
LABEL_HOST = "org.lifelong-gym.os.host"
BUILD_HINT = (
    "build it with `lifelong-gym build-image os --name {image}` (offline, needs "
    "debootstrap) or `docker build -t {image} docker/os`"
)


class DockerContainer:
    """A container of the Docker engine."""

    def __init__(self, client: Any, container: Any):
        self.client = client
        self.docker = container
        self.id: str = container.id

    def exec(self, argv: list[str], environment: dict[str, str] | None) -> Channel:
        return DockerChannel(self.client, self.id, argv, environment)

    def restart(self) -> None:
        self.docker.restart(timeout=0)

    def running(self) -> bool:
        try:
            self.docker.reload()
        except Exception:  # noqa: BLE001 - removed, or the engine is gone
            return False
        return self.docker.status == "running"

    def remove(self) -> None:
        self.docker.remove(force=True)


class ContainerPool(SandboxPool):
    """The Docker sandbox: containers of the engine, labelled with their run."""

    def __init__(
        self,
        image: str,
        *,
        size: int = 2,
        limits: Limits | None = None,
        client: Any = None,
    ):
        super().__init__(size=size, limits=limits)
        self.image = image
        self._owns_client = client is None
        self.client = client or docker_client()
        self._storage_ok = True
        self._check_image()
        remove_leftovers(self.client)
        self.toolset = ensure_toolset(self.client, image, self._labels())
        self.agent_mounts: dict[str, dict[str, str]] = {}
        if self.limits.restrict_commands:  # the toolset's copies over the image's programs
            source = self.client.volumes.get(self.toolset).attrs["Mountpoint"]
            self.agent_mounts = {
                source + path: {"bind": path, "mode": "ro"}
                for path in agent_programs(self.client, image, self.toolset)
            }
        self._start_making()

    def wait_until_ready(self) -> None:
        wait_for_engine(self.client)

    def _check_image(self) -> None:
        try:
            self.client.images.get(self.image)
        except Exception:
            raise SandboxError(
                f"the image {self.image!r} is not in the Docker engine; "
                + BUILD_HINT.format(image=self.image)
            ) from None

    def create(self) -> Sandbox:
        from docker.types import Ulimit

        limits = self.limits
        options: dict[str, Any] = {
            "command": KEEPER_ARGV,
            # PID 1 ignores SIGTERM (KEEPER): a stop (`docker stop`, the engine's shutdown
            # or restart) would wait its 10 s for nothing before killing it
            "stop_signal": "SIGKILL",
            "detach": True,
            "labels": self._labels(),
            "volumes": {self.toolset: {"bind": TOOLSET_ROOT, "mode": "ro"}, **self.agent_mounts},
            "mem_limit": limits.memory,
            "memswap_limit": limits.memory,
            "pids_limit": limits.pids,
            "nano_cpus": int(limits.cpus * 1e9),
            "ulimits": [Ulimit(name="fsize", soft=limits.file_size, hard=limits.file_size)],
            "hostname": "lifelong-os",
            "extra_hosts": {"lifelong-os": "127.0.0.1"},
        }
        if not limits.network:
            options["network_mode"] = "none"
        if limits.storage and self._storage_ok:
            try:
                container = self.client.containers.run(
                    self.image, storage_opt={"size": limits.storage}, **options
                )
            except Exception as error:
                if "storage" not in str(error).lower() and "quota" not in str(error).lower():
                    raise
                self._storage_ok = False  # this driver has no quota: the timeout bounds disk use
                container = self.client.containers.run(self.image, **options)
        else:
            container = self.client.containers.run(self.image, **options)
        return start_shells(DockerContainer(self.client, container), limits)

    def close(self) -> None:
        """As `SandboxPool.close`, then the client's connections to the engine, if it is ours."""
        super().close()
        if self._owns_client:
            self.client.close()

    def _labels(self) -> dict[str, str]:
        return {LABEL: self.run_id, LABEL_PID: str(os.getpid()), LABEL_HOST: socket.gethostname()}

    def _remove_all(self) -> None:
        remove_containers(self.client, {"label": f"{LABEL}={self.run_id}"})
        remove_leftovers(self.client)  # and those of runs killed meanwhile (a lost Ray actor)


def remove_containers(client: Any, filters: dict[str, Any]) -> int:
    """Force-remove the containers matching `filters`, in parallel; return how many."""
    return _remove(client, [c["Id"] for c in client.api.containers(all=True, filters=filters)])


def remove_leftovers(client: Any) -> int:
    """Remove the containers of crashed runs on this host (their owner process is gone)."""
    host = socket.gethostname()
    stale = []
    for container in client.api.containers(all=True, filters={"label": LABEL}):
        labels = container.get("Labels") or {}
        pid = int(labels.get(LABEL_PID, "0") or 0)
        if labels.get(LABEL_HOST) == host and pid != os.getpid() and not process_alive(pid):
            stale.append(container["Id"])
    if stale:
        logger.info("removing %d containers left by crashed runs", len(stale))
    return _remove(client, stale)


def _remove(client: Any, ids: list[str]) -> int:
    def remove(container_id: str) -> None:
        try:
            client.api.remove_container(container_id, force=True)
        except Exception as error:  # already gone
            logger.debug("removing %s: %s", container_id[:12], error)

    try:
        with ThreadPoolExecutor(4) as executor:
            list(executor.map(remove, ids))
    except RuntimeError:  # at interpreter exit no new thread may start: one by one
        for container_id in ids:
            remove(container_id)
    return len(ids)
