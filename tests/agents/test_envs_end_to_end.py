"""Both back-ends on every registered environment, built from its id with default arguments."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import pytest

from lifelong_gym import ENV_IDS
from lifelong_gym.agents import LanguageModelAgent, ModelPool, make_agent

from .chat_server import ChatServer
from .episodes import run_batch, run_task, serve_the_oracle

FAILED_BY_THE_ENV = {"task_environment_error", "task_unknown_error"}


@pytest.fixture(params=ENV_IDS)
def envs(request) -> Iterator[list[gym.Env]]:
    """Two environments of one id on their shipped tasks, or a skip saying why not here."""
    made: list[gym.Env] = []
    try:
        for _ in range(2):
            made.append(gym.make(request.param))
    except Exception as error:  # noqa: BLE001 - a missing service or task set: skip, say why
        for env in made:
            env.close()
        pytest.skip(f"{request.param} cannot start here: {type(error).__name__}: {error}")
    yield made
    for env in made:
        env.close()


def first_tasks(env: gym.Env, count: int) -> list[int]:
    return env.unwrapped.tasks.order[:count]


def test_a_served_model_replaying_the_oracle_scores(envs: list[gym.Env], chat_server: ChatServer):
    env = envs[0]
    sent: list[bool] = []
    chat_server.default = serve_the_oracle(env, sent)
    agent = make_agent(f"openai:{chat_server.base_url}#served", tasks=None)  # type: ignore[arg-type]
    for index in first_tasks(env, 2):
        reward, info = run_task(env, agent, index)
        assert reward == 1.0, info
    assert sent and all(sent)


def test_the_tiny_model_runs_tasks_in_a_batch(envs: list[gym.Env], tiny_model_dir: Path):
    config = {"name": "tiny", "backend": "hf", "path": str(tiny_model_dir), "max_new_tokens": 32}
    pool = ModelPool([config])
    agent = LanguageModelAgent(pool.get("tiny"))
    infos = run_batch(envs, agent, first_tasks(envs[0], 2))
    for info in infos:
        assert info["status"] not in FAILED_BY_THE_ENV, info
        assert info["outcome"] in {"correct", "incorrect"}, info
