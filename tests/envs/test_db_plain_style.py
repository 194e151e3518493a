"""The plain-question style of the DB generator: questions as people ask them over tables with
human column names, every task solved by executing its reference SQL."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from pathlib import Path

import faker
import gymnasium as gym
import pytest
from click.testing import CliRunner

import lifelong_gym  # noqa: F401 - registers the environment ids
from lifelong_gym.agents.oracle import OracleAgent
from lifelong_gym.cli import main
from lifelong_gym.envs.db.backends import BackendError, SqliteBackend, make_backend
from lifelong_gym.envs.db.generator import (
    SHIPPED_WITH_FAKER,
    generate_tasks,
    skill_counts,
    skills_of,
)
from lifelong_gym.envs.db.generator.truth import agrees
from lifelong_gym.envs.db.tasks import to_record
from lifelong_gym.errors import ConfigError

MYSQL_URL = os.environ.get("LIFELONG_GYM_MYSQL_URL", "mysql://root@127.0.0.1:3306")
# `generate db --count 40 --seed 5 --mysql ''` as written before the styles existed (935505f).
DEFAULT_BEFORE_STYLES = "4f74265856ec542e81d8122c41dbb69f"


@pytest.fixture(scope="module")
def plain():
    return generate_tasks(120, seed=3, style="plain")


def _opening(text: str) -> str:
    return " ".join(text.lower().split()[:2])


def test_the_oracle_solves_every_plain_task_in_the_environment(plain, tmp_path: Path):
    path = tmp_path / "plain.jsonl"
    path.write_text("".join(json.dumps(to_record(t)) + "\n" for t in plain), encoding="utf-8")
    env = gym.make("LifelongDB-v0", tasks=str(path))
    agent = OracleAgent(env.unwrapped.tasks)
    rewards = []
    try:
        for index in env.unwrapped.tasks.indices:
            env.reset(options={"task_index": index})
            done = False
            while not done:
                step = env.step(agent.act(env.unwrapped.session))
                reward, done = step[1], step[2] or step[3]
            rewards.append(reward)
    finally:
        env.close()
    assert rewards == [1.0] * len(plain)


def test_plain_tasks_replay_to_their_truth_on_sqlite_and_mariadb(plain):
    assert all(agrees(SqliteBackend(), task) for task in plain)
    try:
        mysql = make_backend("mysql", MYSQL_URL)
    except BackendError as error:
        pytest.skip(f"MySQL/MariaDB not reachable at {MYSQL_URL}: {error}")
    try:
        assert [t.index for t in plain if not agrees(mysql, t)] == []
    finally:
        mysql.close()


def test_names_with_spaces_are_quoted_with_backticks(plain):
    spaced = 0  # tasks naming a table or column with a space
    for task in plain:
        names = [task.table_info.name, *(c.name for c in task.table_info.column_info_list)]
        sql = task.reference_sql[0]
        spaced += any(" " in n and f"`{n}`" in sql for n in names)
        for name in sorted(names, key=len, reverse=True):
            sql = sql.replace(f"`{name}`", "")
        assert "`" not in sql, task.reference_sql
        assert not any(" " in n and n in sql for n in names), task.reference_sql
    assert spaced > len(plain) / 2  # most do; the others use snake_case or CamelCase names


def test_plain_tasks_carry_the_skills_their_sql_uses_and_cover_each_kind():
    tasks = generate_tasks(120, seed=4, style="plain")
    assert all(t.skills == skills_of(t.reference_sql) for t in tasks)
    assert skill_counts(tasks, "plain") == {
        skill: count for skill, count in skill_counts(tasks).items() if count
    }  # every skill plain tasks can use, and no other
    typed = Counter(c.type for t in tasks for c in t.table_info.column_info_list)
    assert typed["TEXT"] and typed["INT"]
    assert any(
        c.type == "TEXT" and re.fullmatch(r"[0-9.]+", str(row[i]))
        for t in tasks
        for i, c in enumerate(t.table_info.column_info_list)
        for row in t.table_info.row_list[:1]
    )  # numbers held as TEXT, as scraped tables hold them


def test_plain_questions_vary_their_openings_and_never_use_the_template_voice():
    # Fourteen kinds of task with four to eleven phrasings each, questions that open on a
    # column or a row's name, and lower-case starts give some seventy distinct two-word
    # openings over 200 tasks (72 at this seed); the templated style gives 23.
    tasks = generate_tasks(200, seed=2, style="plain")
    assert len({_opening(t.instruction) for t in tasks}) >= 55
    templated = generate_tasks(200, seed=2)
    assert len({_opening(t.instruction) for t in templated}) < 35
    assert not any("considering" in t.instruction.lower() for t in tasks)
    assert any(t.instruction[0].islower() for t in tasks)
    assert any(not t.instruction.endswith(("?", ".")) for t in tasks)


@pytest.mark.parametrize("style", ["plain", "mixed"])
def test_the_same_seed_gives_the_same_tasks_and_another_seed_others(style: str):
    first = [to_record(t) for t in generate_tasks(20, seed=7, style=style)]
    assert first == [to_record(t) for t in generate_tasks(20, seed=7, style=style)]
    assert first != [to_record(t) for t in generate_tasks(20, seed=8, style=style)]


def test_mixed_draws_both_styles():
    tasks = generate_tasks(30, seed=5, style="mixed")
    quoted = sum("`" in t.reference_sql[0] for t in tasks)
    assert 0 < quoted < len(tasks)


def test_the_default_style_writes_what_it_wrote_before(tmp_path: Path):
    if faker.VERSION != SHIPPED_WITH_FAKER:
        pytest.skip(f"the pinned bytes were made with Faker {SHIPPED_WITH_FAKER}")
    common = ["generate", "db", "--count", "40", "--seed", "5", "--mysql", ""]
    for extra, folder in (([], "default"), (["--style", "templated"], "templated")):
        out = tmp_path / folder
        result = CliRunner().invoke(main, [*common, *extra, "--output", f"{out}/"])
        assert result.exit_code == 0, result.output
        made = (out / "default.jsonl").read_bytes()
        assert hashlib.md5(made).hexdigest() == DEFAULT_BEFORE_STYLES


def test_an_unknown_style_is_one_clear_line():
    result = CliRunner().invoke(main, ["generate", "db", "--style", "fancy", "--mysql", ""])
    assert result.exit_code != 0
    assert "'fancy' is not one of 'templated', 'plain', 'mixed'" in result.output
    with pytest.raises(ConfigError, match="style must be one of templated, plain, mixed"):
        generate_tasks(1, seed=0, style="fancy")


def test_a_plain_set_is_summed_up_over_the_skills_plain_tasks_use(tmp_path: Path):
    args = ["generate", "db", "--style", "plain", "--count", "30", "--mysql", ""]
    result = CliRunner().invoke(main, [*args, "--output", str(tmp_path / "plain.jsonl")])
    assert result.exit_code == 0, result.output
    # 8, not 22: the line counts the skills plain tasks can use (30 tasks of fourteen kinds
    # need not reach all 8 at every seed)
    assert re.search(r"\b[1-8] of 8 skills covered\b", result.output), result.output
