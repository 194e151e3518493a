"""Hostile replies against the embedded SQLite back-end: an observation and a status, never a
crash, a hang, a blown memory budget or a higher reward (docs/security.md)."""

from __future__ import annotations

import resource
import time

import gymnasium as gym
import pytest

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.envs.db.actions import answer_reply, operation_reply
from lifelong_gym.envs.db.backends.sqlite.mysql_functions import MAX_VALUE_BYTES

from ..envs.db_fixtures import task_file

QUERY, INSERT, DELETE = 10, 11, 12  # the fixture's tasks
DEEP = "SELECT " + "(" * 5000 + "1" + ")" * 5000


@pytest.fixture()
def env(tmp_path):
    made = gym.make("LifelongDB-v0", tasks=str(task_file(tmp_path)), max_turns=6).unwrapped
    yield made
    made.close()


def _run(env, index, *statements, answer="done"):
    env.reset(options={"task_index": index})
    shown = []
    for sql in statements:
        observation, _, terminated, truncated, info = env.step(operation_reply(sql))
        shown.append(observation)
        assert not (terminated or truncated), observation
    *_, info = env.step(answer_reply(answer))
    return shown, info


def _answered_with_an_error(env, sql):
    """`sql` is shown an error, and the task goes on to be scored."""
    shown, info = _run(env, QUERY, sql)
    assert shown[0].startswith("Error:")
    assert info["status"] == "completed"


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    "sql",
    [
        "SELECT fts3_tokenizer('simple')",
        "CREATE VIRTUAL TABLE z USING fts3(a, tokenize=evil)",
        "CREATE VIRTUAL TABLE z USING rtree(id, a, b)",
        "SELECT load_extension('/tmp/evil.so')",
        "SELECT sqlite_compileoption_get(0)",
        "PRAGMA writable_schema = 1",
        "ATTACH DATABASE '/tmp/lgym-attack.db' AS x",
        "SELECT * FROM pragma_function_list",
    ],
)
def test_native_code_and_connection_state_are_out_of_reach(env, sql):
    _answered_with_an_error(env, sql)


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "sql",
    [
        "SELECT zeroblob(200000000)",
        "SELECT printf('%.*c', 200000000, 'x')",
        "SELECT REPEAT('x', 200000000)",
        "SELECT LPAD('x', 200000000, 'y'), RPAD('x', 200000000, 'y')",
        "SELECT randomblob(200000000), randomblob(200000000)",
        "SELECT GROUP_CONCAT(REPEAT('x', 900000) ORDER BY 1) FROM (WITH RECURSIVE r(i) AS "
        "(SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 50) SELECT i FROM r) n",
    ],
)
def test_no_reply_costs_more_than_the_memory_budget(env, sql):
    before = _peak_mib()
    shown, info = _run(env, QUERY, sql)
    assert shown[0].startswith("Error:") or shown[0] == "[(None,)]"  # SQLite's printf: NULL
    assert _peak_mib() - before < 300
    assert info["status"] == "completed"


@pytest.mark.timeout(60)
def test_many_big_rows_are_fetched_within_the_budget(env):
    before = _peak_mib()
    sql = (
        "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 1000) "
        "SELECT REPEAT('x', 999999) FROM r"
    )
    shown, _ = _run(env, QUERY, sql)
    assert "only the first" in shown[0]
    assert _peak_mib() - before < 300


@pytest.mark.timeout(30)
def test_a_too_deep_statement_is_the_agents_observation(env):
    env.reset(options={"task_index": QUERY})
    assert env.normalize_action(operation_reply(DEEP)) is None
    for _ in range(3):
        observation, _, terminated, _, info = env.step(operation_reply(DEEP))
        assert observation.startswith("Error:") and not terminated
    assert env.session.status == "running"


@pytest.mark.timeout(60)
def test_a_view_in_place_of_the_table_cannot_block_scoring(env):
    endless = (
        "CREATE VIEW `shop items` AS WITH RECURSIVE r(x) AS "
        "(SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT x, x, x, x FROM r"
    )
    shown, _ = _run(env, DELETE, "DROP TABLE `shop items`", endless)
    assert all(text.startswith("Error: the statement was refused") for text in shown)
    # and were the guard to miss them, scoring still reads only the base table, in time
    env.reset(options={"task_index": DELETE})
    raw = env.backend._require()  # below the guard, as a statement it let through would be
    raw.execute("DROP TABLE `shop items`")
    raw.execute(endless)
    start = time.monotonic()
    *_, info = env.step(answer_reply("done"))
    assert time.monotonic() - start < 30
    assert info["outcome"] == "incorrect" and info["status"] == "completed"
    assert "view" in env.session.details["error"]


