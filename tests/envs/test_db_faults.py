"""The MySQL server dies mid-run: the task in flight ends `task_environment_error`, the next
tasks reconnect and score, the metrics count the cost, and nothing is counted twice.

A server given by URL is a MariaDB of the test's own (its own port and data folder); the
started one is the container the environment starts (the Docker engine and the image).
"""

from __future__ import annotations

import gymnasium as gym
import pytest

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.envs.db.backends.mysql.backend import PREFIX
from lifelong_gym.envs.db.backends.mysql.server import server_containers

from ..fault_points import strike_run
from ..private_servers import running
from .private_mariadb import PrivateMariaDB
from .test_db_mysql_server import engine  # noqa: F401 - the fixture: a lease folder of our own


@pytest.fixture
def private_server(tmp_path):
    """A MariaDB of this test's own, running; killed at the end whatever happened."""
    with running(PrivateMariaDB(tmp_path / "mariadb")) as server:
        yield server


def test_server_by_url_killed_and_started_again_mid_run(private_server, tmp_path):
    with gym.make("LifelongDB-v0", backend="mysql", url=private_server.url) as env:
        failed = strike_run(
            env,
            tmp_path / "run",
            position=2,
            tasks=6,
            fault=private_server.kill,
            repair=private_server.start,  # not waited for: the next task's start waits
        )
    assert "The environment failed" in failed.chat_history[-1].content
    # the task in flight's database (still on disk when the server came back) and the
    # agent's account were dropped: nothing of the run is left on the server
    assert private_server.run(f"SHOW DATABASES LIKE '{PREFIX}%'") == []
    assert private_server.run(f"SELECT User FROM mysql.user WHERE User LIKE '{PREFIX}%'") == []


@pytest.mark.parametrize("fault", ["kill", "restart"])
def test_started_container_killed_or_restarted_mid_run(engine, fault, tmp_path):  # noqa: F811
    containers: list[str] = []

    def strike():
        (container,) = server_containers(engine)
        containers.append(container.id)
        if fault == "kill":
            container.kill()
        else:
            container.restart(timeout=0)

    with gym.make("LifelongDB-v0", backend="mysql") as env:
        strike_run(env, tmp_path / "run", position=2, tasks=6, fault=strike, repair=lambda: None)
        (serving,) = server_containers(engine)
    # a killed server's container is replaced by a fresh one; a restarted one is joined again
    assert (serving.id == containers[0]) == (fault == "restart")
    assert server_containers(engine) == []
