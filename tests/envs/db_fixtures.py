"""A small DB task file for the environment's tests, with truths worked out by hand."""

from __future__ import annotations

from pathlib import Path

from lifelong_gym.agents import OracleAgent
from lifelong_gym.envs.db.table_hash import table_hash

from ..conftest import write_jsonl

COLUMNS = [
    {"name": "id", "type": "INT"},
    {"name": "name", "type": "TEXT"},
    {"name": "price", "type": "DECIMAL(10,2)"},
    {"name": "added", "type": "DATE"},
]
ROWS = [
    [1, "tea", 3.5, "2024-01-02"],
    [2, "coffee", 12.25, "2024-02-03"],
    [3, "cocoa", 7.0, "2024-03-04"],
]
TABLE = {"name": "shop items", "column_info_list": COLUMNS, "row_list": ROWS}


def _text(row: list) -> list[str]:
    """A row as MySQL prints it (DECIMAL(10,2) with two decimals)."""
    return [str(row[0]), row[1], f"{row[2]:.2f}", row[3]]


def task_records() -> list[dict]:
    """Three tasks: a query, an insert, a delete; write truths hashed from known rows."""
    inserted = [*ROWS, [4, "mate", 9.99, "2024-04-05"]]
    return [
        {
            "sample_index": 10,
            "instruction": "List the names of items costing more than 5, most expensive first.",
            "table_info": TABLE,
            "answer_info": {
                "direct": [["coffee"], ["cocoa"]],
                "sql": "SELECT name FROM `shop items` WHERE price > 5 ORDER BY price DESC;",
            },
            "skill_list": ["select", "where_single_condition", "order_by_single_column"],
        },
        {
            "sample_index": 11,
            "instruction": "Add the item 4, mate, 9.99, added 2024-04-05.",
            "table_info": TABLE,
            "answer_info": {
                "md5": table_hash(_text(r) for r in inserted),
                "sql": "INSERT INTO `shop items` VALUES (4, 'mate', 9.99, '2024-04-05');",
            },
            "skill_list": ["insert"],
        },
        {
            "sample_index": 12,
            "instruction": "Delete the item named tea.",
            "table_info": TABLE,
            "answer_info": {
                "md5": table_hash(_text(r) for r in ROWS[1:]),
                "sql": "DELETE FROM `shop items` WHERE name = 'tea';",
            },
            "skill_list": ["delete", "where_single_condition"],
        },
    ]


def task_file(folder: Path) -> Path:
    """Write the tasks as our JSONL and return the path."""
    return write_jsonl(folder / "tasks.jsonl", task_records())


def solve(env, task_index):
    """Run the oracle on a task; return the final info."""
    agent = OracleAgent(env.unwrapped.tasks)
    env.reset(options={"task_index": task_index})
    while True:
        *_, terminated, truncated, info = env.step(agent.act(env.unwrapped.session))
        if terminated or truncated:
            return info
