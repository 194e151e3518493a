"""SQLite's and sqlglot's errors, answered in MySQL's words (`../error_replies.py`).

SQLite names what went wrong (`no such column: nme`) but not where MySQL would say it was
(`Unknown column 'nme' in 'WHERE'`); the clause, an INSERT's row, a syntax error's place
are read from the agent's own statement, only when it failed. Where MariaDB's parser would
stop elsewhere than sqlglot's or SQLite's, the `near '...'` fragment is the nearest
these give (docs/db-tasks.md, "Measured fidelity", counts how often it is MariaDB's).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, SqlglotError

from ..error_replies import (
    ambiguous_column,
    column_count,
    missing_table,
    mysql_error,
    parameter_count,
    syntax_error,
    unknown_column,
    unknown_function,
)
from .catalog import DATABASE

# the clause a column stands in, as MariaDB names it: by the (parent, key) it hangs from
_CLAUSES = {
    (exp.Select, "expressions"): "SELECT",
    (exp.Select, "where"): "WHERE",
    (exp.Update, "where"): "WHERE",
    (exp.Delete, "where"): "WHERE",
    (exp.Select, "group"): "GROUP BY",
    (exp.Select, "having"): "HAVING",
    (exp.Select, "order"): "ORDER BY",
    (exp.Join, "on"): "ON",
    (exp.Update, "expressions"): "SET",
}
_ARGUMENT_COUNT = "number of provided arguments"
_UNEXPECTED = "Unexpected token"
_FUNCTION_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\($")


def parse_error_position(error: ParseError, sql: str) -> int | None:
    """Where in `sql` sqlglot stopped reading (None when it cannot be found)."""
    found = error.errors[0] if error.errors else {}
    before, highlight = found.get("start_context", ""), found.get("highlight", "")
    start = sql.find(before + highlight)
    return None if start < 0 else start + len(before)


def parse_error_reply(error: ParseError, sql: str) -> str:
    """MySQL's reply to a statement sqlglot could not read."""
    position = parse_error_position(error, sql)
    if position is None:
        return syntax_error(sql, len(sql))
    found = error.errors[0]
    before, highlight = found.get("start_context", ""), found.get("highlight", "")
    description = found.get("description", "")
    name = _called_function(sql[:position])
    no_arguments = highlight == ")" and before.rstrip().endswith("(")
    if name is not None and (_ARGUMENT_COUNT in description or no_arguments):
        return parameter_count(name)
    if _UNEXPECTED not in description and not found.get("end_context", "").strip("; \t\r\n"):
        # what sqlglot misses after the statement's last token, MySQL's parser misses
        # where it meets the statement's end
        return syntax_error(sql, len(sql))
    return syntax_error(sql, position)


def _called_function(before: str) -> str | None:
    """The name of the innermost call still open at the end of `before`."""
    depth = 0
    for index in range(len(before) - 1, -1, -1):
        char = before[index]
        if char == ")":
            depth += 1
        elif char == "(":
            if depth == 0:
                found = _FUNCTION_CALL.search(before[: index + 1])
                return found.group(1) if found else None
            depth -= 1
    return None


def sqlite_error_reply(message: str, sql: str) -> str | None:
    """MySQL's reply to a statement SQLite refused with `message` (None: no MySQL
    counterpart is known, the message stays SQLite's)."""
    for pattern, reply in _SQLITE_ERRORS:
        found = pattern.fullmatch(message)
        if found is not None:
            return reply(found.group(1), sql)
    return None


def _no_table(table: str, sql: str) -> str:
    return missing_table(DATABASE, table.removeprefix("main."))


def _no_column(column: str, sql: str) -> str:
    return unknown_column(column, _clause_of(column, sql))


def _ambiguous(column: str, sql: str) -> str:
    return ambiguous_column(column, _clause_of(column, sql))


def _no_insert_column(column: str, sql: str) -> str:
    return unknown_column(column, "INSERT INTO")


