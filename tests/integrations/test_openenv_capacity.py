"""More clients than `lifelong-gym serve --max-sessions`: they wait their turn, or are refused
with `CAPACITY_REACHED` and ask again (the bundled `LifelongEnvClient`).

Real parts: the CLI in its own process on loopback, OpenEnv's client, SQLite.
"""

from __future__ import annotations

import asyncio
import json
from contextlib import ExitStack

import gymnasium as gym
import pytest
from click.testing import CliRunner

pytest.importorskip("openenv", reason="the OpenEnv server needs the openenv extra")
websockets_sync = pytest.importorskip("websockets.sync.client")

from lifelong_gym.cli import main  # noqa: E402
from lifelong_gym.integrations.openenv import CAPACITY_REACHED  # noqa: E402

from .openenv_server import free_port, play_oracle, served  # noqa: E402


@pytest.fixture(scope="module")
def db_tasks():
    env = gym.make("LifelongDB-v0")
    yield env.unwrapped.tasks
    env.close()


def connected(url: str):
    """A raw WebSocket session on the server at `url` (a context manager)."""
    return websockets_sync.connect(url.replace("http://", "ws://") + "/ws")


def reset(ws, task_index: int = 0) -> None:
    ws.send(json.dumps({"type": "reset", "data": {"task_index": task_index}}))


def received(ws, seconds: float = 120) -> dict:
    return json.loads(ws.recv(timeout=seconds))


def play_all(url: str, tasks, indices) -> list[dict]:
    async def together():
        return await asyncio.gather(*(play_oracle(url, tasks, i) for i in indices))

    return asyncio.run(together())


def test_a_session_past_the_limit_waits_until_one_ends(db_tasks):
    with served("LifelongDB-v0", flags=("--max-sessions", "2")) as (_, url):
        with ExitStack() as held:
            first, second = (held.enter_context(connected(url)) for _ in range(2))
            for ws in (first, second):
                reset(ws)
                assert received(ws)["type"] == "observation"
            with connected(url) as third:
                reset(third)
                with pytest.raises(TimeoutError):  # no place: its reset is not answered yet
                    third.recv(timeout=1)
                first.close()
                assert received(third)["type"] == "observation"  # it took the freed place
        # six clients of the bundled client, two places: every episode is played and scored
        indices = db_tasks.indices[:6]
        results = play_all(url, db_tasks, indices)
    assert [r["info"]["task_index"] for r in results] == list(indices)
    assert [r["reward"] for r in results] == [1.0] * 6


def test_a_refused_session_is_told_capacity_reached_and_the_client_asks_again(db_tasks):
    flags = ("--max-sessions", "2", "--session-wait", "0")
    with served("LifelongDB-v0", flags=flags) as (process, url):
        with ExitStack() as held:
            for ws in (held.enter_context(connected(url)) for _ in range(2)):
                reset(ws)
                assert received(ws)["type"] == "observation"
            with connected(url) as refused:  # refused at once: no message needed
                error = received(refused)
                assert error["type"] == "error" and error["data"]["code"] == CAPACITY_REACHED
                assert error["data"]["message"].startswith("Server at capacity: 2/2 sessions")
                assert (error["data"]["active_sessions"], error["data"]["max_sessions"]) == (2, 2)
                with pytest.raises(Exception) as closed:  # then the server closes the connection
                    refused.recv(timeout=60)
                assert "1000" in str(closed.value)
        # six clients, two places, no waiting: the refused ones retry until they get a place
        indices = db_tasks.indices[:6]
        results = play_all(url, db_tasks, indices)
        assert process.poll() is None
    assert [r["info"]["task_index"] for r in results] == list(indices)
    assert [r["reward"] for r in results] == [1.0] * 6


def test_session_wait_is_not_for_mcp():
    result = CliRunner().invoke(
        main, ["serve", "--mcp", "--session-wait", "5", "--port", str(free_port())]
    )
    assert result.exit_code != 0 and "--session-wait goes with OpenEnv" in result.output


def worker_processes(server_pid: int) -> list[int]:
    """The worker processes (uvicorn's, started by multiprocessing) of the server."""
    with open(f"/proc/{server_pid}/task/{server_pid}/children") as children:
        pids = [int(pid) for pid in children.read().split()]
    return [pid for pid in pids if b"spawn_main" in open(f"/proc/{pid}/cmdline", "rb").read()]


def test_workers_share_the_port_each_with_its_own_sessions(db_tasks):
    flags = ("--workers", "2", "--max-sessions", "2")
    with served("LifelongDB-v0", flags=flags) as (process, url):
        assert len(worker_processes(process.pid)) == 2
        # four places in all: eight clients are played and scored
        indices = db_tasks.indices[:8]
        results = play_all(url, db_tasks, indices)
        assert process.poll() is None
    assert [r["info"]["task_index"] for r in results] == list(indices)
    assert [r["reward"] for r in results] == [1.0] * 8


def test_workers_need_environment_arguments_that_are_json(db_tasks):
    from lifelong_gym.errors import ConfigError
    from lifelong_gym.integrations.openenv import serve

    with pytest.raises(ConfigError, match="workers=2 needs environment arguments that are JSON"):
        serve("LifelongDB-v0", {"tasks": db_tasks}, port=free_port(), workers=2)


@pytest.mark.parametrize(
    "flags, said",
    [
        (("--workers", "0"), "0 is not in the range x>=1"),
        (("--mcp", "--workers", "2"), "--workers goes with OpenEnv"),
    ],
)
def test_bad_workers_are_one_line(flags, said):
    result = CliRunner().invoke(main, ["serve", *flags, "--port", str(free_port())])
    assert result.exit_code != 0 and said in result.output
