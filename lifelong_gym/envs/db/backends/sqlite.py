"""The embedded back-end: an in-memory SQLite database per task that answers like MySQL.

The agent's MySQL statement is rewritten for SQLite (`sqlite_translate`), MySQL's functions
and collation are SQLite user functions (`sqlite_functions`), schema statements are
answered in MariaDB's shape (`sqlite_schema`). Every statement runs under an authorizer
that allows an explicit list of functions and denies virtual tables, ATTACH and PRAGMA,
within a deadline, a per-value size limit and a database size limit (docs/security.md).
"""

from __future__ import annotations

import ctypes
import sqlite3
import time
from collections.abc import Callable
from typing import Any

from sqlglot.errors import SqlglotError

from ..tasks import TableInfo
from .base import DatabaseBackend, StatementResult, UnreadableTable, overrun_message
from .sqlite_catalog import DATABASE, Catalog
from .sqlite_functions import (
    ALLOWED_FUNCTIONS,
    MAX_VALUE_BYTES,
    register,
)
from .sqlite_hash import read_table_hash
from .sqlite_images import load_task_database, quote, storing_update, task_values
from .sqlite_schema import SchemaAnswers
from .sqlite_translate import NotServed, Refused, Translation, translate
from .statement_guard import refusal

# What an agent may not do: touch files or the connection, or load native code through
# virtual tables (fts3_tokenizer can be pointed at any address).
_DENIED_ACTIONS = {
    sqlite3.SQLITE_ATTACH,
    sqlite3.SQLITE_DETACH,
    sqlite3.SQLITE_PRAGMA,
    sqlite3.SQLITE_CREATE_VTABLE,
    sqlite3.SQLITE_DROP_VTABLE,
}
# SQLite's catalog (also read as sqlite_schema, sqlite_temp_schema): not MySQL's, and the
# agent's schema questions are answered from the declared schema (sqlite_schema.py)
_CATALOG_TABLES = {"sqlite_master", "sqlite_temp_master"}
_READ, _FUNCTION = sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION
_OK, _DENY = sqlite3.SQLITE_OK, sqlite3.SQLITE_DENY
DATABASE_PAGES = 16_384  # 64 MiB of 4 KiB pages, for the task database and for temp tables
RESULT_BYTES = 4_000_000  # values fetched for one observation, at most
HEAP_LIMIT = 1 << 30  # SQLite's heap in this process, at most (a hard limit)
_LIMITS = {
    sqlite3.SQLITE_LIMIT_LENGTH: MAX_VALUE_BYTES,
    sqlite3.SQLITE_LIMIT_SQL_LENGTH: 1_000_000,
    sqlite3.SQLITE_LIMIT_COLUMN: 500,
    sqlite3.SQLITE_LIMIT_ATTACHED: 0,
    sqlite3.SQLITE_LIMIT_TRIGGER_DEPTH: 10,
    sqlite3.SQLITE_LIMIT_WORKER_THREADS: 0,
    sqlite3.SQLITE_LIMIT_VDBE_OP: 5_000_000,
}


def _limit_heap() -> None:
    """Cap SQLite's heap for the process, unless the application set its own cap."""
    try:
        import _sqlite3

        library = ctypes.CDLL(_sqlite3.__file__)
        limit = library.sqlite3_hard_heap_limit64
    except (ImportError, OSError, AttributeError):
        return  # an SQLite without the call (before 3.31): the other limits still hold
    limit.restype, limit.argtypes = ctypes.c_int64, [ctypes.c_int64]
    if limit(-1) == 0:
        limit(HEAP_LIMIT)


_limit_heap()


