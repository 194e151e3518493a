"""Back-end behaviour: sharing one server, cleaning up after crashes, the hash itself."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading

import gymnasium as gym
import numpy as np
import pymysql
import pytest

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import OracleAgent
from lifelong_gym.envs.db.actions import operation_reply
from lifelong_gym.envs.db.backends.mysql.backend import PREFIX, parse_url, quote
from lifelong_gym.envs.db.backends.sqlite import SqliteBackend
from lifelong_gym.envs.db.table_hash import table_hash_sql
from lifelong_gym.envs.db.tasks import ColumnInfo, TableInfo

from .db_fixtures import task_file


def solve_all(env, rounds):
    agent = OracleAgent(env.unwrapped.tasks)
    outcomes = []
    for _ in range(rounds):
        for index in env.unwrapped.tasks.indices:
            env.reset(options={"task_index": index})
            while True:
                *_, terminated, truncated, info = env.step(agent.act(env.unwrapped.session))
                if terminated or truncated:
                    outcomes.append(info["outcome"])
                    break
    return outcomes


def test_many_envs_share_one_server_in_threads(mysql_url, tmp_path):
    tasks = str(task_file(tmp_path))
    results: list[list[str]] = []

    def worker():
        env = gym.make("LifelongDB-v0", tasks=tasks, backend="mysql", url=mysql_url)
        results.append(solve_all(env, rounds=5))
        env.close()

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert len(results) == 4
    assert all(outcome == "correct" for outcomes in results for outcome in outcomes)


def _our_leftovers(url: str, pid: int) -> tuple[list[str], list[str]]:
    with pymysql.connect(**parse_url(url)) as connection, connection.cursor() as cursor:
        cursor.execute("SHOW DATABASES LIKE %s", (f"{PREFIX}%\\_{pid}\\_%",))
        databases = [r[0] for r in cursor.fetchall()]
        cursor.execute(
            "SELECT User FROM mysql.user WHERE User LIKE %s", (f"{PREFIX}%\\_{pid}\\_%",)
        )
        return databases, [r[0] for r in cursor.fetchall()]


def test_crashed_run_leftovers_are_dropped_at_next_start(mysql_url, tmp_path):
    script = (
        "import sys, time, gymnasium as gym, lifelong_gym\n"
        f"env = gym.make('LifelongDB-v0', tasks={str(task_file(tmp_path))!r}, backend='mysql',"
        f" url={mysql_url!r})\n"
        "env.reset(options={'task_index': 11})\n"
        "print('ready', flush=True)\n"
        "time.sleep(600)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "ready"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    databases, users = _our_leftovers(mysql_url, child.pid)
    assert databases and users  # the crash left them behind
    env = gym.make("LifelongDB-v0", tasks=str(task_file(tmp_path)), backend="mysql", url=mysql_url)
    assert _our_leftovers(mysql_url, child.pid) == ([], [])
    env.close()
    assert _our_leftovers(mysql_url, os.getpid()) == ([], [])


def _random_table(rng: np.random.Generator, rows: int) -> TableInfo:
    columns = (
        ColumnInfo(name="id", type="INT"),
        ColumnInfo(name="label", type="VARCHAR(40)"),
        ColumnInfo(name="amount", type="DECIMAL(10,2)"),
        ColumnInfo(name="day", type="DATE"),
    )
    values = [
        (
            int(i),
            None if rng.random() < 0.1 else f"näme {rng.integers(1000)}",
            None if rng.random() < 0.1 else float(rng.integers(0, 100000)) / 100,
            f"2024-{rng.integers(1, 13):02d}-{rng.integers(1, 29):02d}",
        )
        for i in range(rows)
    ]
    return TableInfo(name="data", column_info_list=columns, row_list=tuple(values))


@pytest.mark.parametrize("rows", [1, 7, 60, 400])
def test_sqlite_hash_equals_the_hash_mysql_computes(mysql_url, rows):
    """The Python hash over SQLite's rows equals MySQL's own SQL (incl. the 1024-byte cut)."""
    table = _random_table(np.random.default_rng(rows), rows)
    sqlite = SqliteBackend()
    sqlite.start(table)
    ours = sqlite.table_hash(table)
    sqlite.close()
    with pymysql.connect(**parse_url(mysql_url), autocommit=True) as connection:
        with connection.cursor() as cursor:
            cursor.execute("CREATE DATABASE IF NOT EXISTS lgym_hash_check")
            cursor.execute("USE lgym_hash_check")
            cursor.execute("DROP TABLE IF EXISTS data")
            cursor.execute(
                "CREATE TABLE data (id INT, label VARCHAR(40), amount DECIMAL(10,2), day DATE)"
            )
            cursor.executemany("INSERT INTO data VALUES (%s, %s, %s, %s)", list(table.row_list))
            cursor.execute("SET SESSION group_concat_max_len = 1024")
            cursor.execute(table_hash_sql("data", [quote(c.name) for c in table.column_info_list]))
            (theirs,) = cursor.fetchone()
            cursor.execute("DROP DATABASE lgym_hash_check")
    assert ours == theirs


@pytest.mark.parametrize("vector", ["sync", "async-shared", "async-copy", "async-mysql"])
def test_vector_envs_step_four_at_once(request, tmp_path, vector):
    tasks = str(task_file(tmp_path))
    server = {}
    if vector == "async-mysql":  # four processes sharing one server
        server = {"backend": "mysql", "url": request.getfixturevalue("mysql_url")}
    fns = [lambda: gym.make("LifelongDB-v0", tasks=tasks, **server) for _ in range(4)]
    if vector == "sync":
        envs = gym.vector.SyncVectorEnv(fns)
    else:
        envs = gym.vector.AsyncVectorEnv(fns, shared_memory=vector == "async-shared")
    obs, info = envs.reset(seed=3, options={"task_index": 10})
    assert len(obs) == 4 and all("most expensive first" in o for o in obs)
    replies = [
        operation_reply("SELECT name FROM `shop items` WHERE price > 5 ORDER BY price DESC;")
    ] * 4
    obs, reward, terminated, truncated, info = envs.step(replies)
    assert list(obs) == ["[('coffee',), ('cocoa',)]"] * 4
    obs, reward, terminated, truncated, info = envs.step(
        [f"Action: Answer\nFinal Answer: {o}" for o in obs]
    )
    assert list(reward) == [1.0] * 4 and all(terminated)
    envs.close()


def _numbers_table(*rows: tuple) -> TableInfo:
    """A table `t` of an INT column `n` and a DECIMAL(10,2) column `d`."""
    columns = (ColumnInfo(name="n", type="INT"), ColumnInfo(name="d", type="DECIMAL(10,2)"))
    return TableInfo(name="t", column_info_list=columns, row_list=rows)


def test_writes_are_stored_as_mysql_types_after_a_rolled_back_transaction():
    # a write inside the agent's transaction is rounded there and rolled back with it; the
    # next write, outside it, must be rounded again
    table = _numbers_table((1, 2.5))
    backend = SqliteBackend()
    try:
        backend.start(table)
        assert backend.execute("SELECT * FROM t").rows == [(1, 2.5)]
        for sql in ("BEGIN", "INSERT INTO t VALUES (27.6, 4500.555)", "ROLLBACK"):
            assert backend.execute(sql).error is None
        assert backend.execute("INSERT INTO t VALUES (27.6, 4500.555)").error is None
        assert backend.execute("UPDATE t SET d = 1.005 WHERE n = 1").error is None
        assert sorted(backend.execute("SELECT n, d FROM t").rows) == [(1, 1.01), (28, 4500.56)]
        backend.start(table)  # the next task starts from the image, without the write
        assert backend.execute("SELECT * FROM t").rows == [(1, 2.5)]
    finally:
        backend.close()


def test_a_task_too_wide_fails_its_start_alone_and_a_long_value_is_stored():
    # the task database is built on the back-end's own connection: its limits for the agent
    # must neither refuse a task's long value nor stay broken by a table it cannot hold
    plain = TableInfo(
        name="t", column_info_list=(ColumnInfo(name="a", type="TEXT"),), row_list=(("x",),)
    )
    too_wide = TableInfo(
        name="w",
        column_info_list=tuple(ColumnInfo(name=f"c{i}", type="INT") for i in range(600)),
        row_list=(tuple(range(600)),),
    )
    backend = SqliteBackend()
    try:
        with pytest.raises(sqlite3.Error):
            backend.start(too_wide)
        backend.start(plain.model_copy(update={"row_list": (("x" * 2_000_000,),)}))
        assert backend.execute("SELECT count(*) FROM t").rows == [(1,)]
        backend.start(plain)
        assert backend.execute("SELECT a FROM t").rows == [("x",)]
        # the agent's limit is back: SQLite builds no such text (printf, which MySQL lacks,
        # is called below the translation, which refuses it)
        too_long = backend._require().execute("SELECT length(printf('%.*c', 2000000, 'x'))")
        assert too_long.fetchall() == [(None,)]
    finally:
        backend.close()


def test_a_declared_type_holding_a_second_statement_fails_the_start_and_runs_nothing():
    smuggled = TableInfo(
        name="t",
        column_info_list=(ColumnInfo(name="a", type="INT); CREATE TABLE x (b"),),
        row_list=((1,),),
    )
    backend = SqliteBackend()
    try:
        with pytest.raises(sqlite3.ProgrammingError, match="one statement"):
            backend.start(smuggled)
        backend.start(
            smuggled.model_copy(update={"column_info_list": (ColumnInfo(name="a", type="INT"),)})
        )
        assert backend.execute("SHOW TABLES").rows == [("t",)]
    finally:
        backend.close()


@pytest.mark.parametrize(
    "write",
    [
        None,
        "UPDATE data SET amount = amount * 1.0101",
        "UPDATE data SET amount = 0.1 + 0.2",
        "UPDATE data SET amount = 2.675 WHERE id < 5",
        "UPDATE data SET label = 'x\u00e9 ', amount = NULL WHERE id < 3",
        "UPDATE data SET label = 12, id = 2.5 WHERE id = 1",
        "UPDATE data SET label = 0.1 + 0.2, day = NULL WHERE id = 2",
        "UPDATE data SET label = NULL, amount = NULL, day = NULL",
        "INSERT INTO data (id, amount) VALUES (7, -0.0), (8, 2.675), (9, 7)",
        "INSERT INTO data (label) VALUES (''), (','), ('')",
        "REPLACE INTO data (id, amount) VALUES (27.6, 1.005), (3, 4500.555)",
        "INSERT INTO data (id, amount) SELECT id + 0.5, amount * 1.111 FROM data WHERE id < 4",
        "DELETE FROM data WHERE id > 2",
        "DELETE FROM data",
    ],
)
def test_sqlite_hash_after_a_write_equals_the_hash_mysql_computes(mysql_url, write):
    """Every kind of value a write leaves (numbers off their scale, text in number columns,
    numbers in text columns, blobs, NULLs, empty text) hashes as MySQL hashes it."""
    from lifelong_gym.envs.db.backends.mysql.backend import MysqlBackend

    table = _random_table(np.random.default_rng(5), 40)
    hashes, errors = [], []
    for backend in (SqliteBackend(), MysqlBackend(mysql_url)):
        try:
            backend.start(table)
            if write is not None:
                errors.append(backend.execute(write).error)
            hashes.append(backend.table_hash(table))
        finally:
            backend.close()
    assert errors == [None, None] or write is None
    assert hashes[0] == hashes[1]


@pytest.mark.parametrize(
    ("declared", "values"),
    [
        ("INT", (1, -7, 2**63 - 1, 0)),
        ("INT", (1, None, 2.0, 2.5, "x", b"\xff")),
        ("VARCHAR(40) COLLATE MYSQL_CI", ("a", None, "", "é ")),
        ("VARCHAR(40) COLLATE MYSQL_CI", ("a", 12, 0.30000000000000004, b"ab")),
        ("REAL DECIMAL(10,2)", (1.5, 2.25, -0.0, 1234567.89)),
        ("REAL DECIMAL(10,2)", (1.005, 2.675, 7, None, 1e300, "3.1")),
        ("REAL DECIMAL(10,0)", (3, 4.0)),
        ("DATE", ("2024-01-02", None)),
    ],
)
def test_a_column_printed_at_once_is_each_value_printed(declared, values):
    from lifelong_gym.envs.db.backends.sqlite.hash import printed_column, text_renderer

    assert list(printed_column(declared, values)) == list(map(text_renderer(declared), values))


def test_a_column_is_at_its_scale_exactly_when_round_keeps_every_number():
    from lifelong_gym.envs.db.backends.sqlite.store import _at_scale

    rng = np.random.default_rng(7)
    columns = [
        ((1.5, 2.25, -0.0, 1234567.89), 2),
        ((1.005, 2.675), 2),
        ((0.1 + 0.2,), 2),
        ((3.0, 4.0, -12.0), 0),
        ((3.5,), 0),
        ((2.0**52 / 100, 1.25), 2),  # past the exact range: left to round
        ((45035996273704.96,), 2),
        ((float("inf"), 1.5), 2),
        ((float("nan"),), 2),
        ((1e300, -1e-300), 4),
        ((0.1,), 30),
        *((tuple(rng.integers(-(10**9), 10**9, 50) / 10.0**scale), scale) for scale in range(0, 7)),
        *(
            (tuple(rng.integers(-(10**9), 10**9, 50) / 10.0**scale + 10.0**-9), scale)
            for scale in range(0, 7)
        ),
    ]
    for column, scale in columns:
        assert _at_scale(column, scale) == all(round(v, scale) == v for v in column), column


def test_the_rows_of_a_task_are_stored_at_their_columns_scale():
    table = _numbers_table((1, 2.5), (2.0, 1.005), (27.6, 4500.555), (3, 7.0))
    backend = SqliteBackend()
    try:
        backend.start(table)
        rows = backend.execute("SELECT n, d FROM t").rows
    finally:
        backend.close()
    assert rows == [(1, 2.5), (2, 1.01), (28, 4500.56), (3, 7.0)]


def test_a_new_table_never_starts_from_the_image_of_one_that_is_gone():
    # images are kept by the live table's identity: a table made where a dead one stood
    # (the same id, most times) must get its own rows
    import gc

    backend = SqliteBackend()
    try:
        for number in range(20):
            table = _numbers_table((number, number + 0.25))
            backend.start(table)
            assert backend.execute("SELECT n, d FROM t").rows == [(number, number + 0.25)]
            del table
            gc.collect()
    finally:
        backend.close()
