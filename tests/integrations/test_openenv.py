"""`lifelong-gym serve`: the environments as an OpenEnv server, played with OpenEnv's client.

Real parts: the server is the CLI in its own process on a loopback port, the client is
`openenv`'s `EnvClient`, the DB back-end is the MariaDB server, the OS back-end Docker.
"""

from __future__ import annotations

import asyncio
import json
import socket
import urllib.error
import urllib.request

import gymnasium as gym
import pytest
from click.testing import CliRunner

pytest.importorskip("openenv", reason="the OpenEnv server needs the openenv extra")
websockets_sync = pytest.importorskip("websockets.sync.client")

from lifelong_gym.cli import main  # noqa: E402
from lifelong_gym.integrations.openenv import MAX_MESSAGE_BYTES  # noqa: E402

from ..test_examples import run as run_example  # noqa: E402
from .openenv_server import (  # noqa: E402
    free_port,
    play_oracle,
    served,
    task_databases,
    wait_until,
)


@pytest.fixture(scope="module")
def db_server(mysql_url):
    """A served LifelongDB-v0 on MariaDB: (process, url, mysql url)."""
    with served("LifelongDB-v0", "backend=mysql", f"url={mysql_url}") as (process, url):
        yield process, url, mysql_url


@pytest.fixture(scope="module")
def db_tasks():
    env = gym.make("LifelongDB-v0")
    yield env.unwrapped.tasks
    env.close()


def ws_url(url: str, query: str = "") -> str:
    return url.replace("http://", "ws://") + "/ws" + query


def request(ws, message) -> dict:
    ws.send(message if isinstance(message, str) else json.dumps(message))
    return json.loads(ws.recv(timeout=120))


def test_four_concurrent_sessions_play_oracle_episodes_and_score_every_task(db_server, db_tasks):
    process, url, mysql_url = db_server
    indices = db_tasks.indices[:8]

    async def play_all():
        results = []
        for group in (indices[:4], indices[4:]):  # four sessions at once, twice
            results += await asyncio.gather(*(play_oracle(url, db_tasks, i) for i in group))
        return results

    results = asyncio.run(play_all())
    assert [r["info"]["task_index"] for r in results] == list(indices)
    assert [r["reward"] for r in results] == [1.0] * len(indices)
    assert {r["info"]["status"] for r in results} == {"completed"}
    assert all(r["state"].status == "completed" and r["state"].step_count >= 1 for r in results)
    assert wait_until(lambda: not task_databases(mysql_url, process.pid))


def test_a_client_that_disconnects_mid_episode_frees_its_database(db_server):
    process, url, mysql_url = db_server
    ws = websockets_sync.connect(ws_url(url))
    opened = request(ws, {"type": "reset", "data": {"task_index": 0}})
    assert opened["type"] == "observation" and not opened["data"]["done"]
    assert len([n for n in task_databases(mysql_url, process.pid) if "account" not in n]) == 1
    ws.socket.shutdown(socket.SHUT_RDWR)  # the client vanishes: no close frame
    ws.socket.close()
    assert wait_until(lambda: not task_databases(mysql_url, process.pid))


def test_bad_messages_get_error_replies_and_the_server_serves_on(db_server, db_tasks):
    process, url, _ = db_server
    with websockets_sync.connect(ws_url(url), max_size=None) as ws:
        assert request(ws, "{not json")["data"]["code"] == "INVALID_JSON"
        assert request(ws, {"type": "teleport"})["data"]["code"] == "UNKNOWN_TYPE"
        assert request(ws, {"type": "step", "data": {"reply": "x"}})["type"] == "error"
        assert request(ws, {"type": "step", "data": {"bogus": 1}})["type"] == "error"
        assert request(ws, {"type": "reset", "data": {"task_index": 10**9}})["type"] == "error"
        request(ws, {"type": "reset", "data": {"task_index": 0}})
        long_reply = request(ws, {"type": "step", "data": {"reply": "x" * (1 << 20)}})
        assert long_reply["type"] == "observation"  # a long reply is the agent's problem
        assert long_reply["data"]["done"] and long_reply["data"]["reward"] == 0.0
    with websockets_sync.connect(ws_url(url, "?session_id=no-such-session")) as ws:
        reply = json.loads(ws.recv(timeout=60))
        assert reply["type"] == "error" and "no-such-session" in reply["data"]["message"]
    with websockets_sync.connect(ws_url(url), max_size=None) as ws:
        ws.send(json.dumps({"type": "step", "data": {"reply": "x" * MAX_MESSAGE_BYTES}}))
        with pytest.raises(Exception) as closed:
            ws.recv(timeout=60)
        assert "1009" in str(closed.value)  # message too big: the connection is refused
    assert process.poll() is None
    assert asyncio.run(play_oracle(url, db_tasks, db_tasks.indices[0]))["reward"] == 1.0


def test_http_serves_health_schema_and_a_stateless_reset(db_server):
    _, url, _ = db_server
    with urllib.request.urlopen(f"{url}/health", timeout=60) as response:
        assert json.load(response)["status"] == "healthy"
    with urllib.request.urlopen(f"{url}/schema", timeout=60) as response:
        assert "reply" in json.load(response)["action"]["properties"]
    reset = urllib.request.Request(
        f"{url}/reset", data=b'{"task_index": 0}', headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(reset, timeout=120) as response:
        assert "MySQL" in json.load(response)["observation"]["text"]
    for body, status in ((b'{"action": {"reply": "x"}}', 409), (b"{junk", 422)):
        step = urllib.request.Request(
            f"{url}/step", data=body, headers={"content-type": "application/json"}
        )
        with pytest.raises(urllib.error.HTTPError) as error:
            urllib.request.urlopen(step, timeout=60)
        assert error.value.code == status


def test_a_disconnected_os_session_leaves_no_container(os_image, docker_engine):
    from lifelong_gym.envs.os.backends.docker import LABEL_PID

    with served("LifelongOS-v0") as (process, url):

        def containers():
            label = f"{LABEL_PID}={process.pid}"
            return docker_engine.containers.list(all=True, sparse=True, filters={"label": label})

        ws = websockets_sync.connect(ws_url(url))
        opened = request(ws, {"type": "reset", "data": {"task_index": 0}})
        assert opened["type"] == "observation"
        assert containers()
        ws.socket.shutdown(socket.SHUT_RDWR)
        ws.socket.close()
        assert wait_until(lambda: not containers(), seconds=120)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--env", "LifelongNope-v0"], "LifelongNope-v0"),
        (["--env-arg", "no_such_argument=1"], "no_such_argument"),
    ],
)
def test_a_bad_env_is_one_line(args, message):
    result = CliRunner().invoke(main, ["serve", "--port", str(free_port()), *args])
    assert result.exit_code == 1
    (error,) = result.output.strip().splitlines()
    assert error.startswith("Error: ") and message in error


def test_a_busy_port_is_one_line():
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        result = CliRunner().invoke(main, ["serve", "--port", str(port)])
    assert result.exit_code == 1
    (error,) = result.output.strip().splitlines()
    assert error.startswith("Error: cannot listen on 127.0.0.1:") and "--port" in error


def test_the_example_plays_a_server_it_starts():
    out = run_example("openenv_sessions.py", "--sessions", "2", "--episodes", "4")
    assert out.strip().splitlines()[-1] == "score 4/4"  # the oracle, through the server
