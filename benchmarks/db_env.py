"""Time per DB task: the environment with the oracle vs raw sqlite3 / PyMySQL doing the same work.

Usage: python benchmarks/db_env.py [--tasks NAME_OR_PATH] [--limit N] [--mysql-url URL]
                             [--rounds N] [--backends sqlite,mysql]

For each back-end it prints the mean environment time per task (reset + steps + scoring,
the oracle's own time excluded) beside the floor: the same CREATE / INSERT / reference
statements / DROP sent straight through the driver. Ours and the floor run interleaved
(A B A B ...) `--rounds` times; min and median of each, and their ratios, are printed, and
the median of each round's ratio to the floor run beside it ("paired", the figure that
holds when the machine's speed drifts between rounds).
SQLite is timed in CPU time of this process (steadier than wall time on a shared machine;
all its work is in-process); MySQL in wall time (the server's work is in another process).
Targets for SQLite: ratio <= 2 with warm translations, <= 3 cold.

Then the start-up: seconds from `gym.make` to the first task ready, on the server at
`--mysql-url` and on the server `backend="mysql"` without a url starts (cold: the container
starts; warm: another environment already runs it), min and median of `--rounds`, with
the load average. The started server's leases go to a temporary folder of the benchmark's
own, so a server other runs of this user keep on the host (docs/mysql.md) cannot make
the cold case warm.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import gymnasium as gym

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import OracleAgent
from lifelong_gym.envs.db.actions import count_statements
from lifelong_gym.envs.db.backends.mysql import server as mysql_server
from lifelong_gym.envs.db.backends.mysql.backend import parse_url
from lifelong_gym.envs.db.backends.mysql.backend import quote as mysql_quote
from lifelong_gym.envs.db.backends.sqlite.catalog import quote as sqlite_quote
from lifelong_gym.envs.db.backends.sqlite.task_databases import clear_images
from lifelong_gym.envs.db.backends.sqlite.translate import clear_translations
from lifelong_gym.envs.db.backends.statement_guard import refusal
from lifelong_gym.tasks import clear_task_files


def env_time(
    tasks: str, backend: str, url: str | None, limit: int, clock: Callable[[], float]
) -> tuple[float, int, int]:
    """Mean seconds per task spent inside the environment, and how many were correct."""
    env = gym.make("LifelongDB-v0", tasks=tasks, backend=backend, url=url).unwrapped
    agent = OracleAgent(env.tasks)
    indices = env.tasks.order[:limit]
    spent, correct = 0.0, 0
    for index in indices:
        start = clock()
        env.reset(options={"task_index": index})
        spent += clock() - start
        while True:
            reply = agent.act(env.session)
            start = clock()
            *_, terminated, truncated, info = env.step(reply)
            spent += clock() - start
            if terminated or truncated:
                correct += info["outcome"] == "correct"
                break
    env.close()
    return spent / len(indices), correct, len(indices)


def sqlite_floor(tasks, indices) -> float:
    """Raw sqlite3: a fresh database, the table, its rows, the statements (CPU seconds)."""
    start = time.process_time()
    for index in indices:
        task = tasks[index]
        table = task.table_info
        connection = sqlite3.connect(":memory:", isolation_level=None)
        columns = ", ".join(f"{sqlite_quote(c.name)} {c.type}" for c in table.column_info_list)
        connection.execute(f"CREATE TABLE {sqlite_quote(table.name)} ({columns})")
        marks = ", ".join("?" for _ in table.column_info_list)
        connection.executemany(
            f"INSERT INTO {sqlite_quote(table.name)} VALUES ({marks})", table.row_list
        )
        for statement in task.reference_sql:
            with contextlib.suppress(sqlite3.Error):  # a failing statement is work done too
                connection.execute(statement).fetchall()
        connection.close()
    return (time.process_time() - start) / len(indices)


def mysql_floor(tasks, indices, url: str) -> float:
    """Raw PyMySQL: CREATE DATABASE, the table, its rows, the statements, DROP DATABASE."""
    import pymysql

    connection = pymysql.connect(autocommit=True, **parse_url(url))
    cursor = connection.cursor()
    database = f"lgym_floor_{os.getpid()}"  # several engineers may measure on one server
    start = time.perf_counter()
    for index in indices:
        task = tasks[index]
        table = task.table_info
        cursor.execute(f"CREATE DATABASE {database}")
        cursor.execute(f"USE {database}")
        columns = ", ".join(f"{mysql_quote(c.name)} {c.type}" for c in table.column_info_list)
        cursor.execute(f"CREATE TABLE {mysql_quote(table.name)} ({columns})")
        marks = ", ".join(["%s"] * len(table.column_info_list))
        cursor.executemany(
            f"INSERT INTO {mysql_quote(table.name)} VALUES ({marks})", table.row_list
        )
        for statement in task.reference_sql:
            with contextlib.suppress(pymysql.MySQLError):
                cursor.execute(statement)
                cursor.fetchall()
        cursor.execute(f"DROP DATABASE {database}")
    elapsed = time.perf_counter() - start
    connection.close()
    return elapsed / len(indices)


def first_task_seconds(tasks: str, **server: str) -> tuple[float, gym.Env]:
    """Seconds from `gym.make` to the first task's database ready, and the env (still open)."""
    start = time.perf_counter()
    env = gym.make("LifelongDB-v0", tasks=tasks, **server)
    env.reset(options={"task_index": env.unwrapped.tasks.order[0]})
    return time.perf_counter() - start, env


