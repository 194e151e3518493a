"""`lifelong-gym serve --mcp`: sessions of the suite over MCP, played with the SDK's own client.

Real parts: the server is the CLI in its own process on a loopback port, the client the `mcp`
SDK's `Client` (tests/integrations/mcp_client.py), both run by the mcp venv's interpreter
(mcp 2.3 cannot share this environment: openenv pins mcp<2) on this checkout's code; the DB
back-ends are the embedded SQLite and the MariaDB server, the OS back-end Docker.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
from contextlib import contextmanager
from pathlib import Path

import gymnasium as gym
import pytest
from click.testing import CliRunner

from lifelong_gym.cli import main

from .openenv_server import free_port, server_process, task_databases, wait_until
from .venvs import needs_venv

MCP_PYTHON = Path("/opt/venvs/mcp/bin/python")  # made by .ci/setup.d/50-mcp.sh
ROOT = Path(__file__).resolve().parents[2]
CLIENT = Path(__file__).with_name("mcp_client.py")
CLIENT_SECONDS = 600
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}  # the checkout's code, not an installed copy


pytestmark = needs_venv(
    MCP_PYTHON,
    "import mcp_types, mcp.client; from importlib.metadata import version as v; "
    "assert tuple(map(int, v('mcp').split('.')[:2])) >= (2, 3)",
    "mcp>=2.3",
    "50-mcp.sh",
)


def serve_command(env_id: str, *flags: str, env_args: tuple[str, ...] = ()) -> list[str]:
    command = [str(MCP_PYTHON), "-m", "lifelong_gym", "serve", "--mcp", "--env", env_id, *flags]
    for arg in env_args:
        command += ["--env-arg", arg]
    return command


class Served:
    """A `serve --mcp` process: its pid and URL."""

    def __init__(self, process: subprocess.Popen, url: str):
        self.process, self.url = process, url

    def client(self, command: str, **arguments) -> object:
        """Run one command of the SDK client against the server; its JSON output."""
        done = subprocess.run(
            [MCP_PYTHON, CLIENT, self.url, command, json.dumps(arguments)],
            capture_output=True,
            text=True,
            env=ENV,
            timeout=CLIENT_SECONDS,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.strip().splitlines()[-1])


@contextmanager
def served(env_id: str, *flags: str, env_args: tuple[str, ...] = ()):
    """`lifelong-gym serve --mcp` on a free port until the block ends."""
    port = free_port()
    command = serve_command(env_id, "--port", str(port), *flags, env_args=env_args)

    def listening() -> bool:
        with socket.socket() as probe:
            return probe.connect_ex(("127.0.0.1", port)) == 0

    with server_process(command, listening, env=ENV) as process:
        yield Served(process, f"http://127.0.0.1:{port}/mcp")


@pytest.fixture(scope="module")
def db_tasks():
    env = gym.make("LifelongDB-v0")
    yield env.unwrapped.tasks
    env.close()


@pytest.fixture(scope="module")
def sqlite_server():
    with served("LifelongDB-v0") as server:
        yield server


@pytest.fixture(scope="module")
def mariadb_server(mysql_url):
    env_args = ("backend=mysql", f"url={mysql_url}")
    with served("LifelongDB-v0", "--session-idle-timeout", "2", env_args=env_args) as server:
        yield server, mysql_url


def assert_solved(episodes: list[dict], indices: list[int]) -> None:
    assert [episode["task_index"] for episode in episodes] == indices
    for episode in episodes:
        final = episode["structured"]
        assert episode["turns"] >= 1 and not episode["is_error"]
        assert (final["reward"], final["status"], final["done"]) == (1.0, "completed", True)
        assert final["info"]["task_index"] == episode["task_index"]
        assert episode["texts"][-1] == "The task has ended: status completed, reward 1."


def test_oracle_episodes_score_1_on_the_embedded_db(sqlite_server, db_tasks):
    indices = list(db_tasks.indices[:3])
    episodes = sqlite_server.client("oracle", env_id="LifelongDB-v0", task_indices=indices)
    assert_solved(episodes, indices)
    started = episodes[0]["started"]
    assert started["texts"] == [started["structured"]["prompt"]] and "MySQL" in started["texts"][0]


def test_four_sessions_at_once_on_mariadb_score_1_and_leave_no_database(mariadb_server, db_tasks):
    server, mysql_url = mariadb_server
    indices = list(db_tasks.indices[4:8])
    episodes = server.client("oracle", env_id="LifelongDB-v0", task_indices=indices)
    assert_solved(episodes, indices)
    assert wait_until(lambda: not task_databases(mysql_url, server.process.pid))


def test_a_write_in_one_session_is_not_seen_by_another(mariadb_server, db_tasks):
    server, mysql_url = mariadb_server
    task = db_tasks[db_tasks.indices[0]]
    seen = server.client("isolation", task_index=task.index, table=task.table_info.name)
    before = seen["before"]["structured"]["observation"]
    assert before not in ("[(0,)]", "") and not seen["deleted"]["is_error"]
    assert seen["after"]["structured"]["observation"] == "[(0,)]"  # the writer's own rows
    assert seen["other"]["structured"]["observation"] == before  # the other session's
    assert wait_until(lambda: not task_databases(mysql_url, server.process.pid))


def test_a_client_that_vanishes_mid_episode_leaves_no_database(mariadb_server):
    server, mysql_url = mariadb_server
    command = [MCP_PYTHON, CLIENT, server.url, "vanish", json.dumps({"task_index": 0})]
    client = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=ENV)
    try:
        started = json.loads(client.stdout.readline())
        assert started["structured"]["task_index"] == 0 and not started["is_error"]
        held = task_databases(mysql_url, server.process.pid)
        assert len([name for name in held if "account" not in name]) == 1
    finally:
        client.kill()  # no DELETE: the session ends at its idle timeout (2 s)
        client.wait()
    assert wait_until(lambda: not task_databases(mysql_url, server.process.pid))
    assert server.process.poll() is None


def test_calls_out_of_turn_unknown_tools_and_bad_arguments_are_tool_errors(sqlite_server):
    before_start = [["execute_sql", {"sql": "SELECT 1"}], ["teleport", {}]]
    bad_starts = [["start_task", {"task_index": "0"}], ["start_task", {"task_index": 10**9}]]
    bad_starts += [["start_task", {"seed": -1}], ["start_task", {"level": 3}]]
    playing = [["start_task", {"task_index": 0}], ["start_task", {"task_index": 1}]]
    playing += [["execute_sql", {"sql": "SELECT 1"}], ["execute_sql", {"query": "SELECT 1"}]]
    after_end = [["execute_sql", {"sql": "SELECT 1"}], ["start_task", {}]]
    replies = sqlite_server.client("calls", calls=before_start + bad_starts + playing + after_end)
    errors = [reply["is_error"] for reply in replies]
    assert errors == [True] * 6 + [False, True, False, True, True, True]
    assert all("start_task first" in reply["texts"][0] for reply in replies[:2])
    assert "no task with sample index 1000000000" in replies[3]["texts"][0]
    assert "has started" in replies[7]["texts"][0]
    ended = replies[9]["structured"]  # the environment scores the bad call as the agent's
    assert (ended["status"], ended["reward"]) == ("agent_validation_failed", 0.0)
    assert ended["done"] and "takes sql" in ended["observation"]
    assert all("has ended" in reply["texts"][0] for reply in replies[10:])
    unknown = sqlite_server.client("calls", calls=[playing[0], ["teleport", {"to": "x"}]])
    assert unknown[1]["is_error"]
    assert unknown[1]["structured"]["status"] == "agent_validation_failed"
    assert sqlite_server.process.poll() is None


def test_a_client_of_the_sessionless_2026_protocol_is_told_to_use_a_session(sqlite_server):
    seen = sqlite_server.client("modern")
    assert seen["tools"] == ["start_task", "execute_sql", "commit_final_answer"]
    assert seen["start_task"]["is_error"] and "initialize" in seen["start_task"]["texts"][0]


def test_max_sessions_refuses_one_more_session():
    with served("LifelongDB-v0", "--max-sessions", "1") as server:
        assert server.client("capacity")["refused"]
        assert server.client("calls", calls=[["start_task", {"task_index": 0}]])[0]["texts"]


def test_oracle_episodes_score_1_on_the_embedded_kg():
    env = gym.make("LifelongKG-v0")
    indices = list(env.unwrapped.tasks.indices[:2])
    env.close()
    with served("LifelongKG-v0") as server:
        episodes = server.client("oracle", env_id="LifelongKG-v0", task_indices=indices)
    assert_solved(episodes, indices)


def test_os_oracle_episodes_score_1_and_a_vanished_client_leaves_no_container(
    os_image, docker_engine
):
    from lifelong_gym.envs.os.backends.docker import LABEL_PID

    with served("LifelongOS-v0", "--session-idle-timeout", "2") as server:

        def containers():
            label = f"{LABEL_PID}={server.process.pid}"
            return docker_engine.containers.list(all=True, sparse=True, filters={"label": label})

        episodes = server.client("oracle", env_id="LifelongOS-v0", task_indices=[0, 1])
        assert_solved(episodes, [0, 1])
        command = [MCP_PYTHON, CLIENT, server.url, "vanish", json.dumps({"task_index": 2})]
        client = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=ENV)
        try:
            assert not json.loads(client.stdout.readline())["is_error"]
            assert containers()
        finally:
            client.kill()
            client.wait()
        assert wait_until(lambda: not containers(), seconds=120)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    command = [MCP_PYTHON, "-m", "lifelong_gym", "serve", "--mcp", *args]
    return subprocess.run(command, capture_output=True, text=True, env=ENV, timeout=300)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--env", "LifelongNope-v0"], "LifelongNope-v0"),
        (["--env-arg", "no_such_argument=1"], "no_such_argument"),
        (["--env-arg", "action_format=text"], "drop action_format"),
        (["--session-idle-timeout", "0"], "--session-idle-timeout"),
    ],
)
def test_a_bad_env_or_flag_is_one_line(args, message):
    done = run_cli("--port", str(free_port()), *args)
    assert done.returncode != 0 and done.stdout == ""
    (error,) = done.stderr.strip().splitlines()
    assert error.startswith("Error: ") and message in error


def test_a_busy_port_is_one_line():
    with socket.create_server(("127.0.0.1", 0)) as busy:
        done = run_cli("--port", str(busy.getsockname()[1]))
    assert done.returncode == 1
    (error,) = done.stderr.strip().splitlines()
    assert error.startswith("Error: cannot listen on 127.0.0.1:") and "--port" in error


def test_without_mcp_2_3_the_flag_names_the_extra():
    from importlib.metadata import PackageNotFoundError, version

    try:
        if tuple(map(int, version("mcp").split(".")[:2])) >= (2, 3):
            pytest.skip("this environment has mcp 2.3: the extra is installed")
    except PackageNotFoundError:
        pass
    result = CliRunner().invoke(main, ["serve", "--mcp", "--port", str(free_port())])
    assert result.exit_code == 1
    (error,) = result.output.strip().splitlines()
    assert "pip install 'lifelong-gym[mcp]'" in error and "openenv" in error
