"""The task databases of the embedded back-end, built once and kept as images.

A task's database is built on the back-end's own connection the first time and kept as
an image (`sqlite3.Connection.serialize`), the `IMAGE_CACHE` most recently used; a task
seen again starts from its image (`deserialize`). Its table is built from the image of
the table without rows, which the tasks of one schema share (9 schemas in the 500 shipped
tasks). Agents see the same rows, types and schema either way; only where SQLite places
the rows within a page differs.
"""

from __future__ import annotations

import contextlib
import functools
import sqlite3
import weakref
from collections.abc import Hashable, Iterator

from ...tasks import TableInfo
from .catalog import Schema, quote
from .mysql_functions import COLLATION, MAX_VALUE_BYTES, compare_text
from .mysql_types import storage_type
from .store import numeric_columns, stored_check, stored_rows, storing_update
from .strict_writes import STORED_VALUE, stored_value

IMAGE_CACHE = 1024  # task databases kept as images, for repeated tasks
TASK_VALUE_BYTES = 1_000_000_000  # SQLite's own limit, for the task's values (not the agent's)


class _ImageKey:
    """A live task table as the image cache's key, by identity, with its schema.

    Not by content: hashing the rows would cost every first start (docs/db-tasks.md,
    "Speed"), and equal tables are the same objects where it matters (a task file read
    again in one process gives the same frozen tasks). An image outlives its table only
    until the cache lets it go."""

    __slots__ = ("schema",)

    def __init__(self, table: TableInfo):
        self.schema = (table.name, tuple((c.name, c.type) for c in table.column_info_list))


_image_keys: dict[int, _ImageKey] = {}  # by id of a live TableInfo


def _image_key(table: TableInfo) -> _ImageKey:
    key = _image_keys.get(id(table))
    if key is None:
        key = _image_keys[id(table)] = _ImageKey(table)
        weakref.finalize(table, _image_keys.pop, id(table), None)
    return key


@functools.lru_cache(maxsize=IMAGE_CACHE)
def _task_image(key: _ImageKey) -> list[bytes]:
    """Where the image of a task's database is kept once built (empty until then: the
    build fills the list, and `lru_cache` keeps the `IMAGE_CACHE` most recently used)."""
    return []


@functools.lru_cache(maxsize=IMAGE_CACHE)
def _empty_table(schema: Hashable) -> list[bytes]:
    """Where the image of a table without rows is kept once built, by its name and columns."""
    return []


def load_task_database(connection: sqlite3.Connection, table: TableInfo) -> Schema:
    """Make `connection`'s database a fresh copy of the task's: `table` and its rows.

    Returns the table's name and declared columns (computed once a table)."""
    key = _image_key(table)
    image = _task_image(key)
    if image:
        connection.deserialize(image[0])
    else:
        _build(connection, table, key.schema)
        image[:] = [connection.serialize()]
    return key.schema


def clear_images() -> None:
    """Forget the cached task databases, empty tables and what a schema's storing needs (a
    benchmark measures cold starts)."""
    _task_image.cache_clear()
    _empty_table.cache_clear()
    numeric_columns.cache_clear()
    storing_update.cache_clear()


def _build(connection: sqlite3.Connection, table: TableInfo, schema: Hashable) -> None:
    """Replace `connection`'s database by one holding `table` and its rows, as stored.

    Built on the task's own connection (not a scratch connection a task) from the image of
    the table without rows (not a CREATE TABLE a task), the rows in one transaction (not a
    commit a row): what each of these saves is in docs/db-tasks.md, "Speed". These are
    our statements: the agent's authorizer is set only around the agent's own. A task's
    value may be longer than the agent's limit, as it could when a scratch connection
    built the whole image; a table wider than the column limit fails the start (the task's
    connection cannot read its image)."""
    empty = _empty_table(schema)
    if not empty:
        empty[:] = [_table_without_rows(table)]
    connection.deserialize(empty[0])
    marks = ", ".join("?" for _ in table.column_info_list)
    # the task's rows are stored as they are: the checks are for the agent's writes
    connection.execute("PRAGMA ignore_check_constraints = ON")
    try:
        with task_values(connection), connection:  # committed, or rolled back when a row fails
            connection.execute("BEGIN")
            connection.executemany(
                f"INSERT INTO {quote(table.name)} VALUES ({marks})", stored_rows(table, schema)
            )
    finally:
        connection.execute("PRAGMA ignore_check_constraints = OFF")


@contextlib.contextmanager
def task_values(connection: sqlite3.Connection) -> Iterator[None]:
    """Our own statements on the agent's connection under SQLite's length limit, not the
    agent's: a task's value, or a row printed for the hash, may be longer than the agent
    may make one. The agent's limit is back afterwards."""
    connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, TASK_VALUE_BYTES)
    try:
        yield
    finally:
        connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)


def _table_without_rows(table: TableInfo) -> bytes:
    """The image of a database holding `table` without its rows, made on a scratch
    connection: `execute` runs one statement, whatever a task file's declared types hold,
    and a CREATE prepared on the task's connection would fail after its next `deserialize`."""
    columns = ", ".join(
        f"{quote(c.name)} {storage_type(c.type)}{stored_check(table.name, c.name, c.type)}"
        for c in table.column_info_list
    )
    with contextlib.closing(sqlite3.connect(":memory:", isolation_level=None)) as scratch:
        scratch.create_collation(COLLATION, compare_text)
        scratch.create_function(STORED_VALUE, 5, stored_value, deterministic=True)
        scratch.execute(f"CREATE TABLE {quote(table.name)} ({columns})")
        return scratch.serialize()