def print_startup_times(tasks: str, url: str, rounds: int) -> None:
    """The start-up of the url case beside the started server's, cold and warm, interleaved."""
    mysql_server.LEASES = Path(tempfile.mkdtemp()) / mysql_server.LEASES.name
    times: dict[str, list[float]] = {"url": [], "started, cold": [], "started, warm": []}
    for _ in range(rounds):
        seconds, env = first_task_seconds(tasks, backend="mysql", url=url)
        times["url"].append(seconds)
        env.close()
        seconds, holder = first_task_seconds(tasks, backend="mysql")  # no container runs yet
        times["started, cold"].append(seconds)
        seconds, env = first_task_seconds(tasks, backend="mysql")  # joins the holder's
        times["started, warm"].append(seconds)
        env.close()
        holder.close()  # the last user: the container is removed
    shutil.rmtree(mysql_server.LEASES.parent)
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\n{'gym.make to first task':24} {'min s':>8} {'median s':>8}   (load {load})")
    for name, values in times.items():
        print(f"{name:24} {min(values):8.3f} {statistics.median(values):8.3f}")


def measure(args, tasks, backend: str, cache: str) -> None:
    """Ours and the floor interleaved `args.rounds` times; one line of min/median and ratios."""
    indices = tasks.order[: args.limit]
    url = args.mysql_url if backend == "mysql" else None
    clock = time.perf_counter if backend == "mysql" else time.process_time
    ours, floor = [], []
    for _ in range(args.rounds):
        if cache == "cold":
            clear_translations()
            clear_images()
            count_statements.cache_clear()
            refusal.cache_clear()  # the guard's verdict is cached by statement text too
            clear_task_files()  # new task objects: each table's image key computed again
        seconds, correct, count = env_time(args.tasks, backend, url, args.limit, clock)
        ours.append(seconds)
        if backend == "sqlite":
            floor.append(sqlite_floor(tasks, indices))
        else:
            floor.append(mysql_floor(tasks, indices, url))
    name = f"{backend} ({cache} translation)" if cache else backend
    low, middle = min(ours), statistics.median(ours)
    low_floor, middle_floor = min(floor), statistics.median(floor)
    # each round's ratio to the floor run beside it: steady when the machine's speed drifts
    paired = statistics.median(a / b for a, b in zip(ours, floor, strict=True))
    print(
        f"{name:24} {count:5d} {correct:7d} {low * 1e3:8.3f} {middle * 1e3:8.3f}"
        f" {low_floor * 1e3:8.3f} {middle_floor * 1e3:8.3f}"
        f" {low / low_floor:6.2f} {middle / middle_floor:6.2f} {paired:6.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="default")
    parser.add_argument("--limit", type=int, default=500)
    parser.add_argument("--mysql-url", default="mysql://root@127.0.0.1:3306")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--backends", default="sqlite,mysql")
    args = parser.parse_args()
    backends = args.backends.split(",")
    tasks = gym.make("LifelongDB-v0", tasks=args.tasks).unwrapped.tasks
    print(f"{'':38} {'env ms/task':>17} {'floor ms/task':>17} {'ratio':>20}")
    header = ("back-end", "tasks", "correct", "min", "median", "min", "median", "min", "median")
    print("{:24} {:>5} {:>7} {:>8} {:>8} {:>8} {:>8} {:>6} {:>6} {:>6}".format(*header, "paired"))
    if "sqlite" in backends:
        # cold: every statement translated, every table built the first time;
        # warm: tasks seen before (repeated epochs, vector envs)
        measure(args, tasks, "sqlite", "cold")
        measure(args, tasks, "sqlite", "warm")
    if "mysql" in backends:
        measure(args, tasks, "mysql", "")
        print_startup_times(args.tasks, args.mysql_url, args.rounds)


if __name__ == "__main__":
    main()
