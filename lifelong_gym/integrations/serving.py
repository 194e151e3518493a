"""What the servers of `lifelong-gym serve` share: the listening socket, the open-files
limit, `info` as JSON."""

from __future__ import annotations

import json
import resource
import socket
import sys
from collections.abc import Mapping
from typing import Any

from lifelong_gym.errors import ConfigError

# Connections the kernel queues before the server accepts them (uvicorn's own default):
# Python's default of 128 drops the rest of a burst of clients, which wait seconds to retry.
BACKLOG = 2048
# Files a server holds besides its sessions' sockets: modules, logs, the listening socket.
OTHER_FILES = 256


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on host:port, or a one-line error saying why there is none."""
    try:
        return socket.create_server((host, port), backlog=BACKLOG, reuse_port=False)
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


def raise_open_files_limit(sessions: int) -> None:
    """Raise this process's open-files limit to its hard limit; if even that is too low
    for `sessions` sessions (a socket each, and what their environments open), say so in
    one line on stderr."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    needed = 2 * sessions + OTHER_FILES
    if hard != resource.RLIM_INFINITY and hard < needed:
        print(
            f"open files: the limit is {hard}, {sessions} sessions may need {needed}; raise "
            "it (ulimit -n as root, LimitNOFILE= in a systemd unit, --ulimit nofile= in "
            "Docker) or lower --max-sessions",
            file=sys.stderr,
        )
