"""`LifelongDB-v0`: the benchmark's database task, on embedded SQLite or a MySQL server."""

from __future__ import annotations

from pathlib import Path

from lifelong_gym.core import (
    DEFAULT_MAX_ACTION_LENGTH,
    DEFAULT_MAX_OBSERVATION_LENGTH,
    Evaluation,
    Interaction,
    InvalidReply,
    LifelongEnv,
    error_text,
)
from lifelong_gym.session import EvaluationOutcome, OpeningPrompt, Session
from lifelong_gym.tasks import TaskSet
from lifelong_gym.tool_calls import ToolCall

from .actions import TOOLS, Action, Answer, from_tool_call, parse_reply
from .answer import parse_answer, score_rows
from .backends import DatabaseBackend, StatementResult, make_backend
from .backends.base import (
    DEFAULT_MAX_ROWS,
    DEFAULT_STATEMENT_TIMEOUT,
    UnreadableTable,
    plain_value,
)
from .prompt import task_prompt
from .tasks import DBTask, load_db_tasks

DEFAULT_MAX_TURNS = 3
_PLAIN = (int, float, str, type(None))  # values `plain_value` returns as they are


class LifelongDBEnv(LifelongEnv[DBTask]):
    """Answer questions about, or change, one table with SQL, one statement a turn.

    ## Description
    Each episode is one task of LifelongAgentBench's database environment: the agent gets
    an instruction about a table, runs SQL statements, and finishes with an answer. Query
    tasks are scored by comparing the answer with the ground-truth rows; write tasks
    (INSERT, UPDATE, DELETE) by hashing the table afterwards.

    ## Action Space
    `UnicodeText(max_action_length)`: the model's raw reply, either `Action: Operation` followed by
    one ```sql code block holding one statement, or `Action: Answer` followed by a line
    `Final Answer: ...`.

    ## Observation Space
    `UnicodeText(max_observation_length)`: at reset the instructions and the task; after a
    statement the rows it returned as a Python list of tuples (at most `max_rows`, with a
    note when there were more), or the database's error message.

    ## Rewards
    Given on the step that ends the task. With `reward="binary"` (default, the
    benchmark's) 1.0 when the finished task is correct, else 0.0. With `reward="partial"`
    a wrong answer to a query earns its row overlap (`info["row_overlap"]`: the rows the
    answer shares with the truth, in any order, over the longer of the two) and a wrong
    write task 0.0. `info["outcome"]` and `info["status"]` hold the benchmark's evaluation
    outcome and session status.

    ## Starting State
    `reset` creates the task's table (a fresh database on the back-end) and returns the
    instructions, a worked example and the task as one message. Without
    `options={"task_index": i}` the task is the next of the epoch (see `task_sampling`).

    ## Episode End
    Terminated when the agent answers or sends a reply in neither format
    (`agent_validation_failed`); truncated after `max_turns` replies (`task_limit_reached`).
    The task is scored either way.

    ## Arguments
    - `tasks`: a shipped task set name or a task file (benchmark JSON/parquet, AgentBench
      JSONL, our JSONL); default the shipped `default` set of 500 tasks.
    - `backend`: `"sqlite"` (embedded, default) or `"mysql"` with `url="mysql://user:pw@host:port"`;
      `"mysql"` without a url starts a MariaDB container shared by the host (docs/db-tasks.md).
    - `max_turns` (3), `statement_timeout` seconds (5), `max_rows` shown (1000),
      `max_observation_length` characters (16,000), `max_action_length` characters of a
      reply (100,000), `render_mode` (`"ansi"`).
    - `action_format`: `"text"` (the benchmark's reply format, default) or `"tools"`
      (native tool calls: `env.unwrapped.tools` lists the function schemas; `step` takes
      an OpenAI assistant message in JSON or as a dict, or `<tool_call>{...}</tool_call>`
      markup).
    - `reward`: `"binary"` (default) or `"partial"` (see Rewards).
    - `task_sampling`: `"epoch"` (default: each pass over the task set plays every task
      once, in an order drawn from `np_random`; `reset(seed=s)` starts a new pass) or
      `"uniform"` (each reset draws any task, with replacement).

    ## Example
    >>> import gymnasium as gym
    >>> import lifelong_gym
    >>> gym.register_envs(lifelong_gym)
    >>> env = gym.make("LifelongDB-v0")
    >>> obs, info = env.reset(options={"task_index": 0})
    >>> sorted(info)
    ['skills', 'task_index']
    >>> obs, reward, terminated, truncated, info = env.step(
    ...     "Action: Operation\\n```sql\\nSELECT 1\\n```"
    ... )
    >>> obs, reward, terminated
    ('[(1,)]', 0.0, False)
    >>> obs, reward, terminated, truncated, info = env.step("Action: Answer\\nFinal Answer: []")
    >>> terminated, info["status"], info["outcome"], reward
    (True, 'completed', 'incorrect', 0.0)
    >>> env.close()

    ## Version History
    - v0: initial release.
    """

    partial_credit = "row_overlap"

    def __init__(
        self,
        tasks: str | Path | TaskSet[DBTask] | None = None,
        backend: str = "sqlite",
        url: str | None = None,
        *,
        max_turns: int = DEFAULT_MAX_TURNS,
        statement_timeout: float = DEFAULT_STATEMENT_TIMEOUT,
        max_rows: int = DEFAULT_MAX_ROWS,
        max_observation_length: int = DEFAULT_MAX_OBSERVATION_LENGTH,
        max_action_length: int = DEFAULT_MAX_ACTION_LENGTH,
        render_mode: str | None = None,
        action_format: str = "text",
        reward: str = "binary",
        task_sampling: str = "epoch",
    ):
        task_set = tasks if isinstance(tasks, TaskSet) else load_db_tasks(tasks)
        super().__init__(
            task_set,
            max_turns=max_turns,
            max_observation_length=max_observation_length,
            max_action_length=max_action_length,
            render_mode=render_mode,
            action_format=action_format,
            reward=reward,
            task_sampling=task_sampling,
        )
        self.backend_name = backend
        self.backend: DatabaseBackend = make_backend(
            backend, url, statement_timeout=statement_timeout, max_rows=max_rows
        )

    def interact(self, action: str) -> Interaction:
        """Run the reply's statement, or finish on its answer; invalid replies end the task."""
        parsed = self.parse_action(action)
        if isinstance(parsed, InvalidReply):
            return Interaction.invalid(parsed)
        if isinstance(parsed, Answer):
            return Interaction("", done=True)
        return Interaction(format_result(self.backend.execute(parsed.sql)))

    tool_schemas = TOOLS

    def parse_text_action(self, reply: str) -> Action:
        """An operation (one SQL statement), an answer, or why the reply is invalid."""
        return parse_reply(reply)

    def action_from_tool_call(self, call: ToolCall) -> Action:
        """`execute_sql(sql)` or `commit_final_answer(answer)`."""
        return from_tool_call(call)

    def release(self) -> None:
        """Close the back-end's connections and drop what it made."""
        self.backend.close()

    def _start_task(self, task: DBTask) -> OpeningPrompt:
        self.backend.start(task.table_info)
        return task_prompt(task, self.max_turns, self.action_format)

    def _evaluate(self, task: DBTask, session: Session) -> Evaluation:
        if task.answer_info.md5 is not None:
            try:
                found = self.backend.table_hash(task.table_info)
            except UnreadableTable as error:
                return Evaluation(EvaluationOutcome.INCORRECT, {"error": str(error)})
            ok = found == task.answer_info.md5
            return Evaluation(_outcome(ok), {"table_hash_match": ok})
        answer = self._final_answer(session)
        if answer is None:
            return Evaluation(EvaluationOutcome.INCORRECT, {"answered": False})
        ok, overlap = score_rows(parse_answer(answer), task.answer_info.direct or ())
        return Evaluation(_outcome(ok), {"answered": True, "row_overlap": overlap})

    def _final_answer(self, session: Session) -> str | None:
        """The answer of the agent's last reply, if that reply was an answer."""
        for message in reversed(session.chat_history):
            if message.role == "agent":
                parsed = self.parse_action(message.content)
                return parsed.answer if isinstance(parsed, Answer) else None
        return None

    def _end_task(self) -> None:
        self.backend.discard()


def format_result(result: StatementResult) -> str:
    """A statement's result as the agent sees it."""
    if result.error is not None:
        return error_text(result.error)
    rows = result.rows or []
    if not all(type(row) is tuple and all(type(v) in _PLAIN for v in row) for row in rows):
        rows = [tuple(plain_value(v) for v in row) for row in rows]  # blobs, Decimal, dates
    text = repr(list(rows))
    if result.more_rows:  # a back-end may stop before max_rows when the values are huge
        text += f"\n[only the first {len(rows)} rows are shown]"
    return text


def _outcome(ok: bool) -> EvaluationOutcome:
    return EvaluationOutcome.CORRECT if ok else EvaluationOutcome.INCORRECT
