"""Controlled streams: blocks of a skill group, prerequisites first, and seeded replicates."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from lifelong_gym.envs.db import generator as db_generator
from lifelong_gym.envs.db.skills import TAXONOMY as DB_TAXONOMY
from lifelong_gym.envs.db.tasks import DBTask, load_db_tasks
from lifelong_gym.envs.kg.env import load_kg_tasks
from lifelong_gym.envs.kg.sexpr import ACTIONS as KG_ACTIONS
from lifelong_gym.envs.kg.skills import TAXONOMY as KG_TAXONOMY
from lifelong_gym.envs.kg.tasks import KGTask
from lifelong_gym.envs.os import generator as os_generator
from lifelong_gym.envs.os.skills import TAXONOMY as OS_TAXONOMY
from lifelong_gym.envs.os.tasks import OSTask, load_os_tasks
from lifelong_gym.errors import ConfigError
from lifelong_gym.orders import (
    ORDERS,
    compositional_order,
    curriculum_order,
    order_replicates,
    replicate_seeds,
    task_order,
)
from lifelong_gym.skill_tables import SkillTaxonomy
from lifelong_gym.tasks import Task, TaskSet

ENVIRONMENTS = {
    "db": (DB_TAXONOMY, DBTask, load_db_tasks),
    "os": (OS_TAXONOMY, OSTask, load_os_tasks),
    "kg": (KG_TAXONOMY, KGTask, load_kg_tasks),
}


class DBSkilled(Task):
    """A task of skills only, named in the DB environment's taxonomy."""

    taxonomy = DB_TAXONOMY


@pytest.fixture(scope="module")
def db_tasks() -> TaskSet:
    """The shipped DB set (500 tasks over the 22 skills), through the library's loader."""
    return load_db_tasks("default")


def skilled(*skills: tuple[str, ...]) -> TaskSet:
    return TaskSet([DBSkilled(index=i, skills=s) for i, s in enumerate(skills)])


def unmet_prerequisites(tasks: TaskSet, order: list[int]) -> list[int]:
    """The tasks played before an earlier task exercised a prerequisite they need: one that
    some other task of the set exercises."""
    exercising = Counter(skill for task in tasks for skill in task.skills)
    seen: set[str] = set()
    early = []
    for index in order:
        own = tasks[index].skills
        needed = {
            p for s in own for p in DB_TAXONOMY.all_prerequisites(s) if exercising[p] > (p in own)
        }
        if needed - seen:
            early.append(index)
        seen |= set(own)
    return early


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_each_environments_taxonomy_groups_its_skills_once(environment):
    taxonomy, *_ = ENVIRONMENTS[environment]
    grouped = [skill for _, members in taxonomy.groups for skill in members]
    assert sorted(grouped) == sorted(taxonomy.skills)
    assert set(taxonomy.prerequisites) <= set(taxonomy.skills)
    for skill in taxonomy.skills:
        assert skill not in taxonomy.all_prerequisites(skill)  # acyclic
        assert set(taxonomy.prerequisites.get(skill, ())) <= set(taxonomy.skills)


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_each_environments_tasks_carry_its_taxonomy_and_use_its_skills(environment):
    taxonomy, task_class, load = ENVIRONMENTS[environment]
    tasks = load("default")
    assert task_class.taxonomy is taxonomy
    assert all(type(task).taxonomy is taxonomy for task in tasks)
    used = {skill for task in tasks for skill in task.skills}
    assert used == set(taxonomy.skills)  # the shipped set covers every skill, and no other


def test_each_generator_draws_from_its_environments_taxonomy():
    assert db_generator.SKILLS is DB_TAXONOMY.skills
    assert os_generator.SKILLS is OS_TAXONOMY.skills
    covered = {skill for skills, _ in os_generator.TEMPLATES.values() for skill in skills}
    assert covered == set(OS_TAXONOMY.skills)
    assert KG_TAXONOMY.skills == KG_ACTIONS  # a KG task's skills are its reference's actions