class SqliteBackend(DatabaseBackend):
    """Each task gets a fresh in-memory database; the agent's MySQL is answered as MySQL."""

    dialect = "sqlite"

    def __init__(self, **limits: Any):
        super().__init__(**limits)
        self._connection: sqlite3.Connection | None = None
        self._catalog: Catalog = ()
        self._deadline = 0.0
        self._discarded = True  # no task's work is on the connection
        self._size_bounded = False  # the task database's page limit is set

    def start(self, table: TableInfo) -> None:
        """A fresh in-memory database holding `table` (built the first time, then kept as an
        image)."""
        self.discard()
        if self._connection is None:
            self._connection = _open()
            self._connection.set_progress_handler(self._past_deadline, 10_000)
        self._catalog = (load_task_database(self._connection, table),)
        self._discarded = False
        self._size_bounded = False  # `deserialize` lifted it; set before the first write

    def execute(self, sql: str) -> StatementResult:
        """Run one MySQL statement as MySQL would, within the limits; errors are results."""
        connection = self._require()
        reason = refusal(sql)  # the same statements as on MySQL: one rule on both back-ends
        if reason is not None:
            return StatementResult(error=f"the statement was refused: {reason}")
        schema = SchemaAnswers(connection, self._catalog).answer(sql)
        if schema is not None:
            return StatementResult(error=schema) if isinstance(schema, str) else self._rows(schema)
        try:
            translated = translate(sql, self._catalog)
        except (NotServed, Refused) as error:
            return StatementResult(error=str(error))
        except SqlglotError as error:
            return StatementResult(error=f"this statement could not be read as MySQL: {error}")
        except RecursionError:
            return StatementResult(error="this statement is nested too deeply to be read")
        if len(translated) != 1:
            return StatementResult(error="send exactly one SQL statement")
        return self._run(connection, translated[0])

    @property
    def database(self) -> str | None:
        """The name the agent's `DATABASE()` shows: SQLite's `main`, once a task started."""
        return None if self._connection is None or self._discarded else DATABASE

    def table_hash(self, table: TableInfo) -> str | None:
        """The hash of the task's base table as committed, read within the deadline."""
        connection = self._require()
        if connection.in_transaction:
            connection.execute("ROLLBACK")  # MySQL's scorer sees only committed rows
        kind = connection.execute(
            "SELECT type FROM main.sqlite_master WHERE name = ? COLLATE NOCASE", (table.name,)
        ).fetchone()
        if kind is None:
            raise UnreadableTable(f"the table {table.name!r} no longer exists")
        if kind[0] != "table":
            raise UnreadableTable(f"{table.name!r} is no longer a base table but a {kind[0]}")
        columns = connection.execute(f"PRAGMA main.table_info({quote(table.name)})").fetchall()
        self._deadline = time.monotonic() + self.statement_timeout
        # a row printed for the hash can be longer than any value the agent may make (an
        # integer stored in 8 bytes prints in up to 20)
        try:
            named = [(quote(name), declared) for _, name, declared, *_ in columns]
            with task_values(connection):
                return read_table_hash(connection, quote(table.name), named)
        except (sqlite3.OperationalError, sqlite3.DataError) as error:
            raise UnreadableTable(f"the table {table.name!r} could not be read: {error}") from None
        finally:
            self._deadline = 0.0

    def discard(self) -> None:
        """Forget the task's work; a connection the agent gave temp objects is closed."""
        connection = self._connection
        if connection is None or self._discarded:
            return
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        if connection.execute("SELECT count(*) FROM temp.sqlite_master").fetchone()[0]:
            self.close()
        self._discarded = True

    def close(self) -> None:
        """Close the connection; nothing else outlives a task."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    # -- internals --------------------------------------------------------------------

    def _run(self, connection: sqlite3.Connection, statement: Translation) -> StatementResult:
        if not self._size_bounded and not _is_query(statement.sql):
            # a query cannot grow the database: its page limit costs a start 15 us (the
            # pragma reads the schema after `deserialize`), paid only by tasks that write
            connection.execute(f"PRAGMA main.max_page_count = {DATABASE_PAGES}")
            self._size_bounded = True
        self._deadline = time.monotonic() + self.statement_timeout
        catalog_read: list[str] = []  # SQLite's own catalog tables the statement reads
        connection.set_authorizer(_authorizer(catalog_read))
        try:
            cursor = connection.execute(statement.sql)
            result = StatementResult() if cursor.description is None else self._fetch(cursor)
            if _may_store(statement.sql):
                connection.set_authorizer(None)  # our statement, with a deadline of its own
                self._deadline = time.monotonic() + self.statement_timeout
                self._store_as_mysql(connection)
            return result
        except sqlite3.OperationalError as error:
            if str(error) == "interrupted":
                return StatementResult(error=overrun_message(self.statement_timeout))
            return StatementResult(error=str(error))
        except sqlite3.DatabaseError as error:
            # MySQL has no such table; answered as every missing table is here
            shown = f"no such table: {catalog_read[0]}" if catalog_read else str(error)
            return StatementResult(error=shown)
        except (sqlite3.Error, OverflowError, ValueError, MemoryError) as error:
            return StatementResult(error=str(error))
        finally:
            self._deadline = 0.0
            connection.set_authorizer(None)

    def _fetch(self, cursor: sqlite3.Cursor) -> StatementResult:
        """At most `max_rows` rows and `RESULT_BYTES` of values."""
        rows: list[tuple[Any, ...]] = []
        size = 0
        while len(rows) <= self.max_rows and size <= RESULT_BYTES:
            chunk = cursor.fetchmany(64)
            if not chunk:
                break
            rows += chunk
            size += sum(len(v) for row in chunk for v in row if isinstance(v, (str, bytes)))
        more = len(rows) > self.max_rows or size > RESULT_BYTES
        return self._rows(rows[: self.max_rows], more)

    def _rows(self, rows: list[tuple[Any, ...]], more: bool = False) -> StatementResult:
        return StatementResult(rows=rows, more_rows=more)

    def _store_as_mysql(self, connection: sqlite3.Connection) -> None:
        """Round the numbers a write left in the task's table as MySQL's column types store
        them: one UPDATE over the rows that need it, after each statement that may write
        (two triggers made at a task's first write cost it 0.1 ms, five times this)."""
        update = storing_update(self._catalog[0]) if self._catalog else None
        if update is not None:
            connection.execute(update)

    def _require(self) -> sqlite3.Connection:
        if self._connection is None:
            raise RuntimeError("no task database: start() must come first")
        return self._connection

    def _past_deadline(self) -> int:
        return int(bool(self._deadline) and time.monotonic() > self._deadline)


def _open() -> sqlite3.Connection:
    """A connection with MySQL's functions, the collation and the limits."""
    # the statement cache outlives `deserialize`: SQLite checks a cached statement's schema
    # when it runs and prepares it again for the new database
    connection = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    for limit, value in _LIMITS.items():
        connection.setlimit(limit, value)
    connection.execute(f"PRAGMA temp.max_page_count = {DATABASE_PAGES}")
    register(connection)
    return connection


def _is_query(sql: str) -> bool:
    """Whether a translated statement is a plain query (SQLite's SELECT writes nothing; a
    statement that begins otherwise, WITH, VALUES or a parenthesis included, may)."""
    return sql[:7].upper() == "SELECT "


def _may_store(sql: str) -> bool:
    """Whether a translated statement may write values into the table: any but a query or a
    plain DELETE (REPLACE, WITH ... UPDATE and the like included)."""
    return not _is_query(sql) and sql[:7].upper() != "DELETE "


def _authorizer(catalog_read: list[str]) -> Callable[..., int]:
    """The agent's authorizer (a closure: a partial's call cost more at every column read);
    the SQLite catalog tables the statement reads are noted in `catalog_read`."""

    def authorize(action: int, first: str | None, second: str | None, *_: Any) -> int:
        if action == _READ:
            if first in _CATALOG_TABLES:
                catalog_read.append(first)  # SQLite's schema, which MySQL does not have
                return _DENY
            return _OK
        if action == _FUNCTION:
            return _OK if (second or "").lower() in ALLOWED_FUNCTIONS else _DENY
        return _DENY if action in _DENIED_ACTIONS else _OK

    return authorize
