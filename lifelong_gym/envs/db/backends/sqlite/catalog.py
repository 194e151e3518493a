"""information_schema on SQLite, built from the task's declared MySQL schema.

MariaDB's views TABLES, COLUMNS and SCHEMATA as the agent's account sees them there: its
task's tables in its one database (named `main`, what `DATABASE()` shows on SQLite), and
STATISTICS, KEY_COLUMN_USAGE and TABLE_CONSTRAINTS, empty (a task table has no keys). A
reference to one becomes a derived table of literal rows; nothing of SQLite's own catalog
(sqlite_master, pragmas) is read or shown. What the server alone knows is MariaDB's
value for a small table (one 16 KiB page) or NULL for the times.
"""

from __future__ import annotations

import functools
from typing import Any

from sqlglot import exp

from .mysql_functions import COLLATION
from .mysql_types import column_facts, is_text, mariadb_type
from .translate_expand import NotServed

DATABASE = "main"
SCHEMA = "information_schema"
Schema = tuple[str, tuple[tuple[str, str], ...]]  # (table, ((column, declared type), ...))
Catalog = tuple[Schema, ...]

_PAGE = 16384  # InnoDB's DATA_LENGTH for a table that fits one page
_CHARSET = ("utf8mb4", "utf8mb4_general_ci")
# What the agent's account (SELECT, INSERT, UPDATE, DELETE) holds on each column
_PRIVILEGES = "select,insert,update"
# the views' columns; in the kinds "name" (text compared case-sensitively, as MariaDB
# looks table and database names up), "text" (MariaDB's case-insensitive collation), "int"
_VIEWS: dict[str, tuple[tuple[str, str], ...]] = {
    name: tuple((c.split(":")[0], (c.split(":") + ["text"])[1]) for c in columns.split())
    for name, columns in {
        "TABLES": """TABLE_CATALOG TABLE_SCHEMA:name TABLE_NAME:name TABLE_TYPE ENGINE
            VERSION:int ROW_FORMAT TABLE_ROWS:int AVG_ROW_LENGTH:int DATA_LENGTH:int
            MAX_DATA_LENGTH:int INDEX_LENGTH:int DATA_FREE:int AUTO_INCREMENT:int
            CREATE_TIME:time UPDATE_TIME:time CHECK_TIME:time TABLE_COLLATION CHECKSUM:int
            CREATE_OPTIONS TABLE_COMMENT MAX_INDEX_LENGTH:int TEMPORARY""",
        "COLUMNS": """TABLE_CATALOG TABLE_SCHEMA:name TABLE_NAME:name COLUMN_NAME
            ORDINAL_POSITION:int COLUMN_DEFAULT IS_NULLABLE DATA_TYPE
            CHARACTER_MAXIMUM_LENGTH:int CHARACTER_OCTET_LENGTH:int NUMERIC_PRECISION:int
            NUMERIC_SCALE:int DATETIME_PRECISION:int CHARACTER_SET_NAME COLLATION_NAME
            COLUMN_TYPE COLUMN_KEY EXTRA PRIVILEGES COLUMN_COMMENT IS_GENERATED
            GENERATION_EXPRESSION""",
        "SCHEMATA": """CATALOG_NAME SCHEMA_NAME:name DEFAULT_CHARACTER_SET_NAME
            DEFAULT_COLLATION_NAME SQL_PATH SCHEMA_COMMENT""",
        "STATISTICS": """TABLE_CATALOG TABLE_SCHEMA:name TABLE_NAME:name NON_UNIQUE:int
            INDEX_SCHEMA:name INDEX_NAME SEQ_IN_INDEX:int COLUMN_NAME COLLATION
            CARDINALITY:int SUB_PART:int PACKED NULLABLE INDEX_TYPE COMMENT INDEX_COMMENT
            IGNORED""",
        "KEY_COLUMN_USAGE": """CONSTRAINT_CATALOG CONSTRAINT_SCHEMA:name CONSTRAINT_NAME
            TABLE_CATALOG TABLE_SCHEMA:name TABLE_NAME:name COLUMN_NAME ORDINAL_POSITION:int
            POSITION_IN_UNIQUE_CONSTRAINT:int REFERENCED_TABLE_SCHEMA:name
            REFERENCED_TABLE_NAME:name REFERENCED_COLUMN_NAME""",
        "TABLE_CONSTRAINTS": """CONSTRAINT_CATALOG CONSTRAINT_SCHEMA:name CONSTRAINT_NAME
            TABLE_SCHEMA:name TABLE_NAME:name CONSTRAINT_TYPE""",
    }.items()
}
VIEWS = tuple(_VIEWS)
# the declared MySQL type of each kind, for the translator's typing of expressions
_DECLARED = {"name": "VARCHAR(64)", "text": "VARCHAR(64)", "int": "BIGINT", "time": "DATETIME"}


