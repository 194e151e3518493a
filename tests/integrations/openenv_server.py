"""A `lifelong-gym serve` process on a free loopback port, and an oracle that plays through it."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from subprocess import PIPE

from lifelong_gym.agents import OracleAgent

STARTUP_SECONDS = 240  # imports and the first environment; slow on a loaded machine


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def served(env_id: str, *env_args: str, flags: tuple[str, ...] = (), port: int | None = None):
    """Run `lifelong-gym serve` (with `flags`, on `port` or a free one) until the block ends;
    yields (process, base URL)."""
    port = port or free_port()
    command = [sys.executable, "-m", "lifelong_gym", "serve", "--env", env_id, "--port", str(port)]
    command += flags
    for arg in env_args:
        command += ["--env-arg", arg]
    url = f"http://127.0.0.1:{port}"
    with server_process(command, lambda: healthy(url)) as process:
        yield process, url


@contextmanager
def server_process(
    command: list[str], ready, env: dict[str, str] | None = None, output: int | None = PIPE
):
    """Run `command` until the block ends, once `ready()` holds; yields the process.

    Its output is kept for the error of a server that exited (`output=None`: passed on).
    """
    process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while not ready():
            if process.poll() is not None:
                said = process.stdout.read() if process.stdout else "see above"
                raise RuntimeError(f"the server exited: {said}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server was not ready within {STARTUP_SECONDS} s")
            time.sleep(1)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def healthy(url: str) -> bool:
    """Whether the server at `url` answers /health."""
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def task_databases(mysql_url: str, pid: int) -> list[str]:
    """The databases and accounts that the server process `pid` holds on the MySQL server."""
    import pymysql

    from lifelong_gym.envs.db.backends.mysql.backend import PREFIX, parse_url

    connection = pymysql.connect(**parse_url(mysql_url))
    try:
        with connection.cursor() as cursor:
            cursor.execute("SHOW DATABASES")
            names = [row[0] for row in cursor.fetchall()]
            cursor.execute("SELECT User FROM mysql.user")
            names += [f"account {row[0]}" for row in cursor.fetchall()]
    finally:
        connection.close()
    return [name for name in names if PREFIX in name and f"_{pid}_" in name]


async def play_oracle(url: str, tasks, task_index: int, action_format: str = "text") -> dict:
    """One oracle episode in a session of its own, through OpenEnv's client; and its state."""
    from lifelong_gym.integrations.openenv import LifelongEnvClient, play_episode

    async with LifelongEnvClient(base_url=url) as client:
        played = await play_episode(
            client, OracleAgent(tasks, action_format), task_index=task_index
        )
        played["state"] = await client.state()
    return played


def wait_until(condition, seconds: float = 60.0) -> bool:
    """Poll `condition` until it holds or `seconds` pass; whether it held."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.5)
    return condition()
