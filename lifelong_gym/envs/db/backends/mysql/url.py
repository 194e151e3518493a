"""The URL of a MySQL or MariaDB server: `mysql://user:password@host:port[?ssl=true]`."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

from ..base import BackendError


def parse_url(url: str) -> dict[str, Any]:
    """PyMySQL connection arguments from `mysql://user:password@host:port`."""
    parsed = urlparse(url)
    if parsed.scheme not in ("mysql", "mariadb", "mysql+pymysql"):
        raise BackendError(
            f"url={url!r}: expected mysql://user:password@host:port (e.g. mysql://root@127.0.0.1:3306)"
        )
    if not parsed.hostname:
        raise BackendError(f"url={url!r} names no host; e.g. mysql://root@127.0.0.1:3306")
    try:
        port = parsed.port or 3306
    except ValueError:
        raise BackendError(f"url={url!r} has an invalid port") from None
    query = parse_qs(parsed.query)
    return {
        "host": parsed.hostname,
        "port": port,
        "user": unquote(parsed.username or "root"),
        "password": unquote(parsed.password or ""),
        # off by default: a loopback server needs no TLS, and its handshake is paid at every
        # connection (docs/db-tasks.md, "On MySQL"); ?ssl=true asks for it on remote servers
        "ssl_disabled": query.get("ssl", ["false"])[0].lower() not in ("1", "true", "yes"),
    }
