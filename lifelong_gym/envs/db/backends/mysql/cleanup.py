"""Ending what a MySQL back-end started: overrunning statements, agent threads, databases, XA.

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


class Watchdog:
    """Runs `action` once if the `with` block still runs after `timeout` seconds."""

    def __init__(self, timeout: float, action: Callable[[], None]):
        self.fired = False
        self._action = action
        self._timer = threading.Timer(timeout, self._fire)
        self._timer.daemon = True

    def __enter__(self) -> Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._timer.cancel()
        self._timer.join()  # a kill under way finishes before the caller looks at `fired`

    def _fire(self) -> None:
        self.fired = True
        try:
            self._action()
        except Exception:  # noqa: BLE001 - the server's own time limit is the backstop
            logger.exception("the watchdog could not end an overrunning statement")


def quote(identifier: str) -> str:
    """A MySQL identifier in backticks."""
    return "`" + identifier.replace("`", "``") + "`"


def error_code(error: Exception) -> int | None:
    """The server's error number of a PyMySQL error, if it has one."""
    arguments = getattr(error, "args", ())
    return arguments[0] if arguments and isinstance(arguments[0], int) else None


def connection_lost(error: Exception, pymysql: Any) -> bool:
    """Whether an error left the agent's connection unusable (killed, closed, out of step)."""
    if isinstance(error, (pymysql.err.InterfaceError, pymysql.err.InternalError)):
        return True
    code = error_code(error)
    return code is None or code >= 2000 or code in (1053, 1927)


def error_message(error: Exception) -> str:
    """A PyMySQL error as `(code) message`, as the agent's observation shows it."""
    arguments = getattr(error, "args", ())
    if len(arguments) == 2 and isinstance(arguments[0], int):
        return f"({arguments[0]}) {arguments[1]}"
    return str(error)


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


def drop_databases(
    admin: Any, names: list[str], connect: Callable[[], Any], mysql_error: type[Exception]
) -> dict[str, str]:
    """Drop databases of ours within the lock timeouts; returns why each one left could not go.

    Drops that time out on a lock are retried once after rolling back the prepared XA
    transactions that hold the locks, when they are provably ours (see the module's docstring).
    """
    stuck: dict[str, str] = {}
    for name in names:
        reason = _drop(admin, name, mysql_error)
        if reason is not None:
            stuck[name] = reason
    locked = [n for n, reason in stuck.items() if reason.startswith(f"({LOCK_WAIT_TIMEOUT},")]
    if not locked:
        return stuck
    blockers = _prepared_blockers(admin, locked, connect, mysql_error)
    prepared = run(admin, "XA RECOVER FORMAT='SQL'") if blockers else []
    if not blockers or len(prepared) != len(blockers):
        note = (
            f"{len(blockers)} prepared XA transaction(s) of ours hold locks on it"
            + (f", and the server has {len(prepared)}" if blockers else "")
            + "; if XA RECOVER lists any, an administrator must choose which to XA ROLLBACK"
        )
        return {n: f"{reason}; {note}" if n in locked else reason for n, reason in stuck.items()}
    for *_, xid in prepared:
        logger.warning("rolling back prepared XA transaction %s left on a database of ours", xid)
        try:
            run(admin, f"XA ROLLBACK {xid}")
        except mysql_error as error:  # ended meanwhile by someone else: the drop tells
            logger.warning("XA ROLLBACK %s: %s", xid, error)
    for name in locked:
        reason = _drop(admin, name, mysql_error)
        if reason is None:
            del stuck[name]
        else:
            stuck[name] = reason
    return stuck


def _drop(admin: Any, name: str, mysql_error: type[Exception]) -> str | None:
    try:
        run(admin, f"DROP DATABASE IF EXISTS {quote(name)}")
    except mysql_error as error:
        return f"({error_code(error)}, {error.args[-1]!r})"
    return None


def _prepared_blockers(
    admin: Any, names: list[str], connect: Callable[[], Any], mysql_error: type[Exception]
) -> set[int]:
    """The detached transactions whose locks make a second drop of each of `names` wait."""
    probes = [connect() for _ in names]
    waiters = [
        threading.Thread(target=_drop, args=(probe, name, mysql_error), daemon=True)
        for probe, name in zip(probes, names, strict=True)
    ]
    for waiter in waiters:
        waiter.start()
    blockers: set[int] = set()
    try:
        while any(waiter.is_alive() for waiter in waiters):
            for prefix in (quote(name) + "." for name in names):
                blockers.update(r[0] for r in run(admin, _BLOCKERS_OF_DATABASE, (prefix, prefix)))
            # InnoDB refreshes these tables only after 0.1 s without a reader
            time.sleep(0.2)
    except mysql_error as error:  # e.g. MySQL 8, which has no INNODB_LOCKS
        logger.warning("cannot see which transactions hold locks on our databases: %s", error)
    finally:
        for waiter, probe in zip(waiters, probes, strict=True):
            waiter.join()
            probe.close()
    return blockers
