"""The seeded DB task generator and the shipped default set it made."""

from __future__ import annotations

import json
import os
import re

import faker
import gymnasium as gym
import pytest

import lifelong_gym  # noqa: F401 - registers the environment ids
from lifelong_gym.agents.oracle import OracleAgent
from lifelong_gym.envs.db.backends import BackendError, SqliteBackend, make_backend
from lifelong_gym.envs.db.generator import (
    MIN_PER_SKILL,
    SHIPPED_WITH_FAKER,
    SKILLS,
    generate_tasks,
    sample_order,
    skill_counts,
    skills_of,
)
from lifelong_gym.envs.db.generator.truth import agrees, execute_truth
from lifelong_gym.envs.db.tasks import load_db_tasks, to_record
from lifelong_gym.tasks import DATA_DIR

MYSQL_URL = os.environ.get("LIFELONG_GYM_MYSQL_URL", "mysql://root@127.0.0.1:3306")
SHIPPED = DATA_DIR / "db" / "default.jsonl"


@pytest.fixture(scope="module")
def shipped():
    return load_db_tasks("default")


def _mysql():
    try:
        return make_backend("mysql", MYSQL_URL)
    except BackendError as error:
        pytest.skip(f"MySQL/MariaDB not reachable at {MYSQL_URL}: {error}")


def test_same_seed_same_tasks_and_other_seed_differs():
    first = [to_record(t) for t in generate_tasks(30, seed=7)]
    again = [to_record(t) for t in generate_tasks(30, seed=7)]
    other = [to_record(t) for t in generate_tasks(30, seed=8)]
    assert first == again
    assert first != other


def test_shipped_set_is_what_the_generator_makes_for_seed_0():
    if faker.VERSION != SHIPPED_WITH_FAKER:
        pytest.skip(
            f"the shipped set was made with Faker {SHIPPED_WITH_FAKER}, not {faker.VERSION}"
        )
    made = [to_record(t) for t in generate_tasks(500, seed=0)]
    stored = [json.loads(line) for line in SHIPPED.read_text().splitlines()]
    assert made == stored


def test_shipped_set_size_order_and_rows(shipped):
    assert len(shipped) == 500
    assert sorted(shipped.order) == list(range(500))
    assert shipped.order != list(range(500))
    assert shipped.order == sample_order(list(range(500)), 0)
    for task in shipped:
        assert 5 <= len(task.table_info.row_list) <= 60, task.index
        assert len(set(task.table_info.row_list)) == len(task.table_info.row_list), task.index
        assert 1 <= len(task.reference_sql) <= 2


def test_every_skill_in_at_least_20_shipped_tasks(shipped):
    counts = skill_counts(list(shipped))
    assert set(counts) == set(SKILLS) and len(SKILLS) == 22
    assert {s: c for s, c in counts.items() if c < MIN_PER_SKILL} == {}


def test_tags_are_what_the_reference_sql_uses(shipped):
    for task in shipped:
        assert task.skills == skills_of(task.reference_sql), task.index


# A plain-text check of each tag, independent of the syntax-tree tagger.
_TEXT_CHECKS = {
    "select": lambda s: s.startswith("SELECT"),
    "insert": lambda s: s.startswith("INSERT INTO"),
    "update": lambda s: s.startswith("UPDATE"),
    "delete": lambda s: s.startswith("DELETE FROM"),
    "limit_only": lambda s: " LIMIT " in s and " OFFSET " not in s,
    "limit_and_offset": lambda s: re.search(r" LIMIT \d+ OFFSET \d+", s),
    "group_by_single_column": lambda s: re.search(r"GROUP BY [\w.]+(?! *,)", s),
    "group_by_multiple_columns": lambda s: re.search(r"GROUP BY [\w.]+, [\w.]+", s),
    "having_single_condition_with_aggregate": lambda s: " HAVING " in s,
    "having_multiple_conditions_with_aggregate": lambda s: re.search(r"HAVING .+ (AND|OR) ", s),
    "having_aggregate_calculation": lambda s: re.search(r"HAVING .*\) [-+*] \w+\(", s),
    "column_alias": lambda s: re.search(r"\) AS \w+|\w AS \w+,| AS \w+ FROM", s),
    "table_alias": lambda s: re.search(r"FROM \w+ AS \w+", s),
    "subquery_single": lambda s: s.count("(SELECT") == 1,
    "subquery_multiple": lambda s: s.count("(SELECT") >= 2,
    "subquery_nested": lambda s: s.count("(SELECT") >= 2,
    "where_single_condition": lambda s: " WHERE " in s,
    "where_multiple_conditions": lambda s: re.search(r"WHERE .+ (AND|OR) ", s),
    "where_nested_conditions": lambda s: re.search(r"WHERE .*\(.+ (AND|OR) ", s),
    "order_by_single_column": lambda s: re.search(r"ORDER BY [\w.()]+( DESC)?( LIMIT|$)", s),
    "order_by_multiple_columns_same_direction": lambda s: "ORDER BY" in s and "," in s,
    "order_by_multiple_columns_different_directions": lambda s: re.search(r"ORDER BY .*DESC", s),
}


