"""Database back-ends: embedded SQLite and a MySQL/MariaDB server."""

from __future__ import annotations

from typing import Any

from lifelong_gym.errors import EnvArgumentError

from .base import BackendError, DatabaseBackend, StatementResult
from .sqlite import SqliteBackend

BACKENDS = ("sqlite", "mysql")


def make_backend(backend: str, url: str | None = None, **limits: Any) -> DatabaseBackend:
    """The back-end named `backend`: "sqlite", or "mysql" at `url` (or on a started server)."""
    if backend == "sqlite":
        if url is not None:
            raise EnvArgumentError(
                "backend='sqlite' takes no url; for a server use backend='mysql'"
            )
        return SqliteBackend(**limits)
    if backend == "mysql":
        if not url:
            from .mysql.started import StartedMysqlBackend

            return StartedMysqlBackend(**limits)
        from .mysql.backend import MysqlBackend

        return MysqlBackend(url, **limits)
    raise EnvArgumentError(f"backend={backend!r} is unknown; choose one of {', '.join(BACKENDS)}")


__all__ = [
    "BACKENDS",
    "BackendError",
    "DatabaseBackend",
    "StatementResult",
    "SqliteBackend",
    "make_backend",
]
