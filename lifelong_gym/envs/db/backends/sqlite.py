"""The embedded back-end: an in-memory SQLite database per task, MySQL SQL translated."""

from __future__ import annotations

import functools
import re
import sqlite3
import time
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

import sqlglot
from sqlglot.errors import ErrorLevel, SqlglotError

from ..table_hash import table_hash
from ..tasks import TableInfo
from .base import DatabaseBackend, StatementResult, overrun_message

_DECIMAL_SCALE = re.compile(r"(?:DECIMAL|NUMERIC|DEC|FIXED)\s*\(\s*\d+\s*,\s*(\d+)\s*\)", re.I)
_INTEGER = re.compile(r"\b(?:TINY|SMALL|MEDIUM|BIG)?INT(?:EGER)?\b|\bBOOL(?:EAN)?\b", re.I)
# Statements an agent may not run against the host's file system or the connection itself.
_DENIED_ACTIONS = {sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH, sqlite3.SQLITE_PRAGMA}


def quote(identifier: str) -> str:
    """An SQLite identifier in double quotes."""
    return '"' + identifier.replace('"', '""') + '"'


class SqliteBackend(DatabaseBackend):
    """Each task gets a fresh in-memory database; the agent's MySQL dialect is translated."""

    dialect = "sqlite"

    def __init__(self, **limits: Any):
        super().__init__(**limits)
        self._connection: sqlite3.Connection | None = None
        self._deadline = 0.0

    def start(self, table: TableInfo) -> None:
        """Create a fresh in-memory database holding `table`."""
        self.discard()
        connection = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        columns = ", ".join(f"{quote(c.name)} {c.type}" for c in table.column_info_list)
        connection.execute(f"CREATE TABLE {quote(table.name)} ({columns})")
        marks = ", ".join("?" for _ in table.column_info_list)
        connection.executemany(
            f"INSERT INTO {quote(table.name)} VALUES ({marks})", [list(r) for r in table.row_list]
        )
        connection.set_progress_handler(self._past_deadline, 10_000)
        self._connection = connection

    def execute(self, sql: str) -> StatementResult:
        """Translate one MySQL statement to SQLite and run it within the limits."""
        connection = self._require()
        try:
            translated = translate(sql)
        except SqlglotError as error:
            return StatementResult(
                error=f"this statement could not be translated from MySQL to SQLite: {error}"
            )
        if len(translated) != 1:
            return StatementResult(error="send exactly one SQL statement")
        self._deadline = time.monotonic() + self.statement_timeout
        connection.set_authorizer(_authorize)
        try:
            cursor = connection.execute(translated[0])
            if cursor.description is None:
                return StatementResult()
            rows = cursor.fetchmany(self.max_rows + 1)
        except sqlite3.OperationalError as error:
            if str(error) == "interrupted":
                return StatementResult(error=overrun_message(self.statement_timeout))
            return StatementResult(error=str(error))
        except (sqlite3.Error, OverflowError, ValueError, MemoryError) as error:
            return StatementResult(error=str(error))
        finally:
            self._deadline = 0.0
            connection.set_authorizer(None)
        return StatementResult(rows=rows[: self.max_rows], more_rows=len(rows) > self.max_rows)

    def table_hash(self, table: TableInfo) -> str | None:
        """The table hash, with values rendered as MySQL renders their declared types."""
        connection = self._require()
        columns = connection.execute(f"PRAGMA table_info({quote(table.name)})").fetchall()
        if not columns:
            raise LookupError(f"the table {table.name!r} no longer exists")
        renderers = [text_renderer(declared) for _, _, declared, *_ in columns]
        rows = connection.execute(f"SELECT * FROM {quote(table.name)}").fetchall()
        return table_hash([r(v) for r, v in zip(renderers, row, strict=True)] for row in rows)

    def discard(self) -> None:
        """Forget the task's database."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def close(self) -> None:
        """Nothing outlives a task; same as discard."""
        self.discard()

    def _require(self) -> sqlite3.Connection:
        if self._connection is None:
            raise RuntimeError("no task database: start() must come first")
        return self._connection

    def _past_deadline(self) -> int:
        return int(bool(self._deadline) and time.monotonic() > self._deadline)


@functools.lru_cache(maxsize=4096)
def translate(sql: str) -> tuple[str, ...]:
    """MySQL statements in SQLite's dialect (cached: RL loops send the same ones again)."""
    return tuple(
        sqlglot.transpile(sql, read="mysql", write="sqlite", unsupported_level=ErrorLevel.RAISE)
    )


def _authorize(action: int, *_: Any) -> int:
    return sqlite3.SQLITE_DENY if action in _DENIED_ACTIONS else sqlite3.SQLITE_OK


def text_renderer(declared_type: str) -> Callable[[Any], str | None]:
    """A function that prints values as MySQL does for a column of `declared_type`."""
    scale = _DECIMAL_SCALE.search(declared_type)
    step = Decimal(1).scaleb(-int(scale.group(1))) if scale else None
    integer = bool(_INTEGER.search(declared_type))

    def render(value: Any) -> str | None:
        if value is None:
            return None
        if step is not None and isinstance(value, (int, float)):
            try:
                exact = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
                return str(exact.quantize(step, ROUND_HALF_UP))
            except InvalidOperation:
                return str(value)
        if isinstance(value, float):
            return str(int(value)) if integer and value.is_integer() else repr(value)
        if isinstance(value, bytes):
            return value.decode("utf-8", errors="replace")
        return str(value)

    return render
