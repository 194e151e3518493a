"""The Docker engine that the OS sandboxes and the started MySQL server run on."""

from __future__ import annotations

import os
from typing import Any

from lifelong_gym.errors import SandboxError


def docker_client() -> Any:
    """A Docker SDK client from the environment (DOCKER_HOST), or a clear error."""
    try:
        import docker
    except ImportError:
        raise SandboxError(
            "containers need the docker SDK: pip install 'lifelong-gym[docker]'"
        ) from None
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
