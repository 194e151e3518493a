"""The same replies earn the same reward on SQLite and on MariaDB: the oracle, and recorded
wrong and partly wrong answers and writes."""

from __future__ import annotations

import gymnasium as gym
import pytest

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import OracleAgent
from lifelong_gym.envs.db.actions import answer_reply, operation_reply

pytestmark = pytest.mark.mysql
SHIPPED_SAMPLE = 60


def _play(env, index, replies):
    env.reset(options={"task_index": index})
    info = {}
    for reply in replies:
        *_, terminated, truncated, info = env.step(reply)
        if terminated or truncated:
            return info
    *_, terminated, truncated, info = env.step(answer_reply("done"))
    return info


def _wrong_replies(task):
    """Replies that are wrong or partly wrong for `task`, as agents send them."""
    table = "`" + task.table_info.name + "`"
    first = task.table_info.column_info_list[0].name
    text = next(
        (
            c.name
            for c in task.table_info.column_info_list
            if "CHAR" in c.type.upper() or "TEXT" in c.type.upper()
        ),
        first,
    )
    sample = next((r for r in task.table_info.row_list), None)
    value = (
        str(sample[[c.name for c in task.table_info.column_info_list].index(text)])
        if sample
        else "x"
    )
    if task.is_query:
        truth = list(task.answer_info.direct or [])
        return [
            [answer_reply(repr(truth[:-1] or [("nothing",)]))],  # partly wrong: a row missing
            [answer_reply(repr(truth[::-1]))],  # order changed
            [
                operation_reply(f"SELECT * FROM {table} WHERE `{text}` = '{value.upper()}'"),
                answer_reply("[(1,)]"),
            ],
            [operation_reply(task.reference_sql[-1]), answer_reply("[]")],
        ]
    return [
        [
            operation_reply(f"DELETE FROM {table} WHERE `{text}` = '{value.upper()}'")
        ],  # collation decides
        [operation_reply(f"UPDATE {table} SET `{first}` = `{first}`")],  # changes nothing
        [
            operation_reply("BEGIN"),
            *(operation_reply(s) for s in task.reference_sql),
        ],  # never committed
        [
            operation_reply("START TRANSACTION"),
            *(operation_reply(s) for s in task.reference_sql),
            operation_reply("COMMIT"),
        ],
        [operation_reply(f"DELETE FROM {table}")],
    ]


def test_oracle_and_wrong_replies_score_the_same_on_both(mysql_url):
    envs = {
        "sqlite": gym.make("LifelongDB-v0", max_turns=8).unwrapped,
        "mysql": gym.make("LifelongDB-v0", backend="mysql", url=mysql_url, max_turns=8).unwrapped,
    }
    tasks = envs["sqlite"].tasks
    oracle = OracleAgent(tasks)
    differ, played = [], 0
    for index in tasks.order[:SHIPPED_SAMPLE]:
        task = tasks[index]
        rewards = {}
        for name, env in envs.items():
            env.reset(options={"task_index": index})
            while True:
                *_, terminated, truncated, info = env.step(oracle.act(env.session))
                if terminated or truncated:
                    break
            rewards[name] = [info["reward"] if "reward" in info else env.session.reward]
            for replies in _wrong_replies(task):
                rewards[name].append(_play(env, index, replies) and env.session.reward)
        played += len(rewards["sqlite"])
        assert rewards["sqlite"][0] == rewards["mysql"][0] == 1.0
        if rewards["sqlite"] != rewards["mysql"]:
            differ.append((index, rewards))
    for env in envs.values():
        env.close()
    assert played > 200
    assert differ == []
