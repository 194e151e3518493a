"""LifelongOS-v0 on a real Docker engine and OCI runtime: oracle runs, bad agent input,
container hygiene (the OCI sandbox's own hygiene is in test_os_oci.py)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
import time

import gymnasium as gym
import pytest

import lifelong_gym  # noqa: F401 (registers the ids)
from lifelong_gym.agents import OracleAgent
from lifelong_gym.docker_engine import docker_client
from lifelong_gym.envs.os.actions import EMPTY_OUTPUT, OUTPUT_PREFIX
from lifelong_gym.envs.os.backends.docker import LABEL
from lifelong_gym.envs.os.backends.oci.sandbox import OciPool, find_runtime
from lifelong_gym.envs.os.backends.sandbox import CROWDED_SHARE, FULL_SHARE
from lifelong_gym.envs.os.backends.shell import Mode
from lifelong_gym.envs.os.image import DEFAULT_IMAGE
from lifelong_gym.envs.os.skills import SKILLS
from lifelong_gym.envs.os.tasks import load_os_tasks
from lifelong_gym.errors import SandboxError
from lifelong_gym.session import SessionStatus
from lifelong_gym.tasks import TaskFileError


def _engine():
    try:
        client = docker_client()
    except SandboxError as error:
        pytest.skip(f"no Docker engine: {error}")
    try:
        client.images.get(DEFAULT_IMAGE)
    except Exception:
        pytest.skip(f"image {DEFAULT_IMAGE} absent: run lifelong-gym build-image os")
    return client


@pytest.fixture(scope="module")
def client():
    return _engine()


def sandbox_options(kind: str) -> dict:
    """The environment arguments of a sandbox kind, or a skip where it cannot run here."""
    if kind == "oci":
        try:
            find_runtime(None)
        except SandboxError as error:
            pytest.skip(str(error))
    return {"sandbox": kind}


@pytest.fixture(scope="module", params=["docker", "oci"])
def sandbox(request, client) -> dict:
    """Each test that takes it runs on both sandboxes: the Docker engine's and an OCI runtime's."""
    return sandbox_options(request.param)


@pytest.fixture(scope="module")
def env(sandbox):
    environment = gym.make("LifelongOS-v0", pool_size=2, command_timeout=3, **sandbox)
    yield environment
    environment.close()


def run_oracle(env, indices) -> list[int]:
    """Replay the reference solutions; return the indices the oracle failed."""
    agent = OracleAgent(env.unwrapped.tasks)
    failed = []
    for index in indices:
        env.reset(options={"task_index": index})
        reward, done = 0.0, False
        while not done:
            _, reward, terminated, truncated, _ = env.step(agent.act(env.unwrapped.session))
            done = terminated or truncated
        if reward != 1.0:
            failed.append(index)
    return failed


def act(env, script: str) -> tuple[str, bool]:
    observation, _, terminated, truncated, _ = env.step(f"Act: bash\n\n```bash\n{script}\n```")
    return observation, terminated or truncated


def test_shipped_set_covers_every_skill_and_its_order():
    tasks = load_os_tasks()
    assert len(tasks) == 300
    assert sorted(tasks.order) == tasks.indices
    for skill in SKILLS:
        assert sum(skill in t.skills for t in tasks) >= 10, skill


# Each task's reference runs in full once in each mode (all programs on Docker, the 29
# commands on OCI, about 100 s each, dominated by container making); the other sandbox
# plays every third task of that mode, which covers what differs between the sandboxes.
FULL_RUNS = {("docker", False), ("oci", True)}


def oracle_share(sandbox: dict, restrict: bool, order: list[int]) -> list[int]:
    """The tasks a sandbox and mode replay: all of them, or every third."""
    return order if (sandbox["sandbox"], restrict) in FULL_RUNS else order[::3]


def run_oracle_twice(env, indices) -> list[int]:
    """The tasks the oracle misses twice. A touch-then-sleep task (34: the second file's
    mtime at least 1 s after the first, `sleep 1` between) can miss once in a few hundred
    plays, probably because file times come from the kernel's coarse clock, a tick behind
    `sleep`'s; it missed once in CI on 2026-12-07. A broken reference misses both times."""
    return run_oracle(env, run_oracle(env, indices))


def test_oracle_solves_the_whole_shipped_set(env, sandbox):
    assert run_oracle_twice(env, oracle_share(sandbox, False, env.unwrapped.tasks.order)) == []


