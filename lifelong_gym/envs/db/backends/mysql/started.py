"""`backend="mysql"` without a url: the MySQL back-end on the server container of this host."""

from __future__ import annotations

import atexit
import logging
import weakref
from typing import Any

from lifelong_gym.docker_engine import docker_client

from ...image import DEFAULT_IMAGE
from ...tasks import TableInfo
from ..base import BackendError, DatabaseBackend, StatementResult
from .backend import MysqlBackend
from .server import ServerLease, acquire_server, check_image

logger = logging.getLogger(__name__)
_LIVE: weakref.WeakSet[StartedMysqlBackend] = weakref.WeakSet()


class StartedMysqlBackend(DatabaseBackend):
    """A `MysqlBackend` on the host's shared server container, started at the first task.

    The container starts (or is found) at the first `start`, not at construction, so an
    environment built only to read its spaces (as a vector env's first copy is) starts
    nothing. Accounts, limits and hashes are those of `MysqlBackend` with a url.
    """

    dialect = "mysql"

    def __init__(self, *, image: str = DEFAULT_IMAGE, **options: Any):
        super().__init__(
            **{k: options[k] for k in ("statement_timeout", "max_rows") if k in options}
        )
        self.image = image
        self._options = options
        self._client = docker_client()
        check_image(self._client, image)
        self._lease: ServerLease | None = None
        self._server: MysqlBackend | None = None
        self._closed = False
        _LIVE.add(self)

    @property
    def url(self) -> str | None:
        """The started server's URL (None before the first task)."""
        return None if self._lease is None else self._lease.url

    def start(self, table: TableInfo) -> None:
        """Start or find the server on first use, then create the task's database on it.

        When the server went away (its container was killed or restarted), the host's
        server is found again, or started anew, and the task starts there.
        """
        if self._server is None:
            if self._closed:
                raise RuntimeError("the back-end is closed")
            self._join()
        try:
            self._server.start(table)
        except BackendError as error:
            logger.warning("%s; finding the host's MySQL server again", error)
            self._rejoin()
            self._server.start(table)

    def execute(self, sql: str) -> StatementResult:
        """Run one agent statement (see `MysqlBackend.execute`)."""
        return self._started().execute(sql)

    @property
    def database(self) -> str | None:
        """The task's database on the server (see `MysqlBackend.database`)."""
        return None if self._server is None else self._server.database

    def table_hash(self, table: TableInfo) -> str | None:
        """The table hash the server computes (see `MysqlBackend.table_hash`)."""
        return self._started().table_hash(table)

    def discard(self) -> None:
        """Drop the task's database, if there is one."""
        if self._server is not None:
            self._server.discard()

    def close(self) -> None:
        """Close the MySQL back-end, then let go of the server; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        _LIVE.discard(self)
        try:
            if self._server is not None:
                self._server.close()
        finally:
            if self._lease is not None:
                self._lease.release()
                self._lease = None

    def _join(self) -> None:
        """Take a lease on the host's running server (started if none is) and connect."""
        lease = acquire_server(self.image, self._client)
        try:
            # no wait for a server that went away: its container may answer on another port
            self._server = MysqlBackend(lease.url, reconnect_timeout=0, **self._options)
        except BaseException:
            lease.release()
            raise
        self._lease = lease

    def _rejoin(self) -> None:
        """Join the server anew, then let go of the one that went away."""
        gone, lease = self._server, self._lease
        self._join()  # the same container restarted, or a fresh one when it is gone
        gone.close()
        lease.release()

    def _started(self) -> MysqlBackend:
        if self._server is None:
            raise RuntimeError("no task database: start() must come first")
        return self._server


@atexit.register
def _close_live_backends() -> None:
    for backend in list(_LIVE):
        backend.close()
