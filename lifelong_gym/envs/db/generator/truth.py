"""Ground truth by execution: run a task's reference SQL on a back-end and keep what it gives."""

from __future__ import annotations

from ..answer import parse_answer, rows_match
from ..backends import DatabaseBackend
from ..backends.base import plain_value
from ..env import format_result
from ..tasks import AnswerInfo, DBTask, TableInfo

MAX_ANSWER_CHARS = 6000


def execute_truth(
    backend: DatabaseBackend,
    table: TableInfo,
    statements: tuple[str, ...],
    query: bool,
    empty: bool = False,
) -> AnswerInfo | None:
    """The truth the statements give on `backend`; None when the task would be degenerate.

    Degenerate: a query returning no rows (or, when `empty` says its right answer is none,
    some) or too much text; a write that leaves the table unchanged or empty.
    """
    backend.start(table)
    try:
        before = backend.table_hash(table)
        result = None
        for sql in statements:
            result = backend.execute(sql)
            if result.error is not None:
                raise ValueError(
                    f"reference SQL failed on {type(backend).__name__}: {result.error}: {sql}"
                )
        assert result is not None
        if query:
            rows = [tuple(plain_value(v) for v in row) for row in result.rows or []]
            if bool(rows) == empty or result.more_rows or len(repr(rows)) > MAX_ANSWER_CHARS:
                return None
            return AnswerInfo(direct=tuple(rows), sql=statements[-1])
        after = backend.table_hash(table)
        if after is None or after == before:
            return None
        return AnswerInfo(md5=after, sql=statements[-1])
    finally:
        backend.discard()


def agrees(backend: DatabaseBackend, task: DBTask) -> bool:
    """Whether replaying the task's reference SQL on `backend` scores as its stored truth.

    Query rows go through the same text an agent sees and the same comparison as scoring.
    """
    backend.start(task.table_info)
    try:
        result = None
        for sql in task.reference_sql:
            result = backend.execute(sql)
            if result.error is not None:
                return False
        if task.is_query:
            seen = parse_answer(format_result(result))
            return rows_match(seen, task.answer_info.direct or ())
        return backend.table_hash(task.table_info) == task.answer_info.md5
    finally:
        backend.discard()
