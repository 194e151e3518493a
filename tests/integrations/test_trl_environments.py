"""TRL's mapping form: one GRPO run on a dataset mixing DB, KG and OS tasks, with the tiny model.

Real parts: TRL's `GRPOTrainer`, the embedded SQLite and Oxigraph back-ends, and the Docker
engine with the OS image (the OS environment is left out, with the reason, without them).
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import gymnasium as gym
import pytest

from lifelong_gym.agents import OracleAgent
from lifelong_gym.errors import EnvArgumentError
from lifelong_gym.session import Role, SessionStatus

trl = pytest.importorskip(
    "trl", reason="the TRL adapter needs trl: pip install 'lifelong-gym[trl]'"
)

from lifelong_gym.integrations.trl import (  # noqa: E402
    environment_dataset,
    environment_factories,
)

from .test_trl import grpo_args, play_oracle, tiny_trainer  # noqa: E402

ENV_KWARGS = {"LifelongDB-v0": {}, "LifelongKG-v0": {}, "LifelongOS-v0": {"pool_size": 1}}


@pytest.fixture(scope="module")
def env_kwargs(request: pytest.FixtureRequest) -> dict[str, dict]:
    """DB, KG and, where Docker and the OS image are here, OS; each with its max_turns."""
    chosen = {key: {**value, "max_turns": 3} for key, value in ENV_KWARGS.items()}
    try:
        request.getfixturevalue("os_image")
    except pytest.skip.Exception:
        del chosen["LifelongOS-v0"]
    return chosen


def test_the_mapping_is_one_factory_per_environment(env_kwargs):
    factories = environment_factories(env_kwargs)
    assert list(factories) == list(env_kwargs)
    for env_id, factory in factories.items():
        assert factory.env_id == env_id and factory.__name__ == env_id.split("-")[0]
    with pytest.raises(EnvArgumentError, match="at least one"):
        environment_factories([])
    with pytest.raises(EnvArgumentError, match="drop action_format"):
        environment_factories({"LifelongDB-v0": {"action_format": "text"}})


def test_oracle_episodes_score_1_in_every_environment(env_kwargs):
    for env_id, factory in environment_factories(env_kwargs).items():
        tools = factory()
        oracle = OracleAgent(tools._env.unwrapped.tasks, "tools")
        indices = tools.task_indices[:2]
        assert [play_oracle(tools, oracle, i) for i in indices] == [1.0, 1.0], env_id
        tools._close()


def test_the_dataset_mixes_the_environments_tasks():
    factories = environment_factories(["LifelongDB-v0", "LifelongKG-v0"])
    dataset = environment_dataset(factories, tasks_per_environment=5, seed=3)
    assert dataset.column_names == ["environment", "task_index"]
    assert Counter(dataset["environment"]) == {"LifelongDB-v0": 5, "LifelongKG-v0": 5}
    assert environment_dataset(factories, tasks_per_environment=5, seed=3)[:] == dataset[:]
    assert environment_dataset(factories, tasks_per_environment=5, seed=4)[:] != dataset[:]
    for row in dataset:
        assert row["task_index"] in factories[row["environment"]]().task_indices
    whole = environment_dataset({"LifelongKG-v0": factories["LifelongKG-v0"]})
    assert sorted(whole["task_index"]) == factories["LifelongKG-v0"]().task_indices
    with pytest.raises(EnvArgumentError, match="tasks_per_environment=0"):
        environment_dataset(factories, tasks_per_environment=0)


def test_grpo_trainer_routes_rows_and_logs_each_environments_rewards(
    env_kwargs, tiny_model_dir: Path, tmp_path: Path
):
    episodes: list[tuple[str, int, float, list[str]]] = []  # env id, task, reward, replies
    started: list[tuple[str, int]] = []  # env id and task of every reset, in TRL's order

    def recorded(factory):
        def reset(self, **row) -> str:
            prompt = factory.reset(self, **row)
            started.append((self.env_id, self.session.task_index))
            return prompt

        def get_reward(self) -> float:
            reward = factory.get_reward(self)
            replies = [m.content for m in self.session.chat_history if m.role == Role.AGENT]
            episodes.append((self.env_id, self.session.task_index, reward, replies))
            return reward

        # the same class name: TRL logs each environment's reward under it
        return type(factory.__name__, (factory,), {"reset": reset, "get_reward": get_reward})

    factories = {k: recorded(f) for k, f in environment_factories(env_kwargs).items()}
    dataset = environment_dataset(factories, tasks_per_environment=1, seed=0)
    groups = len(dataset)  # one task per environment: every step plays each of them
    trainer = tiny_trainer(
        tiny_model_dir,
        grpo_args(tmp_path, batch=2 * groups),
        train_dataset=dataset,
        environment_factory=factories,
    )
    trainer.train()

    # each group of 2 rollouts played one task, and the groups of a step all differ
    for step in (started[: 2 * groups], started[2 * groups :]):
        assert step[::2] == step[1::2] and len(set(step)) == groups

    assert len(episodes) == 2 * 2 * groups
    rows = {row["environment"]: row["task_index"] for row in dataset}
    assert {(env_id, index) for env_id, index, _, _ in episodes} == set(rows.items())
    logged = [entry for entry in trainer.state.log_history if "loss" in entry]
    assert len(logged) == 2
    for step, entry in enumerate(logged):
        played = episodes[2 * groups * step : 2 * groups * (step + 1)]
        for env_id in rows:
            rewards = [reward for e, _, reward, _ in played if e == env_id]
            assert len(rewards) == 2
            name = env_id.split("-")[0]
            assert math.isclose(entry[f"rewards/{name}/mean"], sum(rewards) / 2)
    # each reward is what a fresh environment gives the same replies
    for env_id, index, reward, replies in episodes:
        env = gym.make(env_id, action_format="tools", **env_kwargs[env_id])
        env.reset(options={"task_index": index})
        for reply in replies:
            if not env.unwrapped.session.finished:
                env.step(reply)
        if not env.unwrapped.session.finished:
            env.unwrapped.end_task(SessionStatus.AGENT_VALIDATION_FAILED)
        assert env.unwrapped.session.reward == reward, (env_id, index, replies)
        env.close()