@pytest.mark.timeout(60)
def test_a_temp_table_cannot_stand_in_for_the_task_table(env):
    # the truth of task 12 is the table without 'tea'; a temp copy holding that must not count
    shown, info = _run(
        env,
        DELETE,
        "CREATE TEMPORARY TABLE `shop items` AS "
        "SELECT * FROM main.`shop items` WHERE name <> 'tea'",
    )
    assert info["outcome"] == "incorrect"
    _, info = _run(env, DELETE, "DELETE FROM `shop items` WHERE name = 'tea'")
    assert info["outcome"] == "correct"  # and the next task starts clean


@pytest.mark.timeout(30)
@pytest.mark.parametrize("answer", ["[(1e999,)]", "[(-1e999, 'x')]", "1e999", "[(float('nan'),)]"])
def test_odd_numbers_in_the_answer_are_scored_not_crashed(env, answer):
    _, info = _run(env, QUERY, answer=answer)
    assert info["outcome"] == "incorrect"
    assert info["status"] == "completed"


@pytest.mark.timeout(30)
def test_a_lone_surrogate_is_the_agents(env):
    shown, info = _run(env, QUERY, "SELECT '\ud800'", "SELECT CHAR(55296)")
    assert shown[0].startswith("Error:")
    assert info["status"] == "completed"


def _transaction_outcomes(env):
    _, uncommitted = _run(env, DELETE, "BEGIN", "DELETE FROM `shop items` WHERE name = 'tea'")
    _, committed = _run(
        env, DELETE, "START TRANSACTION", "DELETE FROM `shop items` WHERE name = 'tea'", "COMMIT"
    )
    _, with_savepoint = _run(
        env,
        DELETE,
        "BEGIN",
        "DELETE FROM `shop items` WHERE name = 'tea'",
        "SAVEPOINT s",  # a transaction statement, not a commit
    )
    return uncommitted["outcome"], committed["outcome"], with_savepoint["outcome"]


@pytest.mark.timeout(60)
def test_an_open_transaction_at_the_answer_is_not_committed(env):
    assert _transaction_outcomes(env) == ("incorrect", "correct", "incorrect")


@pytest.mark.timeout(120)
@pytest.mark.mysql
def test_an_open_transaction_scores_the_same_on_mariadb(tmp_path, mysql_url):
    server = gym.make(
        "LifelongDB-v0", tasks=str(task_file(tmp_path)), backend="mysql", url=mysql_url
    ).unwrapped
    server.max_turns = 6
    try:
        assert _transaction_outcomes(server) == ("incorrect", "correct", "incorrect")
    finally:
        server.close()


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("sql", "answered"),
    [
        ("SELECT * FROM information_schema.TABLES", True),
        ("SELECT * FROM information_schema.COLUMNS", True),
        ("SELECT * FROM information_schema.SCHEMATA", True),
        ("SHOW DATABASES", True),
        ("SHOW INDEX FROM `shop items`", True),
        ("SELECT name, sql FROM information_schema.TABLES", False),  # SQLite's columns
        ("SELECT * FROM information_schema.sqlite_master", False),
        ("SELECT * FROM information_schema.sqlite_temp_master", False),
        ("SELECT * FROM information_schema.pragma_table_info", False),
        ("SELECT * FROM information_schema.TABLES t, pragma_table_info('shop items') p", False),
    ],
)
def test_information_schema_shows_the_declared_schema_not_sqlites(env, sql, answered):
    """The catalog an agent reads is built from the task's declared schema: neither
    SQLite's own tables (sqlite_master) nor its pragmas show, before or after a write."""
    write = "INSERT INTO `shop items` VALUES (4, 'mate', 9.99, NULL)"
    shown, info = _run(env, INSERT, write, sql)
    assert info["status"] == "completed"
    assert shown[1].startswith("Error:") != answered, shown[1]
    # what sqlite_master and table_info would show: SQL text, storage types
    for hidden in ("CREATE TABLE", "REAL DECIMAL", "MYSQL_CI", "'table'"):
        assert hidden not in shown[1], shown[1]


