"""MySQL's error replies, worded as the MySQL back-end shows a server's error: `(code) message`.

The statement guard and the embedded back-end answer in these words wherever MariaDB would
answer with an error, so an agent reads the same text on either back-end. The messages are
MariaDB 10.11's (the server the fidelity corpus is measured on); the task's database name
is the caller's (`main` on SQLite).
"""

from __future__ import annotations

SYNTAX_ERROR = 1064
_NEAR_CHARACTERS = 80  # MariaDB's `near '%-.80T'`
VALUE_CHARACTERS = 128  # a value in MariaDB's messages: `'%-.128T'`
_ENTRY_CHARACTERS = 192  # `Duplicate entry '%-.192T'`


def mysql_error(code: int, message: str) -> str:
    """An error as the agent's observation shows a server's (PyMySQL's code and message)."""
    return f"({code}) {message}"


def cut(text: str, limit: int) -> str:
    """`text` as MariaDB's `%-.<limit>T` prints it: longer than `limit` bytes of UTF-8, it is
    cut to whole characters in `limit` - 3 bytes and "..." ends it."""
    encoded = text.encode("utf-8", errors="replace")
    if len(encoded) <= limit:
        return text
    return encoded[: limit - 3].decode("utf-8", errors="ignore") + "..."


def syntax_error(sql: str, position: int) -> str:
    """MariaDB's 1064 for a statement its parser stopped reading at `position`: the text
    from there to the statement's end (a last `;` ends it), cut as MariaDB cuts it, and the
    line it is on."""
    stripped = sql.rstrip()
    end = len(stripped) - 1 if stripped.endswith(";") else len(sql)
    position = max(0, min(position, end))
    near = cut(sql[position:end], _NEAR_CHARACTERS)
    line = sql.count("\n", 0, position) + 1
    return mysql_error(
        SYNTAX_ERROR,
        "You have an error in your SQL syntax; check the manual that corresponds to your "
        f"MariaDB server version for the right syntax to use near '{near}' at line {line}",
    )


def missing_table(database: str, table: str) -> str:
    """1146: a table the task's database does not hold."""
    return mysql_error(1146, f"Table '{database}.{table}' doesn't exist")


def unknown_column(column: str, clause: str) -> str:
    """1054: a column no table of the statement has, named with the clause it stood in."""
    return mysql_error(1054, f"Unknown column '{column}' in '{clause}'")


def ambiguous_column(column: str, clause: str) -> str:
    """1052: a column more than one table of the statement has."""
    return mysql_error(1052, f"Column '{column}' in {clause} is ambiguous")


def unknown_function(database: str, name: str) -> str:
    """1305: a function MySQL does not have (read as a stored function of the database)."""
    return mysql_error(1305, f"FUNCTION {database}.{name} does not exist")


def parameter_count(name: str) -> str:
    """1582: a native function called with the wrong number of arguments."""
    return mysql_error(1582, f"Incorrect parameter count in the call to native function '{name}'")


def column_count(row: int) -> str:
    """1136: an INSERT row with more or fewer values than columns."""
    return mysql_error(1136, f"Column count doesn't match value count at row {row}")


def division_by_zero() -> str:
    """1365: a division by zero in a write, under strict mode and ERROR_FOR_DIVISION_BY_ZERO."""
    return mysql_error(1365, "Division by 0")


def duplicate_entry(value: str, key: str) -> str:
    """1062: a value a PRIMARY or UNIQUE key holds already."""
    return mysql_error(1062, f"Duplicate entry '{cut(value, _ENTRY_CHARACTERS)}' for key '{key}'")
