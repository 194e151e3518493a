"""The embedded back-end: an in-memory SQLite database per task that answers like MySQL.

The route of one agent statement through `SqliteBackend.execute` (backend.py), file by file:

    statement
      |  ../statement_guard.py   guard: the allow-list both back-ends share (refused: error)
      v
      |  schema_answers.py       SHOW / DESCRIBE answered from the declared schema (done)
      v
      |  translate.py            translate: cached; the quick path first
      |    translate_quick.py      a token scan for the common statements, without sqlglot
      |    translate.py            else sqlglot: parse, expand (translate_expand.py: ALL/ANY,
      |                            ROLLUP), rewrite, information_schema (catalog.py), generate
      v
      |  guard.py                guard: SQLite's authorizer and limits around the run
      |  execute.py              execute: run within the deadline, fetch the rows
      v
      |  store.py                store: the written numbers rounded as MySQL's types store them
      v
    observation

At a task's start its database comes from task_databases.py (built once, kept serialized;
its rows stored by store.py); at its end the scorer reads hash.py (the benchmark's table
hash, printed as MySQL prints). MySQL's semantics that every stage uses: mysql_types.py
(column types), mysql_functions.py and mysql_dates.py (functions and collation).
"""

from .backend import SqliteBackend

__all__ = ["SqliteBackend"]