def _no_function(name: str, sql: str) -> str:
    return unknown_function(DATABASE, _as_written(name, sql))


def _argument_count(name: str, sql: str) -> str:
    return parameter_count(_as_written(name, sql))


def _as_written(name: str, sql: str) -> str:
    """A function's name as the agent wrote it (SQLite names it as the translation does)."""
    found = re.search(rf"\b{re.escape(name)}(?=\s*\()", sql, re.I)
    return name if found is None else found.group()


def _value_count(_: str, sql: str) -> str:
    return column_count(_mismatched_row(sql))


def _not_null(column: str, sql: str) -> str:
    tree = _parsed(sql)
    target = tree.this if isinstance(tree, exp.Insert) else None
    if isinstance(target, exp.Schema) and column.lower() not in {
        name.name.lower() for name in target.expressions
    }:  # an INSERT that names other columns leaves it to its default: it has none
        return mysql_error(1364, f"Field '{column}' doesn't have a default value")
    return mysql_error(1048, f"Column '{column}' cannot be null")


def _group_function(_: str, sql: str) -> str:
    return mysql_error(1111, "Invalid use of group function")


def _near(token: str, sql: str) -> str:
    position = sql.find(token)
    return syntax_error(sql, len(sql) if position < 0 else position)


def _incomplete(_: str, sql: str) -> str:
    return syntax_error(sql, len(sql))


_SQLITE_ERRORS: tuple[tuple[re.Pattern[str], Callable[[str, str], str]], ...] = (
    (re.compile(r"no such table: (.+)"), _no_table),
    (re.compile(r"no such column: (.+)"), _no_column),
    (re.compile(r"ambiguous column name: (.+)"), _ambiguous),
    (re.compile(r"table .+ has no column named (.+)"), _no_insert_column),
    (re.compile(r"no such function: (.+)"), _no_function),
    (re.compile(r"wrong number of arguments to function (.+)\(\)"), _argument_count),
    (re.compile(r"(table .+ has \d+ columns but \d+ values were supplied)"), _value_count),
    (re.compile(r"(\d+ values for \d+ columns)"), _value_count),
    (re.compile(r"(all VALUES must have the same number of terms)"), _value_count),
    (re.compile(r"NOT NULL constraint failed: [^.]+\.(.+)"), _not_null),
    (re.compile(r"(misuse of aggregate(?: function|:) .+\(\))"), _group_function),
    (re.compile(r'near "(.+)": syntax error', re.S), _near),
    (re.compile(r"(incomplete input)"), _incomplete),
)


def _parsed(sql: str) -> exp.Expression | None:
    try:
        return sqlglot.parse_one(sql, read="mysql")
    except (SqlglotError, RecursionError):
        return None


def _clause_of(column: str, sql: str) -> str:
    """The clause of the statement's first reference to `column` (`name` or `table.name`)
    as MariaDB names it; the select list when it cannot be told."""
    tree = _parsed(sql)
    table, _, name = column.rpartition(".")
    for node in tree.find_all(exp.Column) if tree is not None else ():
        if node.name.lower() == name.lower() and node.table.lower() == table.lower():
            while node.parent is not None:
                clause = _CLAUSES.get((type(node.parent), node.arg_key))
                if clause is not None:
                    return clause
                node = node.parent
    return "SELECT"


def _mismatched_row(sql: str) -> int:
    """The first row of an INSERT's VALUES whose values do not fit its columns (1 when it
    cannot be told)."""
    tree = _parsed(sql)
    values = tree.expression if isinstance(tree, exp.Insert) else None
    if not isinstance(values, exp.Values):
        return 1
    rows = [len(row.expressions) for row in values.expressions]
    target = tree.this
    width = len(target.expressions) if isinstance(target, exp.Schema) else None
    for number, count in enumerate(rows, start=1):
        if count != (width if width is not None else rows[0]):
            return number
    return 1
