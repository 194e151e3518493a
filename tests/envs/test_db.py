"""The DB environment through Gymnasium's API, on SQLite and on a real MySQL server."""

from __future__ import annotations

import pickle
import warnings

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import OracleAgent
from lifelong_gym.envs.db.actions import answer_reply, count_statements, operation_reply
from lifelong_gym.envs.db.backends import BackendError
from lifelong_gym.errors import EnvArgumentError

from .db_fixtures import task_file


@pytest.fixture(params=["sqlite", "mysql"])
def make_env(request, tmp_path):
    """A factory of DB environments on each back-end, closed after the test."""
    url = request.getfixturevalue("mysql_url") if request.param == "mysql" else None
    made = []

    def make(**kwargs):
        kwargs.setdefault("tasks", str(task_file(tmp_path)))
        env = gym.make("LifelongDB-v0", backend=request.param, url=url, **kwargs)
        made.append(env)
        return env

    yield make
    for env in made:
        env.close()


def run(env, replies, task_index):
    """Reset to a task, send replies until the episode ends; return the last step."""
    env.reset(options={"task_index": task_index})
    for reply in replies:
        result = env.step(reply)
        if result[2] or result[3]:
            return result
    raise AssertionError("the episode did not end")


def test_check_env_passes_without_warnings(make_env):
    env = make_env()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=True)


def test_reset_gives_prompt_and_info(make_env):
    env = make_env()
    obs, info = env.reset(options={"task_index": 10})
    assert info == {
        "task_index": 10,
        "skills": ["select", "where_single_condition", "order_by_single_column"],
    }
    assert "most expensive first" in obs and "Action: Operation" in obs
    assert env.observation_space.contains(obs)


def test_seeded_reset_repeats(make_env):
    env = make_env()
    first = [env.reset(seed=7)[1]["task_index"]] + [env.reset()[1]["task_index"] for _ in range(5)]
    again = [env.reset(seed=7)[1]["task_index"]] + [env.reset()[1]["task_index"] for _ in range(5)]
    assert first == again
    assert len(set(first)) > 1


def test_query_task_scored_on_rows(make_env):
    env = make_env()
    sql = operation_reply("SELECT name FROM `shop items` WHERE price > 5 ORDER BY price DESC;")
    env.reset(options={"task_index": 10})
    obs, *_ = env.step(sql)
    assert obs == "[('coffee',), ('cocoa',)]"
    obs, reward, terminated, truncated, info = env.step(answer_reply(obs))
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info["status"] == "completed" and info["outcome"] == "correct"
    _, reward, *_, info = run(env, [answer_reply("[('cocoa',), ('coffee',)]")], 10)
    assert reward == 0.0 and info["outcome"] == "incorrect"


def test_bare_value_accepted_for_one_row(tmp_path, make_env):
    env = make_env()
    env.reset(options={"task_index": 10})
    # the truth has two rows, so a bare value is wrong here
    *_, info = env.step(answer_reply("coffee"))
    assert info["outcome"] == "incorrect"


@pytest.mark.parametrize("task_index", [11, 12])
def test_write_tasks_scored_by_table_hash(make_env, task_index):
    env = make_env()
    agent = OracleAgent(env.unwrapped.tasks)
    env.reset(options={"task_index": task_index})
    while True:
        _, reward, terminated, truncated, info = env.step(agent.act(env.unwrapped.session))
        if terminated or truncated:
            break
    assert reward == 1.0 and info["outcome"] == "correct"
    _, reward, *_, info = run(env, [answer_reply("done")], task_index)
    assert reward == 0.0 and info["outcome"] == "incorrect"


def test_turn_limit_truncates_and_still_scores(make_env):
    env = make_env(max_turns=2)
    insert = operation_reply("INSERT INTO `shop items` VALUES (4, 'mate', 9.99, '2024-04-05');")
    look = operation_reply("SELECT COUNT(*) FROM `shop items`;")
    _, reward, terminated, truncated, info = run(env, [insert, look], 11)
    assert (terminated, truncated) == (False, True)
    assert info["status"] == "task_limit_reached" and info["outcome"] == "correct"
    assert reward == 1.0


