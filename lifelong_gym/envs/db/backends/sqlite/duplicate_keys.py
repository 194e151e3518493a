"""The value a write duplicated in a PRIMARY or UNIQUE key, found as MySQL finds it.

SQLite names the key's column (`UNIQUE constraint failed: t.id`), not the value; MySQL's
reply names both (`Duplicate entry '2' for key 'PRIMARY'`). MySQL writes a statement's rows
one at a time and stops at the first whose new key value another row holds, so the failed
statement's new values (rolled back by now) are computed again, in its order, and played
against the table's: an INSERT's rows in their order, an UPDATE's in the table's.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from ..error_replies import duplicate_entry
from .catalog import Schema, quote
from .hash import text_renderer
from .mysql_functions import compare_text
from .mysql_types import key_of


def duplicate_reply(
    connection: sqlite3.Connection, schema: Schema, column: str, translated: str
) -> str | None:
    """MySQL's 1062 for the translated write that broke `column`'s key (None when the
    value cannot be told: an INSERT's source or an UPDATE of another shape)."""
    table, columns = schema
    declared = dict(columns).get(column)
    if declared is None:
        return None
    try:
        tree = sqlglot.parse_one(translated, read="sqlite")
        new_values = _new_values(connection, tree, table, columns, column)
    except (SqlglotError, sqlite3.Error, ValueError):
        return None
    current = dict(connection.execute(f"SELECT rowid, {quote(column)} FROM main.{quote(table)}"))
    for rowid, value in new_values:
        if value is not None and any(
            _same(value, other) for held, other in current.items() if held != rowid
        ):
            key = "PRIMARY" if key_of(declared) == "PRI" else column
            return duplicate_entry(text_renderer(declared)(value), key)
        current[rowid] = value
    return None


def _new_values(
    connection: sqlite3.Connection,
    tree: exp.Expression,
    table: str,
    columns: tuple[tuple[str, str], ...],
    column: str,
) -> list[tuple[Any, Any]]:
    """(rowid, new value of `column`) of the rows in the order MySQL writes them."""
    if isinstance(tree, exp.Update):
        assigned = next(
            (e.expression for e in tree.expressions if e.this.name.lower() == column.lower()),
            None,
        )
        if assigned is None:
            raise ValueError("the key is not assigned")
        query = exp.select(exp.column("rowid"), assigned).from_(
            exp.to_table(f"main.{quote(table)}")
        )
        where = tree.args.get("where")
        if where is not None:
            query = query.where(where.this)
        return connection.execute(query.order_by("rowid").sql("sqlite")).fetchall()
    if isinstance(tree, exp.Insert) and isinstance(tree.expression, exp.Values):
        target = tree.this
        names = (
            [c.name for c in target.expressions]
            if isinstance(target, exp.Schema)
            else [name for name, _ in columns]
        )
        position = [name.lower() for name in names].index(column.lower())
        rows = connection.execute(f"SELECT * FROM ({tree.expression.sql('sqlite')})")
        # a new row has no rowid yet: a negative number, no stored row's
        return [(-number, row[position]) for number, row in enumerate(rows, start=1)]
    raise ValueError("not an UPDATE or an INSERT of VALUES")


def _same(value: Any, other: Any) -> bool:
    """Equal as the key compares them: text by the case-insensitive collation."""
    if isinstance(value, str) and isinstance(other, str):
        return compare_text(value, other) == 0
    return value == other