def test_oracle_solves_the_whole_shipped_set_with_the_29_commands_only(sandbox):
    # every reference solution of ours runs with the benchmark's commands alone
    environment = gym.make("LifelongOS-v0", pool_size=2, restrict_commands=True, **sandbox)
    try:
        order = oracle_share(sandbox, True, environment.unwrapped.tasks.order)
        assert run_oracle_twice(environment, order) == []
    finally:
        environment.close()


@pytest.mark.parametrize("restrict", [False, True], ids=["all-programs", "29-commands"])
def test_oracle_solves_every_agentbench_task_the_loader_accepts(sandbox, external_dir, restrict):
    """Every task, or with the 29 commands only, every task whose reference runs no other
    program: AgentBench's references use sort, xargs, tr, du, getent, ... which the
    benchmark's agent does not have; each task the oracle misses then shows the refusal."""
    files = sorted((external_dir / "agentbench/data/os_interaction/data").rglob("*.json"))
    accepted = skipped = refused = 0
    for path in files:
        try:
            tasks = load_os_tasks(path)
        except TaskFileError as error:  # stock.json: every task needs AgentBench's init files
            assert "we do not have" in str(error)
            skipped += 7
            continue
        accepted += len(tasks)
        skipped += len(tasks.skipped)
        assert all(s.reason for s in tasks.skipped)
        environment = gym.make(
            "LifelongOS-v0", tasks=tasks, pool_size=2, restrict_commands=restrict, **sandbox
        )
        try:
            failed = run_oracle(environment, oracle_share(sandbox, restrict, tasks.order))
            # some of AgentBench's answers are read off the live host (7/bootstrap.json's
            # sixth: the share of memory in use, which the judge reads again after the
            # agent): on a busy machine it moves between the two, so a miss is played again
            failed = run_oracle(environment, failed)
            if restrict:
                for index in failed:
                    assert "Permission denied" in reference_output(environment, index), index
                refused += len(failed)
            else:
                assert failed == [], path
        finally:
            environment.close()
    assert (accepted, skipped) == (141, 29)
    print(f"{refused} of {accepted} references need a program outside the 29 commands")


def reference_output(env, index: int) -> str:
    """The observation of the reference solution's script on task `index`."""
    env.reset(options={"task_index": index})
    agent = OracleAgent(env.unwrapped.tasks)
    observation, *_ = env.step(agent.act(env.unwrapped.session))
    return observation


def test_persistent_shell_keeps_directory_and_variables(env):
    env.reset(options={"task_index": 0})
    act(env, "cd /etc; NAME=value")
    observation, _ = act(env, "pwd; echo $NAME")
    assert observation == OUTPUT_PREFIX + "/etc\nvalue\n"
    observation, _ = act(env, "true")
    assert observation == EMPTY_OUTPUT


def test_each_scripts_exit_code_is_in_the_details(env):
    env.reset(options={"task_index": 0})
    act(env, "false")
    act(env, "true")
    observation, _ = act(env, "sleep 30")
    assert "did not finish" in observation
    *_, info = env.step("Act: finish")
    assert info["exit_codes"] == env.unwrapped.session.details["exit_codes"] == [1, 0, None]


def test_bash_c_mode_forgets_directory_like_the_reference(client):
    environment = gym.make("LifelongOS-v0", shell="bash-c", pool_size=1)
    try:
        environment.reset(options={"task_index": 0})
        act(environment, "cd /etc; touch /tmp/kept")
        observation, _ = act(environment, "pwd; ls /tmp/kept")
        assert observation == OUTPUT_PREFIX + "/root\n/tmp/kept\n"
    finally:
        environment.close()


def test_long_output_keeps_head_and_tail(env):
    env.reset(options={"task_index": 0})
    observation, done = act(env, "seq 1 200000")
    assert not done
    assert observation.startswith(OUTPUT_PREFIX + "1\n2\n")
    assert observation.endswith("199999\n200000\n")
    assert "characters truncated" in observation
    assert len(observation) <= env.unwrapped.max_output_length + len(OUTPUT_PREFIX)


