"""SkillSampler: tasks of middling estimated success are drawn more, none is starved."""

from __future__ import annotations

from collections import Counter

import pytest

from lifelong_gym.tasks import Task
from lifelong_gym.training.curriculum import SkillSampler


def tasks_of(skills: list[tuple[str, ...]]) -> list[Task]:
    return [Task(index=100 + i, skills=s) for i, s in enumerate(skills)]


def test_unobserved_skills_are_drawn_uniformly_and_without_replacement():
    sampler = SkillSampler(tasks_of([("a",), ("b",), ("c",), ("d",)]), seed=1)
    assert {sampler.weight(i) for i in range(4)} == {0.25 + 0.02}
    draws = [sampler.sample(3) for _ in range(2000)]
    assert all(len(set(d)) == 3 for d in draws)
    counts = Counter(i for d in draws for i in d)
    assert all(1350 < counts[i] < 1650 for i in range(4)), counts  # 1500 each expected
    assert sampler.sample(10) and len(sampler.sample(10)) == 4  # capped at the task count


def test_observed_success_moves_draws_to_the_mixed_skill():
    tasks = tasks_of([("solved",)] * 10 + [("failed",)] * 10 + [("mixed",)] * 10)
    sampler = SkillSampler(tasks, seed=0)
    for _ in range(5):
        sampler.observe(100, [1.0, 1.0, 1.0, 1.0])  # a "solved" task
        sampler.observe(110, [0.0, 0.0, 0.0, 0.0])  # a "failed" task
        sampler.observe(120, [1.0, 0.0, 1.0, 0.0])  # a "mixed" task
    assert sampler.skill_success("solved") == pytest.approx(21 / 22)
    assert sampler.skill_success("failed") == pytest.approx(1 / 22)
    assert sampler.skill_success("mixed") == pytest.approx(0.5)
    counts = Counter(i // 10 for _ in range(1000) for i in sampler.sample(4))
    # weights 0.25+0.02 against about 0.043+0.02: the mixed skill gets most draws ...
    assert counts[2] > 2 * max(counts[0], counts[1]), counts
    # ... and the others still some, so that their estimates keep being refreshed
    assert counts[0] > 100 and counts[1] > 100, counts


def test_a_task_of_several_skills_takes_their_mean_and_rewards_below_one_fail():
    sampler = SkillSampler(tasks_of([("a", "b"), ("a",), ()]), seed=0)
    sampler.observe(101, [1.0, 1.0, 0.99])  # task 101 has skill a only
    assert sampler.skill_success("a") == pytest.approx(3 / 5)
    assert sampler.skill_success("b") == pytest.approx(0.5)
    assert sampler.task_success(0) == pytest.approx((3 / 5 + 0.5) / 2)
    assert sampler.task_success(2) == pytest.approx(0.5)  # a task without skills


def test_the_same_seed_draws_the_same_tasks():
    tasks = tasks_of([(s,) for s in "abcdefgh"])
    first, second = SkillSampler(tasks, seed=7), SkillSampler(tasks, seed=7)
    other = SkillSampler(tasks, seed=8)
    draws = [first.sample(3) for _ in range(5)]
    assert draws == [second.sample(3) for _ in range(5)]
    assert draws != [other.sample(3) for _ in range(5)]


@pytest.mark.parametrize("bad", [{"floor": 0.0}, {"floor": -1.0}])
def test_bad_settings_are_refused(bad):
    with pytest.raises(ValueError, match="floor"):
        SkillSampler(tasks_of([("a",)]), **bad)
    with pytest.raises(ValueError, match="at least one task"):
        SkillSampler([])
