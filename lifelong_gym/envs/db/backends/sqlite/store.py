"""The store stage: numbers kept as MySQL's column types store them.

MySQL rounds a value written to DECIMAL(p, s) to s decimals and one written to an integer
column to an integer; SQLite keeps what it is given. The task's rows are rounded so when
its database is built (`stored_rows`), and the agent's writes by one UPDATE after each
statement that may write (`storing_update`). Text a numeric column cannot store stops the
agent's write, as strict MySQL's does (`stored_check`, strict_writes.py).
"""

from __future__ import annotations

import functools
from collections.abc import Hashable, Sequence
from itertools import repeat
from operator import mul, truediv
from typing import Any

from ...tasks import TableInfo
from .catalog import DATABASE, Schema, quote
from .mysql_functions import cast_signed, decimal_value
from .mysql_types import column_type, value_kind
from .strict_writes import STORED_VALUE

SCHEMAS = 1024  # schemas whose numeric columns and storing UPDATE are kept


def stored_rows(table: TableInfo, schema: Hashable) -> Sequence[Sequence[Any]]:
    """The task's rows as MySQL stores them: numbers rounded to their column's type (only
    the rows holding such a number are copied)."""
    rows = table.row_list
    numeric = numeric_columns(schema)
    if not rows or not numeric:
        return rows
    columns = list(zip(*rows, strict=True))  # rows fit their columns (checked at load)
    changed: dict[int, list[Any]] = {}
    for position, (name, scale) in numeric:
        column = columns[position]
        kinds = set(map(type, column))
        if float not in kinds:
            continue
        if kinds == _FLOATS and _at_scale(column, scale):
            continue  # every number at the column's scale already, as task files mostly hold
        for index, value in enumerate(column):
            if type(value) is float and round(value, scale) != value:
                stored = changed.setdefault(index, list(rows[index]))
                stored[position] = (
                    cast_signed(value) if name == "int" else decimal_value(value, scale)
                )
    if not changed:
        return rows
    return [changed.get(index, row) for index, row in enumerate(rows)]


_FLOATS = {float}
_EXACT_PRODUCTS = 2.0**52  # below it, a double's spacing is finer than 1


def _at_scale(column: tuple[float, ...], scale: int) -> bool:
    """Whether `round(v, scale) == v` for every number of `column`, at a third of its cost.

    `v` is at its scale when it is the double nearest `k / 10**scale` for the integer
    `k = round(v * 10**scale)`: exact while `|v| * 10**scale` stays below 2**52 and
    `10**scale` is a double exactly; larger numbers, infinity and NaN are left to `round`."""
    if scale <= 22:
        factor = 10.0**scale
        try:
            if max(map(abs, column)) * factor < _EXACT_PRODUCTS:
                scaled = map(round, map(mul, column, repeat(factor)))
                return tuple(map(truediv, scaled, repeat(factor))) == column
        except (OverflowError, ValueError):  # round(inf) and round(nan) without digits
            return False
    return tuple(map(round, column, repeat(scale))) == column


@functools.lru_cache(maxsize=SCHEMAS)
def storing_update(schema: Schema) -> str | None:
    """The UPDATE that stores a table's written numbers as MySQL's column types do (None for
    a table without integer or DECIMAL columns), for after a write.

    MySQL rounds a value written to DECIMAL(p, s) to s decimals and one written to an
    integer column to an integer; SQLite would keep 4500.555 and 27.6 as they came."""
    numeric = numeric_columns(schema)
    if not numeric:
        return None
    name, columns = schema
    settings, needed = [], []
    for position, (kind, scale) in numeric:
        quoted = quote(columns[position][0])
        if kind == "int":
            rounded, needs = f"CAST_SIGNED({quoted})", f"typeof({quoted}) = 'real'"
        else:
            rounded = f"DEC({quoted}, {scale})"
            # a value that reads back from its printed decimals is at its scale already, and
            # DEC (a Python call per row) would leave it as it is
            printed = f"CAST(printf('%.{scale}f', {quoted}) AS REAL)"
            needs = f"typeof({quoted}) = 'real' AND {printed} <> {quoted}"
        settings.append(f"{quoted} = IIF({needs}, {rounded}, {quoted})")
        needed.append(f"({needs})")
    return f"UPDATE main.{quote(name)} SET {', '.join(settings)} WHERE {' OR '.join(needed)}"


@functools.lru_cache(maxsize=SCHEMAS)
def numeric_columns(schema: Hashable) -> list[tuple[int, tuple[str, int]]]:
    """The positions and numeric types of a schema's integer and DECIMAL columns."""
    _, columns = schema  # type: ignore[misc]
    return [
        (position, kind)
        for position, (_, declared) in enumerate(columns)
        if (kind := column_type(declared)) is not None and kind[0] in ("int", "decimal")
    ]


def stored_check(table: str, column: str, declared: str) -> str:
    """The CHECK constraint of a column that refuses text it cannot store as strict MySQL
    refuses it ('' for a column of another type)."""
    kind = value_kind(declared)
    if kind is None:
        return ""
    where = ".".join(f"`{name}`" for name in (DATABASE, table, column))  # as MySQL names it
    texts = ", ".join(_text_literal(text) for text in (kind, where, column))
    return f" CHECK ({STORED_VALUE}({quote(column)}, {texts}, rowid))"


def _text_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
