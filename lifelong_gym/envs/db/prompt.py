"""What the DB agent is told: the action formats, one worked example, and the task."""

from __future__ import annotations

from lifelong_gym.session import OpeningPrompt

from .actions import answer_reply, operation_reply
from .tasks import DBTask

INSTRUCTIONS = f"""You are working with a MySQL database to complete a task. In every turn, first \
reason about the task and say what you plan to do, then choose exactly one action.

To run a SQL statement, write `Action: Operation` and put the statement in a sql code \
block, on one line:
{operation_reply("SELECT name, price FROM products WHERE price > 10;")}
Only one statement per turn: a code block with two statements is rejected. I will run it and \
show you the rows it returned, as a Python list of tuples, or the error it raised.

To finish, write `Action: Answer` and then a line `Final Answer:` with your answer:
{answer_reply('[("Alice", 30), ("Bob", 25)]')}
When the task asks for data, the final answer must be the rows of the correct query, as a \
Python list of tuples. When the task asks you to change the table, make the change, then \
finish with any final answer: the table itself is checked.

A reply that follows neither format ends the task. You have at most {{max_turns}} turns.

Example. Task: How many products cost more than 10?
Table: products (id INT, name TEXT, price DECIMAL(10,2))
Turn 1: {operation_reply("SELECT COUNT(*) FROM products WHERE price > 10;")}
Observation: [(3,)]
Turn 2: {answer_reply("[(3,)]")}"""


TOOL_INSTRUCTIONS = """You are working with a MySQL database to complete a task, through \
two tools; first reason about the task and say what you plan to do, then make exactly one \
tool call a turn.

`execute_sql` runs one SQL statement (two statements in one call are rejected) and returns \
the rows it returned, as a Python list of tuples, or the error it raised.

`commit_final_answer` finishes the task. When the task asks for data, the answer must be the \
rows of the correct query, as a Python list of tuples; when the task asks you to change the \
table, make the change, then commit any answer: the table itself is checked.

A turn without a tool call ends the task. You have at most {max_turns} turns.

Example. Task: How many products cost more than 10?
Table: products (id INT, name TEXT, price DECIMAL(10,2))
Turn 1: execute_sql(sql="SELECT COUNT(*) FROM products WHERE price > 10;")
Result: [(3,)]
Turn 2: commit_final_answer(answer="[(3,)]")"""


def task_prompt(task: DBTask, max_turns: int, action_format: str = "text") -> OpeningPrompt:
    """The opening prompt: instructions, then the task and its table's name and columns."""
    table = task.table_info
    columns = ", ".join(f"{c.name} {c.type}" for c in table.column_info_list)
    instructions = TOOL_INSTRUCTIONS if action_format == "tools" else INSTRUCTIONS
    return OpeningPrompt(
        instructions.format(max_turns=max_turns),
        f"Task: {task.instruction}\nTable: {table.name} ({columns})",
    )
