"""The MySQL/MariaDB back-end: one server, a fresh database per task, an agent account per env.

The agent's statements run as an account that can touch only the task's database; the
ground truth stays in this process. A watchdog kills statements that overrun. Databases
and accounts are named after the host and process that made them, so a crashed run's
leftovers are found and dropped at the next start on that host.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import socket
import threading
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

from lifelong_gym.processes import process_alive

from ..table_hash import GROUP_CONCAT_MAX_LEN, table_hash_sql
from ..tasks import TableInfo
from .base import BackendError, DatabaseBackend, StatementResult, overrun_message

PREFIX = "lgym_"
_HOST_TAG = hashlib.sha1(socket.gethostname().encode()).hexdigest()[:6]


def quote(identifier: str) -> str:
    """A MySQL identifier in backticks."""
    return "`" + identifier.replace("`", "``") + "`"


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
        # TLS costs ~20 ms a connection; ask for it with ?ssl=true on remote servers
        "ssl_disabled": query.get("ssl", ["false"])[0].lower() not in ("1", "true", "yes"),
    }


def _pymysql():
    try:
        import pymysql
    except ImportError:
        raise BackendError(
            "backend='mysql' needs PyMySQL: pip install 'lifelong-gym[mysql]'"
        ) from None
    return pymysql


class MysqlBackend(DatabaseBackend):
    """Runs each task in its own database on a shared MySQL or MariaDB server."""

    dialect = "mysql"

    def __init__(self, url: str, *, sql_mode: str | None = None, **limits: Any):
        super().__init__(**limits)
        self.sql_mode = sql_mode
        self._pymysql = _pymysql()
        self._server = parse_url(url)
        self._owner = f"{_HOST_TAG}_{os.getpid()}"
        token = secrets.token_hex(3)
        self._account = f"{PREFIX}{self._owner}_{token}"
        self._password = secrets.token_urlsafe(18)
        self._database: str | None = None
        self._agent: Any = None
        self._admin = self._connect(**self._server)
        self._drop_leftovers()
        self._admin_run("CREATE USER %s@'%%' IDENTIFIED BY %s", (self._account, self._password))
        self._closed = False

    def start(self, table: TableInfo) -> None:
        """Create a fresh database with the task's table, open to the agent's account only."""
        self.discard()
        name = f"{self._account}_{secrets.token_hex(3)}"
        self._admin_run(f"CREATE DATABASE {quote(name)} CHARACTER SET utf8mb4")
        self._database = name
        columns = ", ".join(f"{quote(c.name)} {c.type}" for c in table.column_info_list)
        target = f"{quote(name)}.{quote(table.name)}"
        self._admin_run(f"CREATE TABLE {target} ({columns})")
        if table.row_list:
            marks = ", ".join(["%s"] * len(table.column_info_list))
            with self._admin.cursor() as cursor:
                cursor.executemany(
                    f"INSERT INTO {target} VALUES ({marks})", [list(r) for r in table.row_list]
                )
        self._admin.commit()
        self._admin_run(f"GRANT ALL PRIVILEGES ON {quote(name)}.* TO %s@'%%'", (self._account,))
        self._agent = self._connect(
            **{**self._server, "user": self._account, "password": self._password},
            database=name,
            read_timeout=self.statement_timeout + 30,
        )
        if self.sql_mode is not None:
            with self._agent.cursor() as cursor:
                cursor.execute("SET SESSION sql_mode = %s", (self.sql_mode,))

    def execute(self, sql: str) -> StatementResult:
        """Run one agent statement as the agent's account, killed if it overruns."""
        if self._agent is None:
            raise RuntimeError("no task database: start() must come first")
        pymysql = self._pymysql
        connection_id = self._agent.thread_id()
        fired = threading.Event()

        def kill() -> None:
            fired.set()
            try:
                with self._connect(**self._server) as killer, killer.cursor() as cursor:
                    cursor.execute(f"KILL QUERY {int(connection_id)}")
            except pymysql.MySQLError:
                pass

        watchdog = threading.Timer(self.statement_timeout, kill)
        watchdog.start()
        cursor = self._agent.cursor(pymysql.cursors.SSCursor)
        try:
            cursor.execute(sql)
            if cursor.description is None:
                return StatementResult()
            rows = cursor.fetchmany(self.max_rows + 1)
            more = len(rows) > self.max_rows
            if fired.is_set():  # SLEEP() returns normally when its query is killed
                return StatementResult(error=self._overrun())
            if more:  # stop the server from streaming the rest
                watchdog.cancel()
                kill()
            return StatementResult(rows=list(rows[: self.max_rows]), more_rows=more)
        except pymysql.MySQLError as error:
            if fired.is_set() and not isinstance(error, pymysql.err.ProgrammingError):
                return StatementResult(error=self._overrun())
            return StatementResult(error=_message(error))
        finally:
            watchdog.cancel()
            self._close_cursor(cursor)

    def table_hash(self, table: TableInfo) -> str | None:
        """The table hash, computed by the server itself (CONCAT_WS, MD5, GROUP_CONCAT)."""
        if self._database is None:
            raise RuntimeError("no task database: start() must come first")
        with self._admin.cursor() as cursor:
            cursor.execute(
                "SELECT COLUMN_NAME FROM information_schema.COLUMNS "
                "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION",
                (self._database, table.name),
            )
            columns = [quote(row[0]) for row in cursor.fetchall()]
            if not columns:
                raise LookupError(f"the table {table.name!r} no longer exists")
            cursor.execute(f"SET SESSION group_concat_max_len = {GROUP_CONCAT_MAX_LEN}")
            cursor.execute(table_hash_sql(f"{quote(self._database)}.{quote(table.name)}", columns))
            (digest,) = cursor.fetchone()
        return digest

    def discard(self) -> None:
        """Close the agent's connection and drop the task's database."""
        if self._agent is not None:
            try:
                self._agent.close()
            except Exception:  # noqa: BLE001 - a broken connection is closed either way
                pass
            self._agent = None
        if self._database is not None:
            name, self._database = self._database, None
            self._admin_run(f"DROP DATABASE IF EXISTS {quote(name)}")

    def close(self) -> None:
        """Drop the task's database and the agent's account, then disconnect."""
        if getattr(self, "_closed", True):
            return
        self._closed = True
        try:
            self.discard()
            self._admin_run("DROP USER IF EXISTS %s@'%%'", (self._account,))
        finally:
            self._admin.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    # -- internals --------------------------------------------------------------------

    def _overrun(self) -> str:
        return overrun_message(self.statement_timeout)

    def _connect(self, **arguments: Any) -> Any:
        pymysql = self._pymysql
        try:
            return pymysql.connect(
                connect_timeout=10,
                autocommit=True,
                charset="utf8mb4",
                local_infile=False,
                **arguments,
            )
        except pymysql.MySQLError as error:
            where = f"{self._server['host']}:{self._server['port']}"
            raise BackendError(
                f"cannot connect to MySQL at {where} as {arguments['user']!r}: {_message(error)}; "
                "check that the server runs and the url (mysql://user:password@host:port) is right"
            ) from None

    def _admin_run(self, sql: str, arguments: tuple[Any, ...] | None = None) -> None:
        with self._admin.cursor() as cursor:
            cursor.execute(sql, arguments)

    def _drop_leftovers(self) -> None:
        """Drop databases and accounts of dead processes on this host."""
        with self._admin.cursor() as cursor:
            cursor.execute("SHOW DATABASES LIKE %s", (f"{PREFIX}{_HOST_TAG}\\_%",))
            databases = [row[0] for row in cursor.fetchall()]
            cursor.execute(
                "SELECT User FROM mysql.user WHERE User LIKE %s", (f"{PREFIX}{_HOST_TAG}\\_%",)
            )
            accounts = [row[0] for row in cursor.fetchall()]
        for database in databases:
            if not _owner_alive(database):
                self._admin_run(f"DROP DATABASE IF EXISTS {quote(database)}")
        for account in accounts:
            if not _owner_alive(account):
                self._admin_run("DROP USER IF EXISTS %s@'%%'", (account,))

    def _close_cursor(self, cursor: Any) -> None:
        try:
            cursor.close()
        except self._pymysql.MySQLError:
            # the connection is unusable after a killed stream: reconnect for the next statement
            database = self._database
            self._agent.close()
            self._agent = self._connect(
                **{**self._server, "user": self._account, "password": self._password},
                database=database,
                read_timeout=self.statement_timeout + 30,
            )


def _owner_alive(name: str) -> bool:
    """Whether the process named in a database or account name still runs on this host."""
    try:
        pid = int(name[len(PREFIX) :].split("_")[1])
    except (IndexError, ValueError):
        return True
    return pid == os.getpid() or process_alive(pid)


def _message(error: Exception) -> str:
    arguments = getattr(error, "args", ())
    if len(arguments) == 2 and isinstance(arguments[0], int):
        return f"({arguments[0]}) {arguments[1]}"
    return str(error)
