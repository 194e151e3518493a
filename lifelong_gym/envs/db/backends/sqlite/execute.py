"""The execute stage: which translated statements read or write, and the rows they return."""

from __future__ import annotations

import sqlite3
from typing import Any

from ..base import StatementResult

RESULT_BYTES = 4_000_000  # values fetched for one observation, at most


def fetch(cursor: sqlite3.Cursor, max_rows: int) -> StatementResult:
    """At most `max_rows` rows and `RESULT_BYTES` of values."""
    rows: list[tuple[Any, ...]] = []
    size = 0
    while len(rows) <= max_rows and size <= RESULT_BYTES:
        chunk = cursor.fetchmany(64)
        if not chunk:
            break
        rows += chunk
        size += sum(len(v) for row in chunk for v in row if isinstance(v, (str, bytes)))
    more = len(rows) > max_rows or size > RESULT_BYTES
    return StatementResult(rows=rows[:max_rows], more_rows=more)


def is_query(sql: str) -> bool:
    """Whether a translated statement is a plain query (SQLite's SELECT writes nothing; a
    statement that begins otherwise, WITH, VALUES or a parenthesis included, may)."""
    return sql[:7].upper() == "SELECT "


def may_store(sql: str) -> bool:
    """Whether a translated statement may write values into the table: any but a query or a
    plain DELETE (REPLACE, WITH ... UPDATE and the like included)."""
    return not is_query(sql) and sql[:7].upper() != "DELETE "
