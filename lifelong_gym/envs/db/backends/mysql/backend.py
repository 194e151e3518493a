"""The MySQL/MariaDB back-end: one server, a fresh database per task, an agent account per env.

The agent's statements pass an allow-list (`statement_guard`) and run as an account that may
only read and change rows of the task's database; the ground truth stays in this process.
A watchdog ends the agent's connection (not only its statement) when a statement overruns,
and a fresh connection takes the next turn. Scoring and dropping run under lock timeouts
and a statement time limit. Databases and accounts are named after the host and process
that made them, so a crashed run's leftovers are found and removed at the next start or
close on that host. docs/security.md states what an agent can and cannot do here.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import secrets
import socket
from typing import Any

from lifelong_gym.extras import import_extra
from lifelong_gym.processes import process_alive
from lifelong_gym.reconnect import RECONNECT_TIMEOUT, wait_for_server

from ...table_hash import GROUP_CONCAT_MAX_LEN, table_hash_sql
from ...tasks import TableInfo
from ..base import (
    BackendError,
    DatabaseBackend,
    StatementResult,
    UnreadableTable,
    overrun_message,
)
from ..statement_guard import refusal
from .cleanup import (
    Watchdog,
    connection_lost,
    drop_databases,
    error_code,
    error_message,
    kill_account_threads,
    kill_thread,
    quote,
    run,
)
from .url import parse_url

logger = logging.getLogger(__name__)

PREFIX = "lgym_"
_HOST_TAG = hashlib.sha1(socket.gethostname().encode()).hexdigest()[:6]
# the only privileges the tasks need, on the task's database alone; and EXECUTE, which runs
# nothing there (the account can create no routine) but makes a call of a function MySQL
# lacks its "FUNCTION db.f does not exist" (1305), not a denial naming the account (1370)
AGENT_PRIVILEGES = "SELECT, INSERT, UPDATE, DELETE, EXECUTE"
# rows of one result kept in memory at most (a row itself is bounded by max_allowed_packet)
MAX_RESULT_BYTES = 1 << 20
ACCESS_DENIED = 1045
# the columns of the task's table, found only while it is a base table (constants on both
# sides keep information_schema from scanning every table on the server)
_BASE_TABLE_COLUMNS = (
    "SELECT COLUMN_NAME FROM information_schema.COLUMNS "
    "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s AND EXISTS ("
    "SELECT 1 FROM information_schema.TABLES "
    "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s AND TABLE_TYPE = 'BASE TABLE') "
    "ORDER BY ORDINAL_POSITION"
)

__all__ = ["MysqlBackend", "PREFIX", "grant_pattern", "names_like", "parse_url", "quote"]


def names_like(pid: int | None = None) -> str:
    """A LIKE pattern of the databases and accounts made on this host (by process `pid`)."""
    return f"{PREFIX}{_HOST_TAG}\\_" + ("%" if pid is None else f"{pid}\\_%")


def grant_pattern(database: str) -> str:
    """The database as a GRANT names it: `_` and `%` are wildcards there, so escape them."""
    escaped = database.replace("_", "\\_").replace("%", "\\%")
    return quote(escaped)


class MysqlBackend(DatabaseBackend):
    """Runs each task in its own database on a shared MySQL or MariaDB server."""

    dialect = "mysql"

    def __init__(
        self,
        url: str,
        *,
        sql_mode: str | None = None,
        reconnect_timeout: float = RECONNECT_TIMEOUT,
        **limits: Any,
    ):
        super().__init__(**limits)
        self.sql_mode = sql_mode
        self.reconnect_timeout = reconnect_timeout
        # scoring and dropping get one statement's time, and whole seconds of lock waits
        self.cleanup_timeout = max(1.0, self.statement_timeout)
        self._pymysql = import_extra("pymysql", "mysql", "backend='mysql'")
        self._server = parse_url(url)
        self._where = f"{self._server['host']}:{self._server['port']}"
        self._owner = f"{_HOST_TAG}_{os.getpid()}"
        self._account = f"{PREFIX}{self._owner}_{secrets.token_hex(3)}"
        self._password = secrets.token_urlsafe(18)
        self._database: str | None = None
        self._agent: Any = None
        self._stranded: set[str] = set()  # databases a lock kept us from dropping
        self._admin = self._admin_connection()
        version, global_mode = run(self._admin, "SELECT VERSION(), @@GLOBAL.sql_mode")[0]
        self._mariadb = "mariadb" in version.lower()
        mode = global_mode if sql_mode is None else sql_mode
        self._backslash_escapes = "NO_BACKSLASH_ESCAPES" not in mode.upper()
        self._sweep_leftovers()
        self._create_account()
        self._closed = False

    def start(self, table: TableInfo) -> None:
        """Create a fresh database with the task's table, open to the agent's account only."""
        self.discard()
        self._reconnect_if_lost()
        name = f"{self._account}_{secrets.token_hex(3)}"
        run(self._admin, f"CREATE DATABASE {quote(name)} CHARACTER SET utf8mb4")
        self._database = name
        columns = ", ".join(f"{quote(c.name)} {c.type}" for c in table.column_info_list)
        target = f"{quote(name)}.{quote(table.name)}"
        run(self._admin, f"CREATE TABLE {target} ({columns})")
        if table.row_list:
            marks = ", ".join(["%s"] * len(table.column_info_list))
            with self._admin.cursor() as cursor:
                cursor.executemany(
                    f"INSERT INTO {target} VALUES ({marks})", [list(r) for r in table.row_list]
                )
        self._admin.commit()
        run(
            self._admin,
            f"GRANT {AGENT_PRIVILEGES} ON {grant_pattern(name)}.* TO %s@'%%'",
            (self._account,),
        )
        self._agent = self._agent_connection()

    def execute(self, sql: str) -> StatementResult:
        """Run one agent statement as the agent's account; an overrun ends its connection."""
        if self._agent is None:
            raise RuntimeError("no task database: start() must come first")
        refused = refusal(sql, backslash_escapes=self._backslash_escapes)
        if refused is not None:
            return StatementResult(error=refused)
        pymysql = self._pymysql
        thread_id = self._agent.thread_id()
        result, broken = StatementResult(), False
        with Watchdog(self.statement_timeout, lambda: self._kill(thread_id)) as watchdog:
            try:
                result, broken = self._run(sql)
            except pymysql.MySQLError as error:
                result = StatementResult(error=error_message(error))
                broken = connection_lost(error, pymysql)
            except UnicodeError as error:  # text the server sent that is not UTF-8
                result = StatementResult(error=f"the result is not valid UTF-8 text ({error})")
                broken = True
        if watchdog.fired:
            result = StatementResult(error=overrun_message(self.statement_timeout))
        if broken or watchdog.fired:
            self._renew_agent(thread_id)
        return result

    @property
    def database(self) -> str | None:
        """The task's database (a random name per task), as the agent's `DATABASE()` shows it."""
        return self._database

    def table_hash(self, table: TableInfo) -> str | None:
        """The table hash, computed by the server (CONCAT_WS, MD5, GROUP_CONCAT), time-bound."""
        if self._database is None:
            raise RuntimeError("no task database: start() must come first")
        found = run(self._admin, _BASE_TABLE_COLUMNS, (self._database, table.name) * 2)
        columns = [quote(name) for (name,) in found]
        if not columns:
            raise UnreadableTable(f"the table {table.name!r} is no longer a base table of the task")
        query = table_hash_sql(f"{quote(self._database)}.{quote(table.name)}", columns)
        try:
            ((digest,),) = run(self._admin, self._time_bound(query))
        except self._pymysql.MySQLError as error:
            if (error_code(error) or 0) >= 2000:  # the client's own trouble, not the agent's
                raise
            raise UnreadableTable(
                f"the table {table.name!r} could not be read within "
                f"{self.cleanup_timeout:g} s: {error_message(error)}"
            ) from None
        return digest

    def discard(self) -> None:
        """End the agent's connection, then drop the task's database (within lock timeouts)."""
        self._end_agent()
        if self._database is not None:
            name, self._database = self._database, None
            self._drop([name])

    def close(self) -> None:
        """Drop the task's database and the agent's account, sweep dead runs, disconnect."""
        if getattr(self, "_closed", True):
            return
        self._closed = True
        try:
            self.discard()
            if not self._answers():  # what is left there, the next run on this host sweeps
                logger.warning("MySQL at %s went away; its agent account stays there", self._where)
                return
            kill_account_threads(self._admin, self._account, self._pymysql.MySQLError)
            self._drop(sorted(self._stranded))
            run(self._admin, "DROP USER IF EXISTS %s@'%%'", (self._account,))
            self._sweep_leftovers()
        finally:
            self._close_quietly(self._admin)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    # -- the agent's connection -------------------------------------------------------

    def _run(self, sql: str) -> tuple[StatementResult, bool]:
        """The statement's result, and whether its connection must be renewed."""
        cursor = self._agent.cursor(self._pymysql.cursors.SSCursor)
        cursor.execute(sql)
        if cursor.description is None:
            cursor.close()
            return StatementResult(), False
        rows: list[tuple[Any, ...]] = []
        size = 0
        while len(rows) <= self.max_rows and size <= MAX_RESULT_BYTES:
            row = cursor.fetchone()
            if row is None:
                cursor.close()
                return StatementResult(rows=rows), False
            rows.append(row)
            size += sum(len(v) if isinstance(v, (str, bytes)) else 8 for v in row)
        # more rows than we show: end the connection instead of letting the server stream on
        return StatementResult(rows=rows[: self.max_rows], more_rows=True), True

    def _agent_connection(self) -> Any:
        """A connection as the agent's account to the task's database."""
        try:
            connection = self._open(**self._agent_arguments())
        except self._pymysql.MySQLError as error:
            if error_code(error) != ACCESS_DENIED:
                raise BackendError(self._cannot_connect(self._account, error)) from None
            # the account's password was changed from inside (SET PASSWORD): set it back
            run(self._admin, "ALTER USER %s@'%%' IDENTIFIED BY %s", (self._account, self._password))
            connection = self._connect(**self._agent_arguments())
        if self.sql_mode is not None:
            run(connection, "SET SESSION sql_mode = %s", (self.sql_mode,))
        return connection

    def _agent_arguments(self) -> dict[str, Any]:
        return {
            **self._server,
            "user": self._account,
            "password": self._password,
            "database": self._database,
            "read_timeout": self.statement_timeout + 30,
        }

    def _kill(self, thread_id: int) -> None:
        """End the agent's connection from a second one of its own account (which may)."""
        with self._connect(**self._agent_arguments()) as killer:
            kill_thread(killer, thread_id, self._pymysql.MySQLError)

    def _renew_agent(self, thread_id: int) -> None:
        """Replace a connection that was killed or left mid-stream by a fresh one."""
        fresh = self._agent_connection()
        kill_thread(fresh, thread_id, self._pymysql.MySQLError)
        self._close_quietly(self._agent)
        self._agent = fresh

    def _end_agent(self) -> None:
        """Close the agent's connection; the server then ends its session and locks at once."""
        # it is idle here: a connection that overran was killed and renewed in `execute`
        if self._agent is not None:
            agent, self._agent = self._agent, None
            self._close_quietly(agent)

    def _close_quietly(self, connection: Any) -> None:
        try:
            connection.close()
        except Exception:  # noqa: BLE001 - a killed connection is closed either way
            pass

    # -- the admin's side -------------------------------------------------------------

    def _create_account(self) -> None:
        """The agent's account, unless the server has it already (it outlives a restart)."""
        # the server's own limit on the agent's statements, should the watchdog fail
        limit = f" WITH MAX_STATEMENT_TIME {2 * self.statement_timeout + 1:g}" * self._mariadb
        run(
            self._admin,
            f"CREATE USER IF NOT EXISTS %s@'%%' IDENTIFIED BY %s{limit}",
            (self._account, self._password),
        )

    def _answers(self) -> bool:
        """Whether the admin connection still reaches the server."""
        try:
            self._admin.ping()
        except self._pymysql.MySQLError:
            return False
        return True

    def _reconnect_if_lost(self) -> None:
        """Reconnect to a server that went away since the last task (restarted or killed).

        Waits up to `reconnect_timeout` seconds for it to answer again, then makes the
        agent's account again if the server lost it (a fresh data directory) and drops the
        databases the lost connection could not.
        """
        if self._answers():
            return
        logger.warning("MySQL at %s went away; reconnecting", self._where)
        self._close_quietly(self._admin)
        try:
            self._admin = wait_for_server(self._admin_connection, self.reconnect_timeout)
        except BackendError as error:
            raise BackendError(
                f"the MySQL server at {self._where} went away and did not answer again "
                f"within {self.reconnect_timeout:g} s ({error})"
            ) from None
        self._create_account()
        self._drop(sorted(self._stranded))

    def _admin_connection(self) -> Any:
        """A connection as the URL's account whose waits for locks are bounded."""
        connection = self._connect(**self._server, read_timeout=self.cleanup_timeout + 60)
        wait = math.ceil(self.cleanup_timeout)
        run(
            connection,
            f"SET SESSION lock_wait_timeout = {wait}, innodb_lock_wait_timeout = {wait}, "
            f"group_concat_max_len = {GROUP_CONCAT_MAX_LEN}",
        )
        return connection

    def _time_bound(self, query: str) -> str:
        """`query` (a SELECT) with the server's statement time limit attached."""
        if self._mariadb:
            return f"SET STATEMENT max_statement_time = {self.cleanup_timeout:g} FOR {query}"
        milliseconds = int(self.cleanup_timeout * 1000)
        return query.replace("SELECT", f"SELECT /*+ MAX_EXECUTION_TIME({milliseconds}) */", 1)

    def _drop(self, names: list[str]) -> None:
        """Drop databases of ours; one a lock keeps is retried at close, and logged."""
        if not names:
            return
        try:
            stuck = drop_databases(
                self._admin, names, self._admin_connection, self._pymysql.MySQLError
            )
        except (BackendError, self._pymysql.MySQLError) as error:  # retried at close
            stuck = {name: str(error) for name in names}
        self._stranded.difference_update(names)
        self._stranded.update(stuck)
        for name, reason in stuck.items():
            logger.warning("could not drop database %s yet: %s", name, reason)

    def _sweep_leftovers(self) -> None:
        """End the threads of dead runs' agent accounts, then drop their databases and accounts."""
        pattern = names_like()
        databases = [r[0] for r in run(self._admin, "SHOW DATABASES LIKE %s", (pattern,))]
        users = run(self._admin, "SELECT User FROM mysql.user WHERE User LIKE %s", (pattern,))
        accounts = [user for (user,) in users]
        dead_accounts = [a for a in accounts if not _owner_alive(a)]
        for account in dead_accounts:
            kill_account_threads(self._admin, account, self._pymysql.MySQLError)
        self._drop([d for d in databases if not _owner_alive(d)])
        for account in dead_accounts:
            run(self._admin, "DROP USER IF EXISTS %s@'%%'", (account,))

    def _open(self, **arguments: Any) -> Any:
        return self._pymysql.connect(
            connect_timeout=10, autocommit=True, charset="utf8mb4", local_infile=False, **arguments
        )

    def _connect(self, **arguments: Any) -> Any:
        try:
            return self._open(**arguments)
        except self._pymysql.MySQLError as error:
            raise BackendError(self._cannot_connect(arguments["user"], error)) from None

    def _cannot_connect(self, user: str, error: Exception) -> str:
        return (
            f"cannot connect to MySQL at {self._where} as {user!r}: {error_message(error)}; "
            "check that the server runs and the url (mysql://user:password@host:port) is right"
        )


def _owner_alive(name: str) -> bool:
    """Whether the process named in a database or account name still runs on this host."""
    try:
        pid = int(name[len(PREFIX) :].split("_")[1])
    except (IndexError, ValueError):
        return True
    return pid == os.getpid() or process_alive(pid)
