"""`SHOW TABLES`, `DESCRIBE t`, `SHOW COLUMNS FROM t`, `SHOW CREATE TABLE t`, `SHOW INDEX
FROM t` (`SHOW KEYS`, `SHOW INDEXES`) and `SHOW DATABASES` on SQLite.

Answered from the tables' declared MySQL types, in the shape MariaDB answers them (rows of
Field, Type, Null, Key, Default, Extra; MariaDB's type names such as `int(11)`). A task
table has no keys, so it has no index rows; the databases are those the agent's account
sees on MariaDB: information_schema and the task's own (`main`, as `DATABASE()` shows).
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from ..error_replies import missing_table
from .catalog import DATABASE, SCHEMA, Catalog
from .mysql_types import key_of, mariadb_type, nullable

_NAME = r"(`(?:[^`]|``)+`|\"(?:[^\"]|\"\")+\"|[\w$]+)"
_QUALIFIED = rf"(?:{_NAME}\s*\.\s*)?{_NAME}"
# the end of a statement: blanks, then a `;` and blanks (one way to split them: a blank run
# that is no end cannot be tried in quadratically many splits)
_END = r"\s*(?:;\s*)?$"
_SHOW_TABLES = re.compile(
    rf"^\s*SHOW\s+(FULL\s+)?TABLES(?:\s+(?:FROM|IN)\s+{_NAME})?(?:\s+LIKE\s+'([^']*)')?{_END}",
    re.I,
)
_DESCRIBE = re.compile(
    rf"^\s*(?:DESCRIBE|DESC|EXPLAIN|SHOW\s+(?:FULL\s+)?(?:COLUMNS|FIELDS)\s+(?:FROM|IN))\s+"
    rf"{_QUALIFIED}{_END}",
    re.I,
)
_SHOW_CREATE = re.compile(rf"^\s*SHOW\s+CREATE\s+TABLE\s+{_QUALIFIED}{_END}", re.I)
_SHOW_INDEX = re.compile(
    rf"^\s*SHOW\s+(?:EXTENDED\s+)?(?:INDEX|INDEXES|KEYS)\s+(?:FROM|IN)\s+{_QUALIFIED}"
    rf"(?:\s+(?:FROM|IN)\s+{_NAME})?(?:\s+WHERE\s.*)?$",
    re.I | re.S,
)
_SHOW_DATABASES = re.compile(
    rf"^\s*SHOW\s+(?:DATABASES|SCHEMAS)(?:\s+LIKE\s+'([^']*)')?{_END}", re.I
)
_SHOW = re.compile(r"^\s*SHOW\b", re.I)
CHARSET = "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"


def _bare(name: str) -> str:
    if name[0] in '`"':
        return name[1:-1].replace(name[0] * 2, name[0])
    return name


def _like(pattern: str, text: str) -> bool:
    """MySQL's `text LIKE pattern` without case (`%`, `_`, `\\` escapes), in time bounded by
    the text's length squared: no pattern can make it backtrack."""
    tokens: list[str | None] = []  # a character, "" for `_`, None for `%` (a run is one)
    escaped = False
    for char in pattern.casefold():
        if escaped or char not in "%_\\":
            tokens.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "_":
            tokens.append("")
        elif not tokens or tokens[-1] is not None:
            tokens.append(None)
    text = text.casefold()
    if sum(token is not None for token in tokens) > len(text):
        return False  # each character or `_` needs a character of its own
    reach = _close({0}, tokens)  # how many tokens can have matched the text read so far
    for char in text:
        moved = {i + 1 for i in reach if i < len(tokens) and tokens[i] in ("", char)}
        reach = _close(moved | {i for i in reach if i < len(tokens) and tokens[i] is None}, tokens)
    return len(tokens) in reach


def _close(reach: set[int], tokens: list[str | None]) -> set[int]:
    """`reach` with each `%` also matching nothing."""
    return reach | {i + 1 for i in reach if i < len(tokens) and tokens[i] is None}


class SchemaAnswers:
    """Answers MySQL's schema statements from an SQLite connection and the declared types."""

    def __init__(self, connection: sqlite3.Connection, catalog: Catalog):
        self.connection = connection
        self.catalog = catalog

    def answer(self, sql: str) -> list[tuple[Any, ...]] | str | None:
        """Rows for a schema statement, an error text, or None when `sql` is not one."""
        if not _SHOW.match(sql) and not re.match(
            r"^\s*(DESC|DESCRIBE|EXPLAIN)\s+[`\"\w]", sql, re.I
        ):
            return None
        if found := _SHOW_TABLES.match(sql):
            return self._tables(bool(found.group(1)), found.group(3))
        if found := _DESCRIBE.match(sql):
            return self._columns(_bare(found.group(2)))
        if found := _SHOW_CREATE.match(sql):
            return self._create(_bare(found.group(2)))
        if found := _SHOW_INDEX.match(sql):
            rows = self._describe_rows(_bare(found.group(2)))
            return _missing(_bare(found.group(2))) if rows is None else []
        if found := _SHOW_DATABASES.match(sql):
            names = [SCHEMA, DATABASE]
            pattern = found.group(1)
            return [(n,) for n in names if pattern is None or _like(pattern, n)]
        if re.match(r"^\s*EXPLAIN\s+(SELECT|UPDATE|DELETE|INSERT|WITH)\b", sql, re.I):
            return "EXPLAIN of a statement is not supported by the embedded SQLite back-end"
        if _SHOW.match(sql):
            return (
                "this SHOW statement is not supported by the embedded SQLite back-end "
                "(supported: SHOW TABLES, SHOW COLUMNS FROM t, SHOW CREATE TABLE t, "
                "SHOW INDEX FROM t, SHOW DATABASES, DESCRIBE t)"
            )
        return None

    def _tables(self, full: bool, pattern: str | None) -> list[tuple[Any, ...]]:
        names = [
            name
            for (name,) in self.connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' "
                "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
            )
        ]
        if pattern is not None:
            names = [name for name in names if _like(pattern, name)]
        return [(name, "BASE TABLE") if full else (name,) for name in names]

    def _describe_rows(self, table: str) -> list[tuple[Any, ...]] | None:
        """MariaDB's DESCRIBE rows: no defaults; keys and NOT NULL as the task declares."""
        quoted = '"' + table.replace('"', '""') + '"'
        info = [row[1:3] for row in self.connection.execute(f"PRAGMA table_info({quoted})")]
        if not info:
            return None
        declared = {
            column.lower(): kind
            for name, columns in self.catalog
            if name.lower() == table.lower()
            for column, kind in columns
        }
        rows = []
        for name, stored in info:
            kind = declared.get(name.lower(), stored or "TEXT")
            null = "YES" if nullable(kind) else "NO"
            rows.append((name, mariadb_type(kind), null, key_of(kind), None, ""))
        return rows

    def _columns(self, table: str) -> list[tuple[Any, ...]] | str:
        rows = self._describe_rows(table)
        return _missing(table) if rows is None else rows

    def _create(self, table: str) -> list[tuple[Any, ...]] | str:
        rows = self._describe_rows(table)
        if rows is None:
            return _missing(table)
        real = self.connection.execute(
            "SELECT name FROM sqlite_master WHERE name = ? COLLATE NOCASE", (table,)
        ).fetchone()[0]
        body = ",\n".join(f"  `{name}` {shown} DEFAULT NULL" for name, shown, *_ in rows)
        return [(real, f"CREATE TABLE `{real}` (\n{body}\n) {CHARSET}")]


def _missing(table: str) -> str:
    return missing_table(DATABASE, table)
