"""Hostile or careless SQL from an agent: an observation and a status, in bounded time."""

from __future__ import annotations

import gymnasium as gym
import pytest

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.envs.db.actions import operation_reply

from .db_fixtures import solve, task_file

TIMEOUT = 1.0
BIG_ROW_SOURCE = {
    "mysql": "information_schema.COLLATIONS g, information_schema.COLLATIONS h;",
    "sqlite": (
        "(WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000000) "
        "SELECT i FROM n) g;"
    ),
}
HOSTILE = {
    "sleep": "SELECT SLEEP(600);",
    # the table with itself six times, times a large row source of each dialect
    "cross_join": (
        "SELECT COUNT(*) FROM `shop items` a, `shop items` b, `shop items` c, `shop items` d, "
        "`shop items` e, `shop items` f, {rows}"
    ),
    "million_rows": (
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000) "
        "SELECT i FROM n;"
    ),
    "drop_database": "DROP DATABASE IF EXISTS mysql;",
    "read_users": "SELECT * FROM mysql.user;",
    "set_global": "SET GLOBAL max_connections = 1;",
    "shutdown": "SHUTDOWN;",
    "drop_own_table": "DROP TABLE `shop items`;",
    "attach": "ATTACH DATABASE '/tmp/lifelong_gym_attack.db' AS x;",
}


@pytest.fixture(params=["sqlite", "mysql"])
def env(request, tmp_path):
    url = request.getfixturevalue("mysql_url") if request.param == "mysql" else None
    env = gym.make(
        "LifelongDB-v0",
        tasks=str(task_file(tmp_path)),
        backend=request.param,
        url=url,
        statement_timeout=TIMEOUT,
        max_rows=100,
        max_observation_length=2_000,
    )
    yield env
    env.close()


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_statement_is_an_observation_and_next_task_is_clean(env, name):
    on_mysql = env.unwrapped.backend_name == "mysql"
    env.reset(options={"task_index": 12})
    sql = HOSTILE[name].format(rows=BIG_ROW_SOURCE["mysql" if on_mysql else "sqlite"])
    obs, reward, terminated, truncated, info = env.step(operation_reply(sql))
    assert not terminated and not truncated
    assert env.observation_space.contains(obs) and len(obs) <= 2_000
    if name == "cross_join" or (name == "sleep" and on_mysql):  # SQLite has no SLEEP()
        assert "ran longer than 1 s and was stopped" in obs
    if name == "million_rows":
        assert "only the first 100 rows are shown" in obs
    if name in ("read_users", "set_global", "shutdown", "attach"):
        assert obs.startswith("Error:")
    # the task goes on, scores, and the next tasks start from a clean, correct state
    *_, info = env.step("Action: Answer\nFinal Answer: done")
    assert info["status"] == "completed"
    assert solve(env, 12)["outcome"] == "correct"
    assert solve(env, 10)["outcome"] == "correct"


def test_mysql_agent_cannot_see_other_databases(mysql_url, tmp_path):
    env = gym.make("LifelongDB-v0", tasks=str(task_file(tmp_path)), backend="mysql", url=mysql_url)
    env.reset(options={"task_index": 10})
    obs, *_ = env.step(operation_reply("SHOW DATABASES;"))
    names = eval(obs)  # noqa: S307 - the observation is a list of tuples we printed
    assert {n for (n,) in names} == {"information_schema", env.unwrapped.backend._database}
    env.close()
