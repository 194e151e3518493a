"""Hostile replies on the MySQL/MariaDB back-end: a status in bounded time, nothing left behind.

Each probe runs on the real server. Where a defence has two layers (the statement guard and
the agent's privileges, or the guard and bounded scoring), the lower layer is tested with the
guard switched off, as if it had missed the statement. After every probe the same env must
still solve the next tasks correctly.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import gymnasium as gym
import pymysql
import pytest

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.envs.db.actions import answer_reply, operation_reply
from lifelong_gym.envs.db.backends import make_backend
from lifelong_gym.envs.db.backends.mysql.backend import parse_url, quote
from lifelong_gym.envs.db.tasks import ColumnInfo, TableInfo

from ..envs.db_fixtures import solve, task_file

pytestmark = pytest.mark.mysql
TIMEOUT = 1.0
TABLE = "`shop items`"
XID = f"'lgym_probe_{os.getpid()}'"
XA_DELETE = (f"XA START {XID}", f"DELETE FROM {TABLE}", f"XA END {XID}", f"XA PREPARE {XID}")


@pytest.fixture
def tasks(tmp_path):
    return str(task_file(tmp_path))


@pytest.fixture
def env(mysql_url, tasks):
    env = make_env(mysql_url, tasks)
    yield env
    env.close()


@pytest.fixture
def root(mysql_url):
    with pymysql.connect(**parse_url(mysql_url), autocommit=True) as connection:
        yield connection


@pytest.fixture
def unguarded(monkeypatch):
    """Switch the statement guard off: the layers below it must hold alone."""
    monkeypatch.setattr(
        "lifelong_gym.envs.db.backends.mysql.backend.refusal", lambda sql, **_: None
    )


def make_env(url, tasks, **options):
    options = {"statement_timeout": TIMEOUT, "max_rows": 100, "max_turns": 8, **options}
    return gym.make("LifelongDB-v0", tasks=tasks, backend="mysql", url=url, **options)


def query(connection, sql, arguments=None):
    with connection.cursor() as cursor:
        cursor.execute(sql, arguments)
        return list(cursor.fetchall()) if cursor.description else []


def run_sql(env, sql):
    """One agent turn running `sql`; the task must go on."""
    obs, _, terminated, truncated, info = env.step(operation_reply(sql))
    assert not terminated, (sql, obs, info)
    return obs


def answer(env):
    *_, info = env.step(answer_reply("done"))
    return info


def assert_next_tasks_clean(env, root):
    """The env still scores correctly from a fresh state, and no prepared XA of ours is left."""
    assert solve(env, 12)["outcome"] == "correct"
    assert solve(env, 10)["outcome"] == "correct"
    assert solve(env, 11)["outcome"] == "correct"
    assert XID.strip("'").encode() not in {row[3] for row in query(root, "XA RECOVER")}


def backend(env):
    return env.unwrapped.backend


def agent_threads(root, account):
    return query(
        root, "SELECT ID, COMMAND FROM information_schema.PROCESSLIST WHERE USER = %s", (account,)
    )


# -- statements the guard refuses, and the privileges that refuse them again -----------

# (statement, whether the agent's privileges refuse it too when the guard is off)
PROBES = {
    "compound": (f"BEGIN NOT ATOMIC /*! DELETE FROM {TABLE}; DELETE FROM {TABLE}; */ END", False),
    "labelled_loop": ("commit: LOOP /*! DO 1; */ END LOOP commit", False),
    "executable_comment": (f"/*!50000 DELETE FROM {TABLE} */", False),
    "mariadb_comment": (f"/*M!100000 DELETE FROM {TABLE} */", False),
    "set_password": ("SET PASSWORD = PASSWORD('lgym-probe')", False),
    "alter_user": ("ALTER USER CURRENT_USER() IDENTIFIED BY 'lgym-probe'", True),
    "grant": ("GRANT SELECT ON *.* TO CURRENT_USER()", True),
    "create_user": ("CREATE USER lgym_probe_intruder IDENTIFIED BY 'x'", True),
    "sql_mode": ("SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES'", False),
    "statement_time": ("SET max_statement_time = 0", False),
    "set_statement": ("SET STATEMENT max_statement_time = 0 FOR SELECT SLEEP(3)", False),
    "user_variable": ("SET @x = 1", False),
    "xa_recover": ("XA RECOVER", False),
    "lock_tables": (f"LOCK TABLES {TABLE} WRITE", True),
    "handler": (f"HANDLER {TABLE} OPEN", False),
    "load_data": (f"LOAD DATA INFILE '/etc/passwd' INTO TABLE {TABLE}", True),
    "into_outfile": (f"SELECT * FROM {TABLE} INTO OUTFILE '/tmp/lgym_probe_{os.getpid()}'", True),
    "load_file": ("SELECT LOAD_FILE('/etc/passwd')", False),
    "create_function": ("CREATE FUNCTION lgym_f() RETURNS INT RETURN 1", True),
    "create_procedure": (f"CREATE PROCEDURE lgym_p() DELETE FROM {TABLE}", True),
    "create_event": (
        f"CREATE EVENT lgym_e ON SCHEDULE EVERY 1 SECOND DO DELETE FROM {TABLE}",
        True,
    ),
    "create_trigger": (
        f"CREATE TRIGGER lgym_t BEFORE INSERT ON {TABLE} FOR EACH ROW SET NEW.id = 0",
        True,
    ),
    "temporary_table": (f"CREATE TEMPORARY TABLE {TABLE} (id INT)", True),
    "create_view": ("CREATE VIEW lgym_v AS SELECT SLEEP(100000)", True),
    "drop_table": (f"DROP TABLE {TABLE}", True),
    "truncate": (f"TRUNCATE TABLE {TABLE}", True),
    "alter_table": (f"ALTER TABLE {TABLE} ADD COLUMN x INT", True),
    "do_sleep": ("DO SLEEP(3)", False),
    "get_lock": ("SELECT GET_LOCK('lgym_probe', 0)", False),
    "prepare": (f"PREPARE lgym_s FROM 'DELETE FROM {TABLE}'", False),
    "kill": ("KILL CONNECTION 1", False),
    "use": ("USE mysql", False),
    "flush": ("FLUSH PRIVILEGES", True),
    "show_innodb_status": ("SHOW ENGINE INNODB STATUS", True),
    "show_processlist": ("SHOW FULL PROCESSLIST", False),
    "commit_release": ("COMMIT RELEASE", False),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", sorted(PROBES))
def test_statement_is_refused_and_the_next_tasks_are_clean(env, root, name):
    sql, _ = PROBES[name]
    env.reset(options={"task_index": 12})
    obs = run_sql(env, sql)
    assert obs.startswith("Error: the statement was refused:"), obs
    assert "tea" in run_sql(env, f"SELECT name FROM {TABLE}")  # nothing was deleted
    assert answer(env)["outcome"] == "incorrect"  # the task was not done behind our back
    assert_next_tasks_clean(env, root)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", sorted(n for n, (_, blocked) in PROBES.items() if blocked))
def test_privileges_refuse_what_the_guard_would_miss(env, root, unguarded, name):
    sql, _ = PROBES[name]
    env.reset(options={"task_index": 12})
    obs = run_sql(env, sql)
    assert obs.startswith("Error: (1"), obs  # a server error: access denied or the like
    assert "tea" in run_sql(env, f"SELECT name FROM {TABLE}")
    answer(env)
    assert_next_tasks_clean(env, root)


def test_the_agent_holds_only_the_grants_the_tasks_need(env, root, unguarded):
    env.reset(options={"task_index": 12})
    account, database = backend(env)._account, backend(env)._database
    grants = [g for (g,) in query(root, "SHOW GRANTS FOR %s@'%%'", (account,))]
    escaped = database.replace("_", "\\_")
    only = f"GRANT SELECT, INSERT, UPDATE, DELETE, EXECUTE ON `{escaped}`.* TO `{account}`@`%`"
    assert grants[1:] == [only]
    assert grants[0].startswith(f"GRANT USAGE ON *.* TO `{account}`@`%`")
    # a sibling name that `_` as a wildcard would match: the agent cannot create it
    sibling = database.replace("_", "X", 1)
    try:
        obs = run_sql(env, f"CREATE DATABASE {quote(sibling)}")
        assert "Access denied" in obs, obs
        assert not query(root, "SHOW DATABASES LIKE %s", (sibling,))
    finally:
        query(root, f"DROP DATABASE IF EXISTS {quote(sibling)}")
    answer(env)
    assert_next_tasks_clean(env, root)


# -- section 2: scoring is bounded ------------------------------------------------------


@pytest.mark.timeout(60)
def test_a_lock_or_view_from_the_agent_cannot_block_scoring(env, root):
    env.reset(options={"task_index": 12})
    assert run_sql(env, f"LOCK TABLES {TABLE} WRITE").startswith("Error:")
    assert answer(env)["outcome"] == "incorrect"
    env.reset(options={"task_index": 12})
    run_sql(env, f"DROP TABLE {TABLE}")
    run_sql(env, f"CREATE VIEW {TABLE} AS SELECT SLEEP(100000) AS id")
    info = answer(env)
    assert info["outcome"] == "incorrect" and info["status"] == "completed"
    assert_next_tasks_clean(env, root)


@pytest.mark.timeout(60)
def test_scoring_a_locked_table_ends_incorrect_in_time(env, root, mysql_url):
    """A lock the guard and privileges missed (held here by root) delays scoring, never hangs it."""
    env.reset(options={"task_index": 12})
    database = backend(env)._database
    with pymysql.connect(**parse_url(mysql_url), autocommit=True) as holder:
        query(holder, f"LOCK TABLES {quote(database)}.{TABLE} WRITE")
        started = time.monotonic()
        info = answer(env)
        elapsed = time.monotonic() - started
        assert info["outcome"] == "incorrect" and info["status"] == "completed"
        assert "could not be read within 1 s" in info["error"], info
        assert elapsed < 30  # bounded: the lock itself would last forever
    # the drop a lock kept from happening is retried at close
    env.close()
    assert not query(root, "SHOW DATABASES LIKE %s", (database.replace("_", "\\_"),))


@pytest.mark.timeout(60)
def test_scoring_reads_only_base_tables(env, root):
    env.reset(options={"task_index": 12})
    database = backend(env)._database
    query(root, f"DROP TABLE {quote(database)}.{TABLE}")
    query(root, f"CREATE VIEW {quote(database)}.{TABLE} AS SELECT SLEEP(100000) AS id")
    info = answer(env)
    assert info["outcome"] == "incorrect"
    assert "no longer a base table" in info["error"]
    assert_next_tasks_clean(env, root)


@pytest.mark.timeout(60)
def test_an_open_transaction_holding_locks_blocks_neither_scoring_nor_drop(env, root):
    """Uncommitted work does not count (MySQL's autocommit semantics) and its locks end."""
    env.reset(options={"task_index": 12})
    run_sql(env, "START TRANSACTION")
    run_sql(env, f"DELETE FROM {TABLE} WHERE name = 'tea'")
    run_sql(env, f"SELECT * FROM {TABLE} FOR UPDATE")
    started = time.monotonic()
    assert answer(env)["outcome"] == "incorrect"
    assert time.monotonic() - started < 10
    assert_next_tasks_clean(env, root)


# -- section 3: XA, overruns, the account, dead runs -----------------------------------


@pytest.mark.timeout(60)
def test_xa_is_refused(mysql_url, tasks, root):
    env = make_env(mysql_url, tasks)
    try:
        env.reset(options={"task_index": 12})
        assert run_sql(env, f"XA START {XID}").startswith("Error: the statement was refused")
        run_sql(env, f"DELETE FROM {TABLE} WHERE name = 'tea'")
        assert run_sql(env, f"XA END {XID}").startswith("Error:")
        assert run_sql(env, f"XA PREPARE {XID}").startswith("Error:")
        assert answer(env)["outcome"] == "correct"  # the delete ran outside any XA
        assert_next_tasks_clean(env, root)
    finally:
        env.close()


@pytest.mark.timeout(60)
def test_a_prepared_xa_the_guard_missed_is_rolled_back(mysql_url, tasks, root, unguarded):
    env = make_env(mysql_url, tasks)
    try:
        env.reset(options={"task_index": 12})
        database = backend(env)._database
        for sql in XA_DELETE:
            assert not run_sql(env, sql).startswith("Error:"), sql
        started = time.monotonic()
        info = answer(env)
        assert time.monotonic() - started < 30
        assert info["outcome"] == "incorrect"  # the prepared delete was never committed
        assert not query(root, "SHOW DATABASES LIKE %s", (database.replace("_", "\\_"),))
        assert_next_tasks_clean(env, root)
    finally:
        env.close()


DEAD_RUN = """
import os, signal, sys, threading, time
import gymnasium as gym
import lifelong_gym
from lifelong_gym.envs.db.actions import operation_reply
import lifelong_gym.envs.db.backends.mysql.backend as mysql
mysql.refusal = lambda sql, **_: None  # as if the guard had missed everything
def make():
    env = gym.make("LifelongDB-v0", tasks={tasks!r}, backend="mysql", url={url!r},
                   statement_timeout=120, max_turns=9).unwrapped
    env.reset(options={{"task_index": 12}})
    print(env.backend._account, env.backend._database, flush=True)
    return env
preparing, sleeping = make(), make()
for sql in ("XA START {xid}", "DELETE FROM `shop items`", "XA END {xid}", "XA PREPARE {xid}"):
    preparing.step(operation_reply(sql))
threading.Thread(target=sleeping.step, args=(operation_reply("SELECT SLEEP(600)"),)).start()
time.sleep(1)
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.timeout(90)
def test_a_dead_runs_threads_and_prepared_xa_are_ended_at_the_next_start(mysql_url, tasks, root):
    script = DEAD_RUN.format(tasks=tasks, url=mysql_url, xid=XID)
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert child.returncode == -9, child.stderr
    preparing, database, sleeping, other_database = child.stdout.split()
    assert any(command == "Query" for _, command in agent_threads(root, sleeping))
    assert XID.strip("'").encode() in {row[3] for row in query(root, "XA RECOVER")}
    started = time.monotonic()
    env = make_env(mysql_url, tasks)
    try:
        assert time.monotonic() - started < 30
        assert agent_threads(root, sleeping) == []
        assert XID.strip("'").encode() not in {row[3] for row in query(root, "XA RECOVER")}
        for name in (database, other_database):
            assert not query(root, "SHOW DATABASES LIKE %s", (name.replace("_", "\\_"),))
        for account in (preparing, sleeping):
            assert not query(root, "SELECT User FROM mysql.user WHERE User = %s", (account,))
        assert_next_tasks_clean(env, root)
    finally:
        env.close()


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "sql",
    [
        "SELECT BENCHMARK(10000000000, MD5('x'))",
        "SELECT SLEEP(600)",
        "BEGIN NOT ATOMIC /*! LOOP DO 1; END LOOP; */ END",
    ],
    ids=["benchmark", "sleep", "loop"],
)
def test_an_overrun_ends_the_agents_connection(env, root, unguarded, sql):
    env.reset(options={"task_index": 12})
    account = backend(env)._account
    ((before, _),) = agent_threads(root, account)
    assert "ran longer than 1 s and was stopped" in run_sql(env, sql)
    deadline = time.monotonic() + 10
    while before in {i for i, _ in agent_threads(root, account)} and time.monotonic() < deadline:
        time.sleep(0.1)
    threads = agent_threads(root, account)
    assert before not in {i for i, _ in threads}  # the connection, not only its query, ended
    assert [command for _, command in threads] == ["Sleep"]  # the next turn's connection
    assert run_sql(env, "SELECT 1") == "[(1,)]"
    answer(env)
    assert_next_tasks_clean(env, root)


@pytest.mark.timeout(60)
def test_a_changed_password_does_not_lock_the_env_out(env, root, unguarded):
    env.reset(options={"task_index": 12})
    assert run_sql(env, "SET PASSWORD = PASSWORD('lgym-probe')") == "[]"
    answer(env)
    assert_next_tasks_clean(env, root)


# -- section 6: odd text ----------------------------------------------------------------


@pytest.mark.timeout(60)
@pytest.mark.parametrize("guarded", [True, False], ids=["guarded", "unguarded"])
def test_a_utf16_result_charset_is_an_observation(env, root, monkeypatch, guarded):
    if not guarded:
        monkeypatch.setattr(
            "lifelong_gym.envs.db.backends.mysql.backend.refusal", lambda sql, **_: None
        )
    env.reset(options={"task_index": 10})
    run_sql(env, "SET character_set_results = 'utf16'")
    obs = run_sql(env, "SELECT 'café'")
    assert obs == "[('café',)]" if guarded else obs.startswith("Error: the result is not valid")
    assert run_sql(env, "SELECT 'café'") == "[('café',)]"  # the connection's charset is back
    info = env.step(answer_reply("[('coffee',), ('cocoa',)]"))[-1]
    assert info["status"] == "completed" and info["outcome"] == "correct"
    assert_next_tasks_clean(env, root)


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "sql",
    ["SELECT '\ud800'", "SELECT CONVERT(CHAR(0xD800 USING ucs2) USING utf8mb4)"],
    ids=["lone_surrogate_in_sql", "surrogate_from_server"],
)
def test_text_that_is_not_utf8_is_an_observation(env, root, sql):
    env.reset(options={"task_index": 10})
    assert run_sql(env, sql).startswith("Error:")
    assert run_sql(env, "SELECT 'café'") == "[('café',)]"
    info = env.step(answer_reply("[('coffee',), ('cocoa',)]"))[-1]
    assert info["status"] == "completed" and info["outcome"] == "correct"
    assert_next_tasks_clean(env, root)


# -- memory and carry-over -------------------------------------------------------------

HUGE_RESULT = """
import resource, gymnasium as gym, lifelong_gym
from lifelong_gym.envs.db.actions import operation_reply
env = gym.make("LifelongDB-v0", tasks={tasks!r}, backend="mysql", url={url!r}, max_rows=100)
env.reset(options={{"task_index": 10}})
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
obs, *_ = env.step(operation_reply(
    "SELECT REPEAT('x', 16000000) FROM information_schema.COLLATIONS LIMIT 40"))
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
env.close()
print((after - before) // 1024, len(obs))
"""


@pytest.mark.timeout(120)
def test_a_huge_result_costs_bounded_memory(mysql_url, tasks):
    script = HUGE_RESULT.format(tasks=tasks, url=mysql_url)
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert child.returncode == 0, child.stderr
    grown_mib, length = map(int, child.stdout.split())
    assert length <= 16_000
    assert grown_mib < 300, f"a 640 MB result grew the process by {grown_mib} MiB"


def test_session_state_does_not_carry_over_to_the_next_task(env, root):
    env.reset(options={"task_index": 10})
    run_sql(env, "SELECT @carried := 42")
    answer(env)
    env.reset(options={"task_index": 10})
    assert run_sql(env, "SELECT @carried") == "[(None,)]"
    answer(env)
    assert_next_tasks_clean(env, root)


def test_leftover_sweep_still_spares_live_owners(env, root, mysql_url, tasks):
    """A second env in this (live) process must not drop the first one's database."""
    env.reset(options={"task_index": 10})
    database = backend(env)._database
    other = make_env(mysql_url, tasks)
    other.close()
    assert query(root, "SHOW DATABASES LIKE %s", (database.replace("_", "\\_"),))
    answer(env)


@pytest.mark.timeout(60)
def test_the_guard_lexes_strings_as_the_sessions_sql_mode_does(mysql_url, root):
    """Under NO_BACKSLASH_ESCAPES, '\\' ends a string: what follows is code, and is checked."""
    db = make_backend("mysql", mysql_url, sql_mode="NO_BACKSLASH_ESCAPES", statement_timeout=1)
    try:
        db.start(
            TableInfo(name="t", column_info_list=[ColumnInfo(name="a", type="INT")], row_list=[])
        )
        # lexed with backslash escapes this is one string, then `lgym_probe`, then another
        result = db.execute("SELECT '\\', GET_LOCK('lgym_probe', 0) -- '")
        assert result.error and result.error.startswith("the statement was refused: GET_LOCK")
        assert db.execute("SELECT 'a\\b'").rows == [("a\\b",)]
    finally:
        db.close()


def test_the_server_refuses_two_statements_the_parser_let_through(env, root):
    env.reset(options={"task_index": 12})
    obs = backend(env).execute(f"SELECT 1; DELETE FROM {TABLE}")
    assert obs.error is not None and "syntax" in obs.error
    assert "tea" in run_sql(env, f"SELECT name FROM {TABLE}")
    answer(env)
    assert_next_tasks_clean(env, root)
