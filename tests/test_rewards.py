"""`reward="binary"` and `reward="partial"`: the environments' rewards for training."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pytest

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym import ENV_IDS
from lifelong_gym.errors import EnvArgumentError

from .envs.db_fixtures import task_file

QUERY, INSERT = 10, 11  # of tests/envs/db_fixtures.py: names costing more than 5; an insert


def play(env: gym.Env, task_index: int, replies: list[str]) -> tuple[float, dict]:
    """Send `replies` until the episode ends; the last reward and info."""
    env.reset(options={"task_index": task_index})
    for reply in replies:
        _, reward, terminated, truncated, info = env.step(reply)
        if terminated or truncated:
            return reward, info
    raise AssertionError("the episode did not end")


def answer(text: str) -> str:
    return f"Action: Answer\nFinal Answer: {text}"


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_an_unknown_reward_is_one_error_naming_the_choices(env_id: str):
    with pytest.raises(EnvArgumentError, match="reward must be one of 'binary', 'partial'"):
        gym.make(env_id, reward="dense")


@pytest.fixture(params=["binary", "partial"])
def db_env(request, tmp_path: Path):
    env = gym.make(
        "LifelongDB-v0", tasks=str(task_file(tmp_path)), backend="sqlite", reward=request.param
    )
    yield env
    env.close()


def test_db_partial_reward_is_the_row_overlap(db_env: gym.Env):
    partial = db_env.unwrapped.reward_mode == "partial"
    reward, info = play(db_env, QUERY, [answer("[('coffee',)]")])  # one of the two rows
    assert (info["outcome"], info["row_overlap"]) == ("incorrect", 0.5)
    assert reward == (0.5 if partial else 0.0)
    reward, info = play(db_env, QUERY, [answer("[('coffee',), ('tea',), ('mate',)]")])
    assert reward == (pytest.approx(1 / 3) if partial else 0.0)
    reward, info = play(db_env, QUERY, [answer("[('coffee',), ('cocoa',)]")])
    assert (reward, info["outcome"]) == (1.0, "correct")
    reward, info = play(db_env, INSERT, [answer("done")])  # a write task left undone
    assert (reward, info["outcome"]) == (0.0, "incorrect")
    reward, info = play(db_env, QUERY, ["no action here"])
    assert (reward, info["status"]) == (0.0, "agent_validation_failed")


@pytest.mark.parametrize("mode", ["binary", "partial"])
def test_kg_partial_reward_is_the_f1(mode: str):
    env = gym.make("LifelongKG-v0", reward=mode)
    try:
        tasks = env.unwrapped.tasks
        task = next(t for t in tasks if t.s_expression.startswith("(AND"))  # #0 is a superset
        replies = [f"Action: {action}" for action in task.action_list] + ["Final Answer: #0"]
        reward, info = play(env, task.index, replies)
        assert info["outcome"] == "incorrect" and info["recall"] == 1.0
        assert 0.0 < info["f1"] < 1.0
        assert reward == (info["f1"] if mode == "partial" else 0.0)
        reward, info = play(env, task.index, ["no action"])
        assert (reward, info["f1"], info["status"]) == (0.0, 0.0, "agent_validation_failed")
        replies[-1] = f"Final Answer: #{task.answer_variable}"
        reward, info = play(env, task.index, replies)
        assert (reward, info["outcome"]) == (1.0, "correct")
    finally:
        env.close()


def test_os_partial_reward_stays_zero_or_one():
    from .envs.test_os import _engine

    _engine()
    env = gym.make("LifelongOS-v0", pool_size=1, command_timeout=3, reward="partial")
    try:
        index = env.unwrapped.tasks.order[0]
        reward, info = play(env, index, ["Act: finish"])
        assert (reward, info["outcome"]) == (0.0, "incorrect")
    finally:
        env.close()