BAD_INPUTS = {
    "fork bomb": ":(){ :|:& };:",
    "yes forever": "yes > /dev/null",
    "find /": "find /",
    "urandom": "cat /dev/urandom",
    "disk filling": "dd if=/dev/zero of=/fill bs=1M; cat /dev/zero > /fill2",
    "rm -rf /": "rm -rf / --no-preserve-root",
    "kill -9 -1": "kill -9 -1",
    "shutdown": "shutdown -h now; halt; reboot; poweroff",
    "network": "curl -sS -m 2 http://deb.debian.org/ || python3 -c "
    "\"import socket; socket.create_connection(('1.1.1.1', 80), timeout=2)\"",
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_input_ends_in_an_observation_and_the_next_task_is_fine(env, name):
    env.reset(options={"task_index": 1})
    observation, done = act(env, BAD_INPUTS[name])
    assert isinstance(observation, str) and observation
    if name == "fork bomb":  # ended in its own step, before another command races it
        assert "filled the container's process limit" in observation
    if name != "rm -rf /":  # the shell still answers (rm -rf / even took /dev/null away)
        observation, _ = act(env, "echo still-here")
        assert "still-here" in observation
    if name == "network":
        assert "deb.debian.org" not in observation or "resolve" in observation
    assert run_oracle(env, [2]) == []


@pytest.mark.parametrize(
    "reply",
    ["Act: bash\n\n```bash\necho \ud800\n```", "Act: answer(seven\ud800)"],
    ids=["script", "answer"],
)
def test_a_lone_surrogate_is_an_observation_not_an_environment_error(env, reply):
    env.reset(options={"task_index": 1})
    observation, _, terminated, truncated, _ = env.step(reply)
    assert "is not valid text (character 5 is a lone surrogate)" in observation
    assert not terminated and not truncated
    assert "still-here" in act(env, "echo still-here")[0]


def test_a_fork_bomb_that_fills_the_limit_later_is_ended_before_the_next_command(env):
    env.reset(options={"task_index": 1})
    observation, _ = act(env, "(sleep 1; :(){ :|:& };:) >/dev/null 2>&1 &")
    assert "process limit" not in observation  # it had not started yet
    sandbox = env.unwrapped.sandbox
    full = math.ceil(sandbox.limits.pids * FULL_SHARE)
    deadline = time.monotonic() + 60
    while sandbox.run_judged(":", Mode.PERSISTENT, timeout=10, limit=100).processes < full:
        assert time.monotonic() < deadline, "the fork bomb never filled the limit"
        time.sleep(0.1)
    observation, done = act(env, "echo still-here")
    assert not done and observation.startswith(OUTPUT_PREFIX + "still-here\n")
    assert "Before this command ran" in observation
    observation, _ = act(env, "echo again")
    assert observation == OUTPUT_PREFIX + "again\n"  # nothing of the bomb is left
    assert run_oracle(env, [2]) == []


def test_many_processes_left_running_that_are_no_fork_bomb_are_kept(env):
    """Over half the process limit, still and below the bomb's share: the command runs."""
    env.reset(options={"task_index": 1})
    sandbox = env.unwrapped.sandbox
    count = math.ceil(sandbox.limits.pids * (FULL_SHARE + CROWDED_SHARE) / 2)
    observation, _ = act(env, f"for i in $(seq {count}); do sleep 120 & done")
    assert "process limit" not in observation
    observation, done = act(env, "echo ran; jobs -r | wc -l")
    assert not done and observation == f"{OUTPUT_PREFIX}ran\n{count}\n"
    assert run_oracle(env, [2]) == []


def test_reply_without_an_action_fails_validation_and_is_scored(env):
    env.reset(options={"task_index": 3})
    observation, reward, terminated, _, info = env.step("I would list the files.")
    assert terminated and reward == 0.0
    assert info["status"] == SessionStatus.AGENT_VALIDATION_FAILED.value
    assert observation.startswith("Invalid reply: the reply has no line `Act: bash`")


def _containers(client, run_id: str | None = None) -> list:
    label = f"{LABEL}={run_id}" if run_id else LABEL
    # sparse: the listing's own data, so a container removed meanwhile is no error
    return client.containers.list(all=True, sparse=True, filters={"label": label})


def test_close_removes_every_container(client):
    environment = gym.make("LifelongOS-v0", pool_size=3)
    environment.reset(options={"task_index": 0})
    run_id = environment.unwrapped.pool.run_id
    assert _containers(client, run_id)
    environment.close()
    environment.close()
    assert _containers(client, run_id) == []


CHILD = """
import json, os, signal, sys
import gymnasium as gym
import lifelong_gym
env = gym.make("LifelongOS-v0", pool_size=2, **json.loads(sys.argv[2]))
env.reset(options={"task_index": 0})
print(env.unwrapped.pool.run_id, flush=True)
if sys.argv[1] == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
raise RuntimeError("the user's loop crashed")
"""


def crashed_run(ending: str, **env_kwargs) -> str:
    """The run id of a child that started an OS environment and then ended by `ending`
    ("exception": the user's loop raised; "kill": SIGKILL), checked to have ended so."""
    child = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(CHILD), ending, json.dumps(env_kwargs)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if ending == "exception":
        assert "the user's loop crashed" in child.stderr
    else:
        assert child.returncode == -9
    return child.stdout.strip().splitlines()[0]


@pytest.mark.parametrize("ending", ["exception", "kill"])
def test_no_container_outlives_a_crash(client, ending):
    run_id = crashed_run(ending)
    if ending == "exception":
        assert _containers(client, run_id) == []
        return
    assert _containers(client, run_id)  # SIGKILL leaves them behind ...
    environment = gym.make("LifelongOS-v0", pool_size=1)  # ... and the next start removes them
    try:
        assert _containers(client, run_id) == []
    finally:
        environment.close()


def test_missing_image_is_one_clear_error(client):
    with pytest.raises(SandboxError, match="build-image os"):
        gym.make("LifelongOS-v0", image="lifelong-gym/no-such-image:0")


def test_checker_passes_gymnasium_env_checker(client):
    from gymnasium.utils.env_checker import check_env

    environment = gym.make("LifelongOS-v0", pool_size=2)
    try:
        check_env(environment.unwrapped, skip_render_check=True)
    finally:
        environment.close()


def test_the_containers_owner_is_this_process(env, client):
    env.reset(options={"task_index": 0})
    pool = env.unwrapped.pool
    if isinstance(pool, OciPool):  # the run's folder names its owner
        assert json.loads((pool.run_dir / "owner").read_text())["pid"] == os.getpid()
        return
    mine = _containers(client, pool.run_id)
    assert mine and all(c.attrs["Labels"][f"{LABEL}.pid"] == str(os.getpid()) for c in mine)


def test_oracle_solves_tasks_in_the_benchmarks_own_format(client, tmp_path):
    def item(language: str, script: str) -> dict:
        return {"command_name": language, "script": script}

    records = {
        "0": {
            "instruction": "Create the file /root/done.txt holding the word yes.",
            "initialization_command_item": item("bash", "rm -f /root/done.txt"),
            "evaluation_info": {
                "evaluation_command_item": item("bash", '[ "$(cat /root/done.txt)" = yes ]'),
                "ground_truth_command_item": item("bash", "echo yes > /root/done.txt"),
            },
            "skill_list": ["echo"],
            "raw_entry_hash": "a",
        },
        "1": {
            "instruction": "Write the number 42 into /tmp/answer.",
            "initialization_command_item": item(
                "python", "import os; os.makedirs('/tmp', exist_ok=True)"
            ),
            "evaluation_info": {
                "evaluation_command_item": item(
                    "python", "import sys; sys.exit(open('/tmp/answer').read().strip() != '42')"
                ),
                "ground_truth_command_item": item("python", "open('/tmp/answer', 'w').write('42')"),
            },
            "skill_list": ["echo"],
            "raw_entry_hash": "b",
        },
    }
    path = tmp_path / "entry_dict.json"
    path.write_text(json.dumps(records))
    environment = gym.make("LifelongOS-v0", tasks=str(path), pool_size=1)
    try:
        assert run_oracle(environment, [0, 1]) == []
        environment.reset(options={"task_index": 1})
        _, reward, *_ = environment.step("Act: finish")  # nothing done: the evaluation fails
        assert reward == 0.0
    finally:
        environment.close()


def test_normalize_action_folds_the_script(env):
    unwrapped = env.unwrapped
    one = unwrapped.normalize_action("Act: bash\n```bash\nls   -la /tmp\n```")
    assert one == unwrapped.normalize_action("Think.\nAct: bash\n```bash\nls -la\t/tmp\n```")
    assert one != unwrapped.normalize_action("Act: bash\n```bash\nls /tmp\n```")
    assert unwrapped.normalize_action("Act: finish") == "finish: "
    assert unwrapped.normalize_action("nothing to do") is None
