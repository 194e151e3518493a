"""The OS task's container dies under it (its PID 1 ended from outside the sandbox): the
task in flight ends `task_environment_error`, the next tasks score in fresh containers,
the metrics count the cost, and nothing is counted twice.

On the OCI sandbox the runtime's container process is SIGKILLed from the host; on the
Docker sandbox the engine kills the container. Inside, nothing can end PID 1 (KEEPER), so
a shell the agent ends (`exit`) stays an observation (tests/envs/test_os.py).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess

import gymnasium as gym
import pytest

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.session import SessionStatus

from ..fault_points import strike_run
from .test_os_oci import leftovers, runtime  # noqa: F401 - the fixture: an OCI runtime

ERROR = SessionStatus.TASK_ENVIRONMENT_ERROR.value


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
    env = gym.make("LifelongOS-v0", sandbox=sandbox)
    kill = kill_oci_init if sandbox == "oci" else kill_docker_container
    try:
        sessions, metrics = strike_run(
            env,
            tmp_path / "run",
            position=1,
            tasks=4,
            fault=lambda: kill(env),
            repair=lambda: None,
        )
    finally:
        env.close()
    assert [s.status.value for s in sessions] == ["completed", ERROR, "completed", "completed"]
    assert "container stopped" in sessions[1].chat_history[-1].content
    assert [s.outcome.value for i, s in enumerate(sessions) if i != 1] == ["correct"] * 3
    assert metrics.status_counts[ERROR] == 1 and metrics.correct == 3
    if sandbox == "oci":
        assert leftovers(env.unwrapped.pool.run_id) == []
