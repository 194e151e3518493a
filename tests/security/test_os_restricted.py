"""`restrict_commands=True` on a real Docker engine and a real OCI runtime: the agent's shell
executes only the benchmark's programs, however a script starts another, while the task's
setup and the judge keep every program of the image.

Each route below starts `{command}`: `touch` (allowed) must run through it, `truncate` (not
allowed) must not; each dead end runs neither. Whether the program ran is read by the judge:
both create /tmp/ran.
"""

from __future__ import annotations

import pytest

from lifelong_gym.envs.os.backends.shell import Mode
from tests.security.test_os import FILE, PYTHON, hostile_env, play, solution

ALLOWED, DISALLOWED = "touch /tmp/ran", "truncate -s0 /tmp/ran"
ROUTES = {
    "by name": "{command}",
    "absolute path": "/usr/bin/{command}",
    "eval": "eval '{command}'",
    "command": "command {command}",
    "exec in a subshell": "(exec {command})",
    "find -exec": "find /tmp -maxdepth 0 -exec {command} \\;",
    "awk system()": "awk 'BEGIN {{ system(\"{command}\") }}'",
    "sed e": "echo | sed 'e {command}'",
    "source a written file": "echo '{command}' > /tmp/s; . /tmp/s",
    "bash a written script": "echo '{command}' > /tmp/s; bash /tmp/s",
    "the judge's copy": "/.lgj/usr/bin/{command}",
}
DEAD_ENDS = {
    "a written executable": "printf '#!/bin/bash\\n{command}\\n' > /tmp/x; chmod +x /tmp/x; /tmp/x",
    "a copied program": "cp /usr/bin/{program} /tmp/c; /tmp/c {arguments}",
    "a link to a program": "ln /usr/bin/{program} /tmp/l; /tmp/l {arguments}",
    "the loader": "/.lgj/ld.so /usr/bin/{command}",
    "an interpreter": "python3 -c \"import os; os.system('{command}')\"",
    "an allowed program overwritten": "cat /usr/bin/{program} > /usr/bin/wc; wc {arguments}",
}


@pytest.fixture(scope="module", params=["docker", "oci"])
def env(request):
    yield from hostile_env(request.param, restrict_commands=True)


def ran(env, script: str) -> bool:
    """Run `script` as the agent's turn on a new task; whether /tmp/ran exists after it."""
    env.reset(options={"task_index": FILE})
    env.step(f"Act: bash\n\n```bash\n{script}\n```")
    return marked(env)


def marked(env) -> bool:
    """Whether /tmp/ran exists, as the judge sees it."""
    check = env.unwrapped.sandbox.run_judged(
        "test -e /tmp/ran", Mode.PERSISTENT, timeout=10, limit=100
    )
    return check.exit_code == 0


def routed(template: str, command: str) -> str:
    program, _, arguments = command.partition(" ")
    return template.format(command=command, program=program, arguments=arguments)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("route", ROUTES)
def test_every_route_runs_the_allowed_programs_only(env, route):
    assert ran(env, routed(ROUTES[route], ALLOWED))
    assert not ran(env, routed(ROUTES[route], DISALLOWED))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("dead_end", DEAD_ENDS)
def test_no_program_runs_through_a_dead_end(env, dead_end):
    assert not ran(env, routed(DEAD_ENDS[dead_end], ALLOWED))
    assert not ran(env, routed(DEAD_ENDS[dead_end], DISALLOWED))


@pytest.mark.timeout(120)
def test_the_refusal_is_the_shells_own_observation(env):
    env.reset(options={"task_index": FILE})
    observation, *_ = env.step("Act: bash\n\n```bash\npython3 -V; echo went on\n```")
    assert "/usr/bin/python3: Permission denied\nwent on" in observation


@pytest.mark.timeout(120)
def test_a_shell_started_after_a_timeout_is_restricted_too(env):
    env.reset(options={"task_index": FILE})
    observation, *_ = env.step("Act: bash\n\n```bash\nsleep 30\n```")
    assert "did not finish within 3 s" in observation
    env.step(f"Act: bash\n\n```bash\n{routed(ROUTES['eval'], DISALLOWED)}\n```")
    assert not marked(env)


@pytest.mark.timeout(120)
def test_the_judges_shell_cannot_be_typed_into(env):
    # Landlock keeps the agent from opening the descriptors of processes outside its
    # domain, as the judge's extra capability does (test_os.py): were both missing, the
    # judge's shell would read this line, and the evaluation's `bash -c` would become a
    # function that succeeds
    inject = "for f in /proc/[0-9]*/fd/0; do echo 'bash() { return 0; }' > $f; done; true"
    reward, _ = play(env, FILE, inject)
    assert reward == 0.0


@pytest.mark.timeout(120)
@pytest.mark.parametrize("index", [FILE, PYTHON])
def test_the_judge_keeps_its_programs(env, index):
    # the PYTHON task is judged by python3, which the agent cannot run
    reward, _ = play(env, index, solution(index))
    assert reward == 1.0
    reward, _ = play(env, index)
    assert reward == 0.0
