"""Gymnasium's conventions: docstring examples that run, TimeLimit, wrapper stacks."""

from __future__ import annotations

import doctest
import importlib

import gymnasium as gym
import pytest
from gymnasium.wrappers import RecordEpisodeStatistics

import lifelong_gym
import lifelong_gym.wrappers
from lifelong_gym.agents import OracleAgent
from lifelong_gym.wrappers import ExperienceReplay, LifelongTaskSequence

SECTIONS = (
    "## Description",
    "## Action Space",
    "## Observation Space",
    "## Rewards",
    "## Starting State",
    "## Episode End",
    "## Arguments",
    "## Example",
    "## Version History",
)


def env_class(env_id: str) -> type:
    module, _, name = gym.spec(env_id).entry_point.partition(":")
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("env_id", lifelong_gym.ENV_IDS)
def test_every_environment_docstring_has_gymnasiums_sections(env_id):
    doc = env_class(env_id).__doc__
    positions = [doc.find(section) for section in SECTIONS]
    assert -1 not in positions, [s for s, p in zip(SECTIONS, positions, strict=True) if p < 0]
    assert positions == sorted(positions)
    assert f'gym.make("{env_id}"' in doc


@pytest.mark.parametrize("env_id", lifelong_gym.ENV_IDS)
def test_the_docstring_example_runs(env_id, request):
    if env_id == "LifelongOS-v0":
        request.getfixturevalue("docker_engine")
    if env_id == "LifelongKG-v0":
        pytest.importorskip("pyoxigraph")
    run_docstring_example(env_class(env_id), least=6)


#: every Gymnasium wrapper the wrappers package exports (MethodWrapper, the methods' base,
#: among them)
WRAPPERS = [
    cls
    for cls in map(vars(lifelong_gym.wrappers).get, lifelong_gym.wrappers.__all__)
    if isinstance(cls, type) and issubclass(cls, gym.Wrapper)
]


def test_every_wrapper_of_the_package_is_checked():
    assert {cls.__name__ for cls in WRAPPERS} == {
        "ExperienceReplay",
        "GroupSelfConsistency",
        "LifelongTaskSequence",
        "MethodWrapper",
        "OnlineTraining",
        "ReasoningMemory",
    }


@pytest.mark.parametrize("wrapper", WRAPPERS, ids=lambda cls: cls.__name__)
def test_every_wrapper_has_an_example_that_runs(wrapper):
    run_docstring_example(wrapper, least=5)


def run_docstring_example(cls: type, least: int) -> None:
    """Run the `>>>` example of `cls`'s docstring (at least `least` lines): every line passes."""
    found = doctest.DocTestFinder(recurse=False).find(cls, cls.__qualname__, globs={})
    (test,) = [t for t in found if t.examples]
    assert len(test.examples) >= least
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    result = runner.run(test)
    assert result.failed == 0 and result.attempted == len(test.examples)


def test_a_timelimit_truncation_still_scores_the_task():
    env = LifelongTaskSequence(gym.make("LifelongDB-v0", max_episode_steps=1))
    env.reset()
    session = env.unwrapped.session
    _, _, terminated, truncated, info = env.step("Action: Operation\n```sql\nSELECT 1\n```")
    assert truncated and not terminated  # by the TimeLimit: max_turns is 3
    assert info["status"] == "task_limit_reached" and info["outcome"] == "incorrect"
    assert session.status == "task_limit_reached" and session.outcome == "incorrect"
    record = env.get_wrapper_attr("calculate_metric")()
    assert record.sessions == 1 and record.status_counts == {"task_limit_reached": 1}
    env.close()


def test_a_write_done_before_the_timelimit_is_scored_correct():
    """Scoring after a TimeLimit reads the table: the oracle's write counts in one step."""
    env = LifelongTaskSequence(gym.make("LifelongDB-v0", max_episode_steps=1))
    tasks = env.unwrapped.tasks
    index = next(i for i in tasks.order if tasks[i].answer_info.md5 is not None)
    env.reset(options={"task_index": index})
    reply = OracleAgent(tasks).act(env.unwrapped.session)
    _, reward, _, truncated, info = env.step(reply)
    assert truncated and info["status"] == "task_limit_reached"
    assert info["outcome"] == "correct" and reward == 1.0
    env.close()


def test_calculate_metric_through_a_stack_of_three_wrappers():
    inner = gym.make("LifelongDB-v0")
    env = RecordEpisodeStatistics(ExperienceReplay(LifelongTaskSequence(inner), n=2))
    oracle = OracleAgent(env.unwrapped.tasks)
    for _ in range(3):
        env.reset()
        done = False
        while not done:
            _, _, terminated, truncated, _ = env.step(oracle.act(env.unwrapped.session))
            done = terminated or truncated
    metric = env.get_wrapper_attr("calculate_metric")()
    assert metric.sessions == 3 and metric.correct == 3
    assert metric.success_rate == 1.0 and len(metric.learning_curve.cumulative) == 3
    env.close()
