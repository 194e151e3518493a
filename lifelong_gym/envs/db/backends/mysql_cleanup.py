"""Ending what a MySQL back-end made: agent threads, task databases, prepared XA transactions.

Every step is bounded by the admin session's lock timeouts, so a lock an agent left (or a
prepared XA transaction, which outlives its connection) can delay a drop by seconds, never
hang it. MariaDB records no owner for a prepared XA transaction, and any account may roll
one back; we roll them back only when they are provably ours: every prepared transaction
on the server holds a lock that blocks dropping one of our databases.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

logger = logging.getLogger(__name__)

LOCK_WAIT_TIMEOUT = 1205
UNKNOWN_THREAD = 1094
# detached prepared transactions (no connection) holding a lock that blocks a wait on `db`
_BLOCKERS_OF_DATABASE = (
    "SELECT DISTINCT t.trx_id FROM information_schema.INNODB_LOCK_WAITS w "
    "JOIN information_schema.INNODB_LOCKS l ON l.lock_id = w.blocking_lock_id "
    "JOIN information_schema.INNODB_TRX t ON t.trx_id = w.blocking_trx_id "
    "WHERE LEFT(l.lock_table, CHAR_LENGTH(%s)) = %s "
    "AND t.trx_mysql_thread_id = 0 AND t.trx_state = 'RUNNING'"
)


def quote(identifier: str) -> str:
    """A MySQL identifier in backticks."""
    return "`" + identifier.replace("`", "``") + "`"


def error_code(error: Exception) -> int | None:
    """The server's error number of a PyMySQL error, if it has one."""
    arguments = getattr(error, "args", ())
    return arguments[0] if arguments and isinstance(arguments[0], int) else None


def run(connection: Any, sql: str, arguments: tuple[Any, ...] | None = None) -> list[tuple]:
    """Run one statement on `connection` and return its rows."""
    with connection.cursor() as cursor:
        cursor.execute(sql, arguments)
        return list(cursor.fetchall()) if cursor.description else []


def kill_thread(admin: Any, thread_id: int, mysql_error: type[Exception]) -> None:
    """End a connection on the server (not only its statement); gone already is fine."""
    try:
        run(admin, f"KILL CONNECTION {int(thread_id)}")
    except mysql_error as error:
        if error_code(error) != UNKNOWN_THREAD:
            raise


def kill_account_threads(admin: Any, account: str, mysql_error: type[Exception]) -> None:
    """End every connection of `account` (a dead run's agent may still be running a loop)."""
    rows = run(admin, "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = %s", (account,))
    for (thread_id,) in rows:
        kill_thread(admin, thread_id, mysql_error)


def drop_database(
    admin: Any, name: str, connect: Callable[[], Any], mysql_error: type[Exception]
) -> str | None:
    """Drop one of our databases within the lock timeouts; None when done, else why not.

    A drop that times out on a lock is retried once after rolling back the prepared XA
    transactions that hold it, when they are provably ours (see the module's docstring).
    """
    try:
        run(admin, f"DROP DATABASE IF EXISTS {quote(name)}")
        return None
    except mysql_error as error:
        if error_code(error) != LOCK_WAIT_TIMEOUT:
            return str(error)
        reason = str(error)
    blockers = _prepared_blockers(admin, name, connect, mysql_error)
    if not run(admin, "SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = %s", (name,)):
        return None  # the probe's own drop went through once the lock was released
    if not blockers:
        return f"{reason}; no prepared XA transaction of ours holds the lock"
    prepared = run(admin, "XA RECOVER FORMAT='SQL'")
    if len(prepared) != len(blockers):
        return (
            f"{reason}; {len(blockers)} prepared XA transaction(s) hold it, but the server has "
            f"{len(prepared)}: an administrator must choose (XA RECOVER, then XA ROLLBACK)"
        )
    for *_, xid in prepared:
        logger.warning("rolling back prepared XA transaction %s left on database %s", xid, name)
        run(admin, f"XA ROLLBACK {xid}")
    try:
        run(admin, f"DROP DATABASE IF EXISTS {quote(name)}")
    except mysql_error as error:
        return str(error)
    return None


def _prepared_blockers(
    admin: Any, name: str, connect: Callable[[], Any], mysql_error: type[Exception]
) -> set[int]:
    """The detached transactions whose locks make a second drop of `name` wait."""
    prefix = quote(name) + "."
    probe = connect()
    waiter = threading.Thread(
        target=_drop_quietly, args=(probe, name, mysql_error), name="lgym-drop-probe", daemon=True
    )
    waiter.start()
    blockers: set[int] = set()
    try:
        while waiter.is_alive():
            blockers.update(r[0] for r in run(admin, _BLOCKERS_OF_DATABASE, (prefix, prefix)))
            time.sleep(0.05)
    except mysql_error as error:  # e.g. MySQL 8, which has no INNODB_LOCKS
        logger.warning("cannot see which transactions lock %s: %s", name, error)
    finally:
        waiter.join()
        probe.close()
    return blockers


def _drop_quietly(connection: Any, name: str, mysql_error: type[Exception]) -> None:
    try:
        run(connection, f"DROP DATABASE IF EXISTS {quote(name)}")
    except mysql_error:
        pass  # the caller's retry reports what still blocks it
