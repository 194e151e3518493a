"""collect_episodes: one batch per turn, no reply generated for a step that throws it away."""

from __future__ import annotations

import gymnasium as gym
import pytest
from gymnasium.vector import AutoresetMode

from lifelong_gym.errors import LifelongGymError, RolloutConfigError
from lifelong_gym.training import collect_episodes

from .conftest import db_env


class CountingPolicy:
    """Wraps a policy and counts its batches and the sequences generated for."""

    def __init__(self, policy):
        self.policy, self.batches = policy, []

    def generate(self, prompts):
        self.batches.append(len(prompts))
        return self.policy.generate(prompts)

    def __getattr__(self, name):
        return getattr(self.policy, name)


@pytest.mark.parametrize("autoreset", [AutoresetMode.SAME_STEP, AutoresetMode.DISABLED])
def test_every_generated_reply_belongs_to_a_returned_episode(tiny_policy, autoreset):
    log: list[dict] = []
    envs = gym.vector.SyncVectorEnv(
        [lambda: db_env(log, every_reply_queries=True, max_turns=2)] * 4,
        autoreset_mode=autoreset,
    )
    policy = CountingPolicy(tiny_policy)
    episodes = collect_episodes(envs, policy, 6, seed=0)
    envs.close()
    assert len(episodes) == 6
    assert sum(policy.batches) == sum(e.turns for e in episodes) == 12
    # all active sessions in one batch: 4 sessions for 2 turns, then the 2 remaining ones
    assert policy.batches == [4, 4, 2, 2]


def test_chosen_tasks_on_a_disabled_autoreset_vector_env(tiny_policy):
    log: list[dict] = []
    envs = gym.vector.SyncVectorEnv(
        [lambda: db_env(log)] * 3, autoreset_mode=AutoresetMode.DISABLED
    )
    tasks = [11, 11, 12, 12, 13]
    episodes = collect_episodes(envs, tiny_policy, len(tasks), task_indices=tasks)
    envs.close()
    assert sorted(e.task_index for e in episodes) == tasks
    played = [entry for entry in log if entry["replies"]]
    generated = [entry["task_index"] for entry in played if entry["replies"] != [""]]
    assert sorted(generated) == tasks  # the spare copies were sent the empty filler reply only
    assert all(entry["done"] for entry in played)
    assert all(e.turns == 1 for e in episodes)


def test_async_vector_env(tiny_policy):
    envs = gym.vector.AsyncVectorEnv(
        [lambda: db_env([], every_reply_queries=True, max_turns=2)] * 2,
        autoreset_mode=AutoresetMode.SAME_STEP,
        shared_memory=False,
    )
    try:
        episodes = collect_episodes(envs, tiny_policy, 3, seed=5)
    finally:
        envs.close()
    assert [e.turns for e in episodes] == [2, 2, 2]
    assert all(e.status == "task_limit_reached" for e in episodes)
    assert len({e.task_index for e in episodes}) == 3


def test_next_step_autoreset_is_refused_with_the_fix(tiny_policy):
    envs = gym.vector.SyncVectorEnv([lambda: db_env([])] * 2)  # Gymnasium's default: NEXT_STEP
    with pytest.raises(RolloutConfigError, match="autoreset_mode=.*SAME_STEP"):
        collect_episodes(envs, tiny_policy, 2)
    envs.close()


def test_task_indices_need_resets_by_the_collector(tiny_policy):
    envs = gym.vector.SyncVectorEnv(
        [lambda: db_env([])] * 2, autoreset_mode=AutoresetMode.SAME_STEP
    )
    with pytest.raises(RolloutConfigError, match="DISABLED"):
        collect_episodes(envs, tiny_policy, 2, task_indices=[1, 2])
    with pytest.raises(LifelongGymError, match="one each"):
        collect_episodes(db_env([]), tiny_policy, 3, task_indices=[1, 2])
    envs.close()
