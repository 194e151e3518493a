"""Parsing the agent's reply into the benchmark's DB actions, and writing such replies."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import sqlglot
from sqlglot.dialects.mysql import MySQL
from sqlglot.errors import SqlglotError, TokenError
from sqlglot.tokens import TokenType

from lifelong_gym.actions import InvalidReply
from lifelong_gym.tool_calls import ToolCall, call_arguments, function_schema


@dataclass(frozen=True)
class Operation:
    """Run one SQL statement."""

    sql: str

    def key(self) -> str | None:
        """The statement in sqlglot's canonical MySQL form (None when it is too deep to read)."""
        canonical = canonical_sql(self.sql)
        return None if canonical is None else "sql: " + canonical

    def text(self) -> str:
        """`Action: Operation` and the statement in a sql block."""
        return operation_reply(self.sql)

    def tool_call(self) -> ToolCall:
        """`execute_sql(sql)`."""
        return ToolCall("execute_sql", {"sql": self.sql})


@dataclass(frozen=True)
class Answer:
    """Finish the task with a final answer (ignored for write tasks)."""

    answer: str

    def key(self) -> str:
        """The answer with its white space folded."""
        return "answer: " + " ".join(self.answer.split())

    def text(self) -> str:
        """`Action: Answer` and the line `Final Answer: ...`."""
        return answer_reply(self.answer)

    def tool_call(self) -> ToolCall:
        """`commit_final_answer(answer)`."""
        return ToolCall("commit_final_answer", {"answer": self.answer})


Action = Operation | Answer | InvalidReply

TOOLS = (
    function_schema(
        "execute_sql",
        "Run one SQL statement on the MySQL database; returns its rows or its error.",
        sql="exactly one MySQL statement",
    ),
    function_schema(
        "commit_final_answer",
        "Finish the task. For a question, the answer is the rows of the correct query as a "
        "Python list of tuples; after changing the table, any text.",
        answer="the final answer",
    ),
)

_ACTION = re.compile(r"Action:\s*(Operation|Answer)\b", re.IGNORECASE)
_SQL_BLOCK = re.compile(r"```sql\s*\n?(.*?)```", re.DOTALL | re.IGNORECASE)
_FINAL_ANSWER = re.compile(r"Final Answer:\s*(.*)", re.DOTALL)


def from_tool_call(call: ToolCall) -> Action:
    """The action of a tool call: `execute_sql(sql)` or `commit_final_answer(answer)`."""
    if call.name == "commit_final_answer":
        values = call_arguments(call, ("answer",))
        return values if isinstance(values, InvalidReply) else Answer(values[0].strip())
    if call.name != "execute_sql":
        return InvalidReply(
            f"there is no tool {call.name!r}; the tools are execute_sql and commit_final_answer"
        )
    values = call_arguments(call, ("sql",))
    return values if isinstance(values, InvalidReply) else _operation(values[0].strip())


def parse_reply(reply: str) -> Action:
    """The first action the reply names: an operation, an answer, or why it is invalid."""
    found = _ACTION.search(reply)
    if found is None:
        return InvalidReply("the reply names neither `Action: Operation` nor `Action: Answer`")
    rest = reply[found.end() :]
    if found.group(1).lower() == "answer":
        answer = _FINAL_ANSWER.search(rest)
        if answer is None:
            return InvalidReply("`Action: Answer` must be followed by a line `Final Answer: ...`")
        return Answer(answer.group(1).strip())
    block = _SQL_BLOCK.search(rest)
    if block is None:
        return InvalidReply("`Action: Operation` must be followed by a ```sql code block")
    return _operation(block.group(1).strip())


def _operation(sql: str) -> Operation | InvalidReply:
    """One statement to run, or why it cannot be."""
    if not sql:
        return InvalidReply("the SQL statement is empty")
    count = count_statements(sql)
    if count > 1:
        return InvalidReply(f"the SQL holds {count} statements; send one statement a turn")
    return Operation(sql)


_SEPARATORS = (";", "--", "#", "/*")  # what splits statements, or hides text, in MySQL


@functools.lru_cache(maxsize=4096)
def count_statements(sql: str) -> int:
    """How many statements `sql` holds, by MySQL's tokens (semicolons in strings don't count)."""
    body = sql.rstrip().rstrip(";")
    if not any(mark in body for mark in _SEPARATORS):
        return int(bool(body.strip()))  # no semicolon or comment but at the end: no tokens needed
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