@pytest.mark.parametrize(
    "reply",
    [
        "just some junk text",
        "",
        "Action: Operation\nSELECT 1;",
        operation_reply("SELECT 1; SELECT 2;"),
        "Action: Answer\nno final answer line",
        "\x00\udcff" * 50,
    ],
)
def test_invalid_replies_end_the_task(make_env, reply):
    env = make_env()
    env.reset(options={"task_index": 10})
    obs, reward, terminated, truncated, info = env.step(reply)
    assert terminated and not truncated and reward == 0.0
    assert info["status"] == "agent_validation_failed"
    assert obs.startswith("Invalid reply:")


def test_semicolons_inside_strings_are_one_statement(make_env):
    env = make_env()
    env.reset(options={"task_index": 10})
    obs, *_ = env.step(operation_reply("SELECT 'a;b' AS x;"))
    assert obs == "[('a;b',)]"


@pytest.mark.parametrize(
    ("sql", "count"),
    [
        ("SELECT 1", 1),
        ("SELECT 1;\n", 1),
        ("SELECT 1;;", 1),
        ("SELECT 1; SELECT 2", 2),
        ("SELECT ';' AS x; SELECT 2;", 2),
        ("SELECT 1 -- a comment; not a statement", 1),
        ("SELECT 1 /* ; */", 1),
        ("SELECT 1 # ;\n; SELECT 2", 2),
        ("-- only a comment", 0),
        ("  ", 0),
    ],
)
def test_statements_are_counted_by_tokens_with_or_without_the_shortcut(sql, count):
    count_statements.cache_clear()
    assert count_statements(sql) == count


def test_step_before_reset_is_a_clear_error(make_env):
    env = make_env()
    with pytest.raises(gym.error.ResetNeeded):
        env.unwrapped.step(answer_reply("x"))


def test_close_twice_and_pickle_spec(make_env):
    env = make_env()
    env.reset(options={"task_index": 11})
    spec = pickle.loads(pickle.dumps(env.spec))
    rebuilt = gym.make(spec)
    rebuilt.reset(options={"task_index": 12})
    rebuilt.close()
    env.close()
    env.close()


def test_unknown_task_index_names_the_range(make_env):
    env = make_env()
    with pytest.raises(KeyError, match="10..12"):
        env.reset(options={"task_index": 99})


def test_render_ansi(make_env):
    env = make_env(render_mode="ansi")
    env.reset(options={"task_index": 10})
    env.step(operation_reply("SELECT 1;"))
    text = env.render()
    assert "[agent] Action: Operation" in text and "[user] [(1,)]" in text


def test_user_errors_are_clear(tmp_path):
    tasks = str(task_file(tmp_path))
    with pytest.raises(EnvArgumentError, match="backend='postgres' is unknown"):
        gym.make("LifelongDB-v0", tasks=tasks, backend="postgres")
    with pytest.raises(BackendError, match="expected mysql://"):
        gym.make("LifelongDB-v0", tasks=tasks, backend="mysql", url="http://localhost")
    with pytest.raises(BackendError, match="cannot connect to MySQL at 127.0.0.1:1"):
        gym.make("LifelongDB-v0", tasks=tasks, backend="mysql", url="mysql://root@127.0.0.1:1")
    with pytest.raises(lifelong_gym.TaskFileError, match="neither a file nor a shipped"):
        gym.make("LifelongDB-v0", tasks="/no/such/tasks.jsonl")


def test_normalize_action_folds_spelling_not_meaning(make_env):
    env = make_env().unwrapped
    same = [
        operation_reply("select name from `shop items` where price>5;"),
        operation_reply("SELECT name\n  FROM `shop items` WHERE price > 5"),
    ]
    assert env.normalize_action(same[0]) == env.normalize_action(same[1])
    other = operation_reply("SELECT name FROM `shop items` WHERE price > 6")
    assert env.normalize_action(other) != env.normalize_action(same[0])
    assert env.normalize_action("no action here") is None
    assert env.normalize_action(answer_reply(" [(1,)]  ")) == "answer: [(1,)]"