def view_types(name: str) -> dict[str, str]:
    """The declared types of a view's columns by lower-case name."""
    return {column.lower(): _DECLARED[kind] for column, kind in _VIEWS[name]}


def views_of(tree: exp.Expression) -> list[exp.Table]:
    """The statement's references to information_schema (refused unless served)."""
    found = [t for t in tree.find_all(exp.Table) if t.db.lower() == SCHEMA]
    for table in found:
        if table.name.upper() not in VIEWS:
            raise NotServed(
                f"{SCHEMA}.{table.name} is not available on the embedded back-end "
                f"(available: {', '.join(VIEWS)})"
            )
    return found


def serve_views(tree: exp.Expression, catalog: Catalog) -> None:
    """Each information_schema view read from the declared schema, as a derived table."""
    for table in views_of(tree):
        alias = exp.TableAlias(this=exp.to_identifier(table.alias_or_name))
        rows = _view(table.name.upper(), catalog).copy()  # a fresh tree: the statement owns it
        table.replace(exp.Subquery(this=rows, alias=alias))


@functools.lru_cache(maxsize=256)
def _view(name: str, catalog: Catalog) -> exp.Query:
    columns = _VIEWS[name]
    rows = _ROWS[name](catalog) if name in _ROWS else []
    selects = [
        exp.Select(
            expressions=[
                exp.alias_(_value(value, kind), column, quoted=True)
                for value, (column, kind) in zip(row, columns, strict=True)
            ]
        )
        for row in rows or [[None] * len(columns)]
    ]
    if not rows:  # an empty view that still has its columns
        selects[0].set("where", exp.Where(this=exp.false()))
    query: exp.Query = selects[0]
    for select in selects[1:]:
        query = exp.union(query, select, distinct=False)
    return query


def _value(value: Any, kind: str) -> exp.Expression:
    if isinstance(value, exp.Expression):
        return value
    if value is None:
        return exp.Null()
    if isinstance(value, int):
        return exp.Literal.number(value)
    literal = exp.Literal.string(value)
    return (
        exp.Collate(this=literal, expression=exp.Var(this=COLLATION)) if kind == "text" else literal
    )


def _tables(catalog: Catalog) -> list[list[Any]]:
    rows = []
    for table, _ in catalog:
        target = exp.Table(this=exp.to_identifier(table, quoted=True))
        count = exp.Subquery(this=exp.select("COUNT(*)").from_(target))
        # InnoDB's AVG_ROW_LENGTH: DATA_LENGTH over TABLE_ROWS in whole bytes (SQLite's `/`
        # of integers truncates, as MariaDB does here), 0 for an empty table
        share = exp.Div(
            this=exp.Literal.number(_PAGE),
            expression=exp.Nullif(this=count.copy(), expression=exp.Literal.number(0)),
            typed=True,
        )
        average = exp.Coalesce(this=share, expressions=[exp.Literal.number(0)])
        rows.append(
            ["def", DATABASE, table, "BASE TABLE", "InnoDB", 10, "Dynamic", count, average]
            + [_PAGE, 0, 0, 0, None, None, None, None, _CHARSET[1], None, "", "", 0, "N"]
        )
    return rows


def _columns(catalog: Catalog) -> list[list[Any]]:
    rows = []
    for table, columns in catalog:
        for position, (column, declared) in enumerate(columns, start=1):
            data_type, *numbers = column_facts(declared)
            charset = _CHARSET if is_text(declared) else (None, None)
            rows.append(
                ["def", DATABASE, table, column, position, "NULL", "YES", data_type, *numbers]
                + [*charset, mariadb_type(declared), "", "", _PRIVILEGES, "", "NEVER", None]
            )
    return rows


def _schemata(_: Catalog) -> list[list[Any]]:
    return [
        ["def", SCHEMA, "utf8mb3", "utf8mb3_general_ci", None, ""],
        ["def", DATABASE, *_CHARSET, None, ""],
    ]


_ROWS = {"TABLES": _tables, "COLUMNS": _columns, "SCHEMATA": _schemata}


def quote(identifier: str) -> str:
    """An SQLite identifier in double quotes."""
    return '"' + identifier.replace('"', '""') + '"'
