"""Shards and curricula of a task stream: vector copies cover a task set once, in order."""

from __future__ import annotations

import functools
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.errors import EnvArgumentError
from lifelong_gym.orders import curriculum_order, shard_order
from lifelong_gym.tasks import DATA_DIR, Task, TaskSet
from lifelong_gym.wrappers import LifelongTaskSequence

COPIES = 3
TASKS = 8  # not a multiple of COPIES: the shards differ in length
STATEMENT = "Action: Operation\n```sql\nSELECT 1;\n```"
ANSWER = "Action: Answer\nFinal Answer: []"


@pytest.fixture(scope="module")
def task_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first TASKS tasks of the shipped DB set, in a file of their own."""
    lines = (DATA_DIR / "db" / "default.jsonl").read_text(encoding="utf-8").splitlines()
    path = tmp_path_factory.mktemp("shards") / "tasks.jsonl"
    path.write_text("\n".join(lines[:TASKS]) + "\n", encoding="utf-8")
    return path


def make_copy(path: str, index: int) -> gym.Env:
    """Copy `index` of the vector env: its own shard of the task stream."""
    env = gym.make("LifelongDB-v0", tasks=path, backend="sqlite")
    return LifelongTaskSequence(env, order="shuffled", seed=3, shard=(index, COPIES))


def vector_env(kind: str, path: Path) -> gym.vector.VectorEnv:
    factories = [functools.partial(make_copy, str(path), i) for i in range(COPIES)]
    if kind == "sync":
        return gym.vector.SyncVectorEnv(factories)
    return gym.vector.AsyncVectorEnv(factories, shared_memory=kind == "async-shared")


def first_passes(envs: gym.vector.VectorEnv, lengths: list[int]) -> list[list[int]]:
    """Step every copy until it finished its shard; the tasks of each copy's first pass.

    Replies are drawn at random (a statement or an answer), so that episodes take one to
    three turns and the copies drift apart, as they do under a real model.
    """
    rng = np.random.default_rng(0)
    played: list[list[int]] = [[] for _ in range(COPIES)]
    envs.reset(seed=11)
    for _ in range(200):
        if all(len(p) >= n for p, n in zip(played, lengths, strict=True)):
            return played
        actions = tuple(STATEMENT if rng.random() < 0.5 else ANSWER for _ in range(COPIES))
        _, _, terminated, truncated, info = envs.step(actions)
        for i in np.flatnonzero(terminated | truncated):
            if info["lifelong"]["epoch"][i] == 0:
                played[i].append(int(info["task_index"][i]))
    raise AssertionError(f"the copies did not finish their shards: {played}")


@pytest.mark.parametrize("kind", ["sync", "async-shared", "async-unshared"])
def test_vector_copies_cover_the_set_once(kind: str, task_path: Path):
    single = make_copy(str(task_path), 0)
    order = single.get_wrapper_attr("order")
    full = LifelongTaskSequence(single.env, order="shuffled", seed=3).order
    single.close()
    lengths = [len(range(i, TASKS, COPIES)) for i in range(COPIES)]
    envs = vector_env(kind, task_path)
    try:
        played = first_passes(envs, lengths)
    finally:
        envs.close()
    assert order == full[0::COPIES]
    assert [p[: lengths[i]] for i, p in enumerate(played)] == [
        full[i::COPIES] for i in range(COPIES)
    ]
    union = [task for p in played for task in p]
    assert sorted(union) == sorted(full) and len(union) == TASKS  # every task once


def test_a_shard_that_cannot_be_made_is_one_clear_error():
    assert shard_order([5, 6, 7, 8, 9], (1, 2)) == [6, 8]
    for shard in [(2, 2), (-1, 2), (0, 0), (0, 6)]:
        with pytest.raises(EnvArgumentError, match="shard=\\(index, count\\) needs"):
            shard_order([5, 6, 7, 8, 9], shard)


class Skilled(Task):
    """A task with nothing but skills."""


def skilled_set(skills: list[tuple[str, ...]]) -> TaskSet:
    return TaskSet(
        [Skilled(index=i, skills=s) for i, s in enumerate(skills)], order=[4, 3, 2, 1, 0]
    )


SKILLS = [("select", "where"), ("select",), ("insert",), ("select", "where", "group"), ("join",)]


def test_a_curriculum_orders_by_number_of_skills_or_by_stages():
    tasks = skilled_set(SKILLS)
    assert curriculum_order(tasks) == [4, 2, 1, 0, 3]  # ties keep the sample order
    stages = [["select"], ["where", "insert"], ["group"]]
    # select; then where/insert (insert has fewer skills); then group; join is in no stage
    assert curriculum_order(tasks, stages) == [1, 2, 0, 3, 4]
    shuffled = [curriculum_order(tasks, seed=seed) for seed in range(20)]
    assert all(sorted(o[:3]) == [1, 2, 4] and o[3:] == [0, 3] for o in shuffled)
    assert len({tuple(o) for o in shuffled}) > 1  # the seed reorders the ties
    assert curriculum_order(tasks, seed=7) == curriculum_order(tasks, seed=7)


def test_the_task_sequence_plays_a_curriculum(task_path: Path):
    env = gym.make("LifelongDB-v0", tasks=str(task_path), backend="sqlite")
    stream = LifelongTaskSequence(env, order="curriculum")
    try:
        tasks = env.unwrapped.tasks
        counts = [len(tasks[i].skills) for i in stream.order]
        assert counts == sorted(counts) and sorted(stream.order) == sorted(tasks.order)
        _, info = stream.reset()
        assert info["task_index"] == stream.order[0]
    finally:
        stream.close()
