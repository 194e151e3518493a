"""The OS task's container dies under it (its PID 1 ended from outside the sandbox): the
task in flight ends `task_environment_error`, the next tasks score in fresh containers,
the metrics count the cost, and nothing is counted twice.

On the OCI sandbox the runtime's container process is SIGKILLed from the host; on the
Docker sandbox the engine kills the container. Inside, nothing can end PID 1 (KEEPER), so
a shell the agent ends (`exit`) stays an observation (tests/envs/test_os.py).

The Docker engine itself stopped and started again (its containers stop with it): that
engine is one of the test's own (private_dockerd.py), never the host's.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess

import gymnasium as gym
import pytest

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.run.folder import read_sessions

from ..fault_points import strike_run
from ..private_servers import running
from .private_dockerd import PrivateDockerd
from .test_os_oci import leftovers, runtime  # noqa: F401 - the fixture: an OCI runtime


def kill_oci_init(env: gym.Env) -> None:
    """SIGKILL the PID 1 of the running task's OCI container, from the host."""
    container = env.unwrapped.sandbox.container
    state = subprocess.run(
        [container.runtime, "--root", str(container.state), "state", container.id],
        capture_output=True,
        text=True,
        check=True,
    )
    os.kill(json.loads(state.stdout)["pid"], signal.SIGKILL)


def kill_docker_container(env: gym.Env) -> None:
    """`docker kill` the running task's container."""
    env.unwrapped.sandbox.container.docker.kill()


@pytest.fixture(params=["oci", "docker"])
def sandbox(request, os_image) -> str:
    """Each sandbox kind (the OCI one needs a runtime)."""
    if request.param == "oci":
        request.getfixturevalue("runtime")
    return request.param


def test_a_container_killed_under_its_task(sandbox, tmp_path):
    kill = kill_oci_init if sandbox == "oci" else kill_docker_container
    with gym.make("LifelongOS-v0", sandbox=sandbox) as env:
        failed = strike_run(
            env, tmp_path / "run", position=1, tasks=4, fault=lambda: kill(env), repair=lambda: None
        )
    assert "container stopped" in failed.chat_history[-1].content
    if sandbox == "oci":
        assert leftovers(env.unwrapped.pool.run_id) == []


@pytest.fixture
def private_engine(os_image, docker_engine, monkeypatch):
    """A Docker engine of this test's own holding the OS image, the one that environments
    made in the test use (DOCKER_HOST); stopped and removed at the end."""
    with running(PrivateDockerd()) as engine:
        engine.load_image(os_image, docker_engine)
        monkeypatch.setenv("DOCKER_HOST", engine.url)
        yield engine


def stop_with_pool_full(env: gym.Env, engine: PrivateDockerd) -> None:
    """Stop the engine as a service manager does (its containers stop with it), once the
    pool holds every container it makes ahead, so that the next tasks are given stopped
    ones (not some made after the restart)."""
    assert env.unwrapped.pool.wait_idle(), "the pool never finished making its containers"
    engine.stop()


def test_the_docker_engine_restarted_mid_run(private_engine, tmp_path):
    with gym.make("LifelongOS-v0", sandbox="docker") as env:
        failed = strike_run(
            env,
            tmp_path / "run",
            position=1,
            tasks=4,
            fault=lambda: stop_with_pool_full(env, private_engine),
            repair=private_engine.start,  # not waited for: the next task's start waits
        )
    assert "container stopped" in failed.chat_history[-1].content
    # the containers made ahead, stopped with the engine, were replaced, not revived under
    # the next tasks (whose agent would have been told that its shell was restarted)
    sessions, _, _ = read_sessions(tmp_path / "run" / "sessions.jsonl")
    seen = [message.content for session in sessions for message in session.chat_history]
    assert not [text for text in seen if "a new shell was started" in text]
    assert private_engine.client.containers.list(all=True) == []
