"""docs/envs.md against real episodes: the observation rule and every documented `info` key.

DB runs on SQLite, KG on Oxigraph, OS on Docker (skipped without an engine and its image).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import lifelong_gym
from lifelong_gym.agents import OracleAgent

gym.register_envs(lifelong_gym)
DOC = Path(__file__).resolve().parents[1] / "docs" / "envs.md"
JUNK = "no action in this reply"


def doc_tables() -> list[list[list[str]]]:
    """The Markdown tables of docs/envs.md, as rows of cells (header and rule dropped)."""
    tables: list[list[list[str]]] = []
    rows: list[list[str]] = []
    for line in [*DOC.read_text(encoding="utf-8").splitlines(), ""]:
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
        elif rows:
            tables.append(rows[2:])
            rows = []
    return tables


def key_names(cell: str) -> set[str]:
    """The keys a cell names: its backticked words outside parentheses."""
    while re.search(r"\([^()]*\)", cell):
        cell = re.sub(r"\([^()]*\)", "", cell)
    return set(re.findall(r"`(\w+)`", cell))


COMMON, BY_KIND = doc_tables()
PHASES = ("reset", "mid", "end")
COMMON_KEYS = {
    phase: {key_names(row[0]).pop() for row in COMMON if row[column] == "yes"}
    for column, phase in enumerate(PHASES, start=1)
}


@contextmanager
def made(env_id: str, **kwargs: Any) -> Iterator[gym.Env]:
    env = gym.make(env_id, **kwargs)
    try:
        yield env
    finally:
        env.close()


def play(env: gym.Env, index: int, replies: list[str] | None = None) -> list[tuple[str, dict]]:
    """One episode (the oracle's replies unless given): (observation, info) at reset and each step.

    Checks the observation rule of docs/envs.md on the way.
    """
    unwrapped = env.unwrapped
    observation, info = env.reset(options={"task_index": index})
    history = unwrapped.session.chat_history
    assert [m.content for m in history] == [observation]
    oracle = OracleAgent(unwrapped.tasks)
    steps = [(observation, info)]
    done = False
    while not done:
        reply = replies.pop(0) if replies else oracle.act(unwrapped.session)
        observation, _, terminated, truncated, info = env.step(reply)
        done = terminated or truncated
        history = unwrapped.session.chat_history
        if done and history[-1].content == reply:
            assert observation == ""  # finished or answered: nothing more was said
        else:
            assert observation == history[-1].content  # the newest message only
            assert history[-2].content == reply
        steps.append((observation, info))
    return steps


def first_task(env: gym.Env, wanted: Callable[[Any], bool]) -> int:
    return next(task.index for task in env.unwrapped.tasks if wanted(task))


def is_select(task) -> bool:
    return "select" in task.skills


def db_select_answered() -> list[list[tuple[str, dict]]]:
    with made("LifelongDB-v0") as env:
        steps = play(env, first_task(env, is_select))
    assert steps[-1][1]["answered"] is True
    return [steps]


def db_select_unanswered() -> list[list[tuple[str, dict]]]:
    with made("LifelongDB-v0", max_turns=2) as env:
        index = first_task(env, is_select)
        sql = "Action: Operation\n```sql\nSELECT 1;\n```"
        episodes = [play(env, index, [JUNK]), play(env, index, [sql, sql])]
    assert [e[-1][1]["status"] for e in episodes] == [
        "agent_validation_failed",
        "task_limit_reached",
    ]
    assert all(e[-1][1]["answered"] is False for e in episodes)
    return episodes


def db_write_readable() -> list[list[tuple[str, dict]]]:
    with made("LifelongDB-v0") as env:
        index = first_task(env, lambda task: not is_select(task))
        return [play(env, index), play(env, index, [JUNK])]


def db_write_broken() -> list[list[tuple[str, dict]]]:
    with made("LifelongDB-v0") as env:
        task = env.unwrapped.tasks[first_task(env, lambda task: not is_select(task))]
        drop = f"Action: Operation\n```sql\nDROP TABLE {task.table_info.name};\n```"
        refused = play(env, task.index, [drop, "Action: Answer\nFinal Answer: done"])
        assert "refused" in refused[1][0] and "table_hash_match" in refused[-1][1]
        # The agent's DDL is refused, so only the outside breaks the table: drop it
        # through the back-end's own connection before the scorer reads it.
        at_reset = env.reset(options={"task_index": task.index})
        env.unwrapped.backend._require().execute(f"DROP TABLE {task.table_info.name}")
        observation, _, terminated, _, info = env.step("Action: Answer\nFinal Answer: done")
        assert terminated and "no longer exists" in info["error"]
        return [[at_reset, (observation, info)]]


def kg_any() -> list[list[tuple[str, dict]]]:
    pytest.importorskip("pyoxigraph")
    with made("LifelongKG-v0") as env:
        index = env.unwrapped.tasks.indices[0]
        return [play(env, index), play(env, index, [JUNK])]


def os_script(request: pytest.FixtureRequest) -> list[list[tuple[str, dict]]]:
    request.getfixturevalue("os_image")
    with made("LifelongOS-v0", pool_size=1) as env:
        index = env.unwrapped.tasks.indices[0]
        return [play(env, index), play(env, index, [JUNK])]


def os_answer(request: pytest.FixtureRequest) -> list[list[tuple[str, dict]]]:
    request.getfixturevalue("os_image")
    tmp_path = request.getfixturevalue("tmp_path")
    record = {"index": 0, "instruction": "What is 2 + 2?", "answer_check": {"match": "4"}}
    tasks = tmp_path / "question.jsonl"
    tasks.write_text(json.dumps(record) + "\n")
    with made("LifelongOS-v0", pool_size=1, tasks=str(tasks)) as env:
        episodes = [play(env, 0), play(env, 0, [JUNK])]
    assert [e[-1][1]["answer"] for e in episodes] == ["4", None]
    return episodes


def scoring_failed() -> list[list[tuple[str, dict]]]:
    with made("LifelongDB-v0") as env:

        def broken_scorer(task, session):
            raise RuntimeError("the scorer broke")

        env.unwrapped._evaluate = broken_scorer
        steps = play(env, first_task(env, is_select))
    assert steps[-1][1]["status"] == "task_environment_error"
    return [steps]


Scenario = Callable[..., list[list[tuple[str, dict]]]]
SCENARIOS: dict[tuple[str, str], Scenario] = {
    ("DB, asks for rows (`select`)", "the agent answered"): db_select_answered,
    (
        "DB, asks for rows (`select`)",
        "no answer (an invalid reply, the turn limit)",
    ): db_select_unanswered,
    ("DB, changes the table (`insert`, `update`, `delete`)", "the table can be read"): (
        db_write_readable
    ),
    (
        "DB, changes the table (`insert`, `update`, `delete`)",
        "the table cannot be read (gone, or not in time)",
    ): db_write_broken,
    ("KG", "always"): kg_any,
    ("OS, judged by an evaluation script (every shipped task)", "always"): os_script,
    ("OS, judged on the answer (AgentBench's question tasks)", "always"): os_answer,
    ("any", "scoring itself failed (status `task_environment_error`)"): scoring_failed,
}


def test_every_row_of_the_kind_table_has_an_episode_here():
    assert {(row[0], row[1]) for row in BY_KIND} == set(SCENARIOS)
    assert COMMON_KEYS["reset"] and COMMON_KEYS["mid"] > COMMON_KEYS["reset"]


@pytest.mark.parametrize("row", BY_KIND, ids=[f"{row[0]} / {row[1]}" for row in BY_KIND])
def test_the_documented_keys_are_what_real_episodes_give(
    row: list[str], request: pytest.FixtureRequest
):
    scenario = SCENARIOS[(row[0], row[1])]
    episodes = scenario(request) if scenario in (os_script, os_answer) else scenario()
    kind_keys = key_names(row[2])
    for steps in episodes:
        (_, at_reset), *middle, (_, at_end) = steps
        assert set(at_reset) == COMMON_KEYS["reset"]
        for _, info in middle:
            assert set(info) == COMMON_KEYS["mid"]
        assert set(at_end) == COMMON_KEYS["end"] | kind_keys, at_end