def _nested(template: str, depth: int) -> str:
    sql = "SELECT id FROM `shop items`"
    for _ in range(depth):
        sql = template.format(sql)
    return sql


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    "sql",
    [  # each expansion copies what it expands: nested, they would grow exponentially
        _nested("SELECT id FROM `shop items` WHERE id >= ALL ({})", 40),
        _nested("SELECT id, COUNT(*) AS c FROM ({}) x GROUP BY id WITH ROLLUP", 40),
        "SELECT id FROM `shop items` WHERE "
        + " AND ".join(["id >= ANY (SELECT id FROM `shop items`)"] * 3000),
    ],
)
def test_nested_expansions_are_bounded(env, sql):
    _answered_with_an_error(env, sql)


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    "sql",
    [  # patterns and blank runs that would make a backtracking matcher take hours
        "SHOW DATABASES LIKE '" + "%" * 3000 + "x'",
        "SHOW TABLES LIKE '" + "%a" * 20000 + "'",
        "SHOW INDEX FROM `shop items` WHERE " + " " * 200000 + "x",
        "DESCRIBE `shop items`" + " " * 200000 + "x",
        "SHOW CREATE TABLE `shop items`" + " " * 200000 + "x",
    ],
    ids=["databases-like", "tables-like", "index-where", "describe", "show-create"],
)
def test_schema_statements_are_answered_in_linear_time(env, sql):
    _, info = _run(env, QUERY, sql)
    assert info["status"] == "completed"


def test_a_row_that_prints_longer_than_it_is_stored_is_scored(env):
    """The largest row the agent may store, with an integer that prints longer than it is
    stored: the scorer's hash reads it (it raised SQLite's "string or blob too big", an
    environment error of the agent's making) and the task is scored as the agent left it."""

    def insert(size):
        row = f"(-9223372036854775808, REPEAT('x', {size}), 1.5, '2024-01-01')"
        return _run(env, INSERT, f"INSERT INTO `shop items` VALUES {row}")

    stored, refused = MAX_VALUE_BYTES - 1000, MAX_VALUE_BYTES
    assert not insert(stored)[0][0].startswith("Error:")
    while refused - stored > 1:  # the largest row SQLite stores, found by bisection
        middle = (stored + refused) // 2
        shown, _ = insert(middle)
        stored, refused = (stored, middle) if shown[0].startswith("Error:") else (middle, refused)
    _, info = insert(stored)
    assert info["status"] == "completed" and info["outcome"] == "incorrect"


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM sqlite_master",
        "SELECT name FROM sqlite_schema",
        "SELECT sql FROM main.sqlite_master WHERE type = 'table'",
        "SELECT (SELECT count(*) FROM sqlite_master)",
        "SELECT * FROM temp.sqlite_master",
        "SELECT * FROM `shop items` WHERE name IN (SELECT name FROM sqlite_temp_schema)",
    ],
)
def test_sqlites_own_catalog_is_a_missing_table(env, sql):
    """MySQL has no sqlite_master: the agent's schema questions are answered from the
    declared schema, and SQLite's catalog (with its storage types and collation) is a table
    that does not exist, as every missing table is shown here."""
    shown, info = _run(env, QUERY, sql)
    assert shown[0].startswith("Error: (1146) Table 'main.sqlite_")
    assert info["status"] == "completed"


def test_long_texts_sorted_by_the_collation_are_not_kept(env):
    """The collation's keys of texts that are not ASCII are cached, but only for short
    texts: sorting and comparing long ones, task after task, keeps nothing of them."""
    from lifelong_gym.envs.db.backends.sqlite import mysql_functions

    kept = mysql_functions._folded_key.cache_info().currsize
    long_rows = (
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200) "
        "SELECT COUNT(*) FROM (SELECT CONCAT(REPEAT('é', 5000), i) AS v FROM n) AS d "
        "WHERE v = 'x' OR v > 'é'"
    )
    shown, info = _run(env, QUERY, long_rows)
    assert "200" in shown[0] and info["status"] == "completed"
    assert mysql_functions._folded_key.cache_info().currsize - kept < 5


@pytest.mark.timeout(60)
@pytest.mark.parametrize("before", [(), ("SELECT COUNT(*) FROM `shop items`",)])
def test_the_task_database_stops_at_its_page_limit(env, before):
    # 100 rows of 900 kB pass the 64 MiB limit, whether the write is the task's first
    # statement or comes after a query (the limit is set before the first write)
    grow = (
        "INSERT INTO `shop items` (name) WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL "
        "SELECT i + 1 FROM r WHERE i < 100) SELECT REPEAT('x', 900000) FROM r"
    )
    before_mib = _peak_mib()
    shown, info = _run(env, INSERT, *before, grow, "SELECT COUNT(*) FROM `shop items`")
    assert shown[-2] == "Error: database or disk is full"
    assert shown[-1] == "[(3,)]"  # the statement failed whole
    assert _peak_mib() - before_mib < 300
    assert info["status"] == "completed"
