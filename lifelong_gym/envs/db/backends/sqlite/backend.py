"""`SqliteBackend`: the stages of the route (see the package's docstring) in order.

Each task gets a fresh in-memory database; every statement runs under the guard's
authorizer, within a deadline, a per-value size limit and a database size limit
(docs/security.md).
"""

from __future__ import annotations

import sqlite3
import time
from typing import Any

from sqlglot.errors import ParseError, SqlglotError

from ...tasks import TableInfo
from ..base import DatabaseBackend, StatementResult, UnreadableTable, overrun_message
from ..error_replies import missing_table
from ..statement_guard import refusal
from .catalog import DATABASE, Catalog, quote
from .duplicate_keys import duplicate_reply
from .execute import fetch, is_query, may_store
from .guard import DATABASE_PAGES, authorizer, open_connection
from .hash import read_table_hash
from .mysql_replies import parse_error_reply, sqlite_error_reply
from .schema_answers import SchemaAnswers
from .store import storing_update
from .strict_writes import Refusal, take_refusal
from .task_databases import load_task_database, task_values
from .translate import NotServed, Translation, translate
from .translate_expand import Refused

_UNIQUE_FAILED = "UNIQUE constraint failed: "


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
            self._connection = open_connection()
            self._connection.set_progress_handler(self._past_deadline, 10_000)
        self._catalog = (load_task_database(self._connection, table),)
        self._discarded = False
        self._size_bounded = False  # `deserialize` lifted it; set before the first write

    def execute(self, sql: str) -> StatementResult:
        """Run one MySQL statement as MySQL would, within the limits; errors are results."""
        connection = self._require()
        refused = refusal(sql)  # the same statements as on MySQL: one rule on both back-ends
        if refused is not None:
            return StatementResult(error=refused)
        schema = SchemaAnswers(connection, self._catalog).answer(sql)
        if schema is not None:
            return (
                StatementResult(error=schema)
                if isinstance(schema, str)
                else StatementResult(rows=schema)
            )
        try:
            translated = translate(sql, self._catalog)
        except (NotServed, Refused) as error:
            return StatementResult(error=str(error))
        except ParseError as error:
            return StatementResult(error=parse_error_reply(error, sql))
        except SqlglotError as error:
            return StatementResult(error=f"this statement could not be read as MySQL: {error}")
        except RecursionError:
            return StatementResult(error="this statement is nested too deeply to be read")
        if len(translated) != 1:
            return StatementResult(error="send exactly one SQL statement")
        return self._run(connection, translated[0], sql)

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

    def _run(
        self, connection: sqlite3.Connection, statement: Translation, sql: str
    ) -> StatementResult:
        """Run the translation of the agent's `sql`; SQLite's errors answered as MySQL's."""
        if not self._size_bounded and not is_query(statement.sql):
            # a query cannot grow the database, and the pragma reads the schema after
            # `deserialize`: only a task that writes sets the page limit
            connection.execute(f"PRAGMA main.max_page_count = {DATABASE_PAGES}")
            self._size_bounded = True
        self._deadline = time.monotonic() + self.statement_timeout
        catalog_read: list[str] = []  # SQLite's own catalog tables the statement reads
        connection.set_authorizer(authorizer(catalog_read))
        take_refusal()  # one our own statements' functions left is not the agent's
        try:
            cursor = connection.execute(statement.sql)
            result = (
                StatementResult() if cursor.description is None else fetch(cursor, self.max_rows)
            )
            if may_store(statement.sql):
                connection.set_authorizer(None)  # our statement, with a deadline of its own
                self._deadline = time.monotonic() + self.statement_timeout
                self._store_as_mysql(connection)
            return result
        except sqlite3.OperationalError as error:
            if str(error) == "interrupted":
                return StatementResult(error=overrun_message(self.statement_timeout))
            refusal = take_refusal()
            if refusal is not None:  # a write strict MySQL refuses (strict_writes.py)
                return StatementResult(error=self._refusal_reply(connection, refusal, sql))
            return StatementResult(error=sqlite_error_reply(str(error), sql) or str(error))
        except sqlite3.IntegrityError as error:
            return StatementResult(
                error=self._integrity_reply(connection, str(error), statement, sql)
            )
        except sqlite3.DatabaseError as error:
            if catalog_read:  # MySQL has no such table; answered as every missing table is
                return StatementResult(error=missing_table(DATABASE, catalog_read[0]))
            return StatementResult(error=str(error))
        except (sqlite3.Error, OverflowError, ValueError, MemoryError) as error:
            return StatementResult(error=str(error))
        finally:
            self._deadline = 0.0
            connection.set_authorizer(None)

    def _integrity_reply(
        self, connection: sqlite3.Connection, message: str, statement: Translation, sql: str
    ) -> str:
        """MySQL's reply to a write that broke a key or NOT NULL of the task's table."""
        table, _, column = message.removeprefix(_UNIQUE_FAILED).partition(".")
        if message.startswith(_UNIQUE_FAILED) and self._catalog and table == self._catalog[0][0]:
            found = duplicate_reply(connection, self._catalog[0], column, statement.sql)
            if found is not None:
                return found
        return sqlite_error_reply(message, sql) or message

    def _refusal_reply(self, connection: sqlite3.Connection, refusal: Refusal, sql: str) -> str:
        """A refusal's reply, with the number MySQL gives the row it stopped at: its place
        in the statement's new rows for an INSERT, in the table's order for an UPDATE (the
        statement's changes are rolled back by now)."""
        if refusal.rowid is None:
            return refusal.reply
        table = quote(self._catalog[0][0])
        if sql.lstrip()[:6].upper() == "UPDATE":
            counted = f"SELECT count(*) FROM main.{table} WHERE rowid <= ?"
            (row,) = connection.execute(counted, (refusal.rowid,)).fetchone()
        else:
            (last,) = connection.execute(f"SELECT max(rowid) FROM main.{table}").fetchone()
            row = refusal.rowid - (last or 0)
        return f"{refusal.reply} {row}"

    def _store_as_mysql(self, connection: sqlite3.Connection) -> None:
        """Round the numbers a write left in the task's table as MySQL's column types store
        them: one UPDATE over the rows that need it, after each statement that may write
        (not triggers: made at a task's first write, they change the schema, and every later
        statement is prepared again; docs/db-tasks.md, "Speed")."""
        update = storing_update(self._catalog[0]) if self._catalog else None
        if update is not None:
            connection.execute(update)

    def _require(self) -> sqlite3.Connection:
        if self._connection is None:
            raise RuntimeError("no task database: start() must come first")
        return self._connection

    def _past_deadline(self) -> int:
        return int(bool(self._deadline) and time.monotonic() > self._deadline)
