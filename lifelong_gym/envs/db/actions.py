"""Parsing the agent's reply into the benchmark's DB actions, and writing such replies."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import sqlglot
from sqlglot.dialects.mysql import MySQL
from sqlglot.errors import SqlglotError, TokenError
from sqlglot.tokens import TokenType


@dataclass(frozen=True)
class Operation:
    """Run one SQL statement."""

    sql: str


@dataclass(frozen=True)
class Answer:
    """Finish the task with a final answer (ignored for write tasks)."""

    text: str


@dataclass(frozen=True)
class Invalid:
    """A reply that follows neither action format; it ends the task."""

    reason: str


Action = Operation | Answer | Invalid

_ACTION = re.compile(r"Action:\s*(Operation|Answer)\b", re.IGNORECASE)
_SQL_BLOCK = re.compile(r"```sql\s*\n?(.*?)```", re.DOTALL | re.IGNORECASE)
_FINAL_ANSWER = re.compile(r"Final Answer:\s*(.*)", re.DOTALL)


def parse_reply(reply: str) -> Action:
    """The first action the reply names: an operation, an answer, or why it is invalid."""
    found = _ACTION.search(reply)
    if found is None:
        return Invalid("the reply names neither `Action: Operation` nor `Action: Answer`")
    rest = reply[found.end() :]
    if found.group(1).lower() == "answer":
        answer = _FINAL_ANSWER.search(rest)
        if answer is None:
            return Invalid("`Action: Answer` must be followed by a line `Final Answer: ...`")
        return Answer(answer.group(1).strip())
    block = _SQL_BLOCK.search(rest)
    if block is None:
        return Invalid("`Action: Operation` must be followed by a ```sql code block")
    sql = block.group(1).strip()
    if not sql:
        return Invalid("the ```sql code block is empty")
    count = count_statements(sql)
    if count > 1:
        return Invalid(f"the code block holds {count} SQL statements; send one statement a turn")
    return Operation(sql)


@functools.lru_cache(maxsize=4096)
def count_statements(sql: str) -> int:
    """How many statements `sql` holds, by MySQL's tokens (semicolons in strings don't count)."""
    try:
        tokens = MySQL().tokenize(sql)
    except TokenError:
        return 1  # let the database report the error in its own words
    count, pending = 0, False
    for token in tokens:
        if token.token_type == TokenType.SEMICOLON:
            count += pending
            pending = False
        else:
            pending = True
    return count + pending


def canonical_sql(sql: str) -> str | None:
    """One spelling for statements that differ only in case, spacing or quoting.

    None for a statement nested too deeply to read (it can be no vote's key)."""
    try:
        return sqlglot.parse_one(sql, read="mysql").sql(dialect="mysql", normalize=True)
    except SqlglotError:
        return " ".join(sql.split()).rstrip(";")
    except RecursionError:
        return None


def operation_reply(sql: str) -> str:
    """A reply that runs `sql`, in the benchmark's format."""
    return f"Action: Operation\n```sql\n{sql}\n```"


def answer_reply(answer: str) -> str:
    """A reply that finishes with `answer`, in the benchmark's format."""
    return f"Action: Answer\nFinal Answer: {answer}"
