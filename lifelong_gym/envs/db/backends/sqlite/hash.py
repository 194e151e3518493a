"""The benchmark's table hash on SQLite: every value printed as MySQL prints it.

The rows are read as SQLite stores them and printed in Python a column at a time: a column
holding only the kind of value its type stores (text and NULLs, integers, numbers at their
DECIMAL scale) is printed in one pass of C-level calls; any other column value by value by
the printer for its declared type (`text_renderer`).
"""

from __future__ import annotations

import functools
import re
import sqlite3
from collections.abc import Callable, Sequence
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from ...table_hash import row_text, texts_hash

_DECIMAL_SCALE = re.compile(r"(?:DECIMAL|NUMERIC|DEC|FIXED)\s*\(\s*\d+\s*,\s*(\d+)\s*\)", re.I)
_INTEGER = re.compile(r"\b(?:TINY|SMALL|MEDIUM|BIG)?INT(?:EGER)?\b|\bBOOL(?:EAN)?\b", re.I)


def read_table_hash(
    connection: sqlite3.Connection, table: str, columns: list[tuple[str, str]]
) -> str | None:
    """The hash of `table` (quoted) whose (quoted) columns have the stored declared types."""
    rows = _fetch_all(connection, f"SELECT * FROM main.{table}")
    if not rows:
        return None  # the hash of no rows is NULL, as MySQL's
    printed = [
        printed_column(declared, values)
        for (_, declared), values in zip(columns, zip(*rows, strict=True), strict=True)
    ]
    printed_rows = zip(*printed, strict=True)
    if any(None in values for values in printed):
        return texts_hash(map(row_text, printed_rows))
    return texts_hash(map(",".join, printed_rows))  # `row_text` of rows without NULLs


def printed_column(declared_type: str, values: tuple[Any, ...]) -> Sequence[str | None]:
    """A column's values printed as MySQL prints them: a whole column at once where its
    values are of the kind the column holds (text, integers, numbers at their scale)."""
    kinds = set(map(type, values))
    scale = _scale(declared_type)
    if kinds <= _TEXT_KINDS:
        return values
    if scale is None and kinds == _INT_KIND:
        return list(map(str, values))
    if scale is not None and kinds == _FLOAT_KIND:
        spec = f".{scale}f"
        shown = [format(v, spec) for v in values]
        if list(map(float, shown)) == list(values):  # at the column's scale (stored are)
            return shown
    return list(map(text_renderer(declared_type), values))


_TEXT_KINDS = {str, type(None)}
_INT_KIND = {int}
_FLOAT_KIND = {float}


@functools.lru_cache(maxsize=256)
def _scale(declared_type: str) -> int | None:
    scale = _DECIMAL_SCALE.search(declared_type)
    return int(scale.group(1)) if scale else None


def _fetch_all(connection: sqlite3.Connection, sql: str) -> list[tuple[Any, ...]]:
    try:
        return connection.execute(sql).fetchall()
    except sqlite3.OperationalError as error:
        if "decode" not in str(error):
            raise
    # text that is not UTF-8 (made with CHAR() of a surrogate): read it replaced
    connection.text_factory = lambda data: data.decode("utf-8", "replace")
    try:
        return connection.execute(sql).fetchall()
    finally:
        connection.text_factory = str


@functools.lru_cache(maxsize=256)
def text_renderer(declared_type: str) -> Callable[[Any], str | None]:
    """A function that prints values as MySQL does for a column of `declared_type` (cached:
    every write task's scoring asks for the same few)."""
    scale = _scale(declared_type)
    if scale is not None:
        return _decimal_printer(scale)
    return _print_integer if _INTEGER.search(declared_type) else _print_text


def _print_text(value: Any) -> str | None:
    if value is None or type(value) is str:
        return value
    return _print_other(value, integer=False)


def _print_integer(value: Any) -> str | None:
    if type(value) is int:
        return str(value)
    if value is None or type(value) is str:
        return value
    return _print_other(value, integer=True)


def _print_other(value: Any, *, integer: bool) -> str:
    if isinstance(value, float):
        return str(int(value)) if integer and value.is_integer() else repr(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def _decimal_printer(places: int) -> Callable[[Any], str | None]:
    spec = f".{places}f"
    step = Decimal(1).scaleb(-places)

    def render(value: Any) -> str | None:
        if type(value) is float:
            shown = format(value, spec)
            if float(shown) == value:  # already at the column's scale (stored values are)
                return shown
        elif value is None or type(value) is str:
            return value
        if isinstance(value, (int, float)):
            try:
                exact = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
                return str(exact.quantize(step, ROUND_HALF_UP))
            except InvalidOperation:
                return str(value)
        return _print_other(value, integer=False)

    return render
