"""What the servers of `lifelong-gym serve` share: the listening socket, `info` as JSON."""

from __future__ import annotations

import json
import socket
from collections.abc import Mapping
from typing import Any

from lifelong_gym.errors import ConfigError


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on host:port, or a one-line error saying why there is none."""
    try:
        return socket.create_server((host, port), reuse_port=False)
    except OSError as error:
        raise ConfigError(
            f"cannot listen on {host}:{port} ({error.strerror or error}); "
            "pass --port a free port (or --host an address of this machine)"
        ) from None


def plain_info(info: Mapping[str, Any]) -> dict[str, Any]:
    """`info` as JSON values (numpy scalars and other objects as numbers or text)."""
    return json.loads(json.dumps(dict(info), default=_to_json))


def _to_json(value: Any) -> Any:
    item = getattr(value, "item", None)
    return item() if callable(item) else str(value)
