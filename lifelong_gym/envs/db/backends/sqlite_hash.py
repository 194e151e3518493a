"""The benchmark's table hash on SQLite: every value printed as MySQL prints it.

Most values print alike in SQLite and MySQL: text, integers, and DECIMAL values at their
column's scale (through printf, checked by reading the printed text back). For those SQLite
joins each row's text itself and Python only digests it; a table holding anything else
(doubles, blobs, a number off its column's scale) is printed value by value in Python
(`text_renderer`), as before.
"""

from __future__ import annotations

import functools
import re
import sqlite3
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from ..table_hash import table_hash, texts_hash

_DECIMAL_SCALE = re.compile(r"(?:DECIMAL|NUMERIC|DEC|FIXED)\s*\(\s*\d+\s*,\s*(\d+)\s*\)", re.I)
_INTEGER = re.compile(r"\b(?:TINY|SMALL|MEDIUM|BIG)?INT(?:EGER)?\b|\bBOOL(?:EAN)?\b", re.I)
JOINED_COLUMNS = 100  # wider tables are printed in Python (SQLite's expression depth)


def read_table_hash(
    connection: sqlite3.Connection, table: str, columns: list[tuple[str, str]]
) -> str | None:
    """The hash of `table` (quoted) whose (quoted) columns have the stored declared types."""
    if len(columns) <= JOINED_COLUMNS:
        try:
            texts = [text for (text,) in connection.execute(_joined_rows(table, columns))]
        except sqlite3.OperationalError as error:
            if "decode" not in str(error):
                raise
            texts = [None]  # text that is not UTF-8: each value is read replaced below
        if None not in texts:
            return texts_hash(texts)
    renderers = [text_renderer(declared) for _, declared in columns]
    rows = _fetch_all(connection, f"SELECT * FROM main.{table}")
    return table_hash([r(v) for r, v in zip(renderers, row, strict=True)] for row in rows)


def _joined_rows(table: str, columns: list[tuple[str, str]]) -> str:
    """Each row's values printed and joined as CONCAT_WS(',', ...) does; NULL for a row with a
    value SQLite would print otherwise than `text_renderer`."""
    texts, plain = [], []
    for column, declared in columns:
        scale = _DECIMAL_SCALE.search(declared)
        places = int(scale.group(1)) if scale else 0
        if places == 0:  # integers and text print alike; DECIMAL(p, 0) holds integers
            texts.append(column)
            plain.append(f"typeof({column}) IN ('null', 'text', 'integer')")
            continue
        printed = f"printf('%.{places}f', {column})"
        texts.append(f"IIF(typeof({column}) = 'real', {printed}, {column})")
        # below 10**(15 - places) one printed text reads back to a double: printf's is Python's
        plain.append(
            f"(typeof({column}) IN ('null', 'text') OR typeof({column}) = 'real'"
            f" AND abs({column}) < 1e{15 - places} AND CAST({printed} AS REAL) = {column})"
        )
    joined = " || ".join(f"coalesce(',' || {text}, '')" for text in texts)
    return f"SELECT CASE WHEN {' AND '.join(plain)} THEN substr({joined}, 2) END FROM main.{table}"


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
    scale = _DECIMAL_SCALE.search(declared_type)
    step = Decimal(1).scaleb(-int(scale.group(1))) if scale else None
    integer = bool(_INTEGER.search(declared_type))

    places = f".{scale.group(1)}f" if scale else ""

    def render(value: Any) -> str | None:
        if value is None or type(value) is str:
            return value
        if step is not None and isinstance(value, float):
            shown = format(value, places)
            if float(shown) == value:  # already at the column's scale (stored values are)
                return shown
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
