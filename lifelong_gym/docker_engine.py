"""The Docker engine that the OS sandboxes and the started MySQL server run on."""

from __future__ import annotations

import os
from typing import Any

from lifelong_gym.errors import SandboxError
from lifelong_gym.extras import import_extra
from lifelong_gym.reconnect import RECONNECT_TIMEOUT, wait_for_server


def docker_client() -> Any:
    """A Docker SDK client from the environment (DOCKER_HOST), or a clear error."""
    docker = import_extra("docker", "docker", "running containers")
    try:
        client = docker.from_env(timeout=120)
        client.ping()
    except Exception as error:
        where = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
        raise SandboxError(
            f"cannot reach a Docker engine at {where} ({error}); start dockerd "
            "(or Podman's socket) or set DOCKER_HOST"
        ) from None
    return client


def wait_for_engine(client: Any, timeout: float = RECONNECT_TIMEOUT) -> None:
    """Return once the engine answers; an engine restarting is waited for up to `timeout`
    seconds (the client connects again by itself), then SandboxError."""

    def ping() -> None:
        try:
            client.ping()
        except Exception as error:
            raise SandboxError(f"the Docker engine does not answer ({error})") from None

    wait_for_server(ping, timeout)
