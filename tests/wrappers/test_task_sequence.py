"""`LifelongTaskSequence` in a plain Gymnasium loop, on the DB environment."""

from __future__ import annotations

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

from lifelong_gym.agents import OracleAgent
from lifelong_gym.session import EvaluationOutcome
from lifelong_gym.wrappers import LifelongTaskSequence, task_order
from tests.arithmetic_env import SumEnv


@pytest.fixture
def db_env(external_dir):
    env = gym.make("LifelongDB-v0", tasks=str(external_dir / "agentbench/data/dbbench/dev.jsonl"))
    yield env
    env.close()


def play(env: LifelongTaskSequence, episodes: int, wrong=frozenset()) -> list[dict]:
    """A plain Gymnasium loop: the oracle, except a wrong answer on the `wrong` positions."""
    oracle = OracleAgent(env.unwrapped.tasks)
    infos = []
    for episode in range(episodes):
        env.reset()
        session = env.unwrapped.session
        done = False
        while not done:
            reply = oracle.act(session)
            if episode in wrong and reply.startswith("Action: Answer"):
                reply = "Action: Answer\nFinal Answer: []"
            _, _, terminated, truncated, info = env.step(reply)
            done = terminated or truncated
        infos.append(info)
    return infos


def test_runs_the_sample_order_and_keeps_the_record(db_env):
    env = LifelongTaskSequence(db_env)
    infos = play(env, 6, wrong={1, 4})
    assert [s.task_index for s in env.sessions] == db_env.unwrapped.tasks.order[:6]
    assert [i["lifelong"]["sessions"] for i in infos] == [1, 2, 3, 4, 5, 6]
    assert infos[-1]["lifelong"]["success_rate"] == pytest.approx(4 / 6)
    metrics = env.calculate_metric()
    assert metrics.sessions == 6 and metrics.correct == 4
    assert metrics.learning_curve.cumulative[:2] == [1.0, 0.5]
    assert sum(m.count for m in metrics.per_skill.values()) >= 6
    # the kept sessions are copies: a new episode does not change them
    assert env.sessions[1].outcome == EvaluationOutcome.INCORRECT


def test_shuffled_order_is_a_seeded_permutation(db_env):
    tasks = db_env.unwrapped.tasks
    first = task_order(tasks, "shuffled", seed=5)
    assert first == task_order(tasks, "shuffled", seed=5) != task_order(tasks, "shuffled", 6)
    assert sorted(first) == sorted(tasks.order) and first != tasks.order
    env = LifelongTaskSequence(db_env, order="shuffled", seed=5)
    play(env, 3)
    assert [s.task_index for s in env.sessions] == first[:3]
    with pytest.raises(ValueError, match="needs a seed"):
        task_order(tasks, "shuffled")
    with pytest.raises(ValueError, match="order must be one of sample, shuffled"):
        task_order(tasks, "random", 1)


def test_an_explicit_task_index_is_honoured_and_the_stream_wraps_around(db_env):
    env = LifelongTaskSequence(db_env)
    order = env.order
    _, info = env.reset(options={"task_index": order[3]})
    assert info["task_index"] == order[3] and env.position == 0
    env.position = len(order) - 1
    assert env.reset()[1]["task_index"] == order[-1]
    assert env.reset()[1]["task_index"] == order[0]


def test_the_wrapper_stack_can_be_rebuilt_from_its_spec(db_env):
    env = LifelongTaskSequence(db_env, order="shuffled", seed=2, window=10)
    rebuilt = gym.make(env.spec)
    try:
        assert isinstance(rebuilt, LifelongTaskSequence)
        assert rebuilt.order == env.order and rebuilt.window == 10
    finally:
        rebuilt.close()


@pytest.mark.filterwarnings("ignore:.*different from the unwrapped version")
def test_passes_the_gymnasium_env_checker(db_env):
    env = LifelongTaskSequence(db_env.unwrapped)
    check_env(env, skip_render_check=True)
    assert env.reset(seed=1)[1]["task_index"] == env.order[0]
    assert env.reset()[1]["task_index"] == env.order[1]


class BrokenStep(SumEnv):
    """Its back-end breaks in the first step of task 3."""

    def interact(self, action):
        if self.task is not None and self.task.index == 3:
            raise OSError("disk full")
        return super().interact(action)


def test_a_session_an_error_ended_is_not_judged_in_the_running_figures():
    env = LifelongTaskSequence(BrokenStep())
    infos = play(env, 12, wrong={0})
    errored = [s for s in env.sessions if s.errored]
    assert [s.task_index for s in errored] == [3]
    figures = infos[-1]["lifelong"]
    assert (figures["sessions"], figures["judged"], figures["correct"]) == (12, 11, 10)
    assert figures["success_rate"] == pytest.approx(10 / 11)
    assert env.calculate_metric().success_rate == figures["success_rate"]
