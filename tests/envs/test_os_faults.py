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
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import gymnasium as gym
import pytest

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import OracleAgent
from lifelong_gym.envs.os.backends.toolset import TOOLSET_ROOT
from lifelong_gym.results.folder import read_sessions

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
    # seen by the agent's command, or, when that ran before the kill landed, by the judge
    assert "container stopped" in failed.error
    if sandbox == "oci":
        assert leftovers(env.unwrapped.pool.run_id) == []


def wait_until_stopped(env: gym.Env) -> None:
    """Return once the killed container is reported stopped (a SIGKILL from the host is sent,
    not waited for), so that the fault has fully landed before the next step."""
    container = env.unwrapped.sandbox.container
    for _ in range(600):
        if not container.running():
            return
        time.sleep(0.05)
    raise AssertionError("the killed container is still reported running after 30 s")


def oracle_episode(env: gym.Env, index: int, before_the_end: Callable[[], None]) -> dict:
    """Play task `index` with the oracle, calling `before_the_end` before its reply that ends
    the task (after its commands ran); return the last step's `info`."""
    oracle = OracleAgent(env.unwrapped.tasks)
    env.reset(options={"task_index": index})
    while True:
        reply = oracle.act(env.unwrapped.session)
        if env.unwrapped.parse_action(reply).kind != "bash":
            before_the_end()
        _, reward, terminated, truncated, info = env.step(reply)
        if terminated or truncated:
            return {**info, "reward": reward}


def kill_in_judge(env: gym.Env, kill: Callable[[gym.Env], None]) -> None:
    """Make the judge's sandbox kill its container once the agent's processes are ended and
    before the evaluation runs (the evaluation's own shell then finds no container)."""
    sandbox = env.unwrapped.sandbox
    end_agent = sandbox.end_agent

    def end_agent_then_kill() -> None:
        end_agent()
        kill(env)
        wait_until_stopped(env)

    sandbox.end_agent = end_agent_then_kill


@pytest.mark.parametrize("moment", ["before the last reply", "inside the judge"])
def test_a_container_killed_before_its_verdict_is_never_the_agents_failure(sandbox, moment):
    """The oracle's commands ran; the container dies before the evaluation reads them. A
    stopped container is never revived under its task: the verdict would be on another
    container's processes (its files stay, the task's programs are gone)."""
    kill = kill_oci_init if sandbox == "oci" else kill_docker_container
    with gym.make("LifelongOS-v0", sandbox=sandbox, pool_size=1) as env:
        index = env.unwrapped.tasks.order[0]

        def strike() -> None:
            if moment == "before the last reply":
                kill(env)
                wait_until_stopped(env)
            else:
                kill_in_judge(env, kill)

        info = oracle_episode(env, index, strike)
        assert info["status"] == "task_environment_error", info
        assert info["reward"] == 0.0 and info["outcome"] == "unknown"
        assert "container stopped" in info["error"]
        again = oracle_episode(env, index, lambda: None)  # in a fresh container
        assert again["status"] == "completed" and again["reward"] == 1.0


@contextmanager
def pid_1_held_exiting(env: gym.Env) -> Iterator[None]:
    """SIGKILL the task container's PID 1 and hold it on its way out: PID 1 exits only once
    every process of its namespace is reaped, and one whose parent (a `RUNTIME exec` on the
    host) is stopped is not. Meanwhile the runtime reports the container running, as it does
    for a moment after every such kill, for longer on a busy host."""
    container = env.unwrapped.sandbox.container
    holder = subprocess.Popen(
        [container.runtime, "--root", str(container.state), "exec", container.id]
        + [f"{TOOLSET_ROOT}/usr/bin/sleep", "1000"]
    )
    try:
        for _ in range(600):  # until its program runs in the container
            if subprocess.run(["pgrep", "-P", str(holder.pid)], capture_output=True).stdout:
                break
            time.sleep(0.05)
        os.kill(holder.pid, signal.SIGSTOP)
        kill_oci_init(env)
        yield
    finally:
        os.kill(holder.pid, signal.SIGCONT)
        holder.wait()


def test_a_container_whose_pid_1_is_still_exiting_counts_as_stopped(request, os_image):
    """The race of a loaded host, held open: the agent's command finds its shell gone while
    the runtime still says running. The task ends `task_environment_error` at once; the
    container is not restarted under it for the agent to go on in."""
    request.getfixturevalue("runtime")
    with gym.make("LifelongOS-v0", sandbox="oci", pool_size=1) as env:
        oracle = OracleAgent(env.unwrapped.tasks)
        env.reset(options={"task_index": env.unwrapped.tasks.order[0]})
        with pid_1_held_exiting(env):
            reply = oracle.act(env.unwrapped.session)
            observation, reward, terminated, _, info = env.step(reply)
        assert terminated and info["status"] == "task_environment_error", observation
        assert reward == 0.0 and "container stopped" in observation
        again = oracle_episode(env, env.unwrapped.tasks.order[0], lambda: None)
        assert again["status"] == "completed" and again["reward"] == 1.0


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