def test_each_tag_shows_in_the_sql_text(shipped):
    assert set(_TEXT_CHECKS) == set(SKILLS)
    for task in shipped:
        sql = " ".join(task.reference_sql)
        for skill in task.skills:
            assert _TEXT_CHECKS[skill](sql), (task.index, skill, sql)
        if "limit_and_offset" not in task.skills:
            assert "OFFSET" not in sql, task.index


def test_tagger_on_known_statements():
    assert skills_of("SELECT a FROM t WHERE (a = 1 AND b = 2) OR c = 3") == (
        "select",
        "where_nested_conditions",
    )
    assert skills_of(
        "SELECT g, COUNT(*) AS n FROM t AS x GROUP BY g HAVING MAX(v) - MIN(v) > 3 "
        "ORDER BY n DESC, g LIMIT 2 OFFSET 1"
    ) == (
        "select",
        "order_by_multiple_columns_different_directions",
        "limit_and_offset",
        "group_by_single_column",
        "having_single_condition_with_aggregate",
        "having_aggregate_calculation",
        "column_alias",
        "table_alias",
    )
    assert "subquery_nested" in skills_of(
        "SELECT a FROM t WHERE b = (SELECT b FROM t WHERE c = (SELECT MAX(c) FROM t))"
    )
    assert skills_of("DELETE FROM t WHERE a > 1 AND b < 2") == (
        "delete",
        "where_multiple_conditions",
    )


def test_reexecuting_shipped_sql_gives_stored_truth_on_sqlite(shipped):
    backend = SqliteBackend()
    for task in shipped:
        truth = execute_truth(backend, task.table_info, task.reference_sql, task.is_query)
        assert truth == task.answer_info, task.index
        assert agrees(backend, task), task.index


def _oracle_score(env) -> tuple[int, list[int]]:
    agent = OracleAgent(env.unwrapped.tasks)
    wrong = []
    for index in env.unwrapped.tasks.indices:
        env.reset(options={"task_index": index})
        done = False
        while not done:
            _, reward, terminated, truncated, info = env.step(agent.act(env.unwrapped.session))
            done = terminated or truncated
        if reward != 1.0:
            wrong.append(index)
    return len(env.unwrapped.tasks), wrong


def test_oracle_scores_all_shipped_tasks_on_sqlite():
    env = gym.make("LifelongDB-v0")
    try:
        total, wrong = _oracle_score(env)
    finally:
        env.close()
    assert total == 500 and wrong == []


@pytest.mark.mysql
def test_oracle_scores_all_shipped_tasks_on_mariadb():
    _mysql().close()
    env = gym.make("LifelongDB-v0", backend="mysql", url=MYSQL_URL)
    try:
        total, wrong = _oracle_score(env)
    finally:
        env.close()
    assert total == 500 and wrong == []


def test_oracle_fails_when_the_truth_is_tampered(shipped):
    task = next(t for t in shipped if t.is_query)
    rows = [list(row) for row in task.answer_info.direct]
    rows[0][0] = f"{rows[0][0]}-changed"
    broken = task.model_copy(
        update={"answer_info": task.answer_info.model_copy(update={"direct": rows})}
    )
    assert not agrees(SqliteBackend(), broken)