def test_a_task_belongs_to_the_last_group_it_touches():
    assert DB_TAXONOMY.group(("update", "where_single_condition")) == "write"
    assert DB_TAXONOMY.group(("select", "where_single_condition", "subquery_single")) == "subquery"
    assert DB_TAXONOMY.group(("select", "group_by_single_column", "limit_only")) == "group_by"
    assert OS_TAXONOMY.group(("chmod", "echo", "exit")) == "permissions"
    assert KG_TAXONOMY.group(("count", "get_neighbors", "intersection")) == "count"
    assert DB_TAXONOMY.group(("select", "my_skill")) == "my_skill"  # a custom skill sets it apart
    assert DB_TAXONOMY.group(()) == "none"
    assert SkillTaxonomy().group(("select", "insert")) == "select"  # a task of no environment


def test_a_task_of_no_environment_has_no_prerequisites_in_compositional_order():
    tasks = TaskSet(
        [
            Task(index=0, skills=("subquery_single",)),
            Task(index=1, skills=("where_single_condition",)),
        ]
    )
    assert compositional_order(tasks) == [0, 1]  # a DB task set would play 1 first
    assert compositional_order(skilled(("subquery_single",), ("where_single_condition",))) == [1, 0]


def test_blocks_play_each_group_in_one_run_in_seeded_orders(db_tasks):
    orders = {seed: task_order(db_tasks, "blocks", seed) for seed in range(4)}
    group = {i: DB_TAXONOMY.group(db_tasks[i].skills) for i in db_tasks.indices}
    sequences = set()
    for order in orders.values():
        assert sorted(order) == db_tasks.indices  # every task once
        runs = [name for name, _ in itertools.groupby(order, key=group.get)]
        assert sorted(runs) == sorted(set(group.values()))  # one contiguous run per group
        sequences.add(tuple(runs))
    assert len(set(group.values())) == 8  # all DB families appear in the shipped set
    assert len(sequences) > 1  # the seed orders the blocks
    assert orders[0] == task_order(db_tasks, "blocks", 0)
    write = [[i for i in order if group[i] == "write"] for order in orders.values()]
    assert write[0] != write[1]  # and the tasks within a block


def test_compositional_plays_prerequisites_first_on_the_shipped_set(db_tasks):
    assert unmet_prerequisites(db_tasks, db_tasks.order)  # the check has something to find
    for seed in (None, 0, 1):
        order = task_order(db_tasks, "compositional", seed)
        assert sorted(order) == db_tasks.indices
        assert unmet_prerequisites(db_tasks, order) == []
    assert task_order(db_tasks, "compositional", 3) == compositional_order(db_tasks, 3)
    assert compositional_order(db_tasks, 3) != compositional_order(db_tasks, 4)


def test_compositional_holds_a_task_back_that_the_curriculum_plays_early():
    tasks = skilled(
        ("where_multiple_conditions",),  # depth 1, but its part comes only with task 1
        ("where_single_condition", "subquery_nested"),
        ("select",),
    )
    stages = [["select", "where_single_condition"], ["where_multiple_conditions"]]
    assert curriculum_order(tasks, [*stages, ["subquery_nested"]]) == [2, 0, 1]
    assert compositional_order(tasks) == [2, 1, 0]


def test_compositional_breaks_a_deadlock_by_the_curriculum():
    # each task can only learn where_single_condition from the other
    both = ("where_single_condition", "where_multiple_conditions")
    tasks = skilled(both, both)
    assert compositional_order(tasks) == [0, 1]
    assert unmet_prerequisites(tasks, [0, 1]) == [0]


def test_replicates_are_the_same_tasks_in_orders_seeded_one_after_another(db_tasks):
    replicates = order_replicates(db_tasks, "shuffled", 7, 3)
    assert replicates == [task_order(db_tasks, "shuffled", seed) for seed in (7, 8, 9)]
    assert all(sorted(r) == db_tasks.indices for r in replicates)
    assert len({tuple(r) for r in replicates}) == 3
    assert replicate_seeds("sample", None, 1) == [None]  # one run: no replicates


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda t: task_order(t, "random", 1), "order must be one of " + ", ".join(ORDERS)),
        (lambda t: task_order(t, "blocks"), 'order="blocks" needs a seed'),
        (lambda t: order_replicates(t, "compositional", None, 2), "replicates need a seed"),
        (lambda t: order_replicates(t, "sample", 0, 2), "would all be one order"),
        (lambda t: replicate_seeds("shuffled", 0, 0), "at least 1; got 0"),
    ],
)
def test_a_bad_order_is_one_line_naming_the_fix(call, message):
    with pytest.raises(ConfigError, match=message) as caught:
        call(skilled(("select",), ("insert",)))
    assert "\n" not in str(caught.value)
