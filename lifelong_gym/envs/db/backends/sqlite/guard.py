"""The guard stage on SQLite: what an agent's statement may do once it runs.

The statement itself has passed the allow-list both back-ends share (`../statement_guard.py`);
here SQLite's authorizer allows an explicit list of functions and denies virtual tables,
ATTACH, PRAGMA and SQLite's own catalog, and the connection's limits bound a value, the
statement, the program, the database's pages and the heap (docs/security.md).
"""

from __future__ import annotations

import ctypes
import sqlite3
from collections.abc import Callable
from typing import Any

from .mysql_functions import ALLOWED_FUNCTIONS, MAX_VALUE_BYTES, register

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
# agent's schema questions are answered from the declared schema (schema_answers.py)
_CATALOG_TABLES = {"sqlite_master", "sqlite_temp_master"}
_READ, _FUNCTION = sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION
_OK, _DENY = sqlite3.SQLITE_OK, sqlite3.SQLITE_DENY
DATABASE_PAGES = 16_384  # 64 MiB of 4 KiB pages, for the task database and for temp tables
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


def open_connection() -> sqlite3.Connection:
    """A connection with MySQL's functions, the collation and the limits."""
    # the statement cache outlives `deserialize`: SQLite checks a cached statement's schema
    # when it runs and prepares it again for the new database
    connection = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    for limit, value in _LIMITS.items():
        connection.setlimit(limit, value)
    connection.execute(f"PRAGMA temp.max_page_count = {DATABASE_PAGES}")
    register(connection)
    return connection


def authorizer(catalog_read: list[str]) -> Callable[..., int]:
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
